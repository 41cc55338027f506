//! Control packets: the header words and one [`ControlBody`] variant per 4.11 control type.
//!
//! ```text
//!  word 0: 1 | type (15 bits) | extended type (16 bits, user-defined packets only)
//!  word 1: additional info (ACK number, message number, error code, ...)
//!  word 2: timestamp (UDT4 ⚠: always 0 from 4.11)
//!  word 3: destination socket id (0 for connection requests)
//!  body:   big-endian 32-bit words (4.11 swaps the whole body word by word)
//! ```
//!
//! Body-less types (keep-alive, congestion warning, shutdown, ACK2, error) are emitted with
//! 4.11's 4-byte zero pad (20-byte datagrams); on receipt any body is accepted and ignored,
//! as 4.11 never checks it. The extended type of non-user-defined packets and the
//! additional info of types that do not use it are likewise ignored and emitted as 0.

use super::ack::AckRepr;
use super::handshake::HandshakeRepr;
use super::header::{body_word, emit_header, put_word, Header, CONTROL_FLAG};
use super::loss_list::NakRepr;
use super::{Error, Timestamp, HEADER_LEN};
use crate::seq::{AckNumber, MsgNumber, SeqNumber, SocketId};

/// The 15-bit control type field (word 0 bits 1–15), in spec order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ControlType(pub u16);

impl ControlType {
    /// Connection handshake.
    pub const HANDSHAKE: Self = Self(0);
    /// Keep-alive.
    pub const KEEP_ALIVE: Self = Self(1);
    /// Acknowledgement.
    pub const ACK: Self = Self(2);
    /// Negative acknowledgement (loss report).
    pub const NAK: Self = Self(3);
    /// Congestion / delay warning (UDT4: handled but never sent by 4.11).
    pub const CONGESTION_WARNING: Self = Self(4);
    /// Shutdown.
    pub const SHUTDOWN: Self = Self(5);
    /// Acknowledgement of an acknowledgement.
    pub const ACK2: Self = Self(6);
    /// Message drop request.
    pub const DROP_REQUEST: Self = Self(7);
    /// Error signal (UDT4: not in the draft).
    pub const ERROR: Self = Self(8);
    /// User-defined; the sub-type is the extended-type field.
    pub const USER_DEFINED: Self = Self(0x7FFF);
}

/// Length of the zero pad 4.11 puts after body-less control packets.
pub const PAD_LEN: usize = 4;
/// Length of a drop request body (first and last sequence number).
pub const DROP_REQUEST_LEN: usize = 8;

/// A control packet.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ControlRepr {
    /// Header word 2; 0 from 4.11 (and from us).
    pub timestamp: Timestamp,
    /// Header word 3: the receiver's socket id, 0 for connection requests.
    pub dst: SocketId,
    /// The type-specific part.
    pub body: ControlBody,
}

/// The type-specific part of a control packet, one variant per type in spec order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ControlBody {
    /// Type 0: connection handshake.
    Handshake(HandshakeRepr),
    /// Type 1: keep-alive.
    KeepAlive,
    /// Type 2: ACK (the number travels in word 1).
    Ack(AckRepr),
    /// Type 3: NAK. Emitting one with no ranges produces a packet receivers reject.
    Nak(NakRepr),
    /// Type 4: congestion warning.
    CongestionWarning,
    /// Type 5: shutdown.
    Shutdown,
    /// Type 6: ACK2, echoing the ACK number in word 1.
    Ack2(AckNumber),
    /// Type 7: message drop request. `msg` travels in word 1 (bare 29 bits, no FF/O);
    /// UDT4 ⚠: 4.11 sends `last` as one past the message end.
    DropRequest {
        /// The message to drop.
        msg: MsgNumber,
        /// First sequence number to drop.
        first: SeqNumber,
        /// Last sequence number (see the variant note).
        last: SeqNumber,
    },
    /// Type 8: error signal; 4.11 only sends code 4000.
    Error {
        /// The error code (word 1).
        code: u32,
    },
    /// Type 0x7FFF: user-defined.
    ///
    /// `body` holds the bytes exactly as they appear on the wire. UDT4 ⚠: 4.11 converts every
    /// whole 32-bit word of the body to big-endian before sending (trailing bytes of a body
    /// that is not a multiple of 4 untouched), so a 4.11 application sees each word
    /// byte-swapped relative to these bytes. An empty body is emitted as a bare 16-byte
    /// packet (no pad) so that it parses back as empty; pass `vec![0; 4]` to mimic 4.11.
    UserDefined {
        /// The sub-type (word 0 bits 16–31).
        ext_type: u16,
        /// Word 1.
        info: u32,
        /// The body as on the wire.
        body: Vec<u8>,
    },
}

impl ControlRepr {
    /// Parses a whole datagram as a control packet. The flag bit is not checked (route with
    /// [`super::Packet::parse`] when the kind is unknown).
    pub fn parse(buf: &[u8]) -> Result<Self, Error> {
        Self::parse_header(&Header::new_checked(buf)?)
    }

    /// Decodes a checked header (and its body) as a control packet.
    pub(crate) fn parse_header(header: &Header<'_>) -> Result<Self, Error> {
        Ok(Self {
            timestamp: header.timestamp(),
            dst: header.dst(),
            body: ControlBody::parse(header.word0(), header.word1(), header.body())?,
        })
    }

    /// Header plus body length.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.body.buffer_len()
    }

    /// Appends the datagram to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.reserve(self.buffer_len());
        let body = &self.body;
        let word0 =
            CONTROL_FLAG | (u32::from(body.control_type().0) << 16) | u32::from(body.ext_type());
        emit_header(word0, body.info(), self.timestamp, self.dst, out);
        body.emit(out);
    }
}

impl ControlBody {
    /// Decodes the type-specific part from header words 0 and 1 and the body bytes.
    fn parse(word0: u32, info: u32, body: &[u8]) -> Result<Self, Error> {
        // 15-bit type, 16-bit extended type: the masks make both casts lossless.
        let kind = ControlType(((word0 >> 16) & 0x7FFF) as u16);
        let ext_type = (word0 & 0xFFFF) as u16;
        Ok(match kind {
            ControlType::HANDSHAKE => Self::Handshake(HandshakeRepr::parse(body)?),
            ControlType::KEEP_ALIVE => Self::KeepAlive,
            ControlType::ACK => Self::Ack(AckRepr::parse(info, body)?),
            ControlType::NAK => Self::Nak(NakRepr::parse(body)?),
            ControlType::CONGESTION_WARNING => Self::CongestionWarning,
            ControlType::SHUTDOWN => Self::Shutdown,
            ControlType::ACK2 => Self::Ack2(AckNumber::new(info)),
            ControlType::DROP_REQUEST => Self::DropRequest {
                msg: MsgNumber::new(info),
                first: SeqNumber::new(body_word(body, 0).ok_or(Error::Truncated)?),
                last: SeqNumber::new(body_word(body, 1).ok_or(Error::Truncated)?),
            },
            ControlType::ERROR => Self::Error { code: info },
            ControlType::USER_DEFINED => Self::UserDefined {
                ext_type,
                info,
                // Bounded by the datagram length.
                body: body.to_vec(),
            },
            ControlType(other) => return Err(Error::UnknownControlType(other)),
        })
    }

    /// The type field.
    pub fn control_type(&self) -> ControlType {
        match self {
            Self::Handshake(_) => ControlType::HANDSHAKE,
            Self::KeepAlive => ControlType::KEEP_ALIVE,
            Self::Ack(_) => ControlType::ACK,
            Self::Nak(_) => ControlType::NAK,
            Self::CongestionWarning => ControlType::CONGESTION_WARNING,
            Self::Shutdown => ControlType::SHUTDOWN,
            Self::Ack2(_) => ControlType::ACK2,
            Self::DropRequest { .. } => ControlType::DROP_REQUEST,
            Self::Error { .. } => ControlType::ERROR,
            Self::UserDefined { .. } => ControlType::USER_DEFINED,
        }
    }

    /// The extended-type field (non-zero only for user-defined packets).
    pub fn ext_type(&self) -> u16 {
        match self {
            Self::UserDefined { ext_type, .. } => *ext_type,
            _ => 0,
        }
    }

    /// The additional-info word (header word 1).
    pub fn info(&self) -> u32 {
        match self {
            Self::Ack(ack) => ack.number.value(),
            Self::Ack2(number) => number.value(),
            Self::DropRequest { msg, .. } => msg.value(),
            Self::Error { code } => *code,
            Self::UserDefined { info, .. } => *info,
            _ => 0,
        }
    }

    /// Body length on the wire (including 4.11's pad for body-less types).
    pub fn buffer_len(&self) -> usize {
        match self {
            Self::Handshake(handshake) => handshake.buffer_len(),
            Self::Ack(ack) => ack.buffer_len(),
            Self::Nak(nak) => nak.buffer_len(),
            Self::DropRequest { .. } => DROP_REQUEST_LEN,
            Self::UserDefined { body, .. } => body.len(),
            Self::KeepAlive
            | Self::CongestionWarning
            | Self::Shutdown
            | Self::Ack2(_)
            | Self::Error { .. } => PAD_LEN,
        }
    }

    /// Appends the body bytes.
    fn emit(&self, out: &mut Vec<u8>) {
        match self {
            Self::Handshake(handshake) => handshake.emit(out),
            Self::Ack(ack) => ack.emit(out),
            Self::Nak(nak) => nak.emit(out),
            Self::DropRequest { first, last, .. } => {
                put_word(out, first.value());
                put_word(out, last.value());
            }
            Self::UserDefined { body, .. } => out.extend_from_slice(body),
            Self::KeepAlive
            | Self::CongestionWarning
            | Self::Shutdown
            | Self::Ack2(_)
            | Self::Error { .. } => out.extend_from_slice(&[0; PAD_LEN]),
        }
    }
}
