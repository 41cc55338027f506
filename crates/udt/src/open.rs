//! Opening sockets: the steps the blocking and the tokio front-ends share, kept in one place
//! so the two cannot drift (the mode check, the listening multiplexer bound on the first
//! address that works, the ephemeral local address and rendezvous options of a connecting
//! one, the remote addresses a bound socket can reach). Every multiplexer comes from the
//! registry in `ports` ([`open_port`]), so sockets bound to one address share it as
//! UDT_REUSEADDR says. Address resolution and waiting for the handshake stay in each
//! front-end: one blocks, the other awaits.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use udt_proto::Mode;

use crate::mux::MuxRef;
use crate::options::SocketOptions;

/// Refuse options whose data mode does not match the socket type.
pub(crate) fn check_mode(have: Mode, want: Mode) -> io::Result<()> {
    if have == want {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("this socket type needs {want:?}-mode options, not {have:?}"),
    ))
}

/// Refuse to listen with UDT_RENDEZVOUS on.
pub(crate) fn check_can_listen(options: &SocketOptions) -> io::Result<()> {
    if !options.rendezvous() {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        "a rendezvous socket cannot listen (UDT_RENDEZVOUS is on)",
    ))
}

/// A multiplexer bound on the first of `addrs` that works, listening with `options`; the
/// last bind error if none works. Opening the socket and starting its I/O thread are quick
/// system calls, so async callers may call this directly.
pub(crate) fn bind_listening(
    addrs: impl IntoIterator<Item = SocketAddr>,
    options: &SocketOptions,
) -> io::Result<MuxRef> {
    let mut last = None;
    for addr in addrs {
        match open_port(addr, options).and_then(|mux| {
            mux.listen(options.config.clone())?;
            Ok(mux)
        }) {
            Ok(mux) => return Ok(mux),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| no_address("no address to bind")))
}

/// The multiplexer for a socket bound to `local` with `options`: a new one for port 0, else
/// the one already there if UDT_REUSEADDR and the MSS allow sharing it (see `ports`).
pub(crate) fn open_port(local: SocketAddr, options: &SocketOptions) -> io::Result<MuxRef> {
    crate::ports::open(local, options.max_datagram(), &options.udp())
}

/// The addresses among `remotes` that a socket bound to `local` can send to: those of its IP
/// family (for an IPv6 socket, an IPv4 peer is written IPv4-mapped, `[::ffff:a.b.c.d]`).
/// `InvalidInput` if none is left.
pub(crate) fn reachable_from(
    local: SocketAddr,
    remotes: impl IntoIterator<Item = SocketAddr>,
) -> io::Result<Vec<SocketAddr>> {
    let all: Vec<_> = remotes.into_iter().collect();
    let same: Vec<_> = all
        .iter()
        .copied()
        .filter(|r| r.is_ipv4() == local.is_ipv4())
        .collect();
    if same.is_empty() && !all.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("no address of {local}'s IP family to connect to (resolved {all:?})"),
        ));
    }
    Ok(same)
}

/// Where a connecting multiplexer binds to reach `remote`: an ephemeral port on the
/// unspecified address of its family (4.11: `connect` without `bind`).
pub(crate) fn ephemeral_local(remote: SocketAddr) -> SocketAddr {
    match remote {
        SocketAddr::V4(_) => SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)),
        SocketAddr::V6(_) => SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0)),
    }
}

/// The error of a connect whose every address failed: the last failure, or `InvalidInput`
/// when the name resolved to no address at all.
pub(crate) fn connect_failed(last: Option<io::Error>) -> io::Error {
    last.unwrap_or_else(|| no_address("no address to connect to"))
}

/// `options` with UDT_RENDEZVOUS on.
pub(crate) fn rendezvous_options(options: &SocketOptions) -> SocketOptions {
    let mut options = options.clone();
    options.set_rendezvous(true);
    options
}

fn no_address(what: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what)
}
