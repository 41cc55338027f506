//! The key schedule: from one session key to a key per direction and per epoch.
//!
//! ```text
//! salt        = "udt1 salt" | lo id | hi id | lo ISN | hi ISN        (both sides' handshake values)
//! master      = HKDF-Extract(salt, session key)
//! direction   = HKDF-Expand(master, "udt1 dir" | sender's socket id)  (one per direction)
//! epoch key   = HKDF-Expand(direction, "udt1 key" | epoch)            (AES-256-GCM)
//! epoch       = packet counter >> EPOCH_BITS
//! ```
//!
//! The salt mixes in what both sides contributed to this connection (each side's random
//! socket id, the ISNs), so two connections never share a key even when a session key is
//! reused by mistake. Each direction has its own secret (keyed by the sending socket's id, which
//! also makes rendezvous symmetric). The epoch key changes every `2^EPOCH_BITS` packets, well
//! inside AES-GCM's confidentiality limit (2^23 packets per key, RFC 9001 section 6.6), with
//! no message: the epoch is read off the packet counter, which the packet carries.

use ring::aead::{self, LessSafeKey, UnboundKey, AES_256_GCM};
use ring::hkdf::{Prk, Salt, HKDF_SHA256};

use super::SessionKey;
use crate::seq::{SeqNumber, SocketId};

/// Packets per key epoch, as a power of two: half of AES-GCM's confidentiality limit.
pub(crate) const EPOCH_BITS: u32 = 22;

/// The values both sides contributed to a connection, in an order both compute alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Context {
    ids: [SocketId; 2],
    isns: [SeqNumber; 2],
}

impl Context {
    /// From our and the peer's socket ids and the two directions' ISNs.
    pub(crate) fn new(
        local: SocketId,
        peer: SocketId,
        send_isn: SeqNumber,
        recv_isn: SeqNumber,
    ) -> Self {
        let ids = if local.0 <= peer.0 {
            [local, peer]
        } else {
            [peer, local]
        };
        let (a, b) = (send_isn.value(), recv_isn.value());
        let isns = if a <= b {
            [send_isn, recv_isn]
        } else {
            [recv_isn, send_isn]
        };
        Self { ids, isns }
    }

    fn salt(&self) -> [u8; 25] {
        let mut salt = [0u8; 25];
        salt[..9].copy_from_slice(b"udt1 salt");
        salt[9..13].copy_from_slice(&self.ids[0].0.to_be_bytes());
        salt[13..17].copy_from_slice(&self.ids[1].0.to_be_bytes());
        salt[17..21].copy_from_slice(&self.isns[0].value().to_be_bytes());
        salt[21..25].copy_from_slice(&self.isns[1].value().to_be_bytes());
        salt
    }
}

/// The keys of one direction: its secret, and the AEAD key of the epoch in use.
pub(crate) struct DirectionKeys {
    secret: Prk,
    epoch: u64,
    key: LessSafeKey,
}

impl std::fmt::Debug for DirectionKeys {
    /// Never prints key material.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectionKeys")
            .field("epoch", &self.epoch)
            .finish_non_exhaustive()
    }
}

impl DirectionKeys {
    /// The keys for packets sent by `sender` on the connection described by `context`.
    pub(crate) fn new(session: &SessionKey, context: &Context, sender: SocketId) -> Self {
        let master = Salt::new(HKDF_SHA256, &context.salt()).extract(session.bytes());
        let id = sender.0.to_be_bytes();
        let info: [&[u8]; 2] = [b"udt1 dir", &id];
        // Cannot fail: HKDF-SHA256 can expand up to 255 * 32 bytes and we ask for 32.
        let secret: Prk = master
            .expand(&info, HKDF_SHA256)
            .expect("32 bytes from HKDF-SHA256")
            .into();
        let key = epoch_key(&secret, 0);
        Self {
            secret,
            epoch: 0,
            key,
        }
    }

    /// The AEAD key of `epoch`, derived (and kept) if it is not the one in use.
    pub(crate) fn key(&mut self, epoch: u64) -> &LessSafeKey {
        if epoch != self.epoch {
            self.key = epoch_key(&self.secret, epoch);
            self.epoch = epoch;
        }
        &self.key
    }

    /// The key of `epoch` without keeping it (for a packet that has not authenticated yet:
    /// a forged counter must not move the epoch in use).
    pub(crate) fn peek(&self, epoch: u64) -> Option<LessSafeKey> {
        (epoch != self.epoch).then(|| epoch_key(&self.secret, epoch))
    }

    /// The key in use and its epoch.
    pub(crate) fn current(&self) -> (u64, &LessSafeKey) {
        (self.epoch, &self.key)
    }
}

/// HKDF-Expand of the direction secret into the AES-256-GCM key of `epoch`.
fn epoch_key(secret: &Prk, epoch: u64) -> LessSafeKey {
    let epoch = epoch.to_be_bytes();
    let info: [&[u8]; 2] = [b"udt1 key", &epoch];
    // Cannot fail: 32 bytes, within HKDF-SHA256's output limit.
    let okm = secret
        .expand(&info, &AES_256_GCM)
        .expect("an AES-256 key from HKDF-SHA256");
    LessSafeKey::new(UnboundKey::from(okm))
}

/// The 96-bit nonce of a packet counter: unique per key because each key belongs to one
/// direction and one epoch, and the counter never repeats within a direction.
pub(crate) fn nonce(counter: u64) -> aead::Nonce {
    let mut n = [0u8; aead::NONCE_LEN];
    n[4..].copy_from_slice(&counter.to_be_bytes());
    aead::Nonce::assume_unique_for_key(n)
}
