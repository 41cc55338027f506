//! The blocking API, shaped like `std::net`: [`UdtListener`], [`UdtStream`] (a reliable byte
//! stream, `Read + Write`) and [`UdtMessageSocket`] (messages with TTL and ordering flags).
//!
//! Every socket is a handle on a connection inside a multiplexer; its calls block on the
//! connection's condition variable while the multiplexer's I/O thread moves the data, or
//! fail with `WouldBlock` in non-blocking mode (UDT_SNDSYN / UDT_RCVSYN off).

#[macro_use]
mod common;
mod file;
mod listener;
mod message;
mod perf;
mod socket;
mod sockopt;
mod stream;

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};

pub use listener::{Incoming, UdtListener};
pub use message::UdtMessageSocket;
#[cfg(feature = "tokio")]
pub(crate) use perf::PerfSnapshot;
pub use perf::Perfmon;
pub use stream::UdtStream;

use crate::mux::MuxRef;
use crate::open::{check_mode, connect_failed, ephemeral_local, rendezvous_options};
use crate::options::SocketOptions;
use socket::Socket;

/// Connect from a new ephemeral-port multiplexer (4.11: `connect` without `bind`), trying
/// each address `addr` resolves to.
fn connect_any(addr: impl ToSocketAddrs, options: &SocketOptions) -> io::Result<Socket> {
    let mut last = None;
    for remote in addr.to_socket_addrs()? {
        let attempt = MuxRef::bind(
            ephemeral_local(remote),
            options.max_datagram(),
            &options.udp(),
        )
        .and_then(|mux| Socket::connect(mux, remote, options));
        match attempt {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(connect_failed(last))
}

/// Rendezvous: bind `local` and connect to `remote`, which does the same towards us.
fn rendezvous(
    local: SocketAddr,
    remote: SocketAddr,
    options: &SocketOptions,
) -> io::Result<Socket> {
    let options = rendezvous_options(options);
    let mux = MuxRef::bind(local, options.max_datagram(), &options.udp())?;
    Socket::connect(mux, remote, &options)
}
