//! `copy(src, dst, progress=None, ...)`: `udt cp`'s verified copy to or from a `udt serve`
//! daemon (`udt_cli::copy`), without the GIL, calling `progress(done, total)` with it.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use pyo3::create_exception;
use pyo3::exceptions::{
    PyFileExistsError, PyFileNotFoundError, PyOSError, PyPermissionError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use udt_cli::copy::{CopyError as LibError, CopyOptions};
use udt_cli::transfer::{ErrorCode, Observer};

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

/// The Python callable as an [`Observer`]: called with the GIL, one call at a time; the first
/// exception it raises stops further calls and is raised by `copy` at the end.
struct Progress {
    callback: Option<Py<PyAny>>,
    done: AtomicU64,
    total: AtomicU64,
    failed: Mutex<Option<PyErr>>,
}

impl Progress {
    fn advance(&self, bytes: u64) {
        let done = self.done.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.report(done);
    }

    fn report(&self, done: u64) {
        let Some(callback) = &self.callback else {
            return;
        };
        let mut failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
        if failed.is_some() {
            return;
        }
        let total = self.total.load(Ordering::Relaxed);
        if let Err(err) = Python::attach(|py| callback.call1(py, (done, total)).map(drop)) {
            *failed = Some(err);
        }
    }
}

impl Observer for Progress {
    fn start(&self, _files: u64, bytes: u64) {
        self.total.store(bytes, Ordering::Relaxed);
        self.report(self.done.load(Ordering::Relaxed));
    }

    fn resumed(&self, bytes: u64) {
        self.advance(bytes);
    }

    fn progress(&self, bytes: u64) {
        self.advance(bytes);
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
    let observer = Progress {
        callback: progress,
        done: AtomicU64::new(0),
        total: AtomicU64::new(0),
        failed: Mutex::new(None),
    };
    let (src, dst): (&OsStr, &OsStr) = (src.as_os_str(), dst.as_os_str());
    let result = py.detach(|| udt_cli::copy::copy(src, dst, &options, &observer));
    if let Some(err) = observer
        .failed
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
    {
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
