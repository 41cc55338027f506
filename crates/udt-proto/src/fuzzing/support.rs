//! Small pieces several fuzz bodies share: the stream pattern the simulated applications
//! write (so a reader can check every byte it gets) and handshake encoding.

use crate::seq::SocketId;
use crate::wire::{ControlBody, ControlRepr, HandshakeRepr, Packet, Timestamp};

/// Stream byte `offset` written by host `writer`: distinct per host, period 251.
pub(super) fn pattern(writer: usize, offset: u64) -> u8 {
    ((offset * 7 + writer as u64 * 13) % 251) as u8
}

/// The datagram carrying handshake `hs` to socket `dst` (`SocketId::NONE` for a listener).
pub(super) fn encode_handshake(hs: HandshakeRepr, dst: SocketId) -> Vec<u8> {
    let mut out = Vec::new();
    Packet::Control(ControlRepr {
        timestamp: Timestamp(0),
        dst,
        body: ControlBody::Handshake(hs),
    })
    .emit(&mut out);
    out
}
