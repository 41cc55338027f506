//! Several connections from one endpoint (one UDP port) to one remote: caller connections
//! are told apart by socket id and may share a remote; rendezvous ones may not (their first
//! handshakes carry no socket id).

use std::net::SocketAddr;
use std::time::Duration;

use super::sim::Pair;
use super::{perfect, StreamCheck};
use crate::config::ConnectionConfig;
use crate::connection::State;
use crate::endpoint::{ConnectError, Endpoint};
use crate::time::Instant;

#[test]
fn two_callers_from_one_port_to_one_listener_connect_and_move_data() {
    let mut p = Pair::new(perfect(), perfect(), ConnectionConfig::default(), 21);
    let (cn, sn) = (p.client, p.server);
    let c1 = p.sim.connect(cn, sn, ConnectionConfig::default());
    let c2 = p.sim.connect(cn, sn, ConnectionConfig::default());
    assert_ne!(c1, c2);
    assert!(p.sim.run_until(Duration::from_secs(5), |sim| {
        sim.conn(cn, c1).state() == State::Connected
            && sim.conn(cn, c2).state() == State::Connected
            && sim.nodes[sn].accepted.len() == 2
    }));
    // Each accepted connection answers the client socket it was asked by.
    let accepted = p.sim.nodes[sn].accepted.clone();
    let server_of = |sim: &mut super::sim::Sim, c| {
        *accepted
            .iter()
            .find(|&&s| sim.conn(sn, s).peer_id() == c)
            .expect("an accepted connection per caller")
    };
    let s1 = server_of(&mut p.sim, c1);
    let s2 = server_of(&mut p.sim, c2);
    assert_ne!(s1, s2);
    assert_eq!(p.sim.conn(cn, c1).peer_id(), s1);
    assert_eq!(p.sim.conn(cn, c2).peer_id(), s2);
    // Data both ways at once: 1 -> server on c1, server -> 2 on c2.
    let mut up = StreamCheck::new(400_000);
    let mut down = StreamCheck::new(300_000);
    assert!(p.sim.run_until(Duration::from_secs(10), |sim| {
        up.pump(sim, cn, c1);
        up.drain(sim, sn, s1);
        down.pump(sim, sn, s2);
        down.drain(sim, cn, c2);
        up.done() && down.done()
    }));
}

fn rendezvous() -> ConnectionConfig {
    let mut cfg = ConnectionConfig::default();
    cfg.rendezvous(true);
    cfg
}

#[test]
fn a_second_rendezvous_to_one_remote_is_refused_until_the_first_is_forgotten() {
    let mut ep = Endpoint::new(5);
    let remote: SocketAddr = "10.0.0.9:9000".parse().unwrap();
    let first = ep.connect(Instant::ZERO, remote, rendezvous()).unwrap();
    assert!(ep.has_rendezvous());
    let err = ep.connect(Instant::ZERO, remote, rendezvous()).unwrap_err();
    assert_eq!(err, ConnectError::AlreadyConnecting(remote));
    assert_eq!(
        err.to_string(),
        "already connecting to 10.0.0.9:9000 from this port"
    );
    let io: std::io::Error = err.into();
    assert_eq!(io.kind(), std::io::ErrorKind::AddrInUse);
    // Caller connections to that remote are still fine: replies carry their socket ids.
    let caller = ep
        .connect(Instant::ZERO, remote, ConnectionConfig::default())
        .unwrap();
    assert_ne!(caller.local_id(), first.local_id());
    ep.forget(&caller);
    assert!(
        ep.has_rendezvous(),
        "forgetting a caller keeps the rendezvous entry"
    );
    ep.forget(&first);
    assert!(!ep.has_rendezvous());
    ep.connect(Instant::ZERO, remote, rendezvous()).unwrap();
}

#[test]
fn callers_to_one_remote_are_not_limited() {
    let mut ep = Endpoint::new(6);
    let remote: SocketAddr = "10.0.0.9:9000".parse().unwrap();
    let ids: Vec<_> = (0..3)
        .map(|_| {
            ep.connect(Instant::ZERO, remote, ConnectionConfig::default())
                .unwrap()
                .local_id()
        })
        .collect();
    assert!(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
    assert!(!ep.has_rendezvous());
    assert_eq!(ep.connection_count(), 3);
}
