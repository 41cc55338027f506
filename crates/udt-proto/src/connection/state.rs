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
    /// New data became readable.
    Readable,
    /// Send-buffer space was freed.
    Writable,
    /// The connection ended (or failed to start).
    Closed(ConnectionError),
}
