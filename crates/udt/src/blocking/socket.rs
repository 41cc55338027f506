//! The connected-socket core shared by [`super::UdtStream`] and [`super::UdtMessageSocket`]:
//! blocking calls on one connection, with UDT4's timeouts (UDT_SNDTIMEO / UDT_RCVTIMEO) and
//! linger semantics.
//!
//! Every call locks the connection, tries the non-blocking core call, and sleeps on the
//! connection's condition variable until the I/O thread reports progress. Calls that give the
//! connection something to send "poke" the multiplexer so its I/O thread picks it up at once.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant as StdInstant};

use udt_proto::{
    ConnectionConfig, ConnectionError, ConnectionStats, PathStats, RecvError, SendError, State,
};

use crate::error::{io_error, recv_error, send_error, timed_out};
use crate::mux::MuxRef;
use crate::shared::{ConnShared, ConnState};

/// Most bytes one `write` copies into the send buffer under the connection's lock.
const MAX_WRITE_PER_LOCK: usize = 256 << 10;

/// `AtomicU64` encoding of "no timeout".
const NO_TIMEOUT: u64 = u64::MAX;

/// One connection as seen by an application thread.
#[derive(Debug)]
pub(crate) struct Socket {
    mux: MuxRef,
    conn: Arc<ConnShared>,
    peer: SocketAddr,
    read_timeout_ns: AtomicU64,
    write_timeout_ns: AtomicU64,
}

impl Socket {
    /// Connect through `mux` and block until the handshake ends (the core enforces the
    /// connect timeout: 3 s, or 30 s for rendezvous, unless the config says otherwise).
    pub(crate) fn connect(
        mux: MuxRef,
        remote: SocketAddr,
        config: ConnectionConfig,
    ) -> io::Result<Self> {
        let conn = mux.connect(remote, config)?;
        let socket = Self::new(mux, conn);
        let result = socket.conn.wait_until(None, |st| match st.conn.state() {
            State::Connecting => None,
            State::Connected | State::Closing => Some(Ok(())),
            // Connected, and the peer already closed: reads will see the end of stream.
            State::Closed if st.conn.error() == Some(ConnectionError::PeerClosed) => Some(Ok(())),
            State::Closed => Some(Err(closed_error(st))),
        });
        result.unwrap_or(Ok(()))?;
        Ok(socket)
    }

    /// Wrap a connection the multiplexer accepted.
    pub(crate) fn new(mux: MuxRef, conn: Arc<ConnShared>) -> Self {
        let peer = conn.lock().conn.remote();
        Self {
            mux,
            conn,
            peer,
            read_timeout_ns: AtomicU64::new(NO_TIMEOUT),
            write_timeout_ns: AtomicU64::new(NO_TIMEOUT),
        }
    }

    pub(crate) fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let deadline = deadline(&self.read_timeout_ns);
        self.conn
            .wait_until(deadline, |st| match st.conn.recv(buf) {
                Err(RecvError::WouldBlock) => None,
                r => Some(r.map_err(recv_error)),
            })
            .unwrap_or_else(|| Err(timed_out("read")))
    }

    /// Queue as much of `data` as fits, blocking while the send buffer is full.
    pub(crate) fn write(&self, data: &[u8]) -> io::Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        let deadline = deadline(&self.write_timeout_ns);
        let mux = self.mux.mux();
        // Bound the time the connection stays locked (the I/O thread waits meanwhile).
        let data = &data[..data.len().min(MAX_WRITE_PER_LOCK)];
        self.conn
            .wait_until(deadline, |st| match st.conn.send(mux.now(), data) {
                Ok(n) => {
                    mux.poke(&self.conn, st);
                    Some(Ok(n))
                }
                Err(SendError::WouldBlock) => None,
                Err(e) => Some(Err(send_error(e))),
            })
            .unwrap_or_else(|| Err(timed_out("write")))
    }

    /// Block until everything written has been acknowledged.
    pub(crate) fn flush(&self) -> io::Result<()> {
        let deadline = deadline(&self.write_timeout_ns);
        self.conn
            .wait_until(deadline, |st| {
                if st.conn.is_send_idle() {
                    Some(Ok(()))
                } else if st.conn.state() == State::Closed {
                    Some(Err(closed_error(st)))
                } else {
                    None
                }
            })
            .unwrap_or_else(|| Err(timed_out("flush")))
    }

    pub(crate) fn send_msg(
        &self,
        msg: &[u8],
        ttl: Option<Duration>,
        in_order: bool,
    ) -> io::Result<()> {
        let deadline = deadline(&self.write_timeout_ns);
        let mux = self.mux.mux();
        self.conn
            .wait_until(deadline, |st| {
                match st.conn.send_msg(mux.now(), msg, ttl, in_order) {
                    Ok(()) => {
                        mux.poke(&self.conn, st);
                        Some(Ok(()))
                    }
                    Err(SendError::WouldBlock) => None,
                    Err(e) => Some(Err(send_error(e))),
                }
            })
            .unwrap_or_else(|| Err(timed_out("send_msg")))
    }

    pub(crate) fn recv_msg(&self, buf: &mut [u8]) -> io::Result<usize> {
        let deadline = deadline(&self.read_timeout_ns);
        self.conn
            .wait_until(deadline, |st| match st.conn.recv_msg(buf) {
                Ok((copied, _len)) => Some(Ok(copied)),
                Err(RecvError::WouldBlock) => None,
                Err(e) => Some(Err(recv_error(e))),
            })
            .unwrap_or_else(|| Err(timed_out("recv_msg")))
    }

    /// UDT4 `close` with linger: unsent data drains (up to the linger time), then the peer is
    /// told. Blocks until the connection has ended.
    pub(crate) fn close(&self) -> io::Result<()> {
        self.start_close();
        self.conn
            .wait_until(None, |st| {
                (st.conn.state() == State::Closed).then(|| match st.conn.error() {
                    None | Some(ConnectionError::LocallyClosed | ConnectionError::PeerClosed) => {
                        Ok(())
                    }
                    Some(e) => Err(io_error(e)),
                })
            })
            .unwrap_or(Ok(()))
    }

    /// Begin closing without waiting (what `Drop` does).
    fn start_close(&self) {
        let mut st = self.conn.lock();
        if matches!(st.conn.state(), State::Connecting | State::Connected) {
            let now = self.mux.mux().now();
            st.conn.close(now);
            self.mux.mux().poke(&self.conn, &mut st);
        }
    }

    pub(crate) fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        store_timeout(&self.read_timeout_ns, t)
    }

    pub(crate) fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        store_timeout(&self.write_timeout_ns, t)
    }

    pub(crate) fn read_timeout(&self) -> Option<Duration> {
        load_timeout(&self.read_timeout_ns)
    }

    pub(crate) fn write_timeout(&self) -> Option<Duration> {
        load_timeout(&self.write_timeout_ns)
    }

    pub(crate) fn stats(&self) -> ConnectionStats {
        self.conn.lock().conn.stats()
    }

    pub(crate) fn path_stats(&self) -> PathStats {
        self.conn.lock().conn.path_stats()
    }

    pub(crate) fn state(&self) -> State {
        self.conn.lock().conn.state()
    }

    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.mux.mux().local_addr()
    }

    pub(crate) fn peer_addr(&self) -> SocketAddr {
        self.peer
    }

    pub(crate) fn multiplexer(&self) -> &MuxRef {
        &self.mux
    }
}

impl Drop for Socket {
    /// Close asynchronously: the I/O thread keeps draining unsent data up to the linger time.
    fn drop(&mut self) {
        self.start_close();
    }
}

fn closed_error(st: &ConnState) -> io::Error {
    io_error(st.conn.error().unwrap_or(ConnectionError::LocallyClosed))
}

fn deadline(timeout_ns: &AtomicU64) -> Option<StdInstant> {
    load_timeout(timeout_ns).map(|t| StdInstant::now() + t)
}

fn store_timeout(slot: &AtomicU64, t: Option<Duration>) -> io::Result<()> {
    let ns = match t {
        None => NO_TIMEOUT,
        Some(d) if d.is_zero() => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot set a zero duration timeout",
            ))
        }
        Some(d) => u64::try_from(d.as_nanos()).unwrap_or(NO_TIMEOUT - 1),
    };
    slot.store(ns, Relaxed);
    Ok(())
}

fn load_timeout(slot: &AtomicU64) -> Option<Duration> {
    match slot.load(Relaxed) {
        NO_TIMEOUT => None,
        ns => Some(Duration::from_nanos(ns)),
    }
}
