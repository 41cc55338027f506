//! Unit tests of packet protection: each plays the attacker against one rule.

use super::*;
use crate::wire::{AckRepr, ControlBody, ControlRepr, DataRepr, Packet, Timestamp};
use crate::{MsgNumber, SeqNumber};

impl Protection {
    /// [`Protection::open_in_place`] on a copy of `datagram`, the packet left in `out`.
    fn open(&mut self, datagram: &[u8], out: &mut Vec<u8>) -> Result<Opened, Refused> {
        out.clear();
        out.extend_from_slice(datagram);
        let (opened, len) = self.open_in_place(out)?;
        out.truncate(len);
        Ok(opened)
    }
}

fn key(fill: u8) -> SessionKey {
    SessionKey::from_bytes([fill; 32])
}

/// Both ends of one connection: client id 7, server id 9, ISN 1000.
fn pair(k: &SessionKey) -> (Protection, Protection) {
    let isn = SeqNumber::new(1000);
    (
        Protection::new(k, SocketId(7), SocketId(9), isn, isn),
        Protection::new(k, SocketId(9), SocketId(7), isn, isn),
    )
}

fn data_packet(seq: u32, payload: &[u8]) -> Vec<u8> {
    let mut buf = Vec::new();
    Packet::Data(DataRepr {
        seq: SeqNumber::new(seq),
        boundary: crate::wire::Boundary::Solo,
        in_order: false,
        msg: MsgNumber::new(1),
        timestamp: Timestamp(1234),
        dst: SocketId(9),
        payload,
    })
    .emit(&mut buf);
    buf
}

fn ack_packet() -> Vec<u8> {
    let mut buf = Vec::new();
    Packet::Control(ControlRepr {
        timestamp: Timestamp(77),
        dst: SocketId(9),
        body: ControlBody::Ack(AckRepr {
            number: crate::AckNumber::LIGHT,
            ack: SeqNumber::new(1500),
            details: None,
        }),
    })
    .emit(&mut buf);
    buf
}

fn sealed(p: &mut Protection, plain: &[u8]) -> Vec<u8> {
    let mut buf = plain.to_vec();
    assert!(p.seal(&mut buf, 0));
    buf
}

#[test]
fn data_and_control_round_trip() {
    let (mut client, mut server) = pair(&key(1));
    let mut out = Vec::new();
    for plain in [data_packet(1000, b"hello, world"), ack_packet()] {
        let wire = sealed(&mut client, &plain);
        assert_ne!(wire[..plain.len()], plain[..], "sealed bytes differ");
        assert_eq!(server.open(&wire, &mut out), Ok(Opened::Packet));
        assert_eq!(out, plain);
    }
    assert!(server.peer_proved());
}

#[test]
fn a_sealed_control_packet_looks_like_user_defined_0x7fff() {
    let (mut client, _) = pair(&key(1));
    let wire = sealed(&mut client, &ack_packet());
    assert_eq!(wire[..4], PROTECTED_WORD0.to_be_bytes());
    assert_eq!(wire.len(), ack_packet().len() + 8 + OVERHEAD);
}

#[test]
fn every_flipped_bit_is_refused_and_proves_nothing() {
    let (mut client, mut server) = pair(&key(2));
    let wire = sealed(&mut client, &data_packet(1000, &[0xAB; 100]));
    let mut out = Vec::new();
    for i in 0..wire.len() {
        for bit in [0x01, 0x80] {
            let mut bad = wire.clone();
            bad[i] ^= bit;
            // Refused, or (the control bit flipped on) taken for a plaintext handshake, which
            // a connection only answers with its own: never opened as protected.
            let got = server.open(&bad, &mut out);
            assert_ne!(got, Ok(Opened::Packet), "byte {i} bit {bit:#x} accepted");
        }
    }
    assert!(!server.peer_proved(), "a refused packet proves nothing");
    // The genuine packet still opens: failures moved no state.
    assert_eq!(server.open(&wire, &mut out), Ok(Opened::Packet));
}

#[test]
fn a_replayed_packet_is_refused() {
    let (mut client, mut server) = pair(&key(3));
    let wire = sealed(&mut client, &ack_packet());
    let mut out = Vec::new();
    assert_eq!(server.open(&wire, &mut out), Ok(Opened::Packet));
    assert_eq!(server.open(&wire, &mut out), Err(Refused::Replayed));
}

#[test]
fn plaintext_is_refused_and_handshakes_pass_as_they_are() {
    let (_, mut server) = pair(&key(4));
    let mut out = Vec::new();
    let short = server.open(&data_packet(5, b"x"), &mut out);
    assert_eq!(short, Err(Refused::Truncated));
    let long = server.open(&data_packet(5, &[1; 200]), &mut out);
    assert_eq!(long, Err(Refused::Forged), "plaintext data does not verify");
    assert_eq!(
        server.open(&ack_packet(), &mut out),
        Err(Refused::Plaintext)
    );
    let mut handshake = vec![0u8; 64];
    handshake[0] = 0x80;
    assert_eq!(server.open(&handshake, &mut out), Ok(Opened::Handshake));
    assert_eq!(
        server.open(&[0x80, 0, 0], &mut out),
        Err(Refused::Plaintext)
    );
}

#[test]
fn a_packet_reflected_back_to_its_sender_is_refused() {
    let (mut client, _) = pair(&key(5));
    let wire = sealed(&mut client, &ack_packet());
    let mut out = Vec::new();
    assert_eq!(client.open(&wire, &mut out), Err(Refused::Forged));
}

#[test]
fn another_connection_under_the_same_key_cannot_open_it() {
    let k = key(6);
    let (mut client, _) = pair(&k);
    let isn = SeqNumber::new(1000);
    let mut other_server = Protection::new(&k, SocketId(10), SocketId(7), isn, isn);
    let wire = sealed(&mut client, &ack_packet());
    let mut out = Vec::new();
    assert_eq!(other_server.open(&wire, &mut out), Err(Refused::Forged));
    let (_, mut wrong_key) = pair(&key(7));
    assert_eq!(wrong_key.open(&wire, &mut out), Err(Refused::Forged));
}

#[test]
fn a_retransmission_gets_a_fresh_nonce() {
    let (mut client, mut server) = pair(&key(8));
    let plain = data_packet(1000, &[7; 64]);
    let first = sealed(&mut client, &plain);
    let again = sealed(&mut client, &plain);
    let counter = |w: &[u8]| w[w.len() - OVERHEAD..w.len() - TAG_LEN].to_vec();
    assert_ne!(counter(&first), counter(&again));
    assert_ne!(
        first, again,
        "same plaintext, different nonce, different bytes"
    );
    let mut out = Vec::new();
    assert_eq!(server.open(&again, &mut out), Ok(Opened::Packet));
    assert_eq!(server.open(&first, &mut out), Ok(Opened::Packet));
}

#[test]
fn keys_change_at_each_epoch_and_both_sides_follow() {
    let (mut client, mut server) = pair(&key(9));
    client.next_counter = (1 << EPOCH_BITS) - 2;
    let mut out = Vec::new();
    let mut wires = Vec::new();
    for _ in 0..4 {
        wires.push(sealed(&mut client, &ack_packet()));
    }
    // Out of order across the boundary: the late packet of the old epoch still opens.
    for i in [1, 2, 0, 3] {
        assert_eq!(
            server.open(&wires[i], &mut out),
            Ok(Opened::Packet),
            "packet {i}"
        );
    }
    assert_eq!(server.recv.current().0, 1);
    // A packet moved to another (fresh) counter does not verify under that nonce.
    let mut forged = wires[3].clone();
    let at = forged.len() - OVERHEAD;
    forged[at..at + 8].copy_from_slice(&((1u64 << EPOCH_BITS) + 10).to_be_bytes());
    assert_eq!(server.open(&forged, &mut out), Err(Refused::Forged));
}

#[test]
fn after_the_integrity_limit_nothing_opens() {
    let (mut client, mut server) = pair(&key(10));
    server.set_integrity_limit(3);
    let mut out = Vec::new();
    let good = sealed(&mut client, &ack_packet());
    let mut bad = good.clone();
    bad[20] ^= 1;
    for _ in 0..3 {
        assert_eq!(server.open(&bad, &mut out), Err(Refused::Forged));
    }
    assert_eq!(server.open(&good, &mut out), Err(Refused::Forged));
}

#[test]
fn session_keys_read_and_print_as_hex_and_never_debug_print() {
    let k = SessionKey::from_bytes(core::array::from_fn(|i| i as u8));
    let hex = k.to_hex();
    assert_eq!(&hex[..8], "00010203");
    assert_eq!(SessionKey::from_hex(&hex).unwrap().bytes(), k.bytes());
    assert_eq!(format!("{k:?}"), "SessionKey(..)");
    assert!(SessionKey::from_hex("00").is_err());
    assert!(SessionKey::from_hex(&"zz".repeat(32)).is_err());
}
