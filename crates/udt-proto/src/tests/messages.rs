//! Message mode: whole messages, in order when asked, and TTL drops on both sides.

use std::collections::BTreeSet;
use std::time::Duration;

use udt_netsim::{LinkConfig, LossModel};

use super::sim::{Pair, Sim};
use crate::config::{ConnectionConfig, Mode};
use crate::connection::SendError;
use crate::seq::SocketId;

/// Message `i`: its index, then a pattern, `len` bytes in all (at least 8).
fn message(i: u64, len: usize) -> Vec<u8> {
    let mut m = vec![0u8; len.max(8)];
    m[..8].copy_from_slice(&i.to_be_bytes());
    super::pattern(i * 7919, &mut m[8..]);
    m
}

fn check_message(m: &[u8]) -> u64 {
    let i = u64::from_be_bytes(m[..8].try_into().unwrap());
    assert_eq!(m, &message(i, m.len())[..], "message {i} corrupted");
    i
}

fn size_of(i: u64) -> usize {
    // 8 bytes to ~20 packets, varied.
    8 + ((i * 2654435761) % 30_000) as usize
}

fn lossy(loss: f64) -> LinkConfig {
    LinkConfig::new()
        .rate_bps(100_000_000)
        .delay(Duration::from_millis(15))
        .loss(LossModel::bernoulli(loss))
        .reorder(0.01, Duration::from_millis(1))
}

fn message_pair(loss: f64, seed: u64) -> (Pair, SocketId, SocketId) {
    let cfg = ConnectionConfig::new(Mode::Message);
    let mut p = Pair::new(lossy(loss), lossy(loss), cfg.clone(), seed);
    let (c, s) = p.connect(cfg);
    (p, c, s)
}

/// Send `count` messages (as buffer space allows) and collect what arrives.
fn exchange(
    sim: &mut Sim,
    (cn, c): (usize, SocketId),
    (sn, s): (usize, SocketId),
    count: u64,
    ttl: Option<Duration>,
    in_order: bool,
    limit: Duration,
) -> Vec<u64> {
    let mut next = 0u64;
    let mut got = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    sim.run_until(limit, |sim| {
        let now = sim.now;
        while next < count {
            let m = message(next, size_of(next));
            match sim.conn(cn, c).send_msg(now, &m, ttl, in_order) {
                Ok(()) => next += 1,
                Err(SendError::WouldBlock) => break,
                Err(e) => panic!("send_msg: {e}"),
            }
        }
        while let Ok((n, len)) = sim.conn(sn, s).recv_msg(&mut buf) {
            assert_eq!(n, len, "message truncated");
            got.push(check_message(&buf[..n]));
        }
        next == count && sim.conn(cn, c).is_send_idle()
    });
    got
}

#[test]
fn in_order_messages_arrive_whole_and_in_order_despite_loss() {
    let (mut p, c, s) = message_pair(0.01, 21);
    let got = exchange(
        &mut p.sim,
        (p.client, c),
        (p.server, s),
        400,
        None,
        true,
        Duration::from_secs(60),
    );
    assert_eq!(got, (0..400).collect::<Vec<_>>());
}

#[test]
fn unordered_messages_all_arrive_whole() {
    let (mut p, c, s) = message_pair(0.02, 22);
    let got = exchange(
        &mut p.sim,
        (p.client, c),
        (p.server, s),
        400,
        None,
        false,
        Duration::from_secs(60),
    );
    let set: BTreeSet<u64> = got.iter().copied().collect();
    assert_eq!(set.len(), got.len(), "a message was delivered twice");
    assert_eq!(set, (0..400).collect::<BTreeSet<_>>());
}

#[test]
fn expired_messages_are_dropped_on_both_sides() {
    let (mut p, c, s) = message_pair(0.10, 23);
    let got = exchange(
        &mut p.sim,
        (p.client, c),
        (p.server, s),
        300,
        Some(Duration::from_millis(5)),
        true,
        Duration::from_secs(60),
    );
    let snd = p.sim.conn(p.client, c).stats();
    let rcv = p.sim.conn(p.server, s).stats();
    assert!(snd.messages_dropped_send > 0, "{snd:?}");
    assert!(rcv.packets_dropped_recv > 0, "{rcv:?}");
    assert!(!got.is_empty() && got.len() < 300, "got {}", got.len());
    // In order, each whole (checked on receipt), none twice.
    assert!(got.windows(2).all(|w| w[0] < w[1]), "{got:?}");
    // The connection keeps working after the drops.
    assert!(p.sim.conn(p.client, c).is_send_idle());
}

#[test]
fn oversized_message_is_refused_with_its_size() {
    let mut cfg = ConnectionConfig::new(Mode::Message);
    cfg.send_buffer_pkts(32).unwrap();
    let mut p = Pair::new(
        lossy(0.0),
        lossy(0.0),
        ConnectionConfig::new(Mode::Message),
        24,
    );
    let (c, _) = p.connect(cfg);
    let now = p.sim.now;
    let err = p
        .sim
        .conn(p.client, c)
        .send_msg(now, &vec![0; 32 * 1456 + 1], None, true);
    assert_eq!(
        err,
        Err(SendError::MessageTooLarge {
            len: 32 * 1456 + 1,
            max: 32 * 1456
        })
    );
}
