//! The capability announcement: our one extension of UDT4, carried in a user-defined
//! (type 0x7FFF) control packet so that a 4.11 peer never sees anything it would act on.
//!
//! ```text
//!  word 0: 1 | 0x7FFF | EXT_TYPE_CAPABILITIES (0x5544, "UD")
//!  word 1: flags: bit 31 (LSB) = HEARD, "your announcement arrived"
//!  word 2: timestamp 0
//!  word 3: destination socket id
//!  body:   word 0 = CAPABILITY_MAGIC (0x5544_5458, "UDTX"), word 1 = capability bits,
//!          further words reserved (ignored on receipt)
//! ```
//!
//! Why it is safe with 4.11: 4.11 hands type 0x7FFF to its congestion controller's
//! `processCustomMsg`, which the native controller leaves empty (a custom CCC application
//! could look at it; the magic word keeps it from mistaking ours for its own). 4.11 swaps the
//! body word by word (protocol §1.1), which only matters to such an application: here the
//! words are big-endian like every other control body.
//!
//! Each side of an udt connection sends one announcement once connected; a side that
//! receives an announcement without HEARD answers once with HEARD set. So a single lost
//! announcement is repaired by the other, and no timer or retransmission is needed: losing
//! both only means the optional fast paths stay off.

use super::header::body_word;
use super::ControlBody;

/// The user-defined sub-type of the capability announcement ("UD").
pub const EXT_TYPE_CAPABILITIES: u16 = 0x5544;
/// First body word, telling our announcement from another user's sub-type 0x5544 ("UDTX").
pub const CAPABILITY_MAGIC: u32 = 0x5544_5458;
/// Bit of the info word: the sender has received the recipient's announcement.
const FLAG_HEARD: u32 = 1;

/// What one side's runtime can do beyond UDT4, as a bit field (unknown bits are kept, so a
/// newer peer's announcement reads back intact).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Capabilities(pub u32);

impl Capabilities {
    /// Nothing beyond UDT4.
    pub const NONE: Self = Self(0);
    /// The sender may hand the kernel several equal-size datagrams for this side as one UDP
    /// segmentation-offload send (`UDP_SEGMENT`). The kernel (or the NIC) cuts them into
    /// ordinary datagrams, so the wire does not change; the bit exists so that only a peer
    /// that asked for it gets them.
    pub const GSO: Self = Self(1 << 0);
    /// This side receives with `UDP_GRO` (coalesced datagrams, split again by its runtime).
    /// Informational.
    pub const GRO: Self = Self(1 << 1);
    /// This side's receiver spaces its ACKs by the arrival speed, up to two SYNs apart, for
    /// a peer that announces [`Self::SPARSE_ACK_SENDER`]
    /// ([`sparse_acks`](crate::congestion::sparse_acks)). Announced by the connection itself.
    pub const ACK_SPACING: Self = Self(1 << 2);
    /// This side's sender sizes its windows for spaced ACKs: its congestion controller says
    /// so ([`Controller::sizes_for_sparse_acks`](crate::congestion::Controller::sizes_for_sparse_acks)).
    /// Announced by the connection itself.
    pub const SPARSE_ACK_SENDER: Self = Self(1 << 3);
    /// This side's receiver reports its front (one past the largest sequence number it has
    /// got) in its ACKs, also while a hole holds the ACK number, and its sender reads the
    /// peer's ([`AckRates::front`](super::AckRates::front)). Announced by the connection
    /// itself.
    pub const ACK_FRONT: Self = Self(1 << 4);

    /// Whether every bit of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The bits set in either.
    #[must_use]
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// The bits set in both.
    #[must_use]
    pub const fn intersection(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }
}

/// One capability announcement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CapabilityAnnouncement {
    /// The sender's capabilities.
    pub capabilities: Capabilities,
    /// The sender has already received the recipient's announcement (so no answer is due).
    pub heard: bool,
}

/// Body length emitted: magic and capability words.
const BODY_LEN: usize = 8;

impl CapabilityAnnouncement {
    /// Reads a user-defined control packet's fields as an announcement; `None` when it is
    /// some other user-defined packet (another sub-type, no magic word, a short body).
    pub fn from_user_defined(ext_type: u16, info: u32, body: &[u8]) -> Option<Self> {
        if ext_type != EXT_TYPE_CAPABILITIES || body_word(body, 0)? != CAPABILITY_MAGIC {
            return None;
        }
        Some(Self {
            capabilities: Capabilities(body_word(body, 1)?),
            heard: info & FLAG_HEARD != 0,
        })
    }

    /// The control body to send.
    pub fn to_control_body(self) -> ControlBody {
        let mut body = Vec::with_capacity(BODY_LEN);
        body.extend_from_slice(&CAPABILITY_MAGIC.to_be_bytes());
        body.extend_from_slice(&self.capabilities.0.to_be_bytes());
        ControlBody::UserDefined {
            ext_type: EXT_TYPE_CAPABILITIES,
            info: if self.heard { FLAG_HEARD } else { 0 },
            body,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seq::SocketId;
    use crate::wire::{ControlRepr, Packet, Timestamp};

    #[test]
    fn golden_bytes_and_round_trip() {
        let ann = CapabilityAnnouncement {
            capabilities: Capabilities::GSO.union(Capabilities::GRO),
            heard: true,
        };
        let repr = ControlRepr {
            timestamp: Timestamp::ZERO,
            dst: SocketId(0x0102_0304),
            body: ann.to_control_body(),
        };
        let mut buf = Vec::new();
        repr.emit(&mut buf);
        #[rustfmt::skip]
        let golden = [
            0xFF, 0xFF, 0x55, 0x44, 0, 0, 0, 1, 0, 0, 0, 0, 1, 2, 3, 4,
            0x55, 0x44, 0x54, 0x58, 0, 0, 0, 3,
        ];
        assert_eq!(buf, golden);
        let Ok(Packet::Control(parsed)) = Packet::parse(&buf) else {
            panic!("not a control packet");
        };
        let ControlBody::UserDefined {
            ext_type,
            info,
            body,
        } = parsed.body
        else {
            panic!("not user-defined");
        };
        assert_eq!(
            CapabilityAnnouncement::from_user_defined(ext_type, info, &body),
            Some(ann)
        );
    }

    #[test]
    fn other_user_defined_packets_are_not_announcements() {
        let body = [0x55, 0x44, 0x54, 0x58, 0, 0, 0, 1];
        let read = CapabilityAnnouncement::from_user_defined;
        assert!(read(EXT_TYPE_CAPABILITIES, 0, &body).is_some());
        assert_eq!(read(0x1234, 0, &body), None);
        assert_eq!(read(EXT_TYPE_CAPABILITIES, 0, &body[..7]), None);
        assert_eq!(read(EXT_TYPE_CAPABILITIES, 0, &[0; 8]), None);
        assert_eq!(read(EXT_TYPE_CAPABILITIES, 0, &[]), None);
        // Unknown bits and extra words (a newer peer) are kept and ignored respectively.
        let newer = [0x55, 0x44, 0x54, 0x58, 0x80, 0, 0, 1, 9, 9, 9, 9];
        let got = read(EXT_TYPE_CAPABILITIES, 0, &newer).unwrap();
        assert!(got.capabilities.contains(Capabilities::GSO));
        assert_eq!(got.capabilities.0, 0x8000_0001);
        assert!(!got.heard);
    }
}
