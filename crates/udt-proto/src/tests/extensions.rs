//! The capability exchange between two of our connections, and with a peer that announces
//! nothing (as 4.11 never does).

use std::time::Duration;

use super::sim::Pair;
use super::{perfect, StreamCheck};
use crate::config::ConnectionConfig;
use crate::wire::Capabilities;

const BOTH: Capabilities = Capabilities::GSO.union(Capabilities::GRO);
/// What every announcing connection adds to its runtime's bits: its receiver spaces ACKs for
/// a sender that asks (the default controller, 4.11's native one, does not ask), and it
/// reports its receiver's front in ACKs and reads the peer's.
const OWN: Capabilities = Capabilities::ACK_SPACING.union(Capabilities::ACK_FRONT);

#[test]
fn crossing_announcements_are_answered_once_and_both_sides_learn() {
    let mut p = Pair::new(perfect(), perfect(), ConnectionConfig::default(), 41);
    let (c, s) = p.connect(ConnectionConfig::default());
    let (cn, sn) = (p.client, p.server);
    // Both announce at the same instant: each announcement says "not heard yet", so each side
    // answers once; then nothing more is due.
    p.sim.conn(cn, c).set_local_extensions(BOTH);
    p.sim.conn(sn, s).set_local_extensions(Capabilities::GSO);
    p.sim.run_for(Duration::from_millis(100));
    assert_eq!(
        p.sim.conn(cn, c).peer_extensions(),
        Some(Capabilities::GSO.union(OWN))
    );
    assert_eq!(p.sim.conn(sn, s).peer_extensions(), Some(BOTH.union(OWN)));
    assert_eq!(p.sim.conn(cn, c).common_extensions(), Capabilities::GSO);
    for (node, id) in [(cn, c), (sn, s)] {
        assert_eq!(p.sim.conn(node, id).poll_announcement(), None);
    }
}

#[test]
fn a_side_that_heard_first_announces_with_heard_and_gets_no_answer() {
    let mut p = Pair::new(perfect(), perfect(), ConnectionConfig::default(), 42);
    let (c, s) = p.connect(ConnectionConfig::default());
    let (cn, sn) = (p.client, p.server);
    p.sim.conn(sn, s).set_local_extensions(BOTH);
    p.sim.run_for(Duration::from_millis(50));
    // The client announces nothing yet (a plain peer): it knows the server's bits, the
    // server knows nothing, and the client does not answer.
    assert_eq!(p.sim.conn(cn, c).peer_extensions(), Some(BOTH.union(OWN)));
    assert_eq!(p.sim.conn(sn, s).peer_extensions(), None);
    assert_eq!(p.sim.conn(sn, s).common_extensions(), Capabilities::NONE);
    p.sim.conn(cn, c).set_local_extensions(BOTH);
    p.sim.run_for(Duration::from_millis(50));
    assert_eq!(p.sim.conn(sn, s).peer_extensions(), Some(BOTH.union(OWN)));
    assert_eq!(p.sim.conn(sn, s).poll_announcement(), None);
    assert_eq!(p.sim.conn(cn, c).poll_announcement(), None);
}

#[test]
fn announcing_to_a_plain_peer_leaves_the_transfer_alone() {
    let mut p = Pair::new(perfect(), perfect(), ConnectionConfig::default(), 43);
    let (c, s) = p.connect(ConnectionConfig::default());
    let (cn, sn) = (p.client, p.server);
    p.sim.conn(cn, c).set_local_extensions(BOTH);
    let mut check = StreamCheck::new(2_000_000);
    assert!(p.sim.run_until(Duration::from_secs(5), |sim| {
        check.pump(sim, cn, c);
        check.drain(sim, sn, s);
        check.done()
    }));
    assert_eq!(p.sim.conn(cn, c).peer_extensions(), None);
    assert_eq!(p.sim.conn(cn, c).common_extensions(), Capabilities::NONE);
}

/// A sender whose controller sizes its windows for spaced ACKs (`model`) says so; the
/// receiver then spaces them (at rest, without a speed, still every SYN), and the other
/// direction, whose sender (the native controller) did not ask, keeps UDT's timer.
#[test]
fn a_model_sender_asks_for_spaced_acks_and_its_peer_agrees() {
    let mut model = ConnectionConfig::default();
    model.controller(std::sync::Arc::new(
        crate::congestion::ModelFactory::default(),
    ));
    let mut p = Pair::new(perfect(), perfect(), ConnectionConfig::default(), 44);
    let (c, s) = p.connect(model);
    let (cn, sn) = (p.client, p.server);
    p.sim.conn(cn, c).set_local_extensions(Capabilities::GSO);
    p.sim.conn(sn, s).set_local_extensions(Capabilities::GSO);
    p.sim.run_for(Duration::from_millis(100));
    let sender = Capabilities::SPARSE_ACK_SENDER;
    assert_eq!(
        p.sim.conn(sn, s).peer_extensions(),
        Some(Capabilities::GSO.union(OWN).union(sender))
    );
    assert_eq!(
        p.sim.conn(cn, c).peer_extensions(),
        Some(Capabilities::GSO.union(OWN))
    );
    assert_eq!(p.sim.conn(sn, s).ack_period(), crate::congestion::SYN);
    assert_eq!(p.sim.conn(cn, c).ack_period(), crate::congestion::SYN);
}
