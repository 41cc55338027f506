//! `udt-units`: rates and sizes as people type them on the `udt` command line.
//!
//! `udt perf`, `udt lab` and the lab's experiments all take rates and sizes. They share this
//! one parser so that a spelling means the same thing wherever it is typed: `100M` is
//! 100 Mbit/s for `udt perf --maxbw` and for `udt lab link --rate` alike, and `16MB` is the
//! same number of bytes for `--sndbuf` and `--queue`.
//!
//! # Contract
//! - Rates ([`parse_rate`]) are **bits** per second with decimal prefixes unless a capital `B`
//!   says bytes: `100M`, `100mbit`, `100Mbps`, `1.5 Gbit/s` are bits; `10MB/s`, `10MBps` are
//!   bytes. The result is a [`Rate`], which converts to either unit.
//! - Sizes ([`parse_size`]) are bytes. A bare prefix or an `iB` is binary (`16M` = `16MiB` =
//!   16 × 2²⁰, as iperf3 reads `-n 16M`); a prefix with `B` is decimal (`16MB` = 16 × 10⁶, as
//!   in `10MB/s`).
//! - Every error is one line that names the value, the problem and valid forms, so a command
//!   line can print it after the flag's name.
//! - Parsing is total: any text gives a value or an error, never a panic.

mod number;
mod rate;
mod size;

pub use rate::{parse_rate, Rate};
pub use size::parse_size;

/// A rate, size or other command-line value that could not be read. The message is one
/// line and says what would be valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(String);

impl ParseError {
    /// An error with this one-line message (other command-line parsers use it too, so a
    /// command line has one error type for its values).
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}
