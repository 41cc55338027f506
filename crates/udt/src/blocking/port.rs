//! [`UdtPort`]: a UDT socket that is bound but neither listening nor connected, the state
//! UDT4's C API has between `bind` and `listen` / `connect`.
//!
//! The `std::net`-shaped types bind and listen (or bind and connect) in one call, which is
//! what Rust code wants. Code ported from UDT4, and the drop-in `libudt.so.0` above all, needs
//! the step in between: the local address is known (`getsockname` after binding port 0), and
//! `bind2` hands over a UDP socket the application bound itself (after NAT traversal). A port
//! holds its multiplexer; listening or connecting through it shares that multiplexer, and a
//! failed connect leaves the port bound for another try, as in 4.11.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};

use udt_proto::Mode;

use super::{check_mode, Socket, UdtListener, UdtMessageSocket, UdtStream};
use crate::mux::MuxRef;
use crate::open::{check_can_listen, open_port, reachable_from};
use crate::options::SocketOptions;

/// A bound UDT socket: a local UDP port (shared with other sockets of this process bound to
/// the same address, as UDT_REUSEADDR says) on which to listen or from which to connect.
///
/// ```no_run
/// use udt::{blocking::UdtPort, SocketOptions};
/// let options = SocketOptions::default();
/// let port = UdtPort::bind("127.0.0.1:0", &options)?;
/// println!("bound to {}", port.local_addr());
/// let listener = port.listen(&options)?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct UdtPort {
    mux: MuxRef,
}

impl UdtPort {
    /// Bind the first address of `addr` that works, with `options`' UDP-level settings
    /// (UDT_MSS, UDT_REUSEADDR, UDP_SNDBUF, UDP_RCVBUF).
    pub fn bind(addr: impl ToSocketAddrs, options: &SocketOptions) -> io::Result<Self> {
        let mut last = None;
        for a in addr.to_socket_addrs()? {
            match open_port(a, options) {
                Ok(mux) => return Ok(Self { mux }),
                Err(e) => last = Some(e),
            }
        }
        Err(last
            .unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to bind")))
    }

    /// Use `socket`, a UDP socket the application bound, as this port (4.11 `bind2`). The
    /// port owns it from now on and makes it non-blocking; `InvalidInput` if it is not a
    /// bound UDP socket.
    pub fn from_udp_socket(socket: UdpSocket, options: &SocketOptions) -> io::Result<Self> {
        let mux = crate::ports::adopt(socket, options.max_datagram(), &options.udp())?;
        Ok(Self { mux })
    }

    /// The local address (the port the system chose, after binding port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.mux.mux().local_addr()
    }

    /// Listen here for connections of `options`' mode, accepted with `options`. Refused with
    /// `AddrInUse` if another UDT socket already listens on this port, and with
    /// `InvalidInput` for a rendezvous socket.
    pub fn listen(&self, options: &SocketOptions) -> io::Result<UdtListener> {
        check_can_listen(options)?;
        self.mux.listen(options.config.clone())?;
        Ok(UdtListener::from_mux(self.mux.clone(), options))
    }

    /// Connect from here to a stream listener at `remote` (or, with UDT_RENDEZVOUS on in
    /// `options`, to a peer doing the same towards us). The port stays bound: after a
    /// failure it may try again.
    pub fn connect_stream(
        &self,
        remote: impl ToSocketAddrs,
        options: &SocketOptions,
    ) -> io::Result<UdtStream> {
        check_mode(options.mode(), Mode::Stream)?;
        self.connect(remote, options).map(UdtStream::from_socket)
    }

    /// [`Self::connect_stream`] for message mode.
    pub fn connect_message(
        &self,
        remote: impl ToSocketAddrs,
        options: &SocketOptions,
    ) -> io::Result<UdtMessageSocket> {
        check_mode(options.mode(), Mode::Message)?;
        self.connect(remote, options)
            .map(UdtMessageSocket::from_socket)
    }

    fn connect(&self, remote: impl ToSocketAddrs, options: &SocketOptions) -> io::Result<Socket> {
        let mut last = None;
        for r in reachable_from(self.local_addr(), remote.to_socket_addrs()?)? {
            match Socket::connect(self.mux.clone(), r, options) {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(e),
            }
        }
        Err(crate::open::connect_failed(last))
    }
}
