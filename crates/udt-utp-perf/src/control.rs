//! The control channel: one TCP connection from client to server carrying [`Message`]s as
//! JSON, one per line. TCP rather than uTP so that a uTP failure is still reported and
//! control traffic does not share the measured stream.
//!
//! The conversation:
//! 1. client → `hello` {version, buffers}; the server binds its uTP socket on the UDP port
//!    with those buffers → `ready` (or `error`).
//! 2. The client connects over uTP; the server accepts and starts its clock and CPU counter.
//! 3. The client writes until `-t` seconds passed or `-n` bytes are written, then shuts the
//!    stream down (uTP FIN once everything is acknowledged). The server reads to the end and
//!    sends an `interval` every second, then the last partial one and its `result`. A timed
//!    test whose send buffer has not drained [`DRAIN_LIMIT`] after its time ends with the
//!    client's `stop` instead (a large buffer at a crawling rate would take minutes): the
//!    server reports what arrived until then.
//! 4. Either end sends `error` and closes if the test fails.

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::report::{Interval, SideReport};
use crate::socket::Buffers;

/// Bumped when a message changes incompatibly; the server refuses other versions.
pub const PROTOCOL_VERSION: u32 = 1;

/// The longest control line read (a result is a few hundred bytes).
pub const MAX_LINE: usize = 1 << 16;

/// How long a timed test's stream may take to drain after its time before the client stops
/// the test.
pub const DRAIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// One control message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// Client → server: the test's buffers.
    Hello {
        /// [`PROTOCOL_VERSION`].
        version: u32,
        /// Both ends' uTP buffers.
        buffers: Buffers,
    },
    /// Server → client: the uTP socket is bound.
    Ready,
    /// Client → server: the time is up and the stream did not drain in [`DRAIN_LIMIT`]; end
    /// the test with what arrived.
    Stop,
    /// Server → client: the bytes received over one interval.
    Interval {
        /// The interval.
        interval: Interval,
    },
    /// Server → client: the receiver's account, once the stream ended.
    Result {
        /// The account.
        report: SideReport,
    },
    /// Either way: the test cannot go on, and why.
    Error {
        /// One line for the user.
        message: String,
    },
}

/// Writes one message as a line.
pub async fn send<W: AsyncWrite + Unpin>(writer: &mut W, message: &Message) -> anyhow::Result<()> {
    let mut line = serde_json::to_vec(message).context("encoding a control message")?;
    line.push(b'\n');
    writer
        .write_all(&line)
        .await
        .context("writing to the control connection")?;
    writer
        .flush()
        .await
        .context("writing to the control connection")
}

/// Reads control lines, refusing any longer than [`MAX_LINE`]. [`Reader::next`] is
/// cancel-safe (a partial line stays here), so it can race the data stream in a `select!`.
#[derive(Debug)]
pub struct Reader<R> {
    inner: BufReader<R>,
    line: Vec<u8>,
}

impl<R: AsyncRead + Unpin> Reader<R> {
    /// Reads from `inner`.
    pub fn new(inner: R) -> Self {
        Self {
            inner: BufReader::new(inner),
            line: Vec::new(),
        }
    }

    /// The next message; an error at the end of the connection, on a line too long or one
    /// that is not a message.
    pub async fn next(&mut self) -> anyhow::Result<Message> {
        loop {
            let buf = self
                .inner
                .fill_buf()
                .await
                .context("reading the control connection")?;
            if buf.is_empty() {
                bail!("the peer closed the control connection");
            }
            let (used, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            self.line.extend_from_slice(&buf[..used]);
            self.inner.consume(used);
            if self.line.len() > MAX_LINE {
                bail!("a control line longer than {MAX_LINE} bytes");
            }
            if done {
                let line = std::mem::take(&mut self.line);
                return parse(&line);
            }
        }
    }
}

/// One message from a line.
pub fn parse(line: &[u8]) -> anyhow::Result<Message> {
    serde_json::from_slice(line).context("reading a control message")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn messages_round_trip_and_bad_lines_are_errors() {
        let hello = Message::Hello {
            version: PROTOCOL_VERSION,
            buffers: Buffers {
                send_buffer_bytes: Some(1 << 20),
                recv_buffer_bytes: None,
            },
        };
        let mut wire = Vec::new();
        send(&mut wire, &hello).await.unwrap();
        send(&mut wire, &Message::Ready).await.unwrap();
        send(&mut wire, &Message::Stop).await.unwrap();
        wire.extend_from_slice(b"{\"type\":\"nonsense\"}\n");
        let mut reader = Reader::new(wire.as_slice());
        assert_eq!(reader.next().await.unwrap(), hello);
        assert_eq!(reader.next().await.unwrap(), Message::Ready);
        assert_eq!(reader.next().await.unwrap(), Message::Stop);
        assert!(reader.next().await.is_err());
        assert!(reader.next().await.is_err(), "end of stream");
        let long = vec![b'x'; MAX_LINE + 2];
        assert!(Reader::new(long.as_slice()).next().await.is_err());
    }
}
