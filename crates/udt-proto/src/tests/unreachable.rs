//! The ICMP port-unreachable hint (`Connection::handle_unreachable`): a peer whose process
//! died is noticed after the grace, not 4.11's ~46 s; a forged or stale hint cannot end a
//! connection whose peer still talks, idle, busy or with its receive buffer full.

use std::time::Duration;

use udt_netsim::LinkConfig;

use super::sim::{Pair, Sim};
use super::StreamCheck;
use crate::config::ConnectionConfig;
use crate::connection::{ConnectionError, RecvError, State};
use crate::seq::SocketId;
use crate::time::Instant;

fn link(one_way: Duration) -> LinkConfig {
    LinkConfig::new().delay(one_way)
}

fn pair(one_way: Duration, seed: u64) -> (Pair, SocketId, SocketId) {
    let mut p = Pair::new(
        link(one_way),
        link(one_way),
        ConnectionConfig::default(),
        seed,
    );
    let (c, s) = p.connect(ConnectionConfig::default());
    (p, c, s)
}

/// Run until `node`'s connection `id` closes (at most `limit`); returns how long it took.
fn time_to_close(sim: &mut Sim, node: usize, id: SocketId, limit: Duration) -> Duration {
    let start = sim.now;
    let closed = sim.run_until(limit, |sim| sim.conn(node, id).state() == State::Closed);
    assert!(
        closed,
        "still {:?} after {limit:?}",
        sim.conn(node, id).state()
    );
    sim.now - start
}

/// Run for `span` while forging a port unreachable for `node`'s connection `id` every
/// `every`; `app` runs after every step (it may move data).
fn run_with_forged_hints(
    sim: &mut Sim,
    (node, id): (usize, SocketId),
    every: Duration,
    span: Duration,
    mut app: impl FnMut(&mut Sim),
) {
    let mut next = sim.now;
    sim.run_until(span, |sim| {
        if sim.now >= next {
            let now = sim.now;
            sim.conn(node, id).handle_unreachable(now);
            next = now + every;
        }
        sim.app_wake = Some(next);
        app(sim);
        false
    });
    sim.app_wake = None;
}

#[test]
fn killed_writer_is_declared_unreachable_after_the_grace() {
    let (mut p, c, s) = pair(Duration::from_millis(5), 40);
    let (cn, sn) = (p.client, p.server);
    let now = p.sim.now;
    p.sim.conn(cn, c).send(now, &[1u8; 100_000]).unwrap();
    p.sim.run_for(Duration::from_millis(2));
    p.sim.kill_process(cn);
    // The reader's next ACK or keep-alive draws the ICMP; then one second of silence.
    let took = time_to_close(&mut p.sim, sn, s, Duration::from_secs(60));
    assert_eq!(
        p.sim.conn(sn, s).error(),
        Some(ConnectionError::PeerUnreachable)
    );
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_millis(1500),
        "took {took:?}"
    );
    let mut buf = [0u8; 200_000];
    let _ = p.sim.conn(sn, s).recv(&mut buf);
    assert_eq!(
        p.sim.conn(sn, s).recv(&mut buf),
        Err(RecvError::Closed(ConnectionError::PeerUnreachable))
    );
}

#[test]
fn killed_reader_is_declared_unreachable_after_the_grace() {
    let (mut p, c, _s) = pair(Duration::from_millis(5), 41);
    let (cn, sn) = (p.client, p.server);
    let now = p.sim.now;
    p.sim.conn(cn, c).send(now, &[1u8; 100_000]).unwrap();
    p.sim.kill_process(sn);
    let took = time_to_close(&mut p.sim, cn, c, Duration::from_secs(60));
    assert_eq!(
        p.sim.conn(cn, c).error(),
        Some(ConnectionError::PeerUnreachable)
    );
    // Data is in flight at the kill, so the first ICMP comes at once.
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_millis(1100),
        "took {took:?}"
    );
}

#[test]
fn the_grace_grows_with_the_round_trip() {
    let (mut p, c, _s) = pair(Duration::from_millis(300), 42);
    let (cn, sn) = (p.client, p.server);
    let now = p.sim.now;
    p.sim.conn(cn, c).send(now, &[1u8; 100_000]).unwrap();
    p.sim.run_for(Duration::from_secs(1));
    p.sim.kill_process(sn);
    let took = time_to_close(&mut p.sim, cn, c, Duration::from_secs(60));
    assert_eq!(
        p.sim.conn(cn, c).error(),
        Some(ConnectionError::PeerUnreachable)
    );
    // 2 × (RTT + 4·RTTVar + SYN) with a 600 ms RTT: more than 1.2 s, far less than 46 s.
    assert!(
        took > Duration::from_millis(1200) && took < Duration::from_secs(10),
        "took {took:?}"
    );
}

#[test]
fn forged_hints_cannot_kill_an_idle_live_connection() {
    for (one_way, seed) in [
        (Duration::from_millis(1), 43),
        (Duration::from_millis(300), 44),
    ] {
        let (mut p, c, s) = pair(one_way, seed);
        let (cn, sn) = (p.client, p.server);
        run_with_forged_hints(
            &mut p.sim,
            (cn, c),
            Duration::from_millis(100),
            Duration::from_secs(60),
            |_| {},
        );
        assert_eq!(p.sim.conn(cn, c).state(), State::Connected, "{one_way:?}");
        assert_eq!(p.sim.conn(sn, s).state(), State::Connected, "{one_way:?}");
    }
}

#[test]
fn forged_hints_cannot_kill_a_busy_connection_on_either_side() {
    let (mut p, c, s) = pair(Duration::from_millis(20), 45);
    let (cn, sn) = (p.client, p.server);
    let mut check = StreamCheck::new(20 << 20);
    for victim in [(cn, c), (sn, s)] {
        run_with_forged_hints(
            &mut p.sim,
            victim,
            Duration::from_millis(50),
            Duration::from_secs(3),
            |sim| {
                check.pump(sim, cn, c);
                check.drain(sim, sn, s);
            },
        );
    }
    assert_eq!(p.sim.conn(cn, c).state(), State::Connected);
    assert_eq!(p.sim.conn(sn, s).state(), State::Connected);
    assert!(check.received() > 0);
}

#[test]
fn forged_hints_cannot_kill_a_writer_whose_reader_is_full() {
    let (mut p, c, s) = pair(Duration::from_millis(5), 46);
    let (cn, sn) = (p.client, p.server);
    let chunk = vec![3u8; 1 << 20];
    // The reader never reads: its buffer fills and the writer stalls on a closed window.
    run_with_forged_hints(
        &mut p.sim,
        (cn, c),
        Duration::from_millis(100),
        Duration::from_secs(60),
        |sim| {
            let now = sim.now;
            let _ = sim.conn(cn, c).send(now, &chunk);
        },
    );
    assert_eq!(p.sim.conn(cn, c).state(), State::Connected);
    assert_eq!(p.sim.conn(sn, s).state(), State::Connected);
    assert!(p.sim.conn(sn, s).readable_bytes() > 0);
}

#[test]
fn a_hint_cleared_by_the_peer_leaves_4_11s_rule() {
    let (mut p, c, _s) = pair(Duration::from_millis(5), 47);
    let (cn, sn) = (p.client, p.server);
    let now = p.sim.now;
    p.sim.conn(cn, c).handle_unreachable(now);
    p.sim.conn(cn, c).send(now, &[1u8; 10_000]).unwrap();
    p.sim.run_for(Duration::from_millis(500));
    // The peer answered meanwhile; now it vanishes without an ICMP.
    p.sim.kill(sn);
    let took = time_to_close(&mut p.sim, cn, c, Duration::from_secs(120));
    assert_eq!(p.sim.conn(cn, c).error(), Some(ConnectionError::PeerLost));
    assert!(took > Duration::from_secs(30), "took {took:?}");
}

#[test]
fn hints_while_connecting_or_closed_are_ignored() {
    let mut sim = Sim::new();
    let a = sim.add_node(48);
    let b = sim.add_node(49);
    let l = sim.add_link(link(Duration::from_millis(5)), 50);
    sim.route(a, b, vec![l]);
    // Nobody listens at `b` and nothing comes back: the connect times out as before.
    let mut config = ConnectionConfig::default();
    config.connect_timeout(Duration::from_secs(3));
    let c = sim.connect(a, b, config);
    let at = Instant::ZERO + Duration::from_millis(10);
    sim.run_until(Duration::from_secs(10), |sim| {
        let now = sim.now;
        if now >= at {
            sim.conn(a, c).handle_unreachable(now);
        }
        sim.conn(a, c).state() == State::Closed
    });
    assert_eq!(
        sim.conn(a, c).error(),
        Some(ConnectionError::ConnectTimeout)
    );
    let now = sim.now;
    sim.conn(a, c).handle_unreachable(now);
    assert_eq!(
        sim.conn(a, c).error(),
        Some(ConnectionError::ConnectTimeout)
    );
}
