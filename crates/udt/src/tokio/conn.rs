//! [`Conn`]: one connection as an async task sees it, the core shared by
//! [`super::UdtStream`] and [`super::UdtMessageSocket`].
//!
//! Every `poll_*` method has the same shape ([`Conn::poll_op`]): lock the connection, try the
//! non-blocking core call, and if it cannot proceed register the task's waker *before*
//! unlocking. The I/O thread changes the connection and wakes the list under the same lock,
//! so no wake-up falls between the look and the registration. Nothing is consumed by a poll
//! that returns `Pending`, so dropping any of these futures loses no data (cancellation
//! safe).

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant as StdInstant};

use udt_proto::{ConnectionError, ConnectionStats, PathStats, RecvError, SendError, State};

use crate::blocking::PerfSnapshot;
use crate::mux::MuxRef;
use crate::shared::{ConnShared, ConnState};
use crate::Perfmon;

/// Most bytes one write copies into the send buffer under the connection's lock (the I/O
/// thread waits for the lock meanwhile).
const MAX_WRITE_PER_LOCK: usize = 256 << 10;

/// A connection inside a multiplexer, with the handle that keeps the multiplexer open.
#[derive(Debug)]
pub(super) struct Conn {
    mux: MuxRef,
    conn: Arc<ConnShared>,
    peer: SocketAddr,
    perf: Mutex<PerfSnapshot>,
}

impl Conn {
    pub(super) fn new(mux: MuxRef, conn: Arc<ConnShared>) -> Self {
        let peer = conn.lock().conn.remote();
        Self {
            mux,
            conn,
            peer,
            perf: Mutex::new(PerfSnapshot::new(StdInstant::now())),
        }
    }

    /// Run `f` under the lock; if it gives no result, wake this task at the connection's next
    /// progress.
    fn poll_op<T>(
        &self,
        cx: &mut Context<'_>,
        f: impl FnOnce(&mut ConnState) -> Option<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        let mut st = self.conn.lock();
        match f(&mut st) {
            Some(r) => Poll::Ready(r),
            None => {
                self.conn.wakers.register(cx.waker());
                Poll::Pending
            }
        }
    }

    /// Ready once the handshake has ended: `Ok` if connected, the reason otherwise (refused,
    /// timed out, ...).
    pub(super) fn poll_connected(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_op(cx, |st| match st.conn.state() {
            State::Connecting => None,
            State::Connected | State::Closing => Some(Ok(())),
            // Connected, and the peer already closed: reads will see the end of stream.
            State::Closed if st.conn.error() == Some(ConnectionError::PeerClosed) => Some(Ok(())),
            State::Closed => Some(Err(closed_error(st))),
        })
    }

    /// Read stream data into `buf` (`Ok(0)`: end of stream).
    pub(super) fn poll_read(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        self.poll_op(cx, |st| match st.conn.recv(buf) {
            Err(RecvError::WouldBlock) => None,
            r => Some(r.map_err(io::Error::from)),
        })
    }

    /// Queue as much of `data` as fits (up to a bound per lock).
    pub(super) fn poll_write(&self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        if data.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let mux = self.mux.mux();
        let data = &data[..data.len().min(MAX_WRITE_PER_LOCK)];
        self.poll_op(cx, |st| match st.conn.send(mux.now(), data) {
            Ok(n) => {
                mux.poke(&self.conn, st);
                Some(Ok(n))
            }
            // Still connecting, or the buffer is full: wait for progress.
            Err(SendError::WouldBlock | SendError::NotConnected) => None,
            Err(e) => Some(Err(e.into())),
        })
    }

    /// Queue one message.
    pub(super) fn poll_send_msg(
        &self,
        cx: &mut Context<'_>,
        msg: &[u8],
        ttl: Option<Duration>,
        in_order: bool,
    ) -> Poll<io::Result<()>> {
        let mux = self.mux.mux();
        self.poll_op(cx, |st| {
            match st.conn.send_msg(mux.now(), msg, ttl, in_order) {
                Ok(()) => {
                    mux.poke(&self.conn, st);
                    Some(Ok(()))
                }
                Err(SendError::WouldBlock | SendError::NotConnected) => None,
                Err(e) => Some(Err(e.into())),
            }
        })
    }

    /// Receive one whole message into `buf` (truncated if longer, as in UDT4).
    pub(super) fn poll_recv_msg(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_op(cx, |st| match st.conn.recv_msg(buf) {
            Ok((copied, _len)) => Some(Ok(copied)),
            Err(RecvError::WouldBlock) => None,
            Err(e) => Some(Err(e.into())),
        })
    }

    /// Ready once everything written has been acknowledged (or dropped by its TTL).
    pub(super) fn poll_flush(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_op(cx, |st| {
            if st.conn.is_send_idle() {
                Some(Ok(()))
            } else if st.conn.state() == State::Closed {
                Some(Err(closed_error(st)))
            } else {
                None
            }
        })
    }

    /// Close with linger and wait for the end: queued data drains (up to the linger time),
    /// then the peer is told. Calling it again after it finished is `Ok`.
    pub(super) fn poll_close(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.start_close();
        self.poll_op(cx, |st| {
            (st.conn.state() == State::Closed).then(|| match st.conn.error() {
                None | Some(ConnectionError::LocallyClosed | ConnectionError::PeerClosed) => Ok(()),
                Some(e) => Err(e.into()),
            })
        })
    }

    /// Begin closing without waiting (what `Drop` does).
    pub(super) fn start_close(&self) {
        let mut st = self.conn.lock();
        if matches!(st.conn.state(), State::Connecting | State::Connected) {
            let mux = self.mux.mux();
            st.conn.close(mux.now());
            mux.poke(&self.conn, &mut st);
        }
    }

    pub(super) fn stats(&self) -> ConnectionStats {
        self.conn.lock().conn.stats()
    }

    pub(super) fn path_stats(&self) -> PathStats {
        self.conn.lock().conn.path_stats()
    }

    pub(super) fn perfmon(&self, clear: bool) -> Perfmon {
        let (total, instant) = {
            let st = self.conn.lock();
            (st.conn.stats(), st.conn.path_stats())
        };
        let mut snap = self.perf.lock().unwrap_or_else(PoisonError::into_inner);
        snap.report(StdInstant::now(), total, instant, clear)
    }

    pub(super) fn state(&self) -> State {
        self.conn.lock().conn.state()
    }

    /// UDT_MAXBW while connected; the I/O thread re-reads the pacing at once.
    pub(super) fn set_max_bandwidth(&self, bytes_per_sec: Option<u64>) {
        let mut st = self.conn.lock();
        st.conn.set_max_bandwidth(bytes_per_sec);
        self.mux.mux().poke(&self.conn, &mut st);
    }

    pub(super) fn set_linger(&self, linger: Option<Duration>) {
        self.conn.lock().conn.set_linger(linger);
    }

    pub(super) fn local_addr(&self) -> SocketAddr {
        self.mux.mux().local_addr()
    }

    pub(super) fn peer_addr(&self) -> SocketAddr {
        self.peer
    }
}

impl Drop for Conn {
    /// Close in the background: the I/O thread keeps draining unsent data up to the linger
    /// time.
    fn drop(&mut self) {
        self.start_close();
    }
}

fn closed_error(st: &ConnState) -> io::Error {
    st.conn
        .error()
        .unwrap_or(ConnectionError::LocallyClosed)
        .into()
}
