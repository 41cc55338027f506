//! `udt-proto`: the UDT4 protocol as a deterministic, sans-IO state machine.
//!
//! # Contract
//! - No I/O: this crate opens no socket, spawns no thread and reads no clock (clippy's
//!   `disallowed-methods` enforces it). Time comes in as [`time::Instant`] arguments,
//!   datagrams come in as byte slices, and what to send comes out as bytes with a destination.
//! - Deterministic: the same inputs (including the caller-provided seeds) give the same
//!   outputs, so hours of WAN traffic can be simulated in seconds and replayed exactly.
//! - Total on network input: every parser returns an error for bad bytes, never panics, and
//!   never allocates from an unchecked length.
//! - Wire-compatible with libudt 4.11 (see `shared/udt-protocol.md` in the project).

// The public surface: what a runtime, a congestion controller and a wire tool need.
pub mod config;
pub mod congestion;
pub mod connection;
pub mod drive;
pub mod endpoint;
pub mod protect;
pub mod seq;
pub mod stats;
pub mod time;
pub mod wire;

// Internals: free to change without an API break.
pub(crate) mod ack_history;
pub(crate) mod estimate;
pub(crate) mod handshake;
pub(crate) mod pacer;
pub(crate) mod timers;

// Internals the benches measure directly: public only with the `internals` feature (used by
// `udt-bench`), with no stability promise; crate-private otherwise.
#[cfg(feature = "internals")]
pub mod loss_list;
#[cfg(not(feature = "internals"))]
pub(crate) mod loss_list;
#[cfg(feature = "internals")]
pub mod recv_buffer;
#[cfg(not(feature = "internals"))]
pub(crate) mod recv_buffer;
#[cfg(feature = "internals")]
pub mod send_buffer;
#[cfg(not(feature = "internals"))]
pub(crate) mod send_buffer;

#[cfg(any(fuzzing, test))]
pub mod fuzzing;

#[cfg(test)]
mod tests;

pub use config::{ConfigError, ConnectionConfig, Mode};
pub use connection::{
    Connection, ConnectionError, Event, RecvError, Role, SendError, State, Transmit,
};
pub use drive::{Driven, Route, Sink};
pub use endpoint::{ConnectError, Endpoint, EndpointStats, Incoming};
pub use protect::SessionKey;
pub use seq::{AckNumber, MsgNumber, SeqNumber, SocketId};
pub use stats::{ConnectionStats, PathStats};
pub use time::Instant;
