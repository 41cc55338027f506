//! ACK bodies (control type 2): light (4 bytes), medium (16), full (24) and, between udt
//! peers, full with the receiver's front (28).
//!
//! ```text
//!  header word 1: ACK number (0 for light ACKs)
//!  body word 0: first sequence number not yet received      light, medium, full, front
//!  body word 1: RTT (µs)                                            medium, full, front
//!  body word 2: RTT variance (µs)                                   medium, full, front
//!  body word 3: available receive buffer (packets, UDT4 ⚠)          medium, full, front
//!  body word 4: packet arrival rate (packets/s, 0 = unknown)                full, front
//!  body word 5: estimated link capacity (packets/s, 0 = unknown)            full, front
//!  body word 6: one past the largest sequence number received                     front
//! ```
//!
//! Length rule: 4.11's sender treats a body of exactly 4 bytes as light, otherwise reads
//! words 0–3, and reads words 4–5 when the body is longer than 16. At 8, 12 or 20 bytes it
//! would read bytes that were never sent, so we reject those ([`Error::BadLength`]) and bodies
//! under 4 bytes ([`Error::Truncated`]). Accepted: 4 (light), 16 (medium), 24 (full) and 28
//! or more (full with a front; bytes past word 6 ignored). 4.11 ignores whatever follows
//! word 5, so word 6 changes nothing for it; we send it only to a peer that announced
//! [`Capabilities::ACK_FRONT`](super::Capabilities::ACK_FRONT), and only such a peer's is
//! read (see `connection/control.rs`).
//!
//! Why the front: UDT4's ACK is cumulative, so while a lost packet's repair is under way
//! (a round trip) the sender learns nothing of what arrives behind the hole, unless another
//! loss's NAK shows it. Its delivery-rate samples then span the hole, and in start-up under
//! random loss they grew about 1.5 times a round where they double without loss.

use super::header::{body_word, put_word};
use super::Error;
use crate::seq::{AckNumber, SeqNumber};

/// An ACK: the header's ACK number plus the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AckRepr {
    /// Header word 1; [`AckNumber::LIGHT`] (0) for light ACKs.
    pub number: AckNumber,
    /// The first sequence number not yet received (everything before it was).
    pub ack: SeqNumber,
    /// `None` for a light ACK (4-byte body).
    pub details: Option<AckDetails>,
}

/// The medium/full ACK fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AckDetails {
    /// The receiver's smoothed RTT.
    pub rtt_us: u32,
    /// The receiver's RTT variance.
    pub rtt_var_us: u32,
    /// Free receive buffer, in packets (4.11 sends at least 2).
    pub avail_buf_pkts: u32,
    /// `None` for a medium (16-byte) ACK, `Some` for a full (24- or 28-byte) one.
    pub rates: Option<AckRates>,
}

/// The rate fields of a full ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AckRates {
    /// Packet arrival rate measured by the receiver (0 = unknown).
    pub recv_rate_pkts: u32,
    /// Estimated link capacity.
    pub bandwidth_pkts: u32,
    /// One past the largest sequence number the receiver has got (word 6, 28-byte ACKs):
    /// everything between the ACK number and this has arrived or is in the receiver's loss
    /// list.
    pub front: Option<SeqNumber>,
}

/// Light ACK body length.
pub const LIGHT_LEN: usize = 4;
/// Medium ACK body length.
pub const MEDIUM_LEN: usize = 16;
/// Full ACK body length.
pub const FULL_LEN: usize = 24;
/// Full ACK body length with the receiver's front.
pub const FRONT_LEN: usize = 28;

impl AckRepr {
    /// Parses an ACK body; `number` is the header's additional-info word.
    pub fn parse(number: u32, body: &[u8]) -> Result<Self, Error> {
        let number = AckNumber::new(number);
        let word = |index| body_word(body, index).ok_or(Error::Truncated);
        let ack = SeqNumber::new(word(0)?);
        let details = match body.len() {
            LIGHT_LEN => None,
            len if len < LIGHT_LEN => return Err(Error::Truncated),
            MEDIUM_LEN => Some(AckDetails::parse_words(word(1)?, word(2)?, word(3)?, None)),
            len if len >= FULL_LEN => {
                let front = if len >= FRONT_LEN {
                    Some(SeqNumber::new(word(6)?))
                } else {
                    None
                };
                let rates = AckRates {
                    recv_rate_pkts: word(4)?,
                    bandwidth_pkts: word(5)?,
                    front,
                };
                Some(AckDetails::parse_words(
                    word(1)?,
                    word(2)?,
                    word(3)?,
                    Some(rates),
                ))
            }
            _ => return Err(Error::BadLength),
        };
        Ok(Self {
            number,
            ack,
            details,
        })
    }

    /// Body length: 4, 16, 24 or 28.
    pub fn buffer_len(&self) -> usize {
        match self.details.map(|d| d.rates) {
            None => LIGHT_LEN,
            Some(None) => MEDIUM_LEN,
            Some(Some(AckRates { front: None, .. })) => FULL_LEN,
            Some(Some(AckRates { front: Some(_), .. })) => FRONT_LEN,
        }
    }

    /// Appends the body (the ACK number goes in the header, see `control.rs`).
    pub fn emit(&self, out: &mut Vec<u8>) {
        put_word(out, self.ack.value());
        let Some(details) = self.details else {
            return;
        };
        put_word(out, details.rtt_us);
        put_word(out, details.rtt_var_us);
        put_word(out, details.avail_buf_pkts);
        if let Some(rates) = details.rates {
            put_word(out, rates.recv_rate_pkts);
            put_word(out, rates.bandwidth_pkts);
            if let Some(front) = rates.front {
                put_word(out, front.value());
            }
        }
    }

    /// Whether this is a light ACK (no details, no ACK2 expected).
    pub fn is_light(&self) -> bool {
        self.details.is_none()
    }
}

impl AckDetails {
    fn parse_words(rtt_us: u32, rtt_var_us: u32, avail: u32, rates: Option<AckRates>) -> Self {
        Self {
            rtt_us,
            rtt_var_us,
            avail_buf_pkts: avail,
            rates,
        }
    }
}
