//! The capability exchange (see [`crate::wire::extension`]): what this side announces, what
//! the peer announced, and when the announcement (or the one answer to the peer's) is due.
//!
//! The core only negotiates; what a capability means for sending and receiving is the
//! runtime's business (it reads [`Connection::peer_extensions`] and batches accordingly).

use super::{Connection, State};
use crate::wire::{Capabilities, CapabilityAnnouncement, ControlBody};

/// Per-connection exchange state.
#[derive(Debug, Default)]
pub(super) struct ExtensionState {
    /// What we announce; `None` (the default): announce nothing, as a plain UDT4 peer.
    local: Option<Capabilities>,
    /// What the peer announced; `None` until its announcement arrives (never, from 4.11).
    peer: Option<Capabilities>,
    /// Our first announcement has gone out.
    sent: bool,
    /// The peer's announcement said it has not heard ours: answer once.
    answer_due: bool,
}

impl Connection {
    /// Announce `caps` to the peer once connected (call before or after the handshake; the
    /// announcement goes out after the handshake response). Without this call a connection
    /// announces nothing. Later calls change the bits only if nothing was sent yet.
    pub fn set_local_extensions(&mut self, caps: Capabilities) {
        if !self.ext.sent {
            self.ext.local = Some(caps);
        }
    }

    /// What the peer announced: `None` for a peer that announced nothing (every 4.11 peer),
    /// or whose announcement has not arrived yet.
    pub fn peer_extensions(&self) -> Option<Capabilities> {
        self.ext.peer
    }

    /// The capabilities both sides announced (empty until the peer's announcement arrives).
    pub fn common_extensions(&self) -> Capabilities {
        match (self.ext.local, self.ext.peer) {
            (Some(local), Some(peer)) => local.intersection(peer),
            _ => Capabilities::NONE,
        }
    }

    /// The bits the connection adds to the runtime's: its receiver spaces ACKs for a sender
    /// that asks, and its sender asks if its controller sizes its windows for that.
    fn own_capabilities(&self) -> Capabilities {
        let sender = if self.cc.sizes_for_sparse_acks() {
            Capabilities::SPARSE_ACK_SENDER
        } else {
            Capabilities::NONE
        };
        Capabilities::ACK_SPACING
            .union(Capabilities::ACK_FRONT)
            .union(sender)
    }

    /// Whether both sides report their receiver's front in ACKs and read the peer's
    /// ([`Capabilities::ACK_FRONT`]): we announce at all and the peer announced it.
    pub(super) fn front_reports(&self) -> bool {
        self.ext.local.is_some()
            && self
                .ext
                .peer
                .is_some_and(|p| p.contains(Capabilities::ACK_FRONT))
    }

    /// Whether our receiver spaces its ACKs ([`crate::congestion::sparse_acks`]): we announce
    /// at all (so [`Capabilities::ACK_SPACING`] went out) and the peer's sender asked.
    pub(super) fn spaces_acks(&self) -> bool {
        self.ext.local.is_some()
            && self
                .ext
                .peer
                .is_some_and(|p| p.contains(Capabilities::SPARSE_ACK_SENDER))
    }

    /// Whether the peer's receiver spaces its ACKs for our sender: we asked (our controller
    /// sizes for it, and we announce) and the peer announced that it does.
    fn peer_spaces_acks(&self) -> bool {
        self.ext.local.is_some()
            && self.cc.sizes_for_sparse_acks()
            && self
                .ext
                .peer
                .is_some_and(|p| p.contains(Capabilities::ACK_SPACING))
    }

    /// Tell the controller whether the peer spaces its ACKs (after `init` too, which
    /// starts a controller afresh).
    pub(super) fn tell_cc_of_sparse_acks(&mut self) {
        let on = self.peer_spaces_acks();
        self.cc.set_sparse_acks(on);
    }

    /// Whether both sides announced GSO: the peer sends long pacing trains (and takes them),
    /// which the ACK timing and the pacer's train length adapt to.
    pub(super) fn gso_peer(&self) -> bool {
        self.common_extensions().contains(Capabilities::GSO)
    }

    /// A user-defined control packet that may be the peer's announcement; false if it is not
    /// (then it belongs to the congestion controller).
    pub(super) fn on_user_defined(&mut self, ext_type: u16, info: u32, body: &[u8]) -> bool {
        let Some(ann) = CapabilityAnnouncement::from_user_defined(ext_type, info, body) else {
            return false;
        };
        self.ext.peer = Some(ann.capabilities);
        self.tell_cc_of_sparse_acks();
        // Only answer a peer that has not heard us, and only if we announce at all.
        if !ann.heard && self.ext.local.is_some() && self.ext.sent {
            self.ext.answer_due = true;
        }
        true
    }

    /// The announcement to send now, if one is due: our first once connected, or the one
    /// answer to a peer that has not heard it.
    pub(crate) fn poll_announcement(&mut self) -> Option<ControlBody> {
        let local = self.ext.local?;
        if self.state != State::Connected || (self.ext.sent && !self.ext.answer_due) {
            return None;
        }
        self.ext.sent = true;
        self.ext.answer_due = false;
        let ann = CapabilityAnnouncement {
            capabilities: local.union(self.own_capabilities()),
            heard: self.ext.peer.is_some(),
        };
        Some(ann.to_control_body())
    }
}
