//! `udt`: UDT4 (UDP-based Data Transfer, wire-compatible with libudt 4.11) over real UDP
//! sockets.
//!
//! # Shape
//! - [`UdtListener`], [`UdtStream`], [`UdtMessageSocket`]: a blocking API shaped like
//!   `std::net`, with UDT4's meaning (linger on close, UDT_SNDTIMEO / UDT_RCVTIMEO, messages
//!   with TTL, `send_file` / `recv_file`, `perfmon`), and UDT4's non-blocking mode
//!   (UDT_SNDSYN / UDT_RCVSYN off: `WouldBlock`).
//! - [`SocketOptions`]: every UDT4 option by its UDT4 meaning and default, set before
//!   bind/connect; sockets change the ones UDT4 lets change later. [`UdtOpt`] / [`OptValue`]
//!   give the generic `setsockopt` / `getsockopt` shape for ported code.
//! - `udt::tokio` (feature `tokio`): the same sockets for async code: `AsyncRead` /
//!   `AsyncWrite` streams, async accept and connect, woken by the I/O thread.
//! - [`Poller`]: UDT4's epoll: wait for IN / OUT / ERR on many sockets at once.
//! - Underneath, one *multiplexer* per local UDP port: one socket and one I/O thread serving
//!   any number of connections, demultiplexed by socket id (4.11 §2.1). Accepted connections
//!   share the listener's port; `connect` opens a new ephemeral port; sockets bound to one
//!   address (a listener, [`UdtStream::connect_from`], rendezvous) share its multiplexer when
//!   UDT_REUSEADDR is on for both and their MSS is the same
//!   ([`SocketOptions::set_reuse_addr`]).
//! - The protocol itself is `udt_proto`'s sans-IO core; this crate only moves bytes, keeps
//!   time and paces: batched `recvmmsg`/`sendmmsg`, and a wait in `ppoll` with nanosecond
//!   timeouts that never spins: it sleeps at least 200 µs and sends what fell due meanwhile
//!   as one batch, which holds the paced rate without burning a core (the I/O thread's
//!   module doc says why).
//!
//! # Contract
//! - Errors are `std::io::Error`s whose kind follows TCP conventions (refused, timed out,
//!   reset); the protocol's [`ConnectionError`] rides inside ([`connection_error`]), and a
//!   refused option is an `InvalidInput` carrying an [`OptionError`] that names the option
//!   and its allowed range.
//! - An idle connection costs its I/O thread a wake-up per keep-alive/EXP round only.
//!
//! # Example
//! ```no_run
//! use std::io::{Read, Write};
//! let listener = udt::UdtListener::bind("127.0.0.1:9000")?;
//! std::thread::spawn(move || -> std::io::Result<()> {
//!     let (mut s, _) = listener.accept()?;
//!     let mut v = Vec::new();
//!     s.read_to_end(&mut v)?;
//!     Ok(())
//! });
//! let mut c = udt::UdtStream::connect("127.0.0.1:9000")?;
//! c.write_all(b"hello")?;
//! c.close()?;
//! # Ok::<(), std::io::Error>(())
//! ```

mod aligned;
pub mod blocking;
pub mod classic;
mod deadlines;
mod driver;
mod error;
mod mux;
mod open;
mod ops;
mod options;
mod poller;
mod ports;
mod shared;
mod sys;
#[cfg(feature = "tokio")]
pub mod tokio;

pub use blocking::{Incoming, Perfmon, UdtListener, UdtMessageSocket, UdtStream};
pub use bytes::Bytes;
pub use error::{connection_error, io_error};
pub use options::{OptValue, OptionError, SocketOptions, UdtOpt};
#[doc(hidden)]
pub use poller::PollHandle;
pub use poller::{PollEvent, Poller, Ready, Source, Token};
pub use sys::{BufferSize, SocketInfo};
pub use udt_proto::wire::Capabilities;
pub use udt_proto::{
    ConfigError, ConnectionConfig, ConnectionError, ConnectionStats, Mode, PathStats, SessionKey,
    State,
};
