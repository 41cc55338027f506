//! [`UdtListener`]: accepts UDT connections on one UDP port, used like
//! `tokio::net::TcpListener`.

use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::SeqCst;
use std::task::{Context, Poll};

use udt_proto::Mode;

use super::{check_mode, Conn, UdtMessageSocket, UdtStream};
use crate::mux::MuxRef;
use crate::open::{bind_listening, check_can_listen};
use crate::options::SocketOptions;

/// A listening UDT socket for async code. Accepted connections share its UDP port (and its
/// multiplexer) and inherit its options; up to 1024 wait for [`UdtListener::accept`], and
/// requests beyond that are refused. Dropping it stops accepting; connections already
/// handed out live on.
#[derive(Debug)]
pub struct UdtListener {
    mux: MuxRef,
    mode: Mode,
}

impl UdtListener {
    /// Listen on `addr` for stream connections with UDT4's default options.
    pub async fn bind(addr: impl ::tokio::net::ToSocketAddrs) -> io::Result<Self> {
        Self::bind_with(addr, SocketOptions::default()).await
    }

    /// Listen on `addr`; accepted connections use `options` (its mode decides which socket
    /// type the listener accepts: a client of the other type is refused).
    pub async fn bind_with(
        addr: impl ::tokio::net::ToSocketAddrs,
        options: impl Into<SocketOptions>,
    ) -> io::Result<Self> {
        let options = options.into();
        check_can_listen(&options)?;
        // Opening the socket and starting its I/O thread are quick system calls.
        let mux = bind_listening(::tokio::net::lookup_host(addr).await?, &options)?;
        let mode = options.mode();
        Ok(Self { mux, mode })
    }

    /// Wait for the next stream connection. Cancellation safe: if the future is dropped, no
    /// connection was taken from the queue.
    pub async fn accept(&self) -> io::Result<(UdtStream, SocketAddr)> {
        poll_fn(|cx| self.poll_accept(cx)).await
    }

    /// Poll for the next stream connection (for hand-written futures).
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(UdtStream, SocketAddr)>> {
        if let Err(e) = check_mode(self.mode, Mode::Stream) {
            return Poll::Ready(Err(e));
        }
        self.poll_accept_conn(cx).map_ok(|c| {
            let peer = c.peer_addr();
            (UdtStream::from_conn(c), peer)
        })
    }

    /// Wait for the next connection of a message-mode listener.
    pub async fn accept_message(&self) -> io::Result<(UdtMessageSocket, SocketAddr)> {
        check_mode(self.mode, Mode::Message)?;
        let c = poll_fn(|cx| self.poll_accept_conn(cx)).await?;
        let peer = c.peer_addr();
        Ok((UdtMessageSocket::from_conn(c), peer))
    }

    /// Take a connection from the accept queue, or wake this task when the queue changes
    /// (the waker is registered under the multiplexer's lock, where the I/O thread queues
    /// connections).
    fn poll_accept_conn(&self, cx: &mut Context<'_>) -> Poll<io::Result<Conn>> {
        let mux = self.mux.mux();
        let mut state = mux.lock();
        if let Some(conn) = state.accept_queue.pop_front() {
            drop(state);
            return Poll::Ready(Ok(Conn::new(self.mux.clone(), conn)));
        }
        mux.accept_wakers.register(cx.waker());
        // Checked after registering: `abort` sets its flag without the lock.
        if !state.endpoint.is_listening() || mux.aborted.load(SeqCst) {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the listener was closed",
            )));
        }
        Poll::Pending
    }

    /// The local UDP address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.mux.mux().local_addr())
    }
}

impl Drop for UdtListener {
    /// Stop accepting, and close connections that were accepted but never taken.
    fn drop(&mut self) {
        self.mux.stop_listening();
    }
}
