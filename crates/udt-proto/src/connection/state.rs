//! Connection states, the events a connection reports, and its error types.

/// Where a connection is in its life (UDT4 `UDTSTATUS`, minus the socket-only states).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Handshake in progress (CONNECTING).
    Connecting,
    /// Data may flow (CONNECTED).
    Connected,
    /// `close` was called; unsent data drains until the linger time runs out (CLOSING).
    Closing,
    /// Finished: closed locally, shut down by the peer, or broken (CLOSED / BROKEN). Data
    /// already received may still be read.
    Closed,
}

/// Why a connection ended (or never started).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    /// The listener refused the connection (4.11 ECONNREJ 1002: wrong version or socket type,
    /// or its accept backlog was full).
    #[error("connection refused by the peer")]
    Refused,
    /// The handshake got no answer in time (4.11 ENOSERVER 1001).
    #[error("connection attempt timed out")]
    ConnectTimeout,
    /// The response did not echo our initial sequence number (4.11 ESECFAIL 1004).
    #[error("handshake response failed the security check (foreign initial sequence number)")]
    SecurityCheck,
    /// Nothing heard from the peer for 16 timeouts and more than 5 s (4.11 ECONNLOST 2001).
    #[error("connection lost: the peer stopped answering")]
    PeerLost,
    /// The network reported the peer's port closed (ICMP port unreachable) and nothing came
    /// from the peer during the grace that followed: its process most likely died. Our own
    /// early detection; 4.11 would report ECONNLOST (2001) after ~46 s instead.
    #[error(
        "connection lost: the peer's port is closed (ICMP port unreachable) and it stayed silent for at least 1 s"
    )]
    PeerUnreachable,
    /// Our handshake drew an ICMP port unreachable and no answer came during the grace that
    /// followed: nothing listens on the peer's port (a caller only; a typo in the port, or a
    /// server not running). Our own early detection; 4.11 waits for its connect timeout
    /// (ENOSERVER 1001). The io kind is `ConnectionRefused`, as for TCP's RST.
    #[error("nothing listens on the peer's port (ICMP port unreachable)")]
    NoListener,
    /// The peer broke a protocol rule 4.11 treats as fatal (e.g. acknowledged data never sent).
    #[error("connection broken: peer violated the protocol ({0})")]
    ProtocolViolation(&'static str),
    /// The peer signalled an error (4.11 sends code 4000 when its `recvfile` fails).
    #[error("the peer reported error {0}")]
    PeerError(u32),
    /// The peer closed the connection.
    #[error("connection closed by the peer")]
    PeerClosed,
    /// We closed the connection.
    #[error("connection closed locally")]
    LocallyClosed,
    /// Packet protection is on and the peer never proved the session key: packets came from
    /// its address for 3 s after connecting, none of them authenticated (another key, or a
    /// peer without protection such as libudt 4.11). Our own; 4.11 has no protection.
    #[error(
        "the peer did not prove the session key (a different key, or not a protected udt peer)"
    )]
    AuthenticationFailed,
    /// `close` gave up waiting for unsent data to be acknowledged.
    #[error("linger time ran out with data unacknowledged")]
    LingerTimeout,
}

/// Errors of `send` / `send_msg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The handshake has not finished.
    #[error("not connected yet")]
    NotConnected,
    /// The connection is over.
    #[error("connection is closed: {0}")]
    Closed(ConnectionError),
    /// The send buffer is full; try again after some of it is acknowledged.
    #[error("send buffer is full")]
    WouldBlock,
    /// `send_msg` on a stream connection or `send` on a message connection.
    #[error("wrong call for this connection's mode (stream vs message)")]
    WrongMode,
    /// The message is larger than the whole send buffer (4.11 5012).
    #[error("message of {len} bytes exceeds the send buffer of {max} bytes")]
    MessageTooLarge {
        /// Message length.
        len: usize,
        /// Send buffer capacity.
        max: usize,
    },
}

/// Errors of `recv` / `recv_msg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RecvError {
    /// Nothing to read yet.
    #[error("no data available yet")]
    WouldBlock,
    /// The connection is over and everything received was read.
    #[error("connection is closed: {0}")]
    Closed(ConnectionError),
    /// `recv_msg` on a stream connection or `recv` on a message connection.
    #[error("wrong call for this connection's mode (stream vs message)")]
    WrongMode,
}

/// Something the application may want to react to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The handshake completed.
    Connected,
    /// New data is worth reading: a whole message, the end of a stream write, or (in the
    /// middle of a long write) an eighth of the receive buffer or 256 KiB, or data that has
    /// waited 50 ms.
    Readable,
    /// Send-buffer space was freed and a third of the buffer or more is free (or it emptied),
    /// so a writer does not wake at every ACK.
    Writable,
    /// The connection ended (or failed to start).
    Closed(ConnectionError),
}

// ----- the runtime boundary: `std::io::Error` with TCP's error kinds -----
//
// The runtime's API speaks `std::io::Error`, as `std::net` does. Each conversion picks the kind
// a TCP application would expect and keeps the typed error inside, so callers who care can
// downcast it back (`udt::connection_error`). Only the types are used here: no I/O.

impl ConnectionError {
    /// The `io::ErrorKind` that stands for this ending, as a TCP application would expect.
    pub fn io_kind(self) -> std::io::ErrorKind {
        use std::io::ErrorKind as K;
        match self {
            Self::Refused | Self::NoListener => K::ConnectionRefused,
            Self::ConnectTimeout | Self::LingerTimeout => K::TimedOut,
            Self::SecurityCheck | Self::AuthenticationFailed => K::PermissionDenied,
            Self::PeerLost | Self::PeerUnreachable => K::ConnectionReset,
            Self::ProtocolViolation(_) => K::InvalidData,
            Self::PeerError(_) => K::ConnectionAborted,
            Self::PeerClosed => K::BrokenPipe,
            Self::LocallyClosed => K::NotConnected,
        }
    }
}

impl From<ConnectionError> for std::io::Error {
    fn from(e: ConnectionError) -> Self {
        Self::new(e.io_kind(), e)
    }
}

impl From<SendError> for std::io::Error {
    /// A closed connection gives its [`ConnectionError`] (kind and inner error); the other
    /// send errors keep the `SendError` inside.
    fn from(e: SendError) -> Self {
        use std::io::ErrorKind as K;
        let kind = match e {
            SendError::Closed(c) => return c.into(),
            SendError::NotConnected => K::NotConnected,
            SendError::WouldBlock => K::WouldBlock,
            SendError::WrongMode | SendError::MessageTooLarge { .. } => K::InvalidInput,
        };
        Self::new(kind, e)
    }
}

impl From<RecvError> for std::io::Error {
    /// A closed connection gives its [`ConnectionError`]; the other receive errors keep the
    /// `RecvError` inside.
    fn from(e: RecvError) -> Self {
        use std::io::ErrorKind as K;
        let kind = match e {
            RecvError::Closed(c) => return c.into(),
            RecvError::WouldBlock => K::WouldBlock,
            RecvError::WrongMode => K::InvalidInput,
        };
        Self::new(kind, e)
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;

    #[test]
    fn connection_errors_keep_their_cause() {
        let e = io::Error::from(ConnectionError::Refused);
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
        let inner = e
            .get_ref()
            .and_then(|i| i.downcast_ref::<ConnectionError>());
        assert_eq!(inner, Some(&ConnectionError::Refused));
        assert_eq!(e.to_string(), "connection refused by the peer");
        let e = io::Error::from(ConnectionError::NoListener);
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
        assert_eq!(
            e.to_string(),
            "nothing listens on the peer's port (ICMP port unreachable)"
        );
    }

    #[test]
    fn closed_send_and_recv_errors_become_the_connection_error() {
        let e = io::Error::from(SendError::Closed(ConnectionError::PeerLost));
        assert_eq!(e.kind(), io::ErrorKind::ConnectionReset);
        let inner = e
            .get_ref()
            .and_then(|i| i.downcast_ref::<ConnectionError>());
        assert_eq!(inner, Some(&ConnectionError::PeerLost));
        let e = io::Error::from(RecvError::Closed(ConnectionError::PeerUnreachable));
        assert_eq!(e.kind(), io::ErrorKind::ConnectionReset);
        let e = io::Error::from(RecvError::Closed(ConnectionError::ConnectTimeout));
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert_eq!(
            io::Error::from(RecvError::WouldBlock).kind(),
            io::ErrorKind::WouldBlock
        );
        assert_eq!(
            io::Error::from(SendError::WrongMode).kind(),
            io::ErrorKind::InvalidInput
        );
    }
}
