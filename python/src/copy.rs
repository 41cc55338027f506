//! `copy(src, dst, progress=None, ...)`: `udt cp`'s verified copy to or from a `udt serve`
//! daemon (`udt_cli::copy`), without the GIL, calling `progress(done, total)` with it.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::create_exception;
use pyo3::exceptions::{
    PyFileExistsError, PyFileNotFoundError, PyOSError, PyPermissionError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use udt_cli::copy::{CopyError as LibError, CopyOptions, Progress};
use udt_cli::transfer::ErrorCode;

create_exception!(
    udt,
    CopyError,
    PyOSError,
    "A copy failed (connection, authentication, I/O, or the server's refusal)."
);
create_exception!(
    udt,
    VerificationError,
    CopyError,
    "A file's BLAKE3 digest did not match the sender's; it was not kept."
);

/// The library's error as the Python exception a caller would catch.
fn python_error(err: LibError) -> PyErr {
    let message = err.to_string();
    match err {
        LibError::Usage(_) => PyValueError::new_err(message),
        LibError::Transfer { code, .. } => match code {
            ErrorCode::NotFound => PyFileNotFoundError::new_err(message),
            ErrorCode::Exists => PyFileExistsError::new_err(message),
            ErrorCode::PermissionDenied | ErrorCode::PathRefused => {
                PyPermissionError::new_err(message)
            }
            ErrorCode::DigestMismatch => VerificationError::new_err(message),
            _ => CopyError::new_err(message),
        },
        LibError::Other(_) => CopyError::new_err(message),
    }
}

/// Call the Python callable with the GIL; its first exception stops further calls and is
/// kept for `copy` to raise at the end.
fn call_back(callback: &Py<PyAny>, failed: &Mutex<Option<PyErr>>, done: u64, total: u64) {
    let mut failed = failed.lock().unwrap_or_else(|p| p.into_inner());
    if failed.is_none() {
        if let Err(err) = Python::attach(|py| callback.call1(py, (done, total)).map(drop)) {
            *failed = Some(err);
        }
    }
}

/// Copy `src` to `dst` (one a local path, the other `udt://host[:port]/path`), every file
/// checked with BLAKE3; returns `{"files", "bytes", "transferred", "resumed"}`.
#[pyfunction]
#[pyo3(signature = (src, dst, progress=None, *, recursive=false, resume=false, force=false,
                    port=None, cc=None, key=None, known_servers=None, insecure=false))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments, one per `udt cp` flag.
pub(crate) fn copy<'py>(
    py: Python<'py>,
    src: PathBuf,
    dst: PathBuf,
    progress: Option<Py<PyAny>>,
    recursive: bool,
    resume: bool,
    force: bool,
    port: Option<u16>,
    cc: Option<String>,
    key: Option<PathBuf>,
    known_servers: Option<PathBuf>,
    insecure: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let mut options = CopyOptions {
        recursive,
        resume,
        force,
        port,
        key,
        known_servers,
        insecure,
        quiet: true,
        ..CopyOptions::default()
    };
    if let Some(cc) = cc {
        options.cc = cc;
    }
    let failed = Mutex::new(None);
    let observer = Progress::new(|done, total| {
        if let Some(callback) = &progress {
            call_back(callback, &failed, done, total);
        }
    });
    let (src, dst): (&OsStr, &OsStr) = (src.as_os_str(), dst.as_os_str());
    let result = py.detach(|| udt_cli::copy::copy(src, dst, &options, &observer));
    if let Some(err) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(err);
    }
    let summary = result.map_err(python_error)?;
    let d = PyDict::new(py);
    d.set_item("files", summary.files)?;
    d.set_item("bytes", summary.bytes)?;
    d.set_item("transferred", summary.transferred)?;
    d.set_item("resumed", summary.resumed)?;
    Ok(d)
}
