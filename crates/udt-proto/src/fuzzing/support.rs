//! Small pieces several fuzz bodies share: the stream pattern the simulated applications
//! write (so a reader can check every byte it gets), handshake encoding, the runtime's three
//! ways of handing a datagram over, and a checking [`Sink`] for the drive contract.

use std::net::SocketAddr;

use bytes::BytesMut;

use crate::connection::{Connection, Transmit};
use crate::drive::Sink;
use crate::seq::SocketId;
use crate::time::Instant;
use crate::wire::{ControlBody, ControlRepr, HandshakeRepr, Packet, Timestamp, HEADER_LEN};

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

/// A routed datagram to `conn` the way a runtime may hand it over, chosen by its length so
/// the fuzzer reaches all three: by reference, in a buffer opened in place (the runtime's
/// receive slot), or as a lent buffer whose payload the connection keeps.
pub(super) fn hand_over(conn: &mut Connection, now: Instant, from: SocketAddr, datagram: &[u8]) {
    match datagram.len() % 3 {
        0 => conn.handle_datagram(now, from, datagram),
        1 => conn.handle_datagram_mut(now, from, &mut datagram.to_vec()),
        _ => conn.handle_datagram_lent(now, from, BytesMut::from(datagram)),
    }
}

/// More datagrams than this from one drive means `poll_transmit` does not run dry.
const MAX_BURST: usize = 100_000;

/// A sink that checks what the core commits: each datagram is exactly the bytes appended
/// since the last one, holds at least a header, goes where it must, and a drain ends.
pub(super) struct CheckedSink<'a> {
    pub(super) buf: &'a mut Vec<u8>,
    /// Every datagram must go here (a connection's peer), if set.
    to: Option<SocketAddr>,
    /// What was committed, in order.
    pub(super) out: Vec<(SocketAddr, Vec<u8>)>,
}

impl<'a> CheckedSink<'a> {
    pub(super) fn new(buf: &'a mut Vec<u8>, to: Option<SocketAddr>) -> Self {
        buf.clear();
        Self {
            buf,
            to,
            out: Vec::new(),
        }
    }
}

impl Sink for CheckedSink<'_> {
    fn buffer(&mut self) -> &mut Vec<u8> {
        self.buf
    }

    fn commit(&mut self, t: Transmit) {
        assert_eq!(
            t.size,
            self.buf.len(),
            "Transmit::size is what was appended"
        );
        assert!(t.size >= HEADER_LEN, "a datagram holds at least a header");
        if let Some(to) = self.to {
            assert_eq!(t.destination, to, "a connection sends only to its peer");
        }
        self.out.push((t.destination, std::mem::take(self.buf)));
        assert!(self.out.len() <= MAX_BURST, "poll_transmit did not run dry");
    }
}
