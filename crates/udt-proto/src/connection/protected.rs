//! The connection's side of packet protection (`crate::protect`): when it starts, what is
//! opened before parsing, what is sealed after emitting, and when a peer that never proves
//! the key is given up on.
//!
//! Order matters for "authenticate before acting": [`Connection::open_datagram`] runs before
//! anything of a packet is parsed or counted as a sign of life, so a forged packet cannot
//! reset the EXP timer, acknowledge data, or close the connection.

use std::time::Duration;

use super::{Connection, ConnectionError, State};
use crate::protect::{Opened, Protection, Refused, SessionKey};
use crate::seq::SeqNumber;
use crate::time::Instant;
use crate::wire::ControlBody;

/// A peer that has not proved the key this long after connecting, while packets that fail to
/// authenticate keep arriving from its address, is given up on: it has another key, or is
/// not a protected udt peer (a libudt 4.11 one). Long enough that an attacker cannot cut a
/// connection short by racing forged packets ahead of the genuine peer's first ones.
const PROOF_DEADLINE: Duration = Duration::from_secs(3);
/// Refused packets needed before the deadline counts (a lone stray packet does not).
const PROOF_FAILURES: u64 = 2;

/// Why [`Connection::start_protection`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProtectionError {
    /// The connection was not configured with `ConnectionConfig::protect_later`, so its data
    /// packets leave no room for the counter and tag.
    #[error("protection was not reserved when the connection was configured (protect_later)")]
    NotReserved,
    /// Protection is already on.
    #[error("the connection is already protected")]
    AlreadyProtected,
    /// Only a connected connection can start protecting.
    #[error("the connection is not connected")]
    NotConnected,
}

/// Protection counters, in [`crate::ConnectionStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProtectionStats {
    /// Packets whose tag did not verify (forged, tampered, or under another key): dropped.
    pub forged: u64,
    /// Packets whose counter was seen before or is older than the replay window: dropped.
    pub replayed: u64,
    /// Unprotected packets (other than handshakes) on a protected connection: dropped.
    pub plaintext: u64,
    /// Protected packets too short to hold a counter and a tag: dropped.
    pub truncated: u64,
}

impl ProtectionStats {
    /// The counts accumulated since `earlier` (zeros rather than wrapping).
    pub fn since(&self, earlier: &Self) -> Self {
        Self {
            forged: self.forged.saturating_sub(earlier.forged),
            replayed: self.replayed.saturating_sub(earlier.replayed),
            plaintext: self.plaintext.saturating_sub(earlier.plaintext),
            truncated: self.truncated.saturating_sub(earlier.truncated),
        }
    }

    fn record(&mut self, refused: Refused) {
        match refused {
            Refused::Forged => self.forged += 1,
            Refused::Replayed => self.replayed += 1,
            Refused::Plaintext => self.plaintext += 1,
            Refused::Truncated => self.truncated += 1,
        }
    }

    fn total(&self) -> u64 {
        self.forged + self.replayed + self.plaintext + self.truncated
    }
}

impl Connection {
    /// Start protecting, if configured, once the handshake has fixed both sides' ids and ISNs.
    pub(super) fn protect_on_connect(
        &mut self,
        now: Instant,
        send_isn: SeqNumber,
        recv_isn: SeqNumber,
    ) {
        self.protection_isns = (send_isn, recv_isn);
        if let Some(key) = self.config.session_key.clone() {
            self.install_protection(now, &key);
        }
    }

    /// Start protecting every packet from now on with `key`, on a connection configured with
    /// `ConnectionConfig::protect_later` (the key came from an exchange over this connection,
    /// e.g. a Noise handshake in the first stream bytes). Both sides call it when their part
    /// of the exchange is done; packets still in flight from before are refused as plaintext
    /// and repaired like losses, and this side holds its data until the peer proves the key.
    pub fn start_protection(
        &mut self,
        now: Instant,
        key: &SessionKey,
    ) -> Result<(), ProtectionError> {
        if !self.config.protect_later {
            return Err(ProtectionError::NotReserved);
        }
        if self.protection.is_some() {
            return Err(ProtectionError::AlreadyProtected);
        }
        if self.state != State::Connected {
            return Err(ProtectionError::NotConnected);
        }
        self.install_protection(now, key);
        self.prove_key();
        Ok(())
    }

    fn install_protection(&mut self, now: Instant, key: &SessionKey) {
        let (send_isn, recv_isn) = self.protection_isns;
        let protection = Protection::new(key, self.local_id, self.peer_id, send_isn, recv_isn);
        self.protection = Some(Box::new(protection));
        self.protected_since = now;
    }

    /// Prove the key to the peer at once, with a protected keep-alive: it holds its data until
    /// it has heard an authentic packet from us. (A caller sends its keep-alive anyway.)
    pub(super) fn prove_key(&mut self) {
        if self.protection.is_some() {
            self.queue_control(ControlBody::KeepAlive);
        }
    }

    /// Whether the peer has proved the session key: a packet from it authenticated. Always
    /// false without protection. A protected side delivers nothing before this.
    pub fn is_peer_authenticated(&self) -> bool {
        self.protection.as_ref().is_some_and(|p| p.peer_proved())
    }

    /// Whether this side holds its data because the peer has not proved the key yet (so a
    /// peer without it, such as libudt 4.11, never receives encrypted payload).
    pub(super) fn awaiting_peer_proof(&self) -> bool {
        self.protection.as_ref().is_some_and(|p| !p.peer_proved())
    }

    /// Whether a datagram may be handled before protection starts (while connecting): with
    /// a session key configured, only handshakes.
    pub(super) fn allowed_before_protection(&self, data: &[u8]) -> bool {
        !self.config.is_protected() || crate::wire::is_handshake(data)
    }

    /// Authenticate and decrypt `data` where it lies (protection is on): the length of the
    /// packet now at its front (a handshake's whole length, used as it is), or `None` if it
    /// must be dropped (it is counted).
    pub(super) fn open_datagram(&mut self, now: Instant, data: &mut [u8]) -> Option<usize> {
        let Some(protection) = &mut self.protection else {
            return Some(data.len()); // not called without protection: nothing to open
        };
        let proved_before = protection.peer_proved();
        match protection.open_in_place(data) {
            Ok((Opened::Packet, len)) => {
                if !proved_before {
                    // Answer the peer's first proof with ours: our own first one may have been
                    // lost, or (protection started mid-connection) reached it before it
                    // switched; either way it would hold its data until our next packet.
                    self.queue_control(ControlBody::KeepAlive);
                }
                Some(len)
            }
            Ok((Opened::Handshake, len)) => Some(len),
            Err(refused) => {
                self.stats.protection.record(refused);
                self.give_up_on_unproved_peer(now);
                None
            }
        }
    }

    /// Seal the packet just emitted at `buf[start..]` if protection is on (handshakes stay
    /// plaintext). False if it could not be sealed and was removed.
    pub(super) fn seal_transmit(
        &mut self,
        buf: &mut Vec<u8>,
        start: usize,
        handshake: bool,
    ) -> bool {
        match &mut self.protection {
            Some(protection) if !handshake => protection.seal(buf, start),
            _ => true,
        }
    }

    /// The peer never proved the key, refused packets keep coming from it, and the deadline
    /// has passed: end with [`ConnectionError::AuthenticationFailed`] instead of waiting for
    /// the peer to be declared lost.
    /// Checked on every refused packet and every timeout.
    pub(super) fn give_up_on_unproved_peer(&mut self, now: Instant) {
        let unproved = self.awaiting_peer_proof();
        if unproved
            && self.state != State::Closed
            && self.stats.protection.total() >= PROOF_FAILURES
            && now.saturating_duration_since(self.protected_since) >= PROOF_DEADLINE
        {
            self.finish_close(Some(ConnectionError::AuthenticationFailed));
        }
    }
}
