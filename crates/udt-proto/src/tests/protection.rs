//! Packet protection under attack, over lossy simulated links: an on-path attacker flips
//! bits, forges packets, replays old ones and injects plaintext control packets at random
//! points of a transfer; the data must arrive byte-exact and the connection survive. And the
//! ways a connection without the key ends: a wrong key, or a peer that does not protect.

use std::time::Duration;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use udt_netsim::{LinkConfig, LossModel};

use super::sim::Pair;
use super::StreamCheck;
use crate::config::ConnectionConfig;
use crate::connection::{ConnectionError, State};
use crate::protect::SessionKey;
use crate::seq::{SeqNumber, SocketId};
use crate::wire::{AckRepr, ControlBody, ControlRepr, Packet, Timestamp};
use crate::AckNumber;

fn lossy() -> LinkConfig {
    LinkConfig::new()
        .rate_bps(200_000_000)
        .delay(Duration::from_millis(10))
        .queue_bytes(1_000_000)
        .loss(LossModel::bernoulli(0.01))
}

fn protected(key: &SessionKey) -> ConnectionConfig {
    let mut c = ConnectionConfig::default();
    c.session_key(Some(key.clone()));
    c
}

fn key(fill: u8) -> SessionKey {
    SessionKey::from_bytes([fill; 32])
}

/// A plaintext ACK for socket `dst` acknowledging everything up to `ack` (what an attacker
/// without the key would inject to make a sender drop unacknowledged data).
fn forged_ack(dst: SocketId, ack: u32) -> Vec<u8> {
    let mut buf = Vec::new();
    Packet::Control(ControlRepr {
        timestamp: Timestamp(0),
        dst,
        body: ControlBody::Ack(AckRepr {
            number: AckNumber::LIGHT,
            ack: SeqNumber::new(ack),
            details: None,
        }),
    })
    .emit(&mut buf);
    buf
}

/// Transfer `bytes` client -> server over lossy links; returns whether it completed in time.
fn transfer(pair: &mut Pair, c: SocketId, s: SocketId, bytes: u64) -> StreamCheck {
    let mut check = StreamCheck::new(bytes);
    let (cn, sn) = (pair.client, pair.server);
    pair.sim.run_until(Duration::from_secs(60), |sim| {
        check.pump(sim, cn, c);
        check.drain(sim, sn, s);
        check.done()
    });
    check
}

#[test]
fn a_protected_transfer_over_a_lossy_link_is_byte_exact() {
    let k = key(1);
    let mut p = Pair::new(lossy(), lossy(), protected(&k), 21);
    let (c, s) = p.connect(protected(&k));
    let check = transfer(&mut p, c, s, 8 << 20);
    assert!(check.done(), "received {} bytes", check.received());
    let stats = p.sim.conn(p.server, s).stats().protection;
    assert_eq!(
        stats.forged + stats.replayed + stats.plaintext,
        0,
        "{stats:?}"
    );
}

/// Issue 11: bit flips, forged and replayed packets and plaintext injections at random
/// points; everything arrives intact, the attacks are counted, the connection lives on.
#[test]
fn issue_11_attacker_on_path_cannot_corrupt_or_break_a_protected_transfer() {
    let k = key(2);
    let mut p = Pair::new(lossy(), lossy(), protected(&k), 22);
    let (c, s) = p.connect(protected(&k));
    let (cn, sn) = (p.client, p.server);
    let mut rng = Pcg64Mcg::seed_from_u64(99);
    let mut recorded: Vec<Vec<u8>> = Vec::new();
    p.sim.interceptor = Some(Box::new(move |dst, datagram| {
        let roll = rng.next_u32() % 100;
        if recorded.len() < 500 && roll < 5 {
            recorded.push(datagram.clone());
        }
        let peer_id = SocketId(u32::from_be_bytes([
            datagram[12],
            datagram[13],
            datagram[14],
            datagram[15],
        ]));
        match roll {
            // Flip one bit anywhere: the tag must catch it (the genuine copy is lost).
            0..=2 => {
                let mut bad = datagram;
                let at = rng.next_u32() as usize % bad.len();
                bad[at] ^= 1 << (rng.next_u32() % 8);
                vec![bad]
            }
            // Replay an old packet beside the genuine one.
            3..=5 if !recorded.is_empty() => {
                let old = recorded[rng.next_u32() as usize % recorded.len()].clone();
                vec![datagram, old]
            }
            // Forge: random bytes behind a valid header.
            6 => {
                let mut forged = datagram.clone();
                for b in &mut forged[16..] {
                    *b = rng.next_u32() as u8;
                }
                vec![datagram, forged]
            }
            // Inject a plaintext ACK that "acknowledges" far ahead (to the data sender).
            7 if dst == 0 => vec![datagram, forged_ack(peer_id, rng.next_u32() & 0x7FFF_FFFF)],
            _ => vec![datagram],
        }
    }));
    let check = transfer(&mut p, c, s, 16 << 20);
    assert!(check.done(), "received {} bytes", check.received());
    assert_eq!(p.sim.conn(cn, c).state(), State::Connected);
    let (client, server) = (
        p.sim.conn(cn, c).stats().protection,
        p.sim.conn(sn, s).stats().protection,
    );
    assert!(
        server.forged > 0 && client.forged > 0,
        "{client:?} {server:?}"
    );
    assert!(
        server.replayed > 0 && client.replayed > 0,
        "{client:?} {server:?}"
    );
    assert!(client.plaintext > 0, "{client:?}");
}

#[test]
fn a_wrong_key_ends_both_sides_with_authentication_failed() {
    let mut p = Pair::new(lossy(), lossy(), protected(&key(3)), 23);
    let c = p.sim.connect(p.client, p.server, protected(&key(4)));
    let (cn, sn) = (p.client, p.server);
    // Not before the proof deadline (3 s): a forger racing the genuine peer cannot end it.
    p.sim.run_for(Duration::from_millis(2900));
    assert_eq!(p.sim.conn(cn, c).state(), State::Connected);
    let ended = p.sim.run_until(Duration::from_secs(3), |sim| {
        sim.nodes[cn].conns[&c].state() == State::Closed
    });
    assert!(ended, "the caller gave up within 6 s");
    assert_eq!(
        p.sim.conn(cn, c).error(),
        Some(ConnectionError::AuthenticationFailed)
    );
    p.sim.run_for(Duration::from_secs(5));
    let s = p.sim.nodes[sn].accepted[0];
    let server = p.sim.conn(sn, s);
    assert_eq!(server.error(), Some(ConnectionError::AuthenticationFailed));
    let mut buf = [0u8; 100];
    assert!(server.recv(&mut buf).is_err(), "nothing delivered");
}

/// A side that protects never hands an unprotected peer (as libudt 4.11 would be) any
/// payload, and never delivers the peer's plaintext data.
#[test]
fn a_protected_side_and_a_plain_peer_exchange_no_data() {
    let k = key(5);
    let mut p = Pair::new(lossy(), lossy(), protected(&k), 24);
    let c = p
        .sim
        .connect(p.client, p.server, ConnectionConfig::default());
    let (cn, sn) = (p.client, p.server);
    let ok = p.sim.run_until(Duration::from_secs(5), |sim| {
        sim.nodes[cn].conns[&c].state() == State::Connected && !sim.nodes[sn].accepted.is_empty()
    });
    assert!(ok, "the UDT4 handshake itself completes");
    let s = p.sim.nodes[sn].accepted[0];
    let now = p.sim.now;
    assert!(p.sim.conn(cn, c).send(now, &[7; 50_000]).is_ok());
    assert!(p.sim.conn(sn, s).send(now, &[9; 50_000]).is_ok());
    p.sim.run_for(Duration::from_secs(6));
    let mut buf = [0u8; 1000];
    assert!(
        p.sim.conn(sn, s).recv(&mut buf).is_err(),
        "plaintext delivered"
    );
    assert!(
        p.sim.conn(cn, c).recv(&mut buf).is_err(),
        "payload reached the plain peer"
    );
    assert_eq!(p.sim.conn(cn, c).stats().packets_received, 0);
    assert_eq!(
        p.sim.conn(sn, s).error(),
        Some(ConnectionError::AuthenticationFailed)
    );
    assert!(p.sim.conn(sn, s).stats().protection.forged > 0);
}

/// Protection started mid-connection (after a key exchange over the stream): the two sides
/// switch at different moments, with plaintext still in flight, and then an attacker goes
/// to work; the stream stays byte-exact across the switch.
#[test]
fn protection_started_mid_connection_survives_the_switch_and_attacks() {
    let mut later = ConnectionConfig::default();
    later.protect_later(true);
    let mut p = Pair::new(lossy(), lossy(), later.clone(), 25);
    let (c, s) = p.connect(later);
    let (cn, sn) = (p.client, p.server);
    let mut check = StreamCheck::new(24 << 20);
    let k = key(6);
    let mut switched = (false, false);
    let ok = p.sim.run_until(Duration::from_secs(60), |sim| {
        check.pump(sim, cn, c);
        check.drain(sim, sn, s);
        let now = sim.now;
        // The server switches after 1 MiB arrived, the client 30 ms later: data in flight.
        if !switched.1 && check.received() >= 1 << 20 {
            assert_eq!(sim.conn(sn, s).start_protection(now, &k), Ok(()));
            switched.1 = true;
            sim.app_wake = Some(now + Duration::from_millis(30));
        } else if switched.1 && !switched.0 && sim.app_wake.is_some_and(|t| now >= t) {
            assert_eq!(sim.conn(cn, c).start_protection(now, &k), Ok(()));
            switched.0 = true;
            sim.app_wake = None;
            let mut rng = Pcg64Mcg::seed_from_u64(5);
            sim.interceptor = Some(Box::new(move |_, mut d: Vec<u8>| {
                if rng.next_u32() % 50 == 0 {
                    let at = rng.next_u32() as usize % d.len();
                    d[at] ^= 0x10;
                }
                vec![d]
            }));
        }
        check.done()
    });
    assert!(ok, "received {} bytes", check.received());
    assert!(switched.0 && switched.1);
    assert!(p.sim.conn(sn, s).is_peer_authenticated());
    assert!(p.sim.conn(cn, c).is_peer_authenticated());
    assert!(p.sim.conn(sn, s).stats().protection.forged > 0);
}

#[test]
fn start_protection_needs_a_reserved_connected_unprotected_connection() {
    use crate::connection::ProtectionError;
    let mut p = Pair::new(lossy(), lossy(), ConnectionConfig::default(), 26);
    let (c, _) = p.connect(ConnectionConfig::default());
    let now = p.sim.now;
    let k = key(7);
    assert_eq!(
        p.sim.conn(p.client, c).start_protection(now, &k),
        Err(ProtectionError::NotReserved)
    );
    let mut p = Pair::new(lossy(), lossy(), protected(&k), 27);
    let mut both = protected(&k);
    both.protect_later(true);
    let (c, _) = p.connect(both);
    assert_eq!(
        p.sim.conn(p.client, c).start_protection(now, &k),
        Err(ProtectionError::AlreadyProtected)
    );
}
