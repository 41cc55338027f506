//! Status codes, the calling thread's last error, and `guard`, the wrapper every exported
//! function runs its body in.
//!
//! C has no exceptions and a Rust panic must not unwind into C (undefined behaviour), so each
//! entry point returns a status (or NULL) and leaves a code and a message, like `errno` plus
//! `strerror`, in thread-local storage for `udtc_last_error_code` / `udtc_last_error`; a panic
//! is caught and reported as [`UDTC_ERR_PANIC`].

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};

use udt_cli::copy::CopyError;
use udt_cli::transfer::ErrorCode;

/// Success.
pub const UDTC_OK: i32 = 0;
/// A NULL pointer, a string that is not UTF-8, or a value out of range.
pub const UDTC_ERR_INVALID: i32 = -1;
/// Any other I/O failure (the message says which).
pub const UDTC_ERR_IO: i32 = -2;
/// The peer refused the connection, or nothing listens there.
pub const UDTC_ERR_REFUSED: i32 = -3;
/// A connect, send or receive timed out.
pub const UDTC_ERR_TIMEOUT: i32 = -4;
/// Non-blocking mode: the call would have blocked.
pub const UDTC_ERR_WOULD_BLOCK: i32 = -5;
/// The connection is broken or closed (peer gone, reset, closed locally).
pub const UDTC_ERR_CONNECTION: i32 = -6;
/// The local address is in use.
pub const UDTC_ERR_ADDR_IN_USE: i32 = -7;
/// A bug: the library panicked; the handle involved should be closed.
pub const UDTC_ERR_PANIC: i32 = -8;
/// Copy: the operands or options make no sense (as `udt cp`'s exit code 2).
pub const UDTC_ERR_USAGE: i32 = -9;
/// Copy: a named file or directory does not exist.
pub const UDTC_ERR_NOT_FOUND: i32 = -10;
/// Copy: the destination exists and `force` was not set (or the server forbids it).
pub const UDTC_ERR_EXISTS: i32 = -11;
/// Copy: the operating system or the server refused access or the path.
pub const UDTC_ERR_PERMISSION: i32 = -12;
/// Copy: a file's BLAKE3 digest did not match the sender's; it was not kept.
pub const UDTC_ERR_DIGEST_MISMATCH: i32 = -13;
/// Copy: the destination's disk is full.
pub const UDTC_ERR_DISK_FULL: i32 = -14;

/// An error on its way to C: a code and a message.
#[derive(Debug)]
pub(crate) struct Error {
    pub(crate) code: i32,
    pub(crate) message: String,
}

impl Error {
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self {
            code: UDTC_ERR_INVALID,
            message: message.into(),
        }
    }
}

impl From<io::Error> for Error {
    fn from(err: io::Error) -> Self {
        let code = match err.kind() {
            io::ErrorKind::InvalidInput => UDTC_ERR_INVALID,
            io::ErrorKind::ConnectionRefused => UDTC_ERR_REFUSED,
            io::ErrorKind::TimedOut => UDTC_ERR_TIMEOUT,
            io::ErrorKind::WouldBlock => UDTC_ERR_WOULD_BLOCK,
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::NotConnected
            | io::ErrorKind::UnexpectedEof => UDTC_ERR_CONNECTION,
            io::ErrorKind::AddrInUse => UDTC_ERR_ADDR_IN_USE,
            _ => UDTC_ERR_IO,
        };
        Self {
            code,
            message: err.to_string(),
        }
    }
}

impl From<CopyError> for Error {
    fn from(err: CopyError) -> Self {
        let code = match &err {
            CopyError::Usage(_) => UDTC_ERR_USAGE,
            CopyError::Transfer { code, .. } => transfer_code(*code),
            CopyError::Other(_) => UDTC_ERR_IO,
        };
        Self {
            code,
            message: err.to_string(),
        }
    }
}

fn transfer_code(code: ErrorCode) -> i32 {
    match code {
        ErrorCode::NotFound => UDTC_ERR_NOT_FOUND,
        ErrorCode::Exists => UDTC_ERR_EXISTS,
        ErrorCode::PermissionDenied | ErrorCode::PathRefused => UDTC_ERR_PERMISSION,
        ErrorCode::DigestMismatch => UDTC_ERR_DIGEST_MISMATCH,
        ErrorCode::DiskFull => UDTC_ERR_DISK_FULL,
        ErrorCode::IsDirectory | ErrorCode::NotDirectory => UDTC_ERR_USAGE,
        _ => UDTC_ERR_IO,
    }
}

thread_local! {
    static LAST: RefCell<(i32, CString)> = RefCell::new((UDTC_OK, CString::default()));
}

/// Remember `err` as this thread's last error.
fn set_last(err: Error) {
    // A message with a NUL byte keeps the part before it.
    let text = err.message.split('\0').next().unwrap_or_default();
    let message = CString::new(text).unwrap_or_default();
    LAST.with(|last| *last.borrow_mut() = (err.code, message));
}

/// Run `body`, turning an error or a panic into `on_error` and this thread's last error.
pub(crate) fn guard<T>(on_error: T, body: impl FnOnce() -> Result<T, Error>) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value,
        Ok(Err(err)) => {
            set_last(err);
            on_error
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            set_last(Error {
                code: UDTC_ERR_PANIC,
                message: format!("internal error (panic): {what}"),
            });
            on_error
        }
    }
}

/// [`guard`] for calls that return a status: [`UDTC_OK`] or the error's code.
pub(crate) fn status(body: impl FnOnce() -> Result<(), Error>) -> i32 {
    count(|| body().map(|()| 0)) as i32
}

/// [`guard`] for calls that return a count: the count, or the error's (negative) code.
pub(crate) fn count(body: impl FnOnce() -> Result<i64, Error>) -> i64 {
    match guard(None, || body().map(Some)) {
        Some(n) => n,
        None => i64::from(udtc_last_error_code()),
    }
}

/// The code of the last failed call on this thread ([`UDTC_OK`] if none failed yet).
#[no_mangle]
pub extern "C" fn udtc_last_error_code() -> i32 {
    LAST.with(|last| last.borrow().0)
}

/// The message of the last failed call on this thread: a NUL-terminated UTF-8 string, valid
/// until the next failing call on this thread ("" if none failed yet). Do not free it.
#[no_mangle]
pub extern "C" fn udtc_last_error() -> *const c_char {
    LAST.with(|last| last.borrow().1.as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last_message() -> String {
        // SAFETY: udtc_last_error returns a pointer into this thread's CString.
        unsafe { CStr::from_ptr(udtc_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn errors_become_codes_and_messages() {
        let code = status(|| Err(Error::invalid("stream is NULL")));
        assert_eq!(code, UDTC_ERR_INVALID);
        assert_eq!(udtc_last_error_code(), UDTC_ERR_INVALID);
        assert_eq!(last_message(), "stream is NULL");
    }

    #[test]
    fn a_panic_is_caught_and_reported() {
        let code = status(|| panic!("boom"));
        assert_eq!(code, UDTC_ERR_PANIC);
        assert!(last_message().contains("boom"), "{}", last_message());
        let value = guard(-1i64, || panic!("again"));
        assert_eq!(value, -1);
    }

    #[test]
    fn io_kinds_map_to_codes() {
        let refused = Error::from(io::Error::from(io::ErrorKind::ConnectionRefused));
        assert_eq!(refused.code, UDTC_ERR_REFUSED);
        let timeout = Error::from(io::Error::from(io::ErrorKind::TimedOut));
        assert_eq!(timeout.code, UDTC_ERR_TIMEOUT);
        let digest = Error::from(CopyError::Transfer {
            code: ErrorCode::DigestMismatch,
            message: "f: digest".into(),
        });
        assert_eq!(digest.code, UDTC_ERR_DIGEST_MISMATCH);
    }
}
