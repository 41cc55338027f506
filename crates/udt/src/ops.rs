//! The socket operations both front-ends share, each written once as a non-blocking step on
//! the locked connection.
//!
//! A step takes the connection's [`ConnState`] (the caller holds the lock) and returns
//! `Some(result)` when the operation is done (or has failed), `None` when it cannot proceed
//! yet. It consumes nothing when it returns `None`, so it can be tried again at the next
//! progress. The front-ends differ only in how they wait between tries:
//! - `blocking::Socket` sleeps on the connection's condition variable (UDT_SNDTIMEO /
//!   UDT_RCVTIMEO), or turns `None` into `WouldBlock` in non-blocking mode (UDT_SNDSYN /
//!   UDT_RCVSYN off);
//! - `tokio::Conn` registers the task's waker before unlocking (`poll_op`).
//!
//! Steps that give the connection something to send "poke" its I/O thread through a
//! [`Port`], so the datagrams leave at once instead of at the next timer.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use udt_proto::{ConnectionError, Instant, RecvError, SendError, SessionKey, State};

use crate::mux::{Mux, MuxRef};
use crate::shared::{ConnShared, ConnState};

/// Most bytes one write copies into the send buffer under the connection's lock: the I/O
/// thread waits for the lock meanwhile, so this bounds how long a large write stalls it.
const MAX_WRITE_PER_LOCK: usize = 256 << 10;

/// The multiplexer a connection lives on, as a step sees it: the port's clock, and the
/// pending list through which its I/O thread learns that the connection has work.
#[derive(Clone, Copy)]
pub(crate) struct Port<'a> {
    mux: &'a Mux,
    conn: &'a Arc<ConnShared>,
}

impl<'a> Port<'a> {
    pub(crate) fn new(mux: &'a MuxRef, conn: &'a Arc<ConnShared>) -> Self {
        Self {
            mux: mux.mux(),
            conn,
        }
    }

    fn now(self) -> Instant {
        self.mux.now()
    }

    /// Mark the connection dirty and wake the I/O thread if it sleeps.
    fn poke(self, st: &mut ConnState) {
        self.mux.poke(self.conn, st);
    }
}

/// Start packet protection now with `key` (after a key exchange over the connection). The
/// proof it queues is sent at once.
pub(crate) fn start_protection(
    st: &mut ConnState,
    port: Port<'_>,
    key: &SessionKey,
) -> io::Result<()> {
    let now = port.now();
    st.conn
        .start_protection(now, key)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    port.poke(st);
    Ok(())
}

/// Connect: done once the handshake has ended: `Ok` if connected, the reason otherwise
/// (refused, timed out, ...).
pub(crate) fn try_connected(st: &mut ConnState) -> Option<io::Result<()>> {
    match st.conn.state() {
        State::Connecting => None,
        State::Connected | State::Closing => Some(Ok(())),
        // Connected, and the peer already closed: reads will see the end of stream.
        State::Closed if st.conn.error() == Some(ConnectionError::PeerClosed) => Some(Ok(())),
        State::Closed => Some(Err(closed_error(st))),
    }
}

/// Read stream data into `buf` (`Ok(0)`: end of stream, or an empty `buf`).
pub(crate) fn try_read(
    st: &mut ConnState,
    port: Port<'_>,
    buf: &mut [u8],
) -> Option<io::Result<usize>> {
    if buf.is_empty() {
        return Some(Ok(0));
    }
    let read = recv_step(st.conn.recv(buf));
    poke_if_due_sooner(st, port);
    read
}

/// [`try_read`] without the copy: up to `max` bytes moved into `out` as shared slices.
pub(crate) fn try_read_chunks(
    st: &mut ConnState,
    port: Port<'_>,
    out: &mut Vec<Bytes>,
    max: usize,
) -> Option<io::Result<usize>> {
    if max == 0 {
        return Some(Ok(0));
    }
    let read = recv_step(st.conn.recv_chunks(out, max));
    poke_if_due_sooner(st, port);
    read
}

/// Queue as much of `data` as fits, at most [`MAX_WRITE_PER_LOCK`] bytes.
pub(crate) fn try_write(
    st: &mut ConnState,
    port: Port<'_>,
    data: &[u8],
) -> Option<io::Result<usize>> {
    if data.is_empty() {
        return Some(Ok(0));
    }
    let data = &data[..data.len().min(MAX_WRITE_PER_LOCK)];
    let sent = st.conn.send(port.now(), data);
    queued(st, port, sent)
}

/// [`try_write`] without copying: the send buffer keeps (a slice of) `data` until it is
/// acknowledged. Little is copied under the lock (a write under 16 KiB, or a packet's worth
/// at either end of a longer one), so the whole of `data` may go at once.
pub(crate) fn try_write_shared(
    st: &mut ConnState,
    port: Port<'_>,
    data: &Bytes,
) -> Option<io::Result<usize>> {
    if data.is_empty() {
        return Some(Ok(0));
    }
    let sent = st.conn.send_shared(port.now(), data.clone());
    queued(st, port, sent)
}

/// The end of a write step: `None` to wait for room, else the result, and the I/O thread
/// poked when something was queued.
fn queued(
    st: &mut ConnState,
    port: Port<'_>,
    sent: Result<usize, SendError>,
) -> Option<io::Result<usize>> {
    let sent = send_step(sent)?;
    if sent.is_ok() {
        port.poke(st);
    }
    Some(sent)
}

/// Queue one message. `ttl`: drop it if not delivered within this time (`None`: never);
/// `in_order`: deliver it only after every earlier message.
pub(crate) fn try_send_msg(
    st: &mut ConnState,
    port: Port<'_>,
    msg: &[u8],
    ttl: Option<Duration>,
    in_order: bool,
) -> Option<io::Result<()>> {
    let sent = send_step(st.conn.send_msg(port.now(), msg, ttl, in_order))?;
    if sent.is_ok() {
        port.poke(st);
    }
    Some(sent)
}

/// Receive one whole message into `buf`; its length as copied (a message longer than `buf`
/// is truncated, as in UDT4).
pub(crate) fn try_recv_msg(
    st: &mut ConnState,
    port: Port<'_>,
    buf: &mut [u8],
) -> Option<io::Result<usize>> {
    let received = recv_step(st.conn.recv_msg(buf).map(|(copied, _len)| copied));
    poke_if_due_sooner(st, port);
    received
}

/// A read can make the connection due sooner than the deadline its I/O thread holds: once the
/// reader has freed the buffer behind a small advertisement, a window update is due at once,
/// and a sender stopped by the flow window waits for it. Nothing else drives the receiving
/// connection then (the sender is silent): a reader emptying a 64-packet buffer every 100 ms
/// left the sender waiting for its timeout three times in six reads
/// (`a_slow_readers_freed_buffer_is_advertised_at_once`). Most reads free no such space and
/// cost only the comparison.
fn poke_if_due_sooner(st: &mut ConnState, port: Port<'_>) {
    let due = st.conn.poll_timeout();
    if due.is_some_and(|due| st.deadline.is_none_or(|held| due < held)) {
        port.poke(st);
    }
}

/// Flush: done once everything written has been acknowledged (or dropped by its TTL); an
/// error if the connection ended first.
pub(crate) fn try_flush(st: &mut ConnState) -> Option<io::Result<()>> {
    if st.conn.is_send_idle() {
        Some(Ok(()))
    } else if st.conn.state() == State::Closed {
        Some(Err(closed_error(st)))
    } else {
        None
    }
}

/// Begin a graceful close (UDT4 `close` with linger): no more writes; queued data drains up
/// to the linger time, then the peer is told. Received data can still be read. Does nothing
/// if the connection is already closing or closed.
pub(crate) fn start_close(st: &mut ConnState, port: Port<'_>) {
    if matches!(st.conn.state(), State::Connecting | State::Connected) {
        st.conn.close(port.now());
        port.poke(st);
    }
}

/// Close: done once the connection has ended, `Ok` if it ended by a close from either side
/// (so calling it again after it finished is `Ok` too), the reason otherwise (the linger
/// ran out, the peer was lost, ...).
pub(crate) fn try_closed(st: &mut ConnState) -> Option<io::Result<()>> {
    (st.conn.state() == State::Closed).then(|| match st.conn.error() {
        None | Some(ConnectionError::LocallyClosed | ConnectionError::PeerClosed) => Ok(()),
        Some(e) => Err(e.into()),
    })
}

/// Why the connection ended, for an operation that found it closed.
fn closed_error(st: &ConnState) -> io::Error {
    st.conn
        .error()
        .unwrap_or(ConnectionError::LocallyClosed)
        .into()
}

/// A send's result as a step: a full buffer, or a connection still connecting (an
/// asynchronous connect), waits as for buffer space.
fn send_step<T>(r: Result<T, SendError>) -> Option<io::Result<T>> {
    match r {
        Err(SendError::WouldBlock | SendError::NotConnected) => None,
        r => Some(r.map_err(io::Error::from)),
    }
}

/// A receive's result as a step: nothing to read yet waits.
fn recv_step<T>(r: Result<T, RecvError>) -> Option<io::Result<T>> {
    match r {
        Err(RecvError::WouldBlock) => None,
        r => Some(r.map_err(io::Error::from)),
    }
}
