//! Interoperability tests against Debian's libudt 4.11: one integration binary (the C++ peers
//! are built once per binary, see `udt_interop::peers`).
//!
//! Environment:
//! - `UDT_INTEROP_BIG=1`: also run the 256 MiB stream transfers.
//! - `--ignored baseline`: libudt-to-libudt goodput/CPU and 1 MB completion time (timed: run
//!   under `flock /tmp/udt-bench.lock`).

mod baseline;
mod common;
mod handshake;
mod message;
mod peer_lost;
mod rendezvous;
mod stream;
