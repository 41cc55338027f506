//! The blocking API, shaped like `std::net`: [`UdtListener`], [`UdtStream`] (a reliable byte
//! stream, `Read + Write`) and [`UdtMessageSocket`] (messages with TTL and ordering flags).
//!
//! Every socket is a handle on a connection inside a multiplexer; its calls block on the
//! connection's condition variable while the multiplexer's I/O thread moves the data.

mod listener;
mod message;
mod socket;
mod stream;

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

use udt_proto::{ConnectionConfig, Mode};

pub use listener::{Incoming, UdtListener};
pub use message::UdtMessageSocket;
pub use stream::UdtStream;

use crate::mux::MuxRef;
use socket::Socket;

/// Largest UDP payload a connection with `config` sends or accepts.
fn max_datagram(config: &ConnectionConfig) -> usize {
    config.payload_size() + udt_proto::config::UDT_HEADER as usize
}

/// Refuse a configuration whose data mode does not match the socket type.
fn check_mode(config: &ConnectionConfig, mode: Mode) -> io::Result<()> {
    if config.mode_value() == mode {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("this socket type needs a {mode:?}-mode configuration"),
        ))
    }
}

/// Connect from a new ephemeral-port multiplexer (4.11: `connect` without `bind`), trying
/// each address `addr` resolves to.
fn connect_any(addr: impl ToSocketAddrs, config: &ConnectionConfig) -> io::Result<Socket> {
    let mut last = None;
    for remote in addr.to_socket_addrs()? {
        let local = match remote {
            SocketAddr::V4(_) => SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)),
            SocketAddr::V6(_) => SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0)),
        };
        let attempt = MuxRef::bind(local, max_datagram(config))
            .and_then(|mux| Socket::connect(mux, remote, config.clone()));
        match attempt {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(last
        .unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to connect to")))
}

/// Rendezvous: bind `local` and connect to `remote`, which does the same towards us.
fn rendezvous(
    local: SocketAddr,
    remote: SocketAddr,
    config: &ConnectionConfig,
) -> io::Result<Socket> {
    let mut config = config.clone();
    config.rendezvous(true);
    let mux = MuxRef::bind(local, max_datagram(&config))?;
    Socket::connect(mux, remote, config)
}
