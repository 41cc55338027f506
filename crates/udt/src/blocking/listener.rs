//! [`UdtListener`]: accepts UDT connections on one UDP port, used like a `TcpListener`.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant as StdInstant;

use udt_proto::Mode;

use super::{check_mode, Socket, UdtMessageSocket, UdtStream};
use crate::error::would_block;
use crate::mux::MuxRef;
use crate::open::{bind_listening, check_can_listen};
use crate::options::{RuntimeOptions, SocketOptions};
use crate::poller::PollHandle;

/// A listening UDT socket. Accepted connections share its UDP port (and its multiplexer), as
/// in UDT4, and inherit its options; up to 1024 accepted connections wait for
/// [`UdtListener::accept`], and requests beyond that are refused.
#[derive(Debug)]
pub struct UdtListener {
    mux: MuxRef,
    mode: Mode,
    runtime: RuntimeOptions,
    recv_blocking: AtomicBool,
    alive: Arc<()>,
}

impl UdtListener {
    /// Listen on `addr` for stream connections with UDT4's default options.
    pub fn bind(addr: impl ToSocketAddrs) -> io::Result<Self> {
        Self::bind_with(addr, SocketOptions::default())
    }

    /// Listen on `addr`; accepted connections use `options` (its mode decides which socket
    /// type the listener accepts: a client of the other type is refused).
    pub fn bind_with(
        addr: impl ToSocketAddrs,
        options: impl Into<SocketOptions>,
    ) -> io::Result<Self> {
        let options = options.into();
        check_can_listen(&options)?;
        let mux = bind_listening(addr.to_socket_addrs()?, &options)?;
        Ok(Self::from_mux(mux, &options))
    }

    /// A listener on a multiplexer already listening with `options` (see `UdtPort::listen`).
    pub(super) fn from_mux(mux: MuxRef, options: &SocketOptions) -> Self {
        Self {
            mux,
            mode: options.mode(),
            runtime: options.runtime,
            recv_blocking: AtomicBool::new(options.runtime.recv_blocking),
            alive: Arc::new(()),
        }
    }

    /// Wait for the next stream connection (`WouldBlock` at once if none is waiting and
    /// UDT_RCVSYN is off).
    pub fn accept(&self) -> io::Result<(UdtStream, SocketAddr)> {
        check_mode(self.mode, Mode::Stream)?;
        let socket = self.accept_socket()?;
        let peer = socket.peer_addr();
        Ok((UdtStream::from_socket(socket), peer))
    }

    /// Wait for the next connection of a message-mode listener.
    pub fn accept_message(&self) -> io::Result<(UdtMessageSocket, SocketAddr)> {
        check_mode(self.mode, Mode::Message)?;
        let socket = self.accept_socket()?;
        let peer = socket.peer_addr();
        Ok((UdtMessageSocket::from_socket(socket), peer))
    }

    fn accept_socket(&self) -> io::Result<Socket> {
        let conn = if self.recv_blocking.load(Relaxed) {
            self.mux.accept(None)?
        } else {
            self.mux
                .accept(Some(StdInstant::now()))
                .map_err(|e| match e.kind() {
                    io::ErrorKind::TimedOut => would_block("accept"),
                    _ => e,
                })?
        };
        Ok(Socket::new(self.mux.clone(), conn, self.runtime))
    }

    /// UDT_RCVSYN for `accept` (default true).
    pub fn set_recv_blocking(&self, on: bool) {
        self.recv_blocking.store(on, Relaxed);
    }

    /// The current UDT_RCVSYN.
    pub fn recv_blocking(&self) -> bool {
        self.recv_blocking.load(Relaxed)
    }

    /// `set_recv_blocking(!on)`, as `std::net::TcpListener` has it.
    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        self.set_recv_blocking(!on);
        Ok(())
    }

    /// Stop listening now, through a shared reference (UDT4 `close` on a listener whose
    /// handle other threads share): threads blocked in `accept` wake with `NotConnected`,
    /// connections not yet accepted are closed, accepted ones live on.
    pub fn close_shared(&self) {
        self.mux.stop_listening();
    }

    /// An endless iterator over accepted stream connections.
    pub fn incoming(&self) -> Incoming<'_> {
        Incoming { listener: self }
    }

    /// The local UDP address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.mux.mux().local_addr())
    }

    /// What the kernel granted the listening UDP port: buffer sizes (and whether they were
    /// capped) and the offloads in use.
    pub fn socket_info(&self) -> crate::SocketInfo {
        self.mux.mux().socket_info
    }

    /// Stop the multiplexer at once without telling any peer, as if the process died; the
    /// peers of its connections must find out by themselves. For tests.
    #[doc(hidden)]
    pub fn abort_multiplexer(&self) {
        self.mux.abort();
    }
}

impl crate::Source for UdtListener {
    fn poll_handle(&self) -> PollHandle {
        PollHandle::listener(self.mux.shared(), &self.alive)
    }
}

impl Drop for UdtListener {
    /// Stop accepting; connections already handed out live on.
    fn drop(&mut self) {
        self.mux.stop_listening();
    }
}

/// Iterator returned by [`UdtListener::incoming`].
#[derive(Debug)]
pub struct Incoming<'a> {
    listener: &'a UdtListener,
}

impl Iterator for Incoming<'_> {
    type Item = io::Result<UdtStream>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.listener.accept().map(|(s, _)| s))
    }
}
