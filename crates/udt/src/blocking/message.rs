//! [`UdtMessageSocket`]: a UDT connection in message mode (`SOCK_DGRAM`).

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use udt_proto::{ConnectionConfig, ConnectionStats, Mode, PathStats, State};

use super::{check_mode, connect_any, rendezvous, Socket};

/// A connection that carries whole messages: each `send_msg` arrives as one `recv_msg`, or
/// not at all if its TTL runs out first.
#[derive(Debug)]
pub struct UdtMessageSocket {
    socket: Socket,
}

impl UdtMessageSocket {
    /// Connect to a message-mode listener at `addr` with UDT4's defaults.
    pub fn connect(addr: impl ToSocketAddrs) -> io::Result<Self> {
        Self::connect_with(addr, ConnectionConfig::new(Mode::Message))
    }

    /// [`Self::connect`] with explicit options (the mode must be [`Mode::Message`]).
    pub fn connect_with(addr: impl ToSocketAddrs, config: ConnectionConfig) -> io::Result<Self> {
        check_mode(&config, Mode::Message)?;
        connect_any(addr, &config).map(Self::from_socket)
    }

    /// Rendezvous connect in message mode (see [`super::UdtStream::rendezvous`]).
    pub fn rendezvous(local: SocketAddr, remote: SocketAddr) -> io::Result<Self> {
        let config = ConnectionConfig::new(Mode::Message);
        rendezvous(local, remote, &config).map(Self::from_socket)
    }

    pub(crate) fn from_socket(socket: Socket) -> Self {
        Self { socket }
    }

    /// Send one message. `ttl`: drop it if not delivered within this time (`None`: never);
    /// `in_order`: deliver it only after every earlier message. Blocks while the send
    /// buffer is full (up to the write timeout).
    pub fn send_msg(&self, msg: &[u8], ttl: Option<Duration>, in_order: bool) -> io::Result<()> {
        self.socket.send_msg(msg, ttl, in_order)
    }

    /// Receive one whole message into `buf`; returns its length (a message longer than `buf`
    /// is truncated, as in UDT4). Blocks until one arrives (up to the read timeout).
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

    /// UDT_RCVTIMEO.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.socket.set_read_timeout(timeout)
    }

    /// UDT_SNDTIMEO.
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.socket.set_write_timeout(timeout)
    }

    /// Cumulative counters.
    pub fn stats(&self) -> ConnectionStats {
        self.socket.stats()
    }

    /// Instantaneous path state.
    pub fn path_stats(&self) -> PathStats {
        self.socket.path_stats()
    }

    /// UDT_STATE.
    pub fn state(&self) -> State {
        self.socket.state()
    }

    /// The local UDP address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.socket.local_addr())
    }

    /// The peer's UDP address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.socket.peer_addr())
    }
}
