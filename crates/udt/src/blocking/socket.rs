//! The connected-socket core shared by [`super::UdtStream`] and [`super::UdtMessageSocket`]:
//! calls on one connection with UDT4's blocking modes (UDT_SNDSYN / UDT_RCVSYN), timeouts
//! (UDT_SNDTIMEO / UDT_RCVTIMEO) and linger semantics.
//!
//! Every call locks the connection and tries the operation's step from [`crate::ops`]; in
//! blocking mode it then sleeps on the connection's condition variable until the I/O thread
//! reports progress, in non-blocking mode it fails with `WouldBlock`.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant as StdInstant};

use bytes::Bytes;
use udt_proto::{ConnectionStats, Mode, PathStats, State};

use super::perf::{PerfSnapshot, Perfmon};
use crate::error::{timed_out, would_block};
use crate::mux::MuxRef;
use crate::ops::{self, Port};
use crate::options::{check_timeout, RuntimeOptions, SocketOptions};
use crate::poller::{conn_readiness, PollHandle, Ready};
use crate::shared::{ConnShared, ConnState};

/// `AtomicU64` encoding of "no timeout".
const NO_TIMEOUT: u64 = u64::MAX;

/// One connection as seen by an application thread.
#[derive(Debug)]
pub(crate) struct Socket {
    mux: MuxRef,
    conn: Arc<ConnShared>,
    peer: SocketAddr,
    mode: Mode,
    send_blocking: AtomicBool,
    recv_blocking: AtomicBool,
    read_timeout_ns: AtomicU64,
    write_timeout_ns: AtomicU64,
    perf: Mutex<PerfSnapshot>,
    /// Dies with this socket, telling pollers to forget it.
    alive: Arc<()>,
}

impl Socket {
    /// Connect through `mux`. With UDT_RCVSYN on, block until the handshake ends (the core
    /// enforces the connect timeout: 3 s, or 30 s for rendezvous, unless set otherwise);
    /// off, return at once: the socket becomes writable when connected.
    pub(crate) fn connect(
        mux: MuxRef,
        remote: SocketAddr,
        options: &SocketOptions,
    ) -> io::Result<Self> {
        let conn = mux.connect(remote, options.config.clone())?;
        let socket = Self::new(mux, conn, options.runtime);
        if !options.runtime.recv_blocking {
            return Ok(socket);
        }
        let result = socket.conn.wait_until(None, ops::try_connected);
        result.unwrap_or(Ok(()))?;
        Ok(socket)
    }

    /// The connection's shared state (tests look inside it).
    #[cfg(test)]
    pub(crate) fn shared(&self) -> &Arc<ConnShared> {
        &self.conn
    }

    /// Wrap a connection (accepted, or just started by `connect`).
    pub(crate) fn new(mux: MuxRef, conn: Arc<ConnShared>, runtime: RuntimeOptions) -> Self {
        let (peer, mode) = {
            let st = conn.lock();
            (st.conn.remote(), st.conn.config().mode_value())
        };
        let socket = Self {
            mux,
            conn,
            peer,
            mode,
            send_blocking: AtomicBool::new(runtime.send_blocking),
            recv_blocking: AtomicBool::new(runtime.recv_blocking),
            read_timeout_ns: AtomicU64::new(NO_TIMEOUT),
            write_timeout_ns: AtomicU64::new(NO_TIMEOUT),
            perf: Mutex::new(PerfSnapshot::new(StdInstant::now())),
            alive: Arc::new(()),
        };
        store_timeout(&socket.read_timeout_ns, runtime.recv_timeout);
        store_timeout(&socket.write_timeout_ns, runtime.send_timeout);
        socket
    }

    fn port(&self) -> Port<'_> {
        Port::new(&self.mux, &self.conn)
    }

    /// Run `f` under the connection's lock until it gives a result: once in non-blocking
    /// mode (`WouldBlock` if it gives none), else until the timeout in `timeout_ns`.
    fn op<T>(
        &self,
        blocking: bool,
        timeout_ns: &AtomicU64,
        what: &'static str,
        mut f: impl FnMut(&mut ConnState) -> Option<io::Result<T>>,
    ) -> io::Result<T> {
        if !blocking {
            let mut st = self.conn.lock();
            return f(&mut st).unwrap_or_else(|| Err(would_block(what)));
        }
        self.conn
            .wait_until(deadline(timeout_ns), f)
            .unwrap_or_else(|| Err(timed_out(what)))
    }

    pub(crate) fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.read_with(self.recv_blocking.load(Relaxed), buf)
    }

    /// `read` in blocking mode whatever UDT_RCVSYN says (for `recv_file`).
    pub(crate) fn read_blocking(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.read_with(true, buf)
    }

    fn read_with(&self, blocking: bool, buf: &mut [u8]) -> io::Result<usize> {
        let port = self.port();
        self.op(blocking, &self.read_timeout_ns, "read", |st| {
            ops::try_read(st, port, buf)
        })
    }

    /// [`Self::read`] without the copy: up to `max` bytes appended to `out` as shared slices.
    pub(crate) fn read_chunks(&self, out: &mut Vec<Bytes>, max: usize) -> io::Result<usize> {
        let port = self.port();
        let blocking = self.recv_blocking.load(Relaxed);
        self.op(blocking, &self.read_timeout_ns, "read", |st| {
            ops::try_read_chunks(st, port, out, max)
        })
    }

    /// Queue as much of `data` as fits (up to a bound per lock), waiting for space in
    /// blocking mode.
    pub(crate) fn write(&self, data: &[u8]) -> io::Result<usize> {
        self.write_with(self.send_blocking.load(Relaxed), data)
    }

    pub(crate) fn write_with(&self, blocking: bool, data: &[u8]) -> io::Result<usize> {
        let port = self.port();
        self.op(blocking, &self.write_timeout_ns, "write", |st| {
            ops::try_write(st, port, data)
        })
    }

    /// [`Self::write`] without copying `data` into the send buffer.
    pub(crate) fn write_shared(&self, data: &Bytes) -> io::Result<usize> {
        let port = self.port();
        let blocking = self.send_blocking.load(Relaxed);
        self.op(blocking, &self.write_timeout_ns, "write", |st| {
            ops::try_write_shared(st, port, data)
        })
    }

    /// Wait until everything written has been acknowledged (non-blocking: `WouldBlock` if
    /// it has not been yet).
    pub(crate) fn flush(&self) -> io::Result<()> {
        self.flush_with(self.send_blocking.load(Relaxed))
    }

    /// `flush` in blocking mode whatever UDT_SNDSYN says (for `send_file`).
    pub(crate) fn flush_blocking(&self) -> io::Result<()> {
        self.flush_with(true)
    }

    fn flush_with(&self, blocking: bool) -> io::Result<()> {
        self.op(blocking, &self.write_timeout_ns, "flush", ops::try_flush)
    }

    pub(crate) fn send_msg(
        &self,
        msg: &[u8],
        ttl: Option<Duration>,
        in_order: bool,
    ) -> io::Result<()> {
        let blocking = self.send_blocking.load(Relaxed);
        let port = self.port();
        self.op(blocking, &self.write_timeout_ns, "send_msg", |st| {
            ops::try_send_msg(st, port, msg, ttl, in_order)
        })
    }

    pub(crate) fn recv_msg(&self, buf: &mut [u8]) -> io::Result<usize> {
        let blocking = self.recv_blocking.load(Relaxed);
        let port = self.port();
        self.op(blocking, &self.read_timeout_ns, "recv_msg", |st| {
            ops::try_recv_msg(st, port, buf)
        })
    }

    /// UDT4 `close` with linger: unsent data drains (up to the linger time), then the peer is
    /// told. With UDT_SNDSYN on this blocks until the connection has ended; off, the linger
    /// runs in the background and this returns at once (as in 4.11).
    pub(crate) fn close(&self) -> io::Result<()> {
        self.shutdown();
        if !self.send_blocking.load(Relaxed) {
            return Ok(());
        }
        let result = self
            .conn
            .wait_until(None, ops::try_closed)
            .unwrap_or(Ok(()));
        // Closed is reached when the Shutdown is queued, not sent: wait (briefly, in case
        // the I/O thread is gone) until it left, or a process exiting right after `close`
        // leaves its peer to time out.
        let deadline = std::time::Instant::now() + Duration::from_secs(1);
        self.conn
            .wait_until(Some(deadline), |st| st.retired.then_some(()));
        result
    }

    /// Begin closing without waiting (what `Drop` does): no more writes; queued data drains
    /// up to the linger time, then the peer is told. Received data can still be read.
    pub(crate) fn shutdown(&self) {
        ops::start_close(&mut self.conn.lock(), self.port());
    }

    pub(crate) fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        store_timeout(&self.read_timeout_ns, check_timeout("UDT_RCVTIMEO", t)?);
        Ok(())
    }

    pub(crate) fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        store_timeout(&self.write_timeout_ns, check_timeout("UDT_SNDTIMEO", t)?);
        Ok(())
    }

    pub(crate) fn read_timeout(&self) -> Option<Duration> {
        load_timeout(&self.read_timeout_ns)
    }

    pub(crate) fn write_timeout(&self) -> Option<Duration> {
        load_timeout(&self.write_timeout_ns)
    }

    pub(crate) fn set_send_blocking(&self, on: bool) {
        self.send_blocking.store(on, Relaxed);
    }

    pub(crate) fn send_blocking(&self) -> bool {
        self.send_blocking.load(Relaxed)
    }

    pub(crate) fn set_recv_blocking(&self, on: bool) {
        self.recv_blocking.store(on, Relaxed);
    }

    pub(crate) fn recv_blocking(&self) -> bool {
        self.recv_blocking.load(Relaxed)
    }

    /// UDT_MAXBW while connected; the I/O thread re-reads the pacing at once.
    pub(crate) fn set_max_bandwidth(&self, bytes_per_sec: Option<u64>) {
        let mut st = self.conn.lock();
        st.conn.set_max_bandwidth(bytes_per_sec);
        self.mux.mux().poke(&self.conn, &mut st);
    }

    pub(crate) fn max_bandwidth(&self) -> Option<u64> {
        self.conn.lock().conn.config().max_bandwidth_value()
    }

    pub(crate) fn set_linger(&self, linger: Option<Duration>) {
        self.conn.lock().conn.set_linger(linger);
    }

    pub(crate) fn linger(&self) -> Option<Duration> {
        self.conn.lock().conn.config().linger_value()
    }

    pub(crate) fn stats(&self) -> ConnectionStats {
        self.conn.lock().conn.stats()
    }

    pub(crate) fn path_stats(&self) -> PathStats {
        self.conn.lock().conn.path_stats()
    }

    pub(crate) fn start_protection(&self, key: &udt_proto::SessionKey) -> io::Result<()> {
        ops::start_protection(&mut self.conn.lock(), self.port(), key)
    }

    pub(crate) fn is_peer_authenticated(&self) -> bool {
        self.conn.lock().conn.is_peer_authenticated()
    }

    pub(crate) fn peer_extensions(&self) -> Option<udt_proto::wire::Capabilities> {
        self.conn.lock().conn.peer_extensions()
    }

    pub(crate) fn perfmon(&self, clear: bool) -> Perfmon {
        let (total, instant) = {
            let st = self.conn.lock();
            (st.conn.stats(), st.conn.path_stats())
        };
        let mut snap = self.perf.lock().unwrap_or_else(PoisonError::into_inner);
        snap.report(StdInstant::now(), total, instant, clear)
    }

    pub(crate) fn state(&self) -> State {
        self.conn.lock().conn.state()
    }

    pub(crate) fn events(&self) -> Ready {
        conn_readiness(&self.conn, self.mode)
    }

    pub(crate) fn send_data_pkts(&self) -> u32 {
        self.conn.lock().conn.send_buffer_pkts()
    }

    pub(crate) fn recv_data_pkts(&self) -> u32 {
        self.conn.lock().conn.readable_pkts()
    }

    /// The configured buffers and flags, and the negotiated MSS.
    pub(crate) fn conn_config(&self) -> (super::sockopt::ConfigPkts, u32) {
        let st = self.conn.lock();
        let c = st.conn.config();
        let pkts = super::sockopt::ConfigPkts {
            flow: c.flow_control_pkts_value(),
            send: c.send_buffer_pkts_value(),
            recv: c.recv_buffer_pkts_value(),
            rendezvous: c.is_rendezvous(),
        };
        (pkts, st.conn.path_stats().mss)
    }

    pub(crate) fn poll_handle(&self) -> PollHandle {
        PollHandle::conn(&self.conn, self.mode, &self.alive)
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
        self.shutdown();
    }
}

fn deadline(timeout_ns: &AtomicU64) -> Option<StdInstant> {
    load_timeout(timeout_ns).map(|t| StdInstant::now() + t)
}

/// Store a checked (non-zero) timeout.
fn store_timeout(slot: &AtomicU64, t: Option<Duration>) {
    let ns = match t {
        None => NO_TIMEOUT,
        Some(d) => u64::try_from(d.as_nanos()).unwrap_or(NO_TIMEOUT - 1),
    };
    slot.store(ns, Relaxed);
}

fn load_timeout(slot: &AtomicU64) -> Option<Duration> {
    match slot.load(Relaxed) {
        NO_TIMEOUT => None,
        ns => Some(Duration::from_nanos(ns)),
    }
}
