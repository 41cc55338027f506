//! `udt-libudt`: a drop-in `libudt.so.0`. Programs built against Debian's libudt 4.11
//! (`udt.h`) run unchanged on the udt engine when this library comes first in
//! `LD_LIBRARY_PATH`.
//!
//! # Shape
//! - `cpp/glue.cpp`, compiled against the system's `udt.h` by `build.rs`: the `UDT::`
//!   functions, `CUDTException` and `CCC` with 4.11's mangled names, class layouts and
//!   virtual tables by construction. It only converts C++ types (`std::set`, `std::vector`,
//!   `std::fstream`, `CPerfMon`) and calls the C ABI of [`api`].
//! - [`api`]: the `udtr_*` C functions: pointers in, [`calls`] run, errors recorded for
//!   `UDT::getlasterror` ([`error`]).
//! - [`calls`]: each UDT4 call with 4.11's checks and error codes, over the socket table
//!   ([`table`]), 4.11's option semantics ([`settings`]) and `select` / `epoll` ([`epoll`]),
//!   on the `udt` crate's blocking API.
//!
//! # Not supported
//! A user-defined congestion control class (`UDT_CC` with a `CCCFactory`) cannot run on the
//! engine: setting it fails with 4.11's EINVOP (5000) and a message saying so, and reading
//! it does too. The `CCC` class is exported so that programs containing one still load.

pub mod addr;
pub mod api;
pub mod calls;
pub mod epoll;
pub mod error;
pub mod settings;
pub mod table;
