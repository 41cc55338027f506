//! [`Conn`]: one connection as an async task sees it, the core shared by
//! [`super::UdtStream`] and [`super::UdtMessageSocket`].
//!
//! Every `poll_*` method has the same shape ([`Conn::poll_op`]): lock the connection, try the
//! operation's step from [`crate::ops`], and if it cannot proceed register the task's waker
//! *before* unlocking. The I/O thread changes the connection and wakes the list under the
//! same lock, so no wake-up falls between the look and the registration. Nothing is consumed
//! by a poll that returns `Pending`, so dropping any of these futures loses no data
//! (cancellation safe).

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant as StdInstant};

use bytes::Bytes;
use udt_proto::{ConnectionStats, PathStats, State};

use crate::blocking::PerfSnapshot;
use crate::mux::MuxRef;
use crate::ops::{self, Port};
use crate::shared::{ConnShared, ConnState};
use crate::Perfmon;

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

    fn port(&self) -> Port<'_> {
        Port::new(&self.mux, &self.conn)
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
        self.poll_op(cx, ops::try_connected)
    }

    /// Read stream data into `buf` (`Ok(0)`: end of stream).
    pub(super) fn poll_read(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_op(cx, |st| ops::try_read(st, self.port(), buf))
    }

    /// [`Self::poll_read`] without the copy: up to `max` bytes appended to `out`.
    pub(super) fn poll_read_chunks(
        &self,
        cx: &mut Context<'_>,
        out: &mut Vec<Bytes>,
        max: usize,
    ) -> Poll<io::Result<usize>> {
        self.poll_op(cx, |st| ops::try_read_chunks(st, self.port(), out, max))
    }

    /// Queue as much of `data` as fits (up to a bound per lock).
    pub(super) fn poll_write(&self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        self.poll_op(cx, |st| ops::try_write(st, self.port(), data))
    }

    /// [`Self::poll_write`] without copying `data` into the send buffer.
    pub(super) fn poll_write_shared(
        &self,
        cx: &mut Context<'_>,
        data: &Bytes,
    ) -> Poll<io::Result<usize>> {
        self.poll_op(cx, |st| ops::try_write_shared(st, self.port(), data))
    }

    /// Queue one message.
    pub(super) fn poll_send_msg(
        &self,
        cx: &mut Context<'_>,
        msg: &[u8],
        ttl: Option<Duration>,
        in_order: bool,
    ) -> Poll<io::Result<()>> {
        self.poll_op(cx, |st| {
            ops::try_send_msg(st, self.port(), msg, ttl, in_order)
        })
    }

    /// Receive one whole message into `buf` (truncated if longer, as in UDT4).
    pub(super) fn poll_recv_msg(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_op(cx, |st| ops::try_recv_msg(st, self.port(), buf))
    }

    /// Ready once everything written has been acknowledged (or dropped by its TTL).
    pub(super) fn poll_flush(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_op(cx, ops::try_flush)
    }

    /// Close with linger and wait for the end: queued data drains (up to the linger time),
    /// then the peer is told. Calling it again after it finished is `Ok`.
    pub(super) fn poll_close(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.start_close();
        self.poll_op(cx, ops::try_closed)
    }

    /// Begin closing without waiting (what `Drop` does).
    pub(super) fn start_close(&self) {
        ops::start_close(&mut self.conn.lock(), self.port());
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
