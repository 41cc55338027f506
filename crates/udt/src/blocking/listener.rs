//! [`UdtListener`]: accepts UDT connections on one UDP port, used like a `TcpListener`.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};

use udt_proto::{ConnectionConfig, Mode};

use super::{check_mode, max_datagram, Socket, UdtMessageSocket, UdtStream};
use crate::mux::MuxRef;

/// A listening UDT socket. Accepted connections share its UDP port (and its multiplexer), as
/// in UDT4; up to 1024 accepted connections wait for [`UdtListener::accept`], and requests
/// beyond that are refused.
#[derive(Debug)]
pub struct UdtListener {
    mux: MuxRef,
    mode: Mode,
}

impl UdtListener {
    /// Listen on `addr` for stream connections with UDT4's default options.
    pub fn bind(addr: impl ToSocketAddrs) -> io::Result<Self> {
        Self::bind_with(addr, ConnectionConfig::default())
    }

    /// Listen on `addr`; accepted connections use `config` (its mode decides which socket
    /// type the listener accepts: a client of the other type is refused).
    pub fn bind_with(addr: impl ToSocketAddrs, config: ConnectionConfig) -> io::Result<Self> {
        let mut last = None;
        for addr in addr.to_socket_addrs()? {
            match MuxRef::bind(addr, max_datagram(&config)) {
                Ok(mux) => {
                    let mode = config.mode_value();
                    mux.listen(config);
                    return Ok(Self { mux, mode });
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last
            .unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to bind")))
    }

    /// Wait for the next stream connection.
    pub fn accept(&self) -> io::Result<(UdtStream, SocketAddr)> {
        check_mode(&ConnectionConfig::new(self.mode), Mode::Stream)?;
        let socket = self.accept_socket()?;
        let peer = socket.peer_addr();
        Ok((UdtStream::from_socket(socket), peer))
    }

    /// Wait for the next connection of a message-mode listener.
    pub fn accept_message(&self) -> io::Result<(UdtMessageSocket, SocketAddr)> {
        check_mode(&ConnectionConfig::new(self.mode), Mode::Message)?;
        let socket = self.accept_socket()?;
        let peer = socket.peer_addr();
        Ok((UdtMessageSocket::from_socket(socket), peer))
    }

    fn accept_socket(&self) -> io::Result<Socket> {
        let conn = self.mux.accept(None)?;
        Ok(Socket::new(self.mux.clone(), conn))
    }

    /// An endless iterator over accepted stream connections.
    pub fn incoming(&self) -> Incoming<'_> {
        Incoming { listener: self }
    }

    /// The local UDP address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.mux.mux().local_addr())
    }

    /// Stop the multiplexer at once without telling any peer, as if the process died; the
    /// peers of its connections must find out by themselves. For tests.
    #[doc(hidden)]
    pub fn abort_multiplexer(&self) {
        self.mux.abort();
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
