//! When a writer or a flush waiting on the send buffer is woken (`Event::Writable`): a
//! blocked writer once a third of the buffer is free, and at every ACK after that until its
//! write fits; a flush only when the buffer empties, not at every ACK of the drain.

use std::time::Duration;

use udt_netsim::LinkConfig;

use super::sim::Pair;
use crate::config::{ConnectionConfig, Mode};

/// 20 Mbit/s (about 1,700 packets a second) with a 20 ms round trip: a buffer of
/// [`BUFFER_PKTS`] takes most of a second to drain, dozens of ACKs.
fn link() -> LinkConfig {
    LinkConfig::new()
        .rate_bps(20_000_000)
        .delay(Duration::from_millis(10))
        .queue_bytes(256 << 10)
}

const BUFFER_PKTS: u32 = 1024;

fn config(mode: Mode) -> ConnectionConfig {
    let mut cfg = ConnectionConfig::new(mode);
    cfg.send_buffer_pkts(BUFFER_PKTS)
        .expect("a valid send buffer");
    cfg
}

/// Fill the send buffer once, then only wait for it to drain, as a flush (or a close's
/// linger) does: the times the sender was woken until it was empty, and whether it emptied.
fn wake_ups_while_draining(seed: u64) -> (u32, bool) {
    let mut p = Pair::new(link(), link(), config(Mode::Stream), seed);
    let (c, s) = p.connect(config(Mode::Stream));
    let (cn, sn) = (p.client, p.server);
    let data = vec![0x5a; BUFFER_PKTS as usize * 1456];
    let mut written = 0;
    while written < data.len() {
        let now = p.sim.now;
        match p.sim.conn(cn, c).send(now, &data[written..]) {
            Ok(n) => written += n,
            Err(_) => break,
        }
    }
    assert!(written > data.len() / 2, "only {written} bytes queued");
    p.sim.nodes[cn].woken.clear();
    let mut wake_ups = 0;
    let mut rbuf = vec![0u8; 1 << 20];
    let drained = p.sim.run_until(Duration::from_secs(10), |sim| {
        sim.read_all(sn, s, &mut rbuf);
        if sim.nodes[cn].woken.remove(&c) {
            wake_ups += 1;
        }
        sim.peek(cn, c).is_send_idle()
    });
    (wake_ups, drained)
}

/// A flush of a full buffer is woken when a third of it is free and when it is empty, not
/// at each of the dozens of ACKs in between (before, every ACK once a third was free).
#[test]
fn a_draining_buffer_wakes_its_flush_when_it_empties_not_at_every_ack() {
    for seed in [1, 2] {
        let (wake_ups, drained) = wake_ups_while_draining(seed);
        println!("seed {seed}: {wake_ups} wake-ups while draining");
        assert!(drained, "seed {seed}: the buffer did not drain");
        assert!(wake_ups <= 3, "seed {seed}: {wake_ups} wake-ups");
    }
}

/// A writer that sends messages of half the buffer, and tries again only when woken: each
/// message after the first two is queued while the buffer still holds packets (the writer
/// is woken at every ACK once a third is free, until its message fits), not only once the
/// buffer has emptied. Returns the fewest packets the buffer held when a later message went
/// in, and how many went in.
fn long_messages_queued_behind(seed: u64) -> (u32, u32) {
    let mut p = Pair::new(link(), link(), config(Mode::Message), seed);
    let (c, s) = p.connect(config(Mode::Message));
    let (cn, sn) = (p.client, p.server);
    let msg = vec![0xa5; (BUFFER_PKTS as usize / 2) * 1456];
    let mut queued = 0;
    let mut fewest_held = u32::MAX;
    let mut rbuf = vec![0u8; msg.len()];
    let mut try_send = true;
    p.sim.run_until(Duration::from_secs(4), |sim| {
        while sim.conn(sn, s).recv_msg(&mut rbuf).is_ok() {}
        if std::mem::take(&mut try_send) || sim.nodes[cn].woken.remove(&c) {
            loop {
                let held = sim.peek(cn, c).send_buffer_pkts();
                let now = sim.now;
                if sim.conn(cn, c).send_msg(now, &msg, None, true).is_err() {
                    break;
                }
                queued += 1;
                if queued > 2 {
                    fewest_held = fewest_held.min(held);
                }
            }
        }
        queued >= 8
    });
    (fewest_held, queued)
}

#[test]
fn a_writer_blocked_on_a_long_message_is_woken_before_the_buffer_empties() {
    for seed in [1, 2] {
        let (fewest_held, queued) = long_messages_queued_behind(seed);
        println!("seed {seed}: {queued} messages, the buffer held at least {fewest_held}");
        assert!(queued >= 8, "seed {seed}: only {queued} messages in 4 s");
        assert!(
            fewest_held >= BUFFER_PKTS / 4,
            "seed {seed}: a message waited until the buffer held {fewest_held} packets"
        );
    }
}
