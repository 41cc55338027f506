//! [`UdtMessageSocket`]: a UDT connection in message mode (`SOCK_DGRAM`).

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use udt_proto::Mode;

use super::{check_mode, connect_any, connect_from, rendezvous, Socket};
use crate::options::SocketOptions;

/// A connection that carries whole messages: each `send_msg` arrives as one `recv_msg`, or
/// not at all if its TTL runs out first.
#[derive(Debug)]
pub struct UdtMessageSocket {
    socket: Socket,
}

impl UdtMessageSocket {
    /// Connect to a message-mode listener at `addr` with UDT4's defaults.
    pub fn connect(addr: impl ToSocketAddrs) -> io::Result<Self> {
        Self::connect_with(addr, SocketOptions::new(Mode::Message))
    }

    /// [`Self::connect`] with explicit options (the mode must be [`Mode::Message`]).
    pub fn connect_with(
        addr: impl ToSocketAddrs,
        options: impl Into<SocketOptions>,
    ) -> io::Result<Self> {
        let options = options.into();
        check_mode(options.mode(), Mode::Message)?;
        connect_any(addr, &options).map(Self::from_socket)
    }

    /// Rendezvous connect in message mode (see [`super::UdtStream::rendezvous`]).
    pub fn rendezvous(local: SocketAddr, remote: SocketAddr) -> io::Result<Self> {
        Self::rendezvous_with(local, remote, SocketOptions::new(Mode::Message))
    }

    /// [`Self::rendezvous`] with explicit options.
    pub fn rendezvous_with(
        local: SocketAddr,
        remote: SocketAddr,
        options: impl Into<SocketOptions>,
    ) -> io::Result<Self> {
        let options = options.into();
        check_mode(options.mode(), Mode::Message)?;
        rendezvous(local, remote, &options).map(Self::from_socket)
    }

    /// Connect from the local address `local` (UDT4: `bind`, then `connect`) to a message-mode listener
    /// at `remote`. With UDT_REUSEADDR on (the default) on both sides, `local` may be the
    /// address of a listener or of other connections of this process with the same MSS:
    /// they all share one UDP port and one I/O thread, and several connections from one
    /// port may go to the same remote. A port held with UDT_REUSEADDR off on either side is
    /// `AddrInUse`. Port 0 picks a new ephemeral port, like [`Self::connect_with`].
    pub fn connect_from(
        local: SocketAddr,
        remote: impl ToSocketAddrs,
        options: impl Into<SocketOptions>,
    ) -> io::Result<Self> {
        let options = options.into();
        check_mode(options.mode(), Mode::Message)?;
        connect_from(local, remote, &options).map(Self::from_socket)
    }

    pub(crate) fn from_socket(socket: Socket) -> Self {
        Self { socket }
    }

    /// Send one message. `ttl`: drop it if not delivered within this time (`None`: never);
    /// `in_order`: deliver it only after every earlier message. Blocks while the send
    /// buffer is full (up to the write timeout; `WouldBlock` in non-blocking mode).
    pub fn send_msg(&self, msg: &[u8], ttl: Option<Duration>, in_order: bool) -> io::Result<()> {
        self.socket.send_msg(msg, ttl, in_order)
    }

    /// Receive one whole message into `buf`; returns its length (a message longer than `buf`
    /// is truncated, as in UDT4). Blocks until one arrives (up to the read timeout;
    /// `WouldBlock` in non-blocking mode).
    pub fn recv_msg(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.socket.recv_msg(buf)
    }

    /// Block until every message sent has been acknowledged or dropped.
    pub fn flush(&self) -> io::Result<()> {
        self.socket.flush()
    }

    /// Close with linger (see [`super::UdtStream::close`]).
    pub fn close(self) -> io::Result<()> {
        self.socket.close()
    }
}

common_socket_methods!(UdtMessageSocket);
