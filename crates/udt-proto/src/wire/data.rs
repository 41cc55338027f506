//! Data packets: the 16-byte header (sequence number, message word, timestamp, destination)
//! followed by the raw payload.
//!
//! ```text
//!  word 0: 0 | packet sequence number (31 bits)
//!  word 1: FF (2 bits) | O (1 bit) | message number (29 bits)
//!  word 2: timestamp (µs since the sending socket was opened)
//!  word 3: destination socket id
//!  payload: raw bytes (not word-swapped, unlike control bodies)
//! ```
//!
//! The hot path: [`DataRepr::parse`] borrows the payload (no copy, no allocation) and
//! [`DataHeader::emit`] / [`emit_data_header`] write only the header, so a sender can append
//! the payload straight from its buffer, or write the header into a preallocated slot with
//! [`DataHeader::to_bytes`].

use super::header::{self, Header};
use super::{Error, Timestamp, HEADER_LEN};
use crate::seq::{MsgNumber, SeqNumber, SocketId};

/// The FF field: where a packet sits inside its message. Values are the wire bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Boundary {
    /// `00`: neither first nor last packet of its message.
    Middle = 0b00,
    /// `01`: last packet of a multi-packet message.
    Last = 0b01,
    /// `10`: first packet of a multi-packet message.
    First = 0b10,
    /// `11`: the whole message fits in this packet.
    Solo = 0b11,
}

impl Boundary {
    /// The boundary from the two FF bits (only the low two bits of `bits` are used).
    pub const fn from_bits(bits: u32) -> Self {
        match bits & 0b11 {
            0b00 => Self::Middle,
            0b01 => Self::Last,
            0b10 => Self::First,
            _ => Self::Solo,
        }
    }

    /// The boundary of a packet that starts and/or ends its message (the inverse of
    /// [`Self::is_first`] and [`Self::is_last`]).
    pub const fn new(first: bool, last: bool) -> Self {
        Self::from_bits(((first as u32) << 1) | last as u32)
    }

    /// Whether this packet starts a message (`First` or `Solo`).
    pub const fn is_first(self) -> bool {
        matches!(self, Self::First | Self::Solo)
    }

    /// Whether this packet ends a message (`Last` or `Solo`).
    pub const fn is_last(self) -> bool {
        matches!(self, Self::Last | Self::Solo)
    }
}

const FF_SHIFT: u32 = 30;
const IN_ORDER_BIT: u32 = 1 << 29;

/// A data packet header without its payload: what the sender's hot path writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataHeader {
    /// Packet sequence number (31 bits).
    pub seq: SeqNumber,
    /// Message boundary (FF bits).
    pub boundary: Boundary,
    /// O bit: the message must be delivered in order.
    pub in_order: bool,
    /// Message number (29 bits).
    pub msg: MsgNumber,
    /// µs since the sending socket was opened.
    pub timestamp: Timestamp,
    /// The peer's socket id.
    pub dst: SocketId,
}

impl DataHeader {
    /// The message word (word 1): FF, O and the message number.
    pub fn msg_word(&self) -> u32 {
        let order = if self.in_order { IN_ORDER_BIT } else { 0 };
        ((self.boundary as u32) << FF_SHIFT) | order | self.msg.value()
    }

    /// The 16 header bytes, for writing into a preallocated buffer.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        header::header_bytes(self.seq.value(), self.msg_word(), self.timestamp, self.dst)
    }

    /// Appends the 16 header bytes to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bytes());
    }

    /// Attaches a payload.
    pub fn with_payload(self, payload: &[u8]) -> DataRepr<'_> {
        DataRepr {
            seq: self.seq,
            boundary: self.boundary,
            in_order: self.in_order,
            msg: self.msg,
            timestamp: self.timestamp,
            dst: self.dst,
            payload,
        }
    }
}

/// Appends a data packet header to `out`: the free-function form of [`DataHeader::emit`].
pub fn emit_data_header(
    seq: SeqNumber,
    boundary: Boundary,
    in_order: bool,
    msg: MsgNumber,
    timestamp: Timestamp,
    dst: SocketId,
    out: &mut Vec<u8>,
) {
    let header = DataHeader {
        seq,
        boundary,
        in_order,
        msg,
        timestamp,
        dst,
    };
    header.emit(out);
}

/// A data packet; the payload borrows from the datagram (parse) or the send buffer (emit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataRepr<'a> {
    /// Packet sequence number (31 bits).
    pub seq: SeqNumber,
    /// Message boundary (FF bits).
    pub boundary: Boundary,
    /// O bit: the message must be delivered in order.
    pub in_order: bool,
    /// Message number (29 bits).
    pub msg: MsgNumber,
    /// µs since the sending socket was opened.
    pub timestamp: Timestamp,
    /// The receiver's socket id.
    pub dst: SocketId,
    /// The payload bytes, as on the wire.
    pub payload: &'a [u8],
}

impl<'a> DataRepr<'a> {
    /// Parses a whole datagram as a data packet. The flag bit is not checked (a control
    /// packet would decode as nonsense): route with [`super::Packet::parse`] or
    /// [`super::is_control`] when the kind is unknown. Only input shorter than the header fails.
    pub fn parse(buf: &'a [u8]) -> Result<Self, Error> {
        Header::new_checked(buf).map(|header| Self::parse_header(&header))
    }

    /// Decodes a checked header as a data packet (the flag bit is ignored). Infallible: any
    /// 16 bytes are a valid data header and any payload length (including 0) is accepted.
    pub(crate) fn parse_header(header: &Header<'a>) -> Self {
        let word1 = header.word1();
        Self {
            seq: SeqNumber::new(header.word0()),
            boundary: Boundary::from_bits(word1 >> FF_SHIFT),
            in_order: word1 & IN_ORDER_BIT != 0,
            msg: MsgNumber::new(word1),
            timestamp: header.timestamp(),
            dst: header.dst(),
            payload: header.body(),
        }
    }

    /// The header fields without the payload.
    pub fn header(&self) -> DataHeader {
        DataHeader {
            seq: self.seq,
            boundary: self.boundary,
            in_order: self.in_order,
            msg: self.msg,
            timestamp: self.timestamp,
            dst: self.dst,
        }
    }

    /// Header plus payload length.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.payload.len()
    }

    /// Appends header and payload to `out` (one reserve, one payload copy).
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.reserve(self.buffer_len());
        self.header().emit(out);
        out.extend_from_slice(self.payload);
    }
}
