//! The control channel: one TCP connection from client to server carrying [`Message`]s as
//! JSON, one per line. See the module map in `perf/mod.rs` for the conversation.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc::Sender;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::params::TestParams;
use super::run::Event;
use super::sample::{Sample, SideReport};

/// Bumped when a message changes incompatibly; the server refuses other versions.
pub const PROTOCOL_VERSION: u32 = 1;

/// The longest control line read (a result with its samples is a few hundred bytes).
const MAX_LINE: u64 = 1 << 20;

/// One control message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// Client → server: the test to run, and the cookie each data stream will open with.
    Hello {
        /// [`PROTOCOL_VERSION`].
        version: u32,
        /// Ties data streams to this test.
        cookie: String,
        /// The test.
        params: TestParams,
    },
    /// Server → client: listening for the data streams (for UDT, on the UDP port).
    Ready,
    /// Server → client: every data stream arrived; the test starts now.
    Start,
    /// Either way: this end's measurements over one interval, in order.
    Interval {
        /// The sample.
        sample: Sample,
    },
    /// Server → client: the server's account, once its streams finished.
    Result {
        /// The account.
        report: SideReport,
    },
    /// Client → server: the client has the result; the test is over.
    Done,
    /// Either way: the test cannot go on, and why.
    Error {
        /// One line for the user.
        message: String,
    },
}

/// The sending half of the control connection.
#[derive(Debug)]
pub(crate) struct ControlWriter(TcpStream);

impl ControlWriter {
    pub(crate) fn send(&mut self, message: &Message) -> io::Result<()> {
        let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
        line.push(b'\n');
        self.0.write_all(&line)
    }
}

/// The receiving half of the control connection.
#[derive(Debug)]
pub(crate) struct ControlReader(BufReader<TcpStream>);

impl ControlReader {
    /// The next message; end of stream and malformed input are errors.
    pub(crate) fn recv(&mut self) -> anyhow::Result<Message> {
        let mut line = Vec::new();
        let n = (&mut self.0).take(MAX_LINE).read_until(b'\n', &mut line)?;
        if n == 0 {
            anyhow::bail!("the peer closed the control connection");
        }
        if line.last() != Some(&b'\n') {
            anyhow::bail!("control message cut short or longer than {MAX_LINE} bytes");
        }
        serde_json::from_slice(&line).context("malformed control message")
    }

    /// Sets how long [`Self::recv`] may wait (`None`: forever).
    pub(crate) fn set_timeout(&self, t: Option<std::time::Duration>) -> io::Result<()> {
        self.0.get_ref().set_read_timeout(t)
    }

    /// Reads messages on a thread of its own into `events` until the connection ends.
    pub(crate) fn spawn(mut self, events: Sender<Event>) {
        let _ = self.set_timeout(None);
        std::thread::spawn(move || loop {
            let message = self.recv();
            let end = message.is_err();
            if events.send(Event::Control(message)).is_err() || end {
                return;
            }
        });
    }
}

/// Splits a connected control socket into its halves.
pub(crate) fn split(stream: TcpStream) -> io::Result<(ControlReader, ControlWriter)> {
    stream.set_nodelay(true)?;
    let reader = ControlReader(BufReader::new(stream.try_clone()?));
    Ok((reader, ControlWriter(stream)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::params::{Limit, Proto};

    #[test]
    fn messages_round_trip_as_tagged_json() {
        let hello = Message::Hello {
            version: PROTOCOL_VERSION,
            cookie: "0123456789abcdef".into(),
            params: TestParams {
                proto: Proto::Tcp,
                cc: Some("bbr".into()),
                mss: None,
                streams: 2,
                reverse: true,
                limit: Limit::Bytes(1000),
                interval_s: 1.0,
                sndbuf: Some(1 << 20),
                rcvbuf: None,
                udp_sndbuf: None,
                udp_rcvbuf: None,
                maxbw: None,
            },
        };
        let text = serde_json::to_string(&hello).unwrap();
        assert!(text.starts_with(r#"{"type":"hello","version":1"#), "{text}");
        assert!(text.contains(r#""limit":{"bytes":1000}"#), "{text}");
        assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), hello);
        let start: Message = serde_json::from_str(r#"{"type":"start"}"#).unwrap();
        assert_eq!(start, Message::Start);
    }

    #[test]
    fn reader_refuses_eof_and_garbage() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        let (mut reader, _) = split(server).unwrap();
        client
            .write_all(b"{\"type\":\"ready\"}\nnot json\n")
            .unwrap();
        drop(client);
        assert_eq!(reader.recv().unwrap(), Message::Ready);
        assert!(reader.recv().is_err());
        assert!(reader.recv().unwrap_err().to_string().contains("closed"));
    }
}
