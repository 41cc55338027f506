//! `udt-interop`: checks that `udt-proto` speaks the same wire protocol as libudt 4.11.
//!
//! The Rust side is a tiny single-threaded [`driver::Driver`] that moves datagrams between a
//! `std::net::UdpSocket` and `udt_proto::{Endpoint, Connection}`; it exists so that wire
//! compatibility can be tested before (and independently of) the real socket runtime. The
//! libudt side is the pair of C++ programs in `interop/` ([`peers`] builds and runs them).
//! Both sides generate and check the same deterministic data ([`pattern`]).
//!
//! The tests live in `tests/it/`. They need `g++` and `libudt-dev` (`scripts/setup.sh`).

pub mod driver;
pub mod pattern;
pub mod peers;
