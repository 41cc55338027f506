//! The ICMP port-unreachable hint (`Connection::handle_unreachable`): a peer whose process
//! died is noticed after the grace, not 4.11's ~46 s; a forged or stale hint cannot end a
//! connection whose peer still talks, idle, busy or with its receive buffer full. A connect
//! to a closed port fails with `NoListener` after the grace, not the connect timeout, unless
//! a listener answers meanwhile; a rendezvous side ignores hints while connecting.

use std::time::Duration;

use udt_netsim::LinkConfig;

use super::sim::{Pair, Sim};
use super::StreamCheck;
use crate::config::ConnectionConfig;
use crate::connection::{ConnectionError, RecvError, State};
use crate::seq::SocketId;

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

/// Run until `node`'s connection `id` closes (at most `limit`); returns how long it took, to
/// the millisecond (the clock ticks at least that often, so the close is seen at once even
/// when nothing else is scheduled).
fn time_to_close(sim: &mut Sim, node: usize, id: SocketId, limit: Duration) -> Duration {
    let start = sim.now;
    let closed = sim.run_until(limit, |sim| {
        sim.app_wake = Some(sim.now + Duration::from_millis(1));
        sim.conn(node, id).state() == State::Closed
    });
    sim.app_wake = None;
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

/// Which side of a pair a test kills.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Victim {
    /// The client, which is writing.
    Writer,
    /// The server, which is reading.
    Reader,
}

/// The client of a fresh pair queues 100 kB; `settle` later (none: at once) the `victim`'s
/// process dies. Returns the survivor (node, connection) and how long it took to close,
/// having checked that it closed with `PeerUnreachable`.
fn kill_mid_transfer(
    one_way: Duration,
    seed: u64,
    settle: Duration,
    victim: Victim,
) -> (Pair, usize, SocketId, Duration) {
    let (mut p, c, s) = pair(one_way, seed);
    let (cn, sn) = (p.client, p.server);
    let now = p.sim.now;
    p.sim.conn(cn, c).send(now, &[1u8; 100_000]).unwrap();
    if !settle.is_zero() {
        p.sim.run_for(settle);
    }
    let (dead, (node, id)) = match victim {
        Victim::Writer => (cn, (sn, s)),
        Victim::Reader => (sn, (cn, c)),
    };
    p.sim.kill_process(dead);
    let took = time_to_close(&mut p.sim, node, id, Duration::from_secs(60));
    assert_eq!(
        p.sim.conn(node, id).error(),
        Some(ConnectionError::PeerUnreachable)
    );
    (p, node, id, took)
}

#[test]
fn killed_writer_is_declared_unreachable_after_the_grace() {
    let settle = Duration::from_millis(2);
    let (mut p, sn, s, took) =
        kill_mid_transfer(Duration::from_millis(5), 40, settle, Victim::Writer);
    // The reader's next ACK or keep-alive draws the ICMP; then one second of silence.
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
    let (.., took) =
        kill_mid_transfer(Duration::from_millis(5), 41, Duration::ZERO, Victim::Reader);
    // Data is in flight at the kill, so the first ICMP comes at once.
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_millis(1100),
        "took {took:?}"
    );
}

#[test]
fn the_grace_grows_with_the_round_trip() {
    let settle = Duration::from_secs(1);
    let (.., took) = kill_mid_transfer(Duration::from_millis(300), 42, settle, Victim::Reader);
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

/// Two nodes joined by a link each way (`one_way` delay); the second node's process is
/// dead, so its port answers with ICMP port unreachable until [`revive`] starts it.
fn closed_port(one_way: Duration, seed: u64) -> (Sim, usize, usize) {
    let mut sim = Sim::new();
    let a = sim.add_node(seed);
    let b = sim.add_node(seed + 1);
    let ab = sim.add_link(link(one_way), seed + 2);
    let ba = sim.add_link(link(one_way), seed + 3);
    sim.route(a, b, vec![ab]);
    sim.route(b, a, vec![ba]);
    sim.kill_process(b);
    (sim, a, b)
}

/// The process behind node `n`'s port starts (its port opens).
fn revive(sim: &mut Sim, n: usize) {
    sim.nodes[n].dead = false;
    sim.nodes[n].port_closed = false;
}

fn connect_config(rendezvous: bool, timeout: Duration) -> ConnectionConfig {
    let mut config = ConnectionConfig::default();
    config.rendezvous(rendezvous).connect_timeout(timeout);
    config
}

#[test]
fn connect_to_a_closed_port_fails_with_no_listener_after_the_grace() {
    let (mut sim, a, b) = closed_port(Duration::from_millis(5), 48);
    let c = sim.connect(a, b, connect_config(false, Duration::from_secs(3)));
    let took = time_to_close(&mut sim, a, c, Duration::from_secs(10));
    assert_eq!(sim.conn(a, c).error(), Some(ConnectionError::NoListener));
    // The first request draws the ICMP after 5 ms; then the 1 s grace, not the 3 s timeout.
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_millis(1050),
        "took {took:?}"
    );
}

#[test]
fn the_connect_timeout_still_ends_a_connect_sooner_than_the_grace() {
    let (mut sim, a, b) = closed_port(Duration::from_millis(5), 51);
    let c = sim.connect(a, b, connect_config(false, Duration::from_millis(300)));
    let took = time_to_close(&mut sim, a, c, Duration::from_secs(10));
    assert_eq!(
        sim.conn(a, c).error(),
        Some(ConnectionError::ConnectTimeout)
    );
    assert!(took < Duration::from_millis(310), "took {took:?}");
}

#[test]
fn a_listener_that_starts_within_the_grace_still_accepts() {
    let (mut sim, a, b) = closed_port(Duration::from_millis(20), 54);
    let c = sim.connect(a, b, connect_config(false, Duration::from_secs(3)));
    // The first requests draw ICMPs; the server starts 600 ms later, within the grace.
    sim.run_for(Duration::from_millis(600));
    assert_eq!(sim.conn(a, c).state(), State::Connecting);
    revive(&mut sim, b);
    sim.listen(b, ConnectionConfig::default());
    sim.run_until(Duration::from_secs(5), |sim| {
        sim.conn(a, c).state() != State::Connecting
    });
    assert_eq!(sim.conn(a, c).state(), State::Connected);
    assert_eq!(sim.nodes[b].accepted.len(), 1);
}

#[test]
fn forged_hints_cannot_fail_a_connect_whose_listener_answers() {
    // Round trips of 10 ms and of 900 ms (the first answer comes 900 ms after a hint).
    for (one_way, seed) in [
        (Duration::from_millis(5), 57),
        (Duration::from_millis(450), 58),
    ] {
        let mut p = Pair::new(
            link(one_way),
            link(one_way),
            ConnectionConfig::default(),
            seed,
        );
        let (cn, sn) = (p.client, p.server);
        let c = p
            .sim
            .connect(cn, sn, connect_config(false, Duration::from_secs(3)));
        run_with_forged_hints(
            &mut p.sim,
            (cn, c),
            Duration::from_millis(100),
            Duration::from_secs(5),
            |_| {},
        );
        assert_eq!(p.sim.conn(cn, c).state(), State::Connected, "{one_way:?}");
        assert_eq!(p.sim.nodes[sn].accepted.len(), 1, "{one_way:?}");
    }
}

#[test]
fn a_rendezvous_side_ignores_hints_until_its_peer_binds() {
    let (mut sim, a, b) = closed_port(Duration::from_millis(5), 60);
    let timeout = Duration::from_secs(10);
    let ca = sim.connect(a, b, connect_config(true, timeout));
    // Its requests draw ICMPs for 2 s, twice the grace: the peer is not up yet.
    sim.run_for(Duration::from_secs(2));
    assert_eq!(sim.conn(a, ca).state(), State::Connecting);
    revive(&mut sim, b);
    let cb = sim.connect(b, a, connect_config(true, timeout));
    sim.run_until(Duration::from_secs(5), |sim| {
        sim.conn(a, ca).state() == State::Connected && sim.conn(b, cb).state() == State::Connected
    });
    assert_eq!(sim.conn(a, ca).state(), State::Connected);
    assert_eq!(sim.conn(b, cb).state(), State::Connected);
}

#[test]
fn hints_after_the_end_are_ignored() {
    let (mut sim, a, b) = closed_port(Duration::from_millis(5), 63);
    let c = sim.connect(a, b, connect_config(false, Duration::from_millis(300)));
    time_to_close(&mut sim, a, c, Duration::from_secs(10));
    let now = sim.now;
    sim.conn(a, c).handle_unreachable(now);
    assert_eq!(
        sim.conn(a, c).error(),
        Some(ConnectionError::ConnectTimeout)
    );
}
