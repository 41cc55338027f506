//! [`TransferError`]: what went wrong, as a code both ends agree on (it crosses the wire in an
//! `Error` frame) plus a message for people.
//!
//! The codes are few on purpose: they are what a script branches on (`--json` prints them by
//! name), while the message carries the detail (which path, what the OS said).

use std::io;

/// Why a transfer failed, as it travels in an `Error` frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// A requested path does not exist.
    NotFound,
    /// The operating system refused access.
    PermissionDenied,
    /// The destination file system is full (ENOSPC, EDQUOT) or the file too large (EFBIG).
    DiskFull,
    /// The destination exists and overwriting was not asked for (`--force`).
    Exists,
    /// A path was refused: `..`, absolute, a symbolic link leading outside the root, bad bytes.
    PathRefused,
    /// A file arrived but its BLAKE3 digest differs from the sender's; it was not kept.
    DigestMismatch,
    /// A directory was named where a file was expected, or `-r` is missing.
    IsDirectory,
    /// A file was named where a directory was expected.
    NotDirectory,
    /// The peer speaks a protocol version or feature we do not.
    Unsupported,
    /// The peer sent something malformed or out of order.
    Protocol,
    /// Any other I/O failure (connection lost, read error).
    Io,
}

impl ErrorCode {
    /// The byte on the wire.
    pub fn to_wire(self) -> u8 {
        match self {
            Self::NotFound => 1,
            Self::PermissionDenied => 2,
            Self::DiskFull => 3,
            Self::Exists => 4,
            Self::PathRefused => 5,
            Self::DigestMismatch => 6,
            Self::IsDirectory => 7,
            Self::NotDirectory => 8,
            Self::Unsupported => 9,
            Self::Protocol => 10,
            Self::Io => 11,
        }
    }

    /// The code for a wire byte; unknown codes (a newer peer) read as [`Self::Io`].
    pub fn from_wire(byte: u8) -> Self {
        match byte {
            1 => Self::NotFound,
            2 => Self::PermissionDenied,
            3 => Self::DiskFull,
            4 => Self::Exists,
            5 => Self::PathRefused,
            6 => Self::DigestMismatch,
            7 => Self::IsDirectory,
            8 => Self::NotDirectory,
            9 => Self::Unsupported,
            10 => Self::Protocol,
            _ => Self::Io,
        }
    }

    /// A stable snake_case name for `--json` output.
    pub fn name(self) -> &'static str {
        match self {
            Self::NotFound => "not_found",
            Self::PermissionDenied => "permission_denied",
            Self::DiskFull => "disk_full",
            Self::Exists => "exists",
            Self::PathRefused => "path_refused",
            Self::DigestMismatch => "digest_mismatch",
            Self::IsDirectory => "is_directory",
            Self::NotDirectory => "not_directory",
            Self::Unsupported => "unsupported",
            Self::Protocol => "protocol",
            Self::Io => "io",
        }
    }

    /// The code for an OS error, so that a full disk reads as [`Self::DiskFull`] remotely.
    pub fn of_io(err: &io::Error) -> Self {
        match err.raw_os_error() {
            Some(libc::ENOSPC | libc::EDQUOT | libc::EFBIG) => return Self::DiskFull,
            Some(libc::ELOOP) => return Self::PathRefused,
            Some(libc::EISDIR) => return Self::IsDirectory,
            Some(libc::ENOTDIR) => return Self::NotDirectory,
            _ => {}
        }
        match err.kind() {
            io::ErrorKind::NotFound => Self::NotFound,
            io::ErrorKind::PermissionDenied => Self::PermissionDenied,
            io::ErrorKind::AlreadyExists => Self::Exists,
            _ => Self::Io,
        }
    }
}

/// A failed transfer: the code, a message naming the path, and which end it happened at.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}{message}", if *.remote { "remote: " } else { "" })]
pub struct TransferError {
    /// What kind of failure.
    pub code: ErrorCode,
    /// For people: the path and the cause, lowercase, no trailing period.
    pub message: String,
    /// True when the peer reported it in an `Error` frame.
    pub remote: bool,
}

impl TransferError {
    /// A local failure.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            remote: false,
        }
    }

    /// A malformed or out-of-order message from the peer.
    pub fn protocol(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Protocol, message)
    }

    /// An I/O failure about `what` (a path, or "connection").
    pub fn io(what: impl std::fmt::Display, err: &io::Error) -> Self {
        Self::new(
            ErrorCode::of_io(err),
            format!("{what}: {}", describe_io(err)),
        )
    }
}

/// The OS message without Rust's " (os error N)" suffix, lowercased like ours.
fn describe_io(err: &io::Error) -> String {
    let text = err.to_string();
    let text = match text.find(" (os error") {
        Some(cut) => &text[..cut],
        None => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Shorthand for results in this module.
pub type Result<T, E = TransferError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_is_io() {
        for byte in 1..=11u8 {
            assert_eq!(ErrorCode::from_wire(byte).to_wire(), byte);
        }
        assert_eq!(ErrorCode::from_wire(200), ErrorCode::Io);
    }

    #[test]
    fn full_disk_is_disk_full() {
        let err = io::Error::from_raw_os_error(libc::ENOSPC);
        assert_eq!(ErrorCode::of_io(&err), ErrorCode::DiskFull);
        let e = TransferError::io("f", &err);
        assert_eq!(e.to_string(), "f: no space left on device");
    }
}
