//! `utp-perf`: one bulk transfer over uTP (BitTorrent's transport, BEP 29), measured the way
//! `udt perf` measures UDT, so that the lab can run uTP as a flow beside UDT and TCP.
//!
//! # Contract
//! - The data moves over [`librqbit_utp`] (a tokio-based BEP 29 implementation); nothing of
//!   uTP is implemented here. Its congestion control is its own (CUBIC in 0.7: the crate has
//!   no LEDBAT yet), and the report says so in `cc`.
//! - The shape is iperf3's and `udt perf`'s: a server listens on a **TCP** port for one control
//!   connection per test and binds its uTP socket on the **UDP** port of the same number; the
//!   client sends for `-t` seconds (or `-n` bytes) and prints the report. The conversation is
//!   in [`control`].
//! - The client's `--json` object ([`report::Report`]) carries the fields of `udt perf --json`
//!   that the lab reads (bytes, seconds and goodput at the receiver, the per-interval series,
//!   each process's CPU seconds, the buffers), so the lab parses both with one reader.
//! - Errors are [`anyhow`] chains for the binary's edge; nothing here panics on a peer's input.

pub mod cli;
pub mod client;
pub mod control;
pub mod cpu;
pub mod report;
pub mod server;
pub mod socket;

/// The congestion control librqbit-utp 0.7 runs (its only one).
pub const CONGESTION_CONTROL: &str = "cubic";

/// The implementation, as reports name it.
pub const IMPLEMENTATION: &str = "librqbit-utp 0.7";
