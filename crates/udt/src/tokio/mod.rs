//! The async API (feature `tokio`): [`UdtListener`], [`UdtStream`] (`AsyncRead` +
//! `AsyncWrite`) and [`UdtMessageSocket`], over the same multiplexers, I/O threads and
//! `udt_proto` connections as the blocking API.
//!
//! No thread is added and nothing polls: each call tries the non-blocking core operation under
//! the connection's lock and, if it cannot proceed, leaves the task's `Waker` in the
//! connection's waker list (`shared::WakerList`) before unlocking. The I/O thread wakes
//! that list whenever the connection makes progress (data, an ACK freeing buffer space, the
//! handshake ending, the connection closing), exactly where it signals blocked threads.
//! Accepts wait the same way on the multiplexer's accept queue.
//!
//! What differs from the blocking API: UDT_SNDSYN / UDT_RCVSYN and the UDT_SNDTIMEO /
//! UDT_RCVTIMEO timeouts do not apply (an async call never blocks a thread; wrap it in
//! `tokio::time::timeout` to bound it). The connect timeout is the core's (3 s by default,
//! [`crate::ConnectionConfig::connect_timeout`]).
//!
//! ```no_run
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//! # async fn run() -> std::io::Result<()> {
//! let listener = udt::tokio::UdtListener::bind("127.0.0.1:9000").await?;
//! tokio::spawn(async move {
//!     let (mut s, _) = listener.accept().await?;
//!     let mut v = Vec::new();
//!     s.read_to_end(&mut v).await?;
//!     std::io::Result::Ok(v)
//! });
//! let mut c = udt::tokio::UdtStream::connect("127.0.0.1:9000").await?;
//! c.write_all(b"hello").await?;
//! c.shutdown().await?; // waits until delivered, then tells the peer
//! # Ok(())
//! # }
//! ```

/// Implement the methods [`UdtStream`] and [`UdtMessageSocket`] share (statistics,
/// addresses, the options that may change while connected) over their `conn: Conn` field.
macro_rules! async_socket_methods {
    ($ty:ty) => {
        impl $ty {
            /// UDT4 `perfmon`: totals, the counts and rates since the last call with `clear`
            /// (or since opening), and the instantaneous path state.
            pub fn perfmon(&self, clear: bool) -> crate::Perfmon {
                self.conn.perfmon(clear)
            }

            /// Cumulative counters (the totals of [`Self::perfmon`]).
            pub fn stats(&self) -> udt_proto::ConnectionStats {
                self.conn.stats()
            }

            /// Instantaneous path state: RTT, windows, sending period, rates.
            pub fn path_stats(&self) -> udt_proto::PathStats {
                self.conn.path_stats()
            }

            /// UDT_STATE: where the connection is in its life.
            pub fn state(&self) -> udt_proto::State {
                self.conn.state()
            }

            /// UDT_MAXBW while connected: cap the sending rate, bytes per second (`None` or
            /// `Some(0)`: unlimited).
            pub fn set_max_bandwidth(&self, bytes_per_sec: Option<u64>) {
                self.conn.set_max_bandwidth(bytes_per_sec);
            }

            /// UDT_LINGER: how long a close lets unsent data drain (default 180 s; `None`:
            /// discard it and close at once).
            pub fn set_linger(&self, linger: Option<std::time::Duration>) {
                self.conn.set_linger(linger);
            }

            /// The local UDP address (shared by every connection on the same multiplexer).
            pub fn local_addr(&self) -> std::io::Result<std::net::SocketAddr> {
                Ok(self.conn.local_addr())
            }

            /// The peer's UDP address.
            pub fn peer_addr(&self) -> std::io::Result<std::net::SocketAddr> {
                Ok(self.conn.peer_addr())
            }
        }
    };
}

mod conn;
mod listener;
mod message;
mod stream;

use std::io;
use std::net::SocketAddr;

pub use listener::UdtListener;
pub use message::UdtMessageSocket;
pub use stream::UdtStream;

use crate::open::{
    check_mode, connect_failed, ephemeral_local, open_port, reachable_from, rendezvous_options,
};
use crate::options::SocketOptions;
use conn::Conn;

/// Connect from a new ephemeral-port multiplexer, trying each address `addr` resolves to
/// (name resolution is tokio's, off the runtime's worker threads).
async fn connect_any(
    addr: impl ::tokio::net::ToSocketAddrs,
    options: &SocketOptions,
) -> io::Result<Conn> {
    let mut last = None;
    for remote in ::tokio::net::lookup_host(addr).await? {
        match connect_one(ephemeral_local(remote), remote, options).await {
            Ok(c) => return Ok(c),
            Err(e) => last = Some(e),
        }
    }
    Err(connect_failed(last))
}

/// Connect from `local` (UDT4's `bind`, then `connect`), sharing the multiplexer already on
/// that address when UDT_REUSEADDR allows; tries each address of `addr` in `local`'s family.
async fn connect_from(
    local: SocketAddr,
    addr: impl ::tokio::net::ToSocketAddrs,
    options: &SocketOptions,
) -> io::Result<Conn> {
    let mut last = None;
    for remote in reachable_from(local, ::tokio::net::lookup_host(addr).await?)? {
        match connect_one(local, remote, options).await {
            Ok(c) => return Ok(c),
            Err(e) => last = Some(e),
        }
    }
    Err(connect_failed(last))
}

/// Get the multiplexer at `local` (a new ephemeral port, or the one bound there) and connect
/// it to `remote`, waiting for the handshake without blocking the thread.
async fn connect_one(
    local: SocketAddr,
    remote: SocketAddr,
    options: &SocketOptions,
) -> io::Result<Conn> {
    // Opening the UDP socket and starting its I/O thread are quick system calls.
    let mux = open_port(local, options)?;
    let conn = mux.connect(remote, options.config.clone())?;
    let conn = Conn::new(mux, conn);
    std::future::poll_fn(|cx| conn.poll_connected(cx)).await?;
    Ok(conn)
}

/// Rendezvous: bind `local` and connect to `remote`, which does the same towards us.
async fn rendezvous(
    local: SocketAddr,
    remote: SocketAddr,
    options: &SocketOptions,
) -> io::Result<Conn> {
    connect_one(local, remote, &rendezvous_options(options)).await
}
