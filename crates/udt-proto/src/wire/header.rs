//! The fixed 16-byte header shared by data and control packets, and the big-endian word
//! helpers every body codec uses.
//!
//! All four header words are big-endian. Word 0 bit 0 (the MSB) is the control flag; the
//! meaning of the rest of words 0 and 1 depends on it (see `data.rs` and `control.rs`);
//! word 2 is the timestamp and word 3 the destination socket id for both kinds.

use super::{Error, Timestamp, HEADER_LEN};
use crate::seq::SocketId;

/// Byte ranges of the header words, and where the body starts.
pub mod field {
    /// A byte range inside a datagram.
    pub type Field = core::ops::Range<usize>;

    /// Word 0: flag bit + sequence number (data) or flag + type + extended type (control).
    pub const WORD0: Field = 0..4;
    /// Word 1: FF/O/message number (data) or additional info (control).
    pub const WORD1: Field = 4..8;
    /// Word 2: timestamp in microseconds.
    pub const TIMESTAMP: Field = 8..12;
    /// Word 3: destination socket id.
    pub const DST_SOCKET: Field = 12..16;
    /// First byte of the payload (data) or body (control).
    pub const BODY: usize = super::HEADER_LEN;
}

/// Word 0 bit 0: set on control packets, clear on data packets.
pub const CONTROL_FLAG: u32 = 0x8000_0000;

/// A checked view of a datagram's header: the 16 header bytes and the rest.
///
/// Holding the header as a `&[u8; 16]` makes every accessor infallible without indexing
/// checks that could panic.
#[derive(Debug, Clone, Copy)]
pub struct Header<'a> {
    head: &'a [u8; HEADER_LEN],
    body: &'a [u8],
}

impl<'a> Header<'a> {
    /// Splits `buf` into header and body; [`Error::Truncated`] if shorter than 16 bytes.
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, Error> {
        let (head, body) = buf
            .split_first_chunk::<HEADER_LEN>()
            .ok_or(Error::Truncated)?;
        Ok(Self { head, body })
    }

    /// Word `index` (0..4) of the header, host order.
    fn word(&self, index: usize) -> u32 {
        let h = self.head;
        let at = index * 4;
        u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]])
    }

    /// Word 0 as a host-order integer.
    pub fn word0(&self) -> u32 {
        self.word(0)
    }

    /// Word 1 as a host-order integer.
    pub fn word1(&self) -> u32 {
        self.word(1)
    }

    /// Whether the control flag is set.
    pub fn is_control(&self) -> bool {
        self.word0() & CONTROL_FLAG != 0
    }

    /// Word 2: the timestamp.
    pub fn timestamp(&self) -> Timestamp {
        Timestamp(self.word(2))
    }

    /// Word 3: the destination socket id.
    pub fn dst(&self) -> SocketId {
        SocketId(self.word(3))
    }

    /// Everything after the header.
    pub fn body(&self) -> &'a [u8] {
        self.body
    }
}

/// Appends the four header words, big-endian, in one copy.
pub(crate) fn emit_header(
    word0: u32,
    word1: u32,
    timestamp: Timestamp,
    dst: SocketId,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(&header_bytes(word0, word1, timestamp, dst));
}

/// The 16 header bytes for the given words.
pub(crate) fn header_bytes(
    word0: u32,
    word1: u32,
    timestamp: Timestamp,
    dst: SocketId,
) -> [u8; HEADER_LEN] {
    let mut bytes = [0; HEADER_LEN];
    bytes[field::WORD0].copy_from_slice(&word0.to_be_bytes());
    bytes[field::WORD1].copy_from_slice(&word1.to_be_bytes());
    bytes[field::TIMESTAMP].copy_from_slice(&timestamp.0.to_be_bytes());
    bytes[field::DST_SOCKET].copy_from_slice(&dst.0.to_be_bytes());
    bytes
}

/// Big-endian word `index` of `body`, or `None` past the end.
pub(crate) fn body_word(body: &[u8], index: usize) -> Option<u32> {
    let start = index.checked_mul(4)?;
    let bytes = body.get(start..)?.first_chunk::<4>()?;
    Some(u32::from_be_bytes(*bytes))
}

/// Appends one big-endian word.
pub(crate) fn put_word(out: &mut Vec<u8>, word: u32) {
    out.extend_from_slice(&word.to_be_bytes());
}
