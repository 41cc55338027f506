//! Packet protection: every packet after the handshake encrypted and authenticated with
//! AES-256-GCM under a session key both sides hold.
//!
//! # On the wire
//! ```text
//! data:    | UDT4 data header (16, plaintext, AAD) | payload (encrypted) | counter (8) | tag (16) |
//! control: | 0x7FFF/0x5550 header (16, AAD)        | inner header words 0-1 + body (encrypted) | counter | tag |
//! ```
//! A protected control packet travels as a user-defined packet (type 0x7FFF, sub-type 0x5550,
//! "UP") whose timestamp and destination are the inner packet's; its real type and info word
//! are encrypted inside. A libudt 4.11 peer hands type 0x7FFF to its congestion controller,
//! which ignores it, so a UDT4 peer that reaches a protected side never acts on anything it
//! cannot read; and a protected side sends data only after the peer proved the key (its
//! first packet authenticated), so such a peer never gets encrypted payload either.
//! Handshakes stay plaintext: they come before the connection exists (SYN cookies keep no
//! state), and a connection only answers them with its own handshake.
//!
//! # Rules (`shared/security.md`)
//! - **Nonces never repeat.** Each direction has its own keys (`keys.rs`); within a direction
//!   the nonce is a 64-bit counter that grows by one per packet sent, whatever the packet
//!   (a retransmission is a new packet with a new counter), so neither the 31-bit sequence
//!   wrap nor a retransmission can repeat one. The counter is carried in the packet.
//! - **Usage limits.** The key changes every `2^EPOCH_BITS` packets (half of AES-GCM's 2^23
//!   confidentiality limit, RFC 9001 6.6); a direction stops accepting packets after
//!   [`INTEGRITY_LIMIT`] failed ones.
//! - **Authenticate before acting.** `Protection::open` checks the tag before anything of
//!   the packet is parsed; a packet that fails is dropped and counted, never fatal.
//! - **Replay.** A window over authenticated counters (`replay.rs`) drops repeats.
//! - **No downgrade.** With a session key configured there is nothing to negotiate: every
//!   packet but a handshake must be protected, plaintext is refused and counted.

mod keys;
mod replay;

use std::fmt;
use std::sync::Arc;

use ring::aead::{Aad, Tag};
use zeroize::Zeroizing;

use crate::seq::{SeqNumber, SocketId};
use crate::wire::HEADER_LEN;
use keys::{nonce, Context, DirectionKeys, EPOCH_BITS};
use replay::ReplayWindow;

/// Bytes protection adds to a packet: the counter and the tag.
pub const OVERHEAD: usize = COUNTER_LEN + TAG_LEN;
/// The user-defined sub-type that carries a protected control packet ("UP").
pub const EXT_TYPE_PROTECTED: u16 = 0x5550;
/// Failed packets a direction takes before it refuses everything (AES-GCM's integrity limit,
/// RFC 9001 section 6.6: 2^52 forgery attempts).
pub const INTEGRITY_LIMIT: u64 = 1 << 52;

const COUNTER_LEN: usize = 8;
const TAG_LEN: usize = 16;
/// Largest counter used: far beyond any connection's life (2^62 packets), and keeps
/// `counter + 1` and the epoch arithmetic clear of overflow.
const MAX_COUNTER: u64 = 1 << 62;
/// Header word 0 of a protected control packet: control bit, type 0x7FFF, sub-type "UP".
const PROTECTED_WORD0: u32 = 0x8000_0000 | (0x7FFF << 16) | EXT_TYPE_PROTECTED as u32;

/// A 256-bit secret both sides of a connection hold (from `udt cp`'s SSH bootstrap, say).
/// Wiped from memory when the last copy is dropped; never printed.
#[derive(Clone)]
pub struct SessionKey(Arc<Zeroizing<[u8; 32]>>);

impl SessionKey {
    /// A key from its 32 bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(Arc::new(Zeroizing::new(bytes)))
    }

    /// A key from 64 hexadecimal digits (how `udt` passes keys between processes).
    pub fn from_hex(text: &str) -> Result<Self, KeyFormatError> {
        let text = text.trim();
        if text.len() != 64 || !text.is_ascii() {
            return Err(KeyFormatError);
        }
        let mut bytes = Zeroizing::new([0u8; 32]);
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| KeyFormatError)?;
        }
        Ok(Self(Arc::new(bytes)))
    }

    /// The key as 64 lowercase hexadecimal digits (wiped when dropped).
    pub fn to_hex(&self) -> Zeroizing<String> {
        let mut out = Zeroizing::new(String::with_capacity(64));
        for b in self.0.iter() {
            out.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
            out.push(char::from_digit(u32::from(b & 15), 16).unwrap_or('0'));
        }
        out
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0[..]
    }
}

impl fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionKey(..)")
    }
}

/// A session key that is not 64 hexadecimal digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a session key is 64 hexadecimal digits")]
pub struct KeyFormatError;

/// Why an arriving packet was not opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not protected (and not a handshake): refused, no downgrade.
    Plaintext,
    /// Too short to be a protected packet.
    Truncated,
    /// Its counter was accepted before, or is older than the replay window.
    Replayed,
    /// The tag did not verify: forged, tampered, or another key.
    Forged,
}

/// What an arriving datagram turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Opened {
    /// A handshake: plaintext by design, for the caller to parse as it is.
    Handshake,
    /// A protected packet, authenticated; its UDT4 bytes are at the datagram's front.
    Packet,
}

/// One connection's protection state. See the module documentation.
pub(crate) struct Protection {
    send: DirectionKeys,
    recv: DirectionKeys,
    /// The counter of the next packet sealed.
    next_counter: u64,
    replay: ReplayWindow,
    /// Packets that failed to open (for the integrity limit).
    failures: u64,
    integrity_limit: u64,
    /// A packet from the peer has authenticated: it holds the key.
    peer_proved: bool,
}

impl fmt::Debug for Protection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Protection")
            .field("next_counter", &self.next_counter)
            .field("failures", &self.failures)
            .field("peer_proved", &self.peer_proved)
            .finish_non_exhaustive()
    }
}

impl Protection {
    /// Protection for the connection between socket `local` and `peer`, whose directions
    /// start at `send_isn` and `recv_isn`.
    pub(crate) fn new(
        key: &SessionKey,
        local: SocketId,
        peer: SocketId,
        send_isn: SeqNumber,
        recv_isn: SeqNumber,
    ) -> Self {
        let context = Context::new(local, peer, send_isn, recv_isn);
        Self {
            send: DirectionKeys::new(key, &context, local),
            recv: DirectionKeys::new(key, &context, peer),
            next_counter: 0,
            replay: ReplayWindow::new(),
            failures: 0,
            integrity_limit: INTEGRITY_LIMIT,
            peer_proved: false,
        }
    }

    /// Whether a packet from the peer has authenticated.
    pub(crate) fn peer_proved(&self) -> bool {
        self.peer_proved
    }

    /// Protect the UDT4 packet at `buf[start..]` in place (it grows by [`OVERHEAD`], and by
    /// 8 more bytes for a control packet). False if this direction has used up its counters
    /// (after 2^62 packets): the packet is removed and must not be sent.
    pub(crate) fn seal(&mut self, buf: &mut Vec<u8>, start: usize) -> bool {
        if self.next_counter >= MAX_COUNTER || buf.len() < start + HEADER_LEN {
            buf.truncate(start);
            return false;
        }
        let counter = self.next_counter;
        self.next_counter += 1;
        if buf[start] & 0x80 != 0 {
            wrap_control(buf, start);
        }
        let mut aad = [0u8; HEADER_LEN];
        aad.copy_from_slice(&buf[start..start + HEADER_LEN]);
        let key = self.send.key(counter >> EPOCH_BITS);
        let sealed = key.seal_in_place_separate_tag(
            nonce(counter),
            Aad::from(aad),
            &mut buf[start + HEADER_LEN..],
        );
        let Ok(tag) = sealed else {
            // Only fails for inputs beyond AES-GCM's 64 GiB per-message limit: not a datagram.
            buf.truncate(start);
            return false;
        };
        buf.extend_from_slice(&counter.to_be_bytes());
        buf.extend_from_slice(tag.as_ref());
        true
    }

    /// Authenticate and decrypt `datagram` where it lies: on success the UDT4 packet it
    /// carried is at its front, and the packet's length is returned with the verdict (a
    /// handshake is left as it is, its whole length). Opening in place spares a copy per
    /// packet: the runtime opens a datagram in the buffer the kernel wrote it to, and a data
    /// packet's payload can stay there. Nothing is recorded unless the packet authenticated;
    /// a refused datagram's bytes are unspecified afterwards (the caller drops it).
    pub(crate) fn open_in_place(
        &mut self,
        datagram: &mut [u8],
    ) -> Result<(Opened, usize), Refused> {
        let kind = classify(datagram);
        match kind {
            Kind::Handshake => return Ok((Opened::Handshake, datagram.len())),
            Kind::Plaintext => return Err(Refused::Plaintext),
            Kind::Data | Kind::Control => {}
        }
        let min = HEADER_LEN + OVERHEAD + if kind == Kind::Control { 8 } else { 0 };
        if datagram.len() < min {
            return Err(Refused::Truncated);
        }
        if self.failures >= self.integrity_limit {
            return Err(Refused::Forged);
        }
        let counter_at = datagram.len() - OVERHEAD;
        let mut counter_bytes = [0u8; COUNTER_LEN];
        counter_bytes.copy_from_slice(&datagram[counter_at..counter_at + COUNTER_LEN]);
        let counter = u64::from_be_bytes(counter_bytes);
        if counter >= MAX_COUNTER || !self.replay.is_fresh(counter) {
            return Err(Refused::Replayed);
        }
        let mut aad = [0u8; HEADER_LEN];
        aad.copy_from_slice(&datagram[..HEADER_LEN]);
        let mut tag = [0u8; TAG_LEN];
        tag.copy_from_slice(&datagram[counter_at + COUNTER_LEN..]);
        let epoch = counter >> EPOCH_BITS;
        let other_epoch = self.recv.peek(epoch);
        let key = other_epoch
            .as_ref()
            .unwrap_or_else(|| self.recv.current().1);
        let opened = key.open_in_place_separate_tag(
            nonce(counter),
            Aad::from(aad),
            Tag::from(tag),
            &mut datagram[HEADER_LEN..counter_at],
            0..,
        );
        if opened.is_err() {
            self.failures += 1;
            return Err(Refused::Forged);
        }
        // Authenticated: now it may count.
        self.replay.accept(counter);
        if epoch > self.recv.current().0 {
            self.recv.key(epoch);
        }
        self.peer_proved = true;
        let len = match kind {
            Kind::Control => unwrap_control(&mut datagram[..counter_at]),
            _ => counter_at,
        };
        Ok((Opened::Packet, len))
    }

    /// Lower the integrity limit (tests of the limit itself).
    #[cfg(test)]
    fn set_integrity_limit(&mut self, limit: u64) {
        self.integrity_limit = limit;
    }
}

/// What a datagram is, from its first word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Handshake,
    Data,
    Control,
    Plaintext,
}

fn classify(datagram: &[u8]) -> Kind {
    let Some(word) = datagram.get(..4) else {
        return Kind::Plaintext;
    };
    let word0 = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
    if word0 & 0x8000_0000 == 0 {
        return Kind::Data;
    }
    match word0 {
        PROTECTED_WORD0 => Kind::Control,
        w if (w >> 16) & 0x7FFF == 0 => Kind::Handshake,
        _ => Kind::Plaintext,
    }
}

/// `[w0 w1 ts dst | body]` becomes `[UP 0 ts dst | w0 w1 body]` (before encryption).
fn wrap_control(buf: &mut Vec<u8>, start: usize) {
    let mut inner = [0u8; 8];
    inner.copy_from_slice(&buf[start..start + 8]);
    buf.extend_from_slice(&[0; 8]);
    buf[start + HEADER_LEN..].rotate_right(8);
    buf[start + HEADER_LEN..start + HEADER_LEN + 8].copy_from_slice(&inner);
    buf[start..start + 4].copy_from_slice(&PROTECTED_WORD0.to_be_bytes());
    buf[start + 4..start + 8].copy_from_slice(&[0; 4]);
}

/// The inverse of [`wrap_control`] on an opened packet, in place: `[UP 0 ts dst | w0 w1
/// body]` back to `[w0 w1 ts dst | body]`, which is 8 bytes shorter; returns its length.
fn unwrap_control(packet: &mut [u8]) -> usize {
    packet.copy_within(HEADER_LEN..HEADER_LEN + 8, 0);
    packet.copy_within(HEADER_LEN + 8.., HEADER_LEN);
    packet.len() - 8
}

#[cfg(test)]
mod tests;
