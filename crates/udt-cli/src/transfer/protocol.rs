//! The `udt cp` wire protocol, version 1: frames on one UDT stream.
//!
//! A connection opens with the 4 bytes [`MAGIC`] from the client. A classic UDT4 `recvfile`
//! client opens instead with its file name's length as a host-order `i32` in 1..=1023, and
//! [`MAGIC`] read as an `i32` in either byte order is above a billion, so `udt serve` tells
//! the two apart from the first 4 bytes ([`is_magic`]).
//!
//! Then frames, in both directions: a 1-byte type, a 4-byte little-endian payload length, the
//! payload. Every integer is little-endian. Lengths are bounded per type ([`MAX_CONTROL`] for
//! control frames, [`MAX_DATA`] for file data) before anything is allocated, and every path
//! is parsed as a [`RelPath`]. The exchange:
//!
//! ```text
//! client                                      server
//! MAGIC, Hello{version}          ──▶
//!                                ◀──          Hello{version}      (or Error{unsupported})
//! Get{recursive, paths} | Put{dest, force, resume}  ──▶
//! -- then the side holding the files is the *sender*, the other the *receiver* --
//! sender:   Entry × n, ManifestEnd{count}
//! receiver: Resume{index, offset, digest} × k, Go          (or Error)
//! sender:   per file: FileStart{index, offset}, Data × m, FileEnd{blake3}; then End
//! receiver: Done{files, bytes}                             (or Error, at any point)
//! ```
//! The receiver checks each file's BLAKE3 digest before renaming it into place. An `Error`
//! frame may be sent by either side at any point; the sender of it then closes.

use std::io::{self, Read, Write};

use bytes::{Buf, Bytes, BytesMut};

use super::error::{ErrorCode, Result, TransferError};
use super::manifest::{Entry, EntryKind, Mtime};
use super::paths::RelPath;

/// First bytes of a connection in this protocol.
pub const MAGIC: [u8; 4] = *b"UDTc";

/// The protocol version this build speaks.
pub const VERSION: u16 = 1;

/// Largest control frame payload.
pub const MAX_CONTROL: usize = 64 * 1024;

/// Largest `Data` payload: one read-ahead buffer.
pub const MAX_DATA: usize = 1 << 20;

/// Frame header: type and payload length.
pub const HEADER_LEN: usize = 5;

/// Longest error message accepted (longer ones are cut by the sender).
const MAX_MESSAGE: usize = 4096;

/// Most paths in one `Get`.
const MAX_GET_PATHS: usize = 4096;

/// A BLAKE3 digest.
pub type Digest = [u8; 32];

/// Whether a connection's first 4 bytes are ours (else: a classic UDT4 client).
pub fn is_magic(first: [u8; 4]) -> bool {
    first == MAGIC
}

/// One control frame (file data travels as [`Incoming::Data`], not as a `Frame`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// Version offer (client) or choice (server).
    Hello {
        /// Highest version the sender of this frame speaks.
        version: u16,
    },
    /// Download `paths` (relative to the server's root).
    Get {
        /// Copy directories recursively.
        recursive: bool,
        /// What to fetch; `None` is refused by the server (the root itself has no name).
        paths: Vec<RelPath>,
    },
    /// Upload to `dest` (relative to the server's root; `None`: the root).
    Put {
        /// Where to place the files.
        dest: Option<RelPath>,
        /// Overwrite existing files.
        force: bool,
        /// Keep partial files on failure and continue them on the next run.
        resume: bool,
    },
    /// One manifest entry.
    Entry(Entry),
    /// The manifest is complete.
    ManifestEnd {
        /// Number of entries sent.
        count: u64,
    },
    /// The receiver holds `offset` bytes of file `index` whose BLAKE3 is `digest`.
    Resume {
        /// Manifest index.
        index: u32,
        /// Bytes held.
        offset: u64,
        /// BLAKE3 of those bytes.
        digest: Digest,
    },
    /// The receiver is ready for data.
    Go,
    /// Data for file `index` follows, starting at byte `offset`.
    FileStart {
        /// Manifest index.
        index: u32,
        /// First byte sent (0, or an accepted resume offset).
        offset: u64,
    },
    /// The current file is complete; its whole content hashes to `digest`.
    FileEnd {
        /// BLAKE3 of the whole file.
        digest: Digest,
    },
    /// No more files.
    End,
    /// Everything arrived and verified.
    Done {
        /// Files placed.
        files: u64,
        /// Data bytes received.
        bytes: u64,
    },
    /// The transfer failed.
    Error {
        /// Why.
        code: ErrorCode,
        /// For people.
        message: String,
    },
}

/// Frame type bytes (spec order).
mod kind {
    pub(super) const HELLO: u8 = 1;
    pub(super) const GET: u8 = 2;
    pub(super) const PUT: u8 = 3;
    pub(super) const ENTRY: u8 = 4;
    pub(super) const MANIFEST_END: u8 = 5;
    pub(super) const RESUME: u8 = 6;
    pub(super) const GO: u8 = 7;
    pub(super) const FILE_START: u8 = 8;
    pub(super) const DATA: u8 = 9;
    pub(super) const FILE_END: u8 = 10;
    pub(super) const END: u8 = 11;
    pub(super) const DONE: u8 = 12;
    pub(super) const ERROR: u8 = 13;
}

impl Frame {
    /// An `Error` frame for a local failure.
    pub fn error(err: &TransferError) -> Self {
        Self::Error {
            code: err.code,
            message: cut(err.message.clone()),
        }
    }

    /// Append the whole frame (header and payload) to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0; HEADER_LEN]);
        let kind = self.emit_payload(out);
        let len = (out.len() - start - HEADER_LEN) as u32; // bounded by MAX_CONTROL by construction
        out[start] = kind;
        out[start + 1..start + HEADER_LEN].copy_from_slice(&len.to_le_bytes());
    }

    fn emit_payload(&self, out: &mut Vec<u8>) -> u8 {
        match self {
            Self::Hello { version } => {
                out.extend_from_slice(&version.to_le_bytes());
                kind::HELLO
            }
            Self::Get { recursive, paths } => {
                out.push(u8::from(*recursive));
                for p in paths {
                    put_bytes(out, p.as_bytes());
                }
                kind::GET
            }
            Self::Put {
                dest,
                force,
                resume,
            } => {
                out.push(u8::from(*force) | u8::from(*resume) << 1);
                put_bytes(out, dest.as_ref().map_or(&[][..], RelPath::as_bytes));
                kind::PUT
            }
            Self::Entry(e) => {
                emit_entry(e, out);
                kind::ENTRY
            }
            Self::ManifestEnd { count } => {
                out.extend_from_slice(&count.to_le_bytes());
                kind::MANIFEST_END
            }
            Self::Resume {
                index,
                offset,
                digest,
            } => {
                out.extend_from_slice(&index.to_le_bytes());
                out.extend_from_slice(&offset.to_le_bytes());
                out.extend_from_slice(digest);
                kind::RESUME
            }
            Self::Go => kind::GO,
            Self::FileStart { index, offset } => {
                out.extend_from_slice(&index.to_le_bytes());
                out.extend_from_slice(&offset.to_le_bytes());
                kind::FILE_START
            }
            Self::FileEnd { digest } => {
                out.extend_from_slice(digest);
                kind::FILE_END
            }
            Self::End => kind::END,
            Self::Done { files, bytes } => {
                out.extend_from_slice(&files.to_le_bytes());
                out.extend_from_slice(&bytes.to_le_bytes());
                kind::DONE
            }
            Self::Error { code, message } => {
                out.push(code.to_wire());
                out.extend_from_slice(message.as_bytes());
                kind::ERROR
            }
        }
    }

    /// Parse a control frame's payload. Total: any bytes give a frame or an error.
    pub fn parse(kind: u8, payload: &[u8]) -> Result<Self> {
        let mut r = Cursor(payload);
        let frame = match kind {
            kind::HELLO => Self::Hello { version: r.u16()? },
            kind::GET => parse_get(&mut r)?,
            kind::PUT => {
                let flags = r.u8()?;
                let dest = RelPath::parse_request(r.bytes()?)?;
                Self::Put {
                    dest,
                    force: flags & 1 != 0,
                    resume: flags & 2 != 0,
                }
            }
            kind::ENTRY => Self::Entry(parse_entry(&mut r)?),
            kind::MANIFEST_END => Self::ManifestEnd { count: r.u64()? },
            kind::RESUME => Self::Resume {
                index: r.u32()?,
                offset: r.u64()?,
                digest: r.digest()?,
            },
            kind::GO => Self::Go,
            kind::FILE_START => Self::FileStart {
                index: r.u32()?,
                offset: r.u64()?,
            },
            kind::FILE_END => Self::FileEnd {
                digest: r.digest()?,
            },
            kind::END => Self::End,
            kind::DONE => Self::Done {
                files: r.u64()?,
                bytes: r.u64()?,
            },
            kind::ERROR => Self::Error {
                code: ErrorCode::from_wire(r.u8()?),
                message: cut(String::from_utf8_lossy(r.rest()).into_owned()),
            },
            other => {
                return Err(TransferError::protocol(format!(
                    "unknown frame type {other}"
                )))
            }
        };
        if !r.0.is_empty() {
            return Err(TransferError::protocol(format!(
                "frame type {kind} has {} stray bytes",
                r.0.len()
            )));
        }
        Ok(frame)
    }
}

/// `message` cut to [`MAX_MESSAGE`] bytes (both when sending and when a peer sent more).
fn cut(mut message: String) -> String {
    if message.len() > MAX_MESSAGE {
        let mut at = MAX_MESSAGE;
        while !message.is_char_boundary(at) {
            at -= 1;
        }
        message.truncate(at);
    }
    message
}

fn parse_get(r: &mut Cursor<'_>) -> Result<Frame> {
    let recursive = r.u8()? != 0;
    let mut paths = Vec::new();
    while !r.0.is_empty() {
        if paths.len() == MAX_GET_PATHS {
            return Err(TransferError::protocol("too many paths in one request"));
        }
        match RelPath::parse_request(r.bytes()?)? {
            Some(p) => paths.push(p),
            None => {
                return Err(TransferError::new(
                    ErrorCode::PathRefused,
                    "name a file or directory under the served root, not the root itself",
                ))
            }
        }
    }
    Ok(Frame::Get { recursive, paths })
}

fn emit_entry(e: &Entry, out: &mut Vec<u8>) {
    out.push(match e.kind {
        EntryKind::File => 0,
        EntryKind::Dir => 1,
    });
    out.extend_from_slice(&e.mode.to_le_bytes());
    out.extend_from_slice(&e.size.to_le_bytes());
    out.extend_from_slice(&e.mtime.secs.to_le_bytes());
    out.extend_from_slice(&e.mtime.nanos.to_le_bytes());
    put_bytes(out, e.path.as_bytes());
}

fn parse_entry(r: &mut Cursor<'_>) -> Result<Entry> {
    let kind = match r.u8()? {
        0 => EntryKind::File,
        1 => EntryKind::Dir,
        other => {
            return Err(TransferError::protocol(format!(
                "unknown entry kind {other}"
            )))
        }
    };
    let mode = r.u32()?;
    let size = r.u64()?;
    let secs = r.u64()? as i64;
    let nanos = r.u32()?;
    if nanos >= 1_000_000_000 {
        return Err(TransferError::protocol("mtime nanoseconds out of range"));
    }
    let path = RelPath::parse(r.bytes()?)?;
    Ok(Entry {
        path,
        kind,
        size,
        mode,
        mtime: Mtime { secs, nanos },
    })
}

/// A 2-byte length then the bytes (paths are at most 4096 bytes).
fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Bounds-checked reads from a payload.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(TransferError::protocol("truncated frame"));
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16> {
        self.array().map(u16::from_le_bytes)
    }

    fn u32(&mut self) -> Result<u32> {
        self.array().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64> {
        self.array().map(u64::from_le_bytes)
    }

    fn digest(&mut self) -> Result<Digest> {
        self.array()
    }

    fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.u16()?;
        self.take(usize::from(n))
    }

    fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.0)
    }
}

/// What [`FrameReader::next_incoming`] found.
#[derive(Debug)]
pub enum Incoming {
    /// A control frame.
    Frame(Frame),
    /// A `Data` frame of this many bytes (1..=[`MAX_DATA`]): read them with
    /// [`FrameReader::read_data`] before the next call.
    Data(usize),
}

/// Reads frames from a stream, checking each length before reading the payload.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    payload: Vec<u8>,
}

impl<R: Read> FrameReader<R> {
    /// Wrap a stream (already past the magic).
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            payload: Vec::new(),
        }
    }

    /// The next frame. End of stream here is an error: every exchange ends with a frame.
    pub fn next_incoming(&mut self) -> Result<Incoming> {
        let mut header = [0u8; HEADER_LEN];
        self.inner
            .read_exact(&mut header)
            .map_err(|e| TransferError::io("connection", &e))?;
        let kind = header[0];
        let len = u32::from_le_bytes([header[1], header[2], header[3], header[4]]) as usize;
        if kind == kind::DATA {
            if len == 0 || len > MAX_DATA {
                return Err(TransferError::protocol(format!(
                    "data frame of {len} bytes"
                )));
            }
            return Ok(Incoming::Data(len));
        }
        if len > MAX_CONTROL {
            return Err(TransferError::protocol(format!(
                "frame type {kind} of {len} bytes"
            )));
        }
        self.payload.resize(len, 0);
        self.inner
            .read_exact(&mut self.payload)
            .map_err(|e| TransferError::io("connection", &e))?;
        Frame::parse(kind, &self.payload).map(Incoming::Frame)
    }

    /// The next frame, which must be a control frame.
    pub fn next_frame(&mut self) -> Result<Frame> {
        match self.next_incoming()? {
            Incoming::Frame(f) => Ok(f),
            Incoming::Data(_) => Err(TransferError::protocol("unexpected file data")),
        }
    }

    /// Read the payload announced by [`Incoming::Data`].
    pub fn read_data(&mut self, out: &mut [u8]) -> Result<()> {
        self.inner
            .read_exact(out)
            .map_err(|e| TransferError::io("connection", &e))
    }
}

/// A buffer for one `Data` frame, with room for the header in front so that the frame goes
/// out in one `write` (or is handed to the stream whole, uncopied: [`FrameWriter::send_data_shared`]).
///
/// The payload starts on a page boundary. The sender reads file data into it, and the
/// kernel's copy into a buffer that lies 1-31 bytes past its source within a page runs at a
/// quarter of its speed on this lab's AMD EPYC (4K aliasing: each load waits on a recent
/// store to the same page offset). A page-cache page starts at offset 0, and the payload
/// used to start 5 bytes past an allocation that starts 16 bytes past a page: reading a
/// 1 GiB tmpfs file cost 0.63 CPU-s that way against 0.16 into an aligned buffer, a third
/// of the sending `udt cp`'s samples at 4 Gbit/s.
#[derive(Debug)]
pub struct DataBuf {
    bytes: BytesMut,
    len: usize,
}

/// The payload's alignment (see [`DataBuf`]).
const PAYLOAD_ALIGN: usize = 4096;

impl DataBuf {
    /// A buffer for up to [`MAX_DATA`] bytes, its payload page-aligned.
    pub fn new() -> Self {
        let mut bytes = BytesMut::zeroed(PAYLOAD_ALIGN + HEADER_LEN + MAX_DATA);
        let misalign = (bytes.as_ptr() as usize + HEADER_LEN) % PAYLOAD_ALIGN;
        bytes.advance((PAYLOAD_ALIGN - misalign) % PAYLOAD_ALIGN);
        bytes.truncate(HEADER_LEN + MAX_DATA);
        Self { bytes, len: 0 }
    }

    /// Whether the payload is aligned (it stays so through [`Self::reclaim`]).
    fn aligned(bytes: &BytesMut) -> bool {
        (bytes.as_ptr() as usize + HEADER_LEN) % PAYLOAD_ALIGN == 0
    }

    /// Space for the payload (fill it, then [`Self::set_len`]).
    pub fn space(&mut self) -> &mut [u8] {
        &mut self.bytes[HEADER_LEN..]
    }

    /// The payload length.
    pub fn set_len(&mut self, len: usize) {
        self.len = len.min(MAX_DATA);
    }

    /// The payload.
    pub fn payload(&self) -> &[u8] {
        &self.bytes[HEADER_LEN..HEADER_LEN + self.len]
    }

    /// The payload, mutable (the test-only corruption hook flips a byte here).
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[HEADER_LEN..HEADER_LEN + self.len]
    }

    /// Header and payload, ready to write.
    fn frame(&mut self) -> &[u8] {
        self.bytes[0] = kind::DATA;
        let len = self.len as u32;
        self.bytes[1..HEADER_LEN].copy_from_slice(&len.to_le_bytes());
        &self.bytes[..HEADER_LEN + self.len]
    }

    /// Header and payload as shared bytes, for a stream that keeps them uncopied until the
    /// peer has them; the buffer comes back through [`Self::reclaim`].
    fn into_frame(mut self) -> Bytes {
        self.frame();
        self.bytes.truncate(HEADER_LEN + self.len);
        self.bytes.freeze()
    }

    /// The buffer of a frame from [`FrameWriter::send_data_shared`], once nothing else holds
    /// it (else the frame back).
    ///
    /// `bytes` hands the same allocation back, alignment and room included; should it ever
    /// not, a fresh buffer takes its place rather than an unaligned one.
    pub fn reclaim(frame: Bytes) -> std::result::Result<Self, Bytes> {
        let mut bytes = frame.try_into_mut()?;
        if !Self::aligned(&bytes) || bytes.capacity() < HEADER_LEN + MAX_DATA {
            return Ok(Self::new());
        }
        bytes.resize(HEADER_LEN + MAX_DATA, 0);
        Ok(Self { bytes, len: 0 })
    }
}

impl Default for DataBuf {
    fn default() -> Self {
        Self::new()
    }
}

/// Where frames go: a [`Write`] that may also take bytes it keeps uncopied. A UDT stream
/// does ([`udt::UdtStream::write_shared`]); anything else copies, as `write` does.
pub trait FrameSink: Write {
    /// Writes from the front of `data`, as `write` does; returns how many bytes were taken.
    fn write_shared(&mut self, data: &Bytes) -> io::Result<usize> {
        self.write(data)
    }
}

impl<S: FrameSink + ?Sized> FrameSink for Box<S> {
    fn write_shared(&mut self, data: &Bytes) -> io::Result<usize> {
        (**self).write_shared(data)
    }
}

/// A plain [`Write`] as a [`FrameSink`] that copies (tests, fuzzing, files).
#[derive(Debug)]
pub struct Copying<W>(pub W);

impl<W: Write> Write for Copying<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl<W: Write> FrameSink for Copying<W> {}

/// What became of a data frame's buffer.
#[derive(Debug)]
pub enum Sent {
    /// The frame was copied: the buffer is free again.
    Copied(DataBuf),
    /// The stream holds the frame until the peer has it; [`DataBuf::reclaim`] it then.
    Held(Bytes),
}

/// Writes frames, gathering small ones so that many small files do not cost a packet each.
#[derive(Debug)]
pub struct FrameWriter<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

/// Gathered bytes written out at once.
const GATHER: usize = 256 * 1024;

impl<W: Write> FrameWriter<W> {
    /// Wrap a stream.
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            pending: Vec::with_capacity(GATHER),
        }
    }

    /// Queue raw bytes (the connection's magic).
    pub fn preface(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// Queue a control frame.
    pub fn send(&mut self, frame: &Frame) -> io::Result<()> {
        frame.emit(&mut self.pending);
        self.flush_if_full()
    }

    /// Send a data frame (an empty buffer sends nothing).
    pub fn send_data(&mut self, buf: &mut DataBuf) -> io::Result<()> {
        if buf.len == 0 {
            return Ok(());
        }
        if buf.len < GATHER / 4 {
            self.pending.extend_from_slice(buf.frame());
            return self.flush_if_full();
        }
        self.write_pending()?;
        self.inner.write_all(buf.frame())
    }

    /// Send a data frame; a large one goes to the stream uncopied where it allows (small ones
    /// are gathered, copied, as by [`Self::send_data`]).
    pub fn send_data_shared(&mut self, mut buf: DataBuf) -> io::Result<Sent>
    where
        W: FrameSink,
    {
        if buf.len < GATHER / 4 {
            self.send_data(&mut buf)?;
            return Ok(Sent::Copied(buf));
        }
        self.write_pending()?;
        let frame = buf.into_frame();
        let mut at = 0;
        while at < frame.len() {
            match self.inner.write_shared(&frame.slice(at..))? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => at += n,
            }
        }
        Ok(Sent::Held(frame))
    }

    /// Write everything queued and wait until the stream has it.
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_pending()?;
        self.inner.flush()
    }

    /// Write everything queued without waiting for acknowledgement.
    pub fn write_pending(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            self.inner.write_all(&self.pending)?;
            self.pending.clear();
        }
        Ok(())
    }

    /// Write everything queued to `out` instead of the wrapped stream (an error report that
    /// must bypass a wrapper).
    pub fn write_pending_to(&mut self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.pending)?;
        self.pending.clear();
        Ok(())
    }

    fn flush_if_full(&mut self) -> io::Result<()> {
        if self.pending.len() >= GATHER {
            self.write_pending()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
