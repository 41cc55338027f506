//! Errors of the blocking API: `std::io::Error`s with TCP's kinds.
//!
//! The protocol's errors convert themselves (`udt_proto` has `From<ConnectionError>`,
//! `From<SendError>`, `From<RecvError>` for `io::Error`), carrying the typed error inside so
//! callers who care can recover it with [`connection_error`]. Bad options are
//! [`crate::OptionError`] inside an `InvalidInput` error. What is left here: the errors of the
//! blocking layer itself (a timeout ran out, a non-blocking call would block).

use std::io;

use udt_proto::ConnectionError;

/// `e` as an `io::Error` of the matching kind, carrying `e` itself.
pub fn io_error(e: ConnectionError) -> io::Error {
    e.into()
}

/// The protocol error inside an `io::Error` made by this crate, if there is one: why the
/// connection ended (refused, timed out, lost, closed by the peer, ...).
pub fn connection_error(e: &io::Error) -> Option<ConnectionError> {
    e.get_ref()?.downcast_ref::<ConnectionError>().copied()
}

/// The error for a blocking call whose timeout ran out (4.11 error 6003).
pub(crate) fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, format!("{what} timed out"))
}

/// The error for a non-blocking call that cannot proceed yet (4.11 errors 6001 / 6002).
pub(crate) fn would_block(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::WouldBlock,
        format!("{what} would block (non-blocking mode)"),
    )
}
