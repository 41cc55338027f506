//! File transfer over one UDT stream: the protocol behind `udt cp` and `udt serve`.
//!
//! - [`protocol`]: frames, their bounds, and the exchange (read its module doc first);
//! - [`paths`]: paths from the network made safe, confinement under a served root;
//! - [`manifest`]: what will be sent, built by walking local sources;
//! - [`sender`] / [`receiver`]: the two roles, each overlapping disk and network with a
//!   helper thread (read-ahead on the sender, write-behind on the receiver);
//! - [`resume`]: partial files and continuing them;
//! - [`session`]: client (`download`, `upload`) and server (`serve_connection`) entry points;
//! - [`legacy`]: the classic UDT4 `sendfile`/`recvfile` sample protocol.
//!
//! Contract: nothing a peer sends can make this code panic, allocate beyond a fixed bound,
//! or touch a path outside the directory it was confined to; every failure becomes a
//! [`TransferError`] that the peer is told about in an `Error` frame.

pub mod error;
pub mod legacy;
pub mod manifest;
pub mod paths;
pub mod protocol;
pub mod receiver;
pub mod resume;
pub mod sender;
pub mod session;
pub mod watchdog;

use std::cell::Cell;
use std::io::{Read, Write};
use std::rc::Rc;

use bytes::Bytes;
use udt::UdtStream;

pub use error::{ErrorCode, TransferError};
use protocol::{Copying, Frame, FrameReader, FrameSink, FrameWriter};
use watchdog::{Watchdog, Watched};

/// Progress callbacks, called from the transfer's threads.
pub trait Observer: Sync {
    /// The manifest is agreed: `files` files (and directories), `bytes` bytes of file data.
    fn start(&self, _files: u64, _bytes: u64) {}
    /// `bytes` of a file were already at the receiver (resumed) and will not be sent.
    fn resumed(&self, _bytes: u64) {}
    /// `bytes` more file data crossed the network.
    fn progress(&self, _bytes: u64) {}
    /// One file was placed (receiver) or fully sent (sender).
    fn file_done(&self, _path: &paths::RelPath, _size: u64) {}
}

/// An observer that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct Quiet;

impl Observer for Quiet {}

/// What a finished transfer did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Files and directories in the manifest.
    pub files: u64,
    /// Bytes of file data in the manifest.
    pub bytes: u64,
    /// File data that crossed the network in this run.
    pub transferred: u64,
    /// File data that was already at the receiver (resumed) and was not sent again.
    pub resumed: u64,
}

/// Both directions of one connection, as frames.
pub struct Link<'a> {
    /// The stream, when there is one (for its receive-queue state).
    stream: Option<&'a UdtStream>,
    /// Incoming frames.
    pub reader: FrameReader<Box<dyn Read + 'a>>,
    /// Outgoing frames.
    pub writer: FrameWriter<Box<dyn FrameSink + 'a>>,
}

/// A UDT stream takes large data frames uncopied: its send buffer keeps them until acknowledged.
impl FrameSink for &UdtStream {
    fn write_shared(&mut self, data: &Bytes) -> std::io::Result<usize> {
        UdtStream::write_shared(self, data)
    }
}

impl std::fmt::Debug for Link<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

impl<'a> Link<'a> {
    /// Frames over `stream` (positioned after the magic).
    pub fn new(stream: &'a UdtStream) -> Self {
        Self {
            stream: Some(stream),
            reader: FrameReader::new(Box::new(stream)),
            writer: FrameWriter::new(Box::new(stream)),
        }
    }

    /// Frames over `stream`, both directions accounted to one [`Watchdog`] (the server's
    /// deadline for the whole transfer's progress).
    pub fn watched(stream: &'a UdtStream, dog: Watchdog) -> Self {
        let dog = Rc::new(Cell::new(dog));
        Self {
            stream: Some(stream),
            reader: FrameReader::new(Box::new(Watched::new(stream, Rc::clone(&dog)))),
            writer: FrameWriter::new(Box::new(Watched::new(stream, dog))),
        }
    }

    /// Frames read from `input` and written to `output` (tests and fuzzing).
    pub fn over(input: impl Read + 'a, output: impl Write + 'a) -> Self {
        Self {
            stream: None,
            reader: FrameReader::new(Box::new(input)),
            writer: FrameWriter::new(Box::new(Copying(output))),
        }
    }

    /// Whether the peer has sent something not read yet (always false without a stream).
    pub fn peer_has_data(&self) -> bool {
        self.stream.is_some_and(|s| s.recv_data_pkts() > 0)
    }

    /// After a local failure: the peer's `Error` if one has arrived, else `err`. A server
    /// that refuses a request reports why and closes; a client still writing its request
    /// then fails on the closed connection with the reason unread in its buffer ("connection
    /// closed by the peer" instead of "this server is read-only", seen once in CI).
    pub fn peer_error_or(&mut self, err: TransferError) -> TransferError {
        if err.remote || !self.peer_has_data() {
            return err;
        }
        match self.reader.next_frame() {
            Ok(frame @ Frame::Error { .. }) => unexpected(frame, "after a failure"),
            _ => err,
        }
    }

    /// Send queued frames (without waiting for their acknowledgement).
    pub fn push(&mut self) -> Result<(), TransferError> {
        self.writer
            .write_pending()
            .map_err(|e| TransferError::io("connection", &e))
    }

    /// Queue one frame.
    pub fn send(&mut self, frame: &Frame) -> Result<(), TransferError> {
        self.writer
            .send(frame)
            .map_err(|e| TransferError::io("connection", &e))
    }

    /// Tell the peer about a local failure (best effort) and hand the error back. Errors
    /// that came from the peer are not echoed.
    /// The report goes straight to the stream, past the watchdog (whose allowance may be
    /// what ran out), bounded by the stream's own write timeout.
    pub fn fail(&mut self, err: TransferError) -> TransferError {
        if !err.remote {
            let _ = self.send(&Frame::error(&err));
            if let Some(mut stream) = self.stream {
                let _ = self.writer.write_pending_to(&mut stream);
            } else {
                let _ = self.push();
            }
        }
        err
    }
}

/// An `Error` frame from the peer as an error; any other frame as a protocol error.
pub fn unexpected(frame: Frame, during: &str) -> TransferError {
    match frame {
        Frame::Error { code, message } => TransferError {
            code,
            message,
            remote: true,
        },
        other => TransferError::protocol(format!("unexpected frame {during}: {other:?}")),
    }
}
