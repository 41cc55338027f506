//! Mapping protocol errors to `std::io::Error`, the error type of the blocking API.
//!
//! Each [`ConnectionError`] gets the `io::ErrorKind` a TCP application would expect, and the
//! original error rides along as the `io::Error`'s inner error, so callers who care can
//! recover it with [`connection_error`].

use std::io;

use udt_proto::{ConnectionError, RecvError, SendError};

/// The `io::ErrorKind` that stands for `e`.
pub fn error_kind(e: ConnectionError) -> io::ErrorKind {
    use ConnectionError as E;
    match e {
        E::Refused => io::ErrorKind::ConnectionRefused,
        E::ConnectTimeout => io::ErrorKind::TimedOut,
        E::SecurityCheck => io::ErrorKind::PermissionDenied,
        E::PeerLost => io::ErrorKind::ConnectionReset,
        E::ProtocolViolation(_) => io::ErrorKind::InvalidData,
        E::PeerError(_) => io::ErrorKind::ConnectionAborted,
        E::PeerClosed => io::ErrorKind::BrokenPipe,
        E::LocallyClosed => io::ErrorKind::NotConnected,
        E::LingerTimeout => io::ErrorKind::TimedOut,
    }
}

/// `e` as an `io::Error` of the matching kind, carrying `e` itself.
pub fn io_error(e: ConnectionError) -> io::Error {
    io::Error::new(error_kind(e), e)
}

/// The protocol error inside an `io::Error` made by this crate, if there is one.
pub fn connection_error(e: &io::Error) -> Option<ConnectionError> {
    e.get_ref()?.downcast_ref::<ConnectionError>().copied()
}

pub(crate) fn send_error(e: SendError) -> io::Error {
    match e {
        SendError::Closed(c) => io_error(c),
        SendError::NotConnected => io::Error::new(io::ErrorKind::NotConnected, e),
        SendError::WouldBlock => io::Error::new(io::ErrorKind::WouldBlock, e),
        SendError::WrongMode | SendError::MessageTooLarge { .. } => {
            io::Error::new(io::ErrorKind::InvalidInput, e)
        }
    }
}

pub(crate) fn recv_error(e: RecvError) -> io::Error {
    match e {
        RecvError::Closed(c) => io_error(c),
        RecvError::WouldBlock => io::Error::new(io::ErrorKind::WouldBlock, e),
        RecvError::WrongMode => io::Error::new(io::ErrorKind::InvalidInput, e),
    }
}

/// The error for a blocking call whose timeout ran out (4.11 error 6003).
pub(crate) fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, format!("{what} timed out"))
}
