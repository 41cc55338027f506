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
mod port;
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
pub use port::UdtPort;
pub use stream::UdtStream;

use crate::open::{
    check_mode, connect_failed, ephemeral_local, open_port, reachable_from, rendezvous_options,
};
use crate::options::SocketOptions;
use socket::Socket;

/// Connect from a new ephemeral-port multiplexer (4.11: `connect` without `bind`), trying
/// each address `addr` resolves to.
fn connect_any(addr: impl ToSocketAddrs, options: &SocketOptions) -> io::Result<Socket> {
    let mut last = None;
    for remote in addr.to_socket_addrs()? {
        match connect_one(ephemeral_local(remote), remote, options) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(connect_failed(last))
}

/// Connect from `local` (4.11: `bind`, then `connect`), sharing the multiplexer already on
/// that address when UDT_REUSEADDR allows; tries each address of `addr` in `local`'s family.
fn connect_from(
    local: SocketAddr,
    addr: impl ToSocketAddrs,
    options: &SocketOptions,
) -> io::Result<Socket> {
    let mut last = None;
    for remote in reachable_from(local, addr.to_socket_addrs()?)? {
        match connect_one(local, remote, options) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(connect_failed(last))
}

fn connect_one(
    local: SocketAddr,
    remote: SocketAddr,
    options: &SocketOptions,
) -> io::Result<Socket> {
    Socket::connect(open_port(local, options)?, remote, options)
}

/// Rendezvous: bind `local` and connect to `remote`, which does the same towards us.
fn rendezvous(
    local: SocketAddr,
    remote: SocketAddr,
    options: &SocketOptions,
) -> io::Result<Socket> {
    connect_one(local, remote, &rendezvous_options(options))
}
