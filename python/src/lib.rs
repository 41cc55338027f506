//! `udt._udt`: the native half of the `udt` Python package (pyo3). `udt/__init__.py` adds
//! what is easier in Python (`makefile`, the context-manager protocol) on top.
//!
//! # Contract
//! - Every call that can block (connect, accept, send, recv, flush, close, copy) releases the
//!   GIL (`Python::detach`), so other Python threads run meanwhile; one thread may send while
//!   another receives on the same socket.
//! - Errors are Python's own: `OSError` subclasses from the I/O error's kind
//!   (`ConnectionRefusedError`, `TimeoutError`...), `ValueError` for bad options,
//!   `FileNotFoundError` / `FileExistsError` / `PermissionError` and this module's
//!   `CopyError` / `VerificationError` for copies.
//! - Options are `udt_capi::options`' table, so Python and C take the same names and units.

mod copy;
mod socket;

use pyo3::prelude::*;

/// The module `udt._udt`.
#[pymodule]
fn _udt(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<socket::Socket>()?;
    m.add_class::<socket::Listener>()?;
    m.add_function(wrap_pyfunction!(socket::connect, m)?)?;
    m.add_function(wrap_pyfunction!(socket::listen, m)?)?;
    m.add_function(wrap_pyfunction!(copy::copy, m)?)?;
    m.add("CopyError", m.py().get_type::<copy::CopyError>())?;
    m.add(
        "VerificationError",
        m.py().get_type::<copy::VerificationError>(),
    )?;
    let names: Vec<&str> = udt_capi::options::OPTIONS.iter().map(|(n, _)| *n).collect();
    m.add("OPTION_NAMES", names)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
