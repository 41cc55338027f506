//! `udt perf`: iperf3-style path measurement over UDT, or over kernel TCP for comparison.
//! The command line is in `cmd/perf.rs`; everything it runs is here.
//!
//! # Ports and the control channel
//! Like iperf3, the server listens on one **TCP** port (default [`DEFAULT_PORT`], 5201) for
//! control connections; TCP data streams arrive on the same TCP listener, and UDT data
//! streams on the **UDP** port of the same number (bound for each test, with the test's
//! options). The control channel is TCP rather than UDT so that it does not depend on the
//! stack under test: a UDT failure is still reported, and the numbers are not disturbed by
//! control traffic sharing a UDT multiplexer.
//!
//! The conversation, one JSON [`Message`] per line ([`control`]):
//! 1. client → `hello` {version, cookie, params}: the test ([`TestParams`]); the server checks
//!    it and, for UDT, binds its UDT listener with the test's options. → `ready` (or `error`).
//! 2. The client opens `-P` data streams; each starts with the 16-byte cookie, so streams of
//!    another client are dropped. Server → `start` when all arrived; both ends start their
//!    clocks, CPU counters and workers (`run::Run`).
//! 3. The sender writes until `-t` seconds passed or its share of `-n` bytes is written,
//!    then waits until the receiver has everything (UDT: all acknowledged; TCP: the
//!    receiver's close after the last byte). The receiver reads to the end of each stream.
//! 4. Every `-i` seconds the server sends an `interval` sample; the client pairs it with its
//!    own and prints a line. When its streams finish, the server sends its last partial
//!    `interval` and a `result` (its bytes, seconds, CPU time, transport counters, buffers);
//!    the client answers `done`. Either end sends `error` and closes if the test fails.
//!
//! # What lives where
//! [`params`] the test and its socket options; [`units`] printing rates and sizes; [`control`] the
//! messages; `stream` one data connection (UDT or TCP) and its counters; `run` one end's
//! workers and sampling; [`sample`] what one end measured; [`report`] the client's report and
//! human lines; [`client`] and [`server`] the two ends; [`sys`] getrusage, TCP_INFO and
//! SO_MAX_PACING_RATE.

pub mod client;
pub mod control;
pub mod params;
pub mod report;
pub(crate) mod run;
pub mod sample;
pub mod server;
pub(crate) mod stream;
pub mod sys;
pub mod units;

pub use client::{run_client, ClientConfig};
pub use control::Message;
pub use params::{Limit, Proto, TestParams};
pub use report::{Interval, Report, UdtView};
pub use server::{serve, ServerConfig};

/// The default port, iperf3's: TCP for control (and TCP data), UDP for UDT data.
pub const DEFAULT_PORT: u16 = 5201;
