//! Scenario tests: whole connections over simulated links, in virtual time.
//!
//! Every protocol behaviour the project promises gets a named scenario here. Sizes are chosen
//! so the whole set runs in seconds on two cores.

mod autotune;
mod congestion_close;
mod extensions;
mod protection;
mod reader_wake;
mod sim;
mod throughput;
mod unreachable;
mod watched;
mod writer_wake;

use std::time::Duration;

use udt_netsim::{LinkConfig, LossModel};

use self::sim::{Pair, Sim};
use crate::config::{ConnectionConfig, Mode};
use crate::connection::{ConnectionError, RecvError, State};
use crate::seq::SocketId;

/// The median of `values` (the upper one of an even count): what the multi-seed simulator
/// tests hold to their bars, since one run moves with its seed.
pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Byte `i` of the test stream: varied enough that a misplaced packet shows.
pub(crate) fn pattern(offset: u64, out: &mut [u8]) {
    for (i, b) in out.iter_mut().enumerate() {
        let x = offset + i as u64;
        *b = (x ^ (x >> 8) ^ (x >> 16) ^ (x >> 24)) as u8;
    }
}

/// Moves a byte stream from one connection to another, checking every byte on arrival.
pub(crate) struct StreamCheck {
    total: u64,
    sent: u64,
    received: u64,
    chunk: Vec<u8>,
    rbuf: Vec<u8>,
    expect: Vec<u8>,
}

impl StreamCheck {
    pub(crate) fn new(total: u64) -> Self {
        Self {
            total,
            sent: 0,
            received: 0,
            chunk: vec![0; 64 * 1024],
            rbuf: vec![0; 256 * 1024],
            expect: vec![0; 256 * 1024],
        }
    }

    /// Feed the sender as far as its buffer allows.
    pub(crate) fn pump(&mut self, sim: &mut Sim, node: usize, id: SocketId) {
        let now = sim.now;
        let conn = sim.conn(node, id);
        while self.sent < self.total {
            let n = (self.total - self.sent).min(self.chunk.len() as u64) as usize;
            pattern(self.sent, &mut self.chunk[..n]);
            match conn.send(now, &self.chunk[..n]) {
                Ok(k) => self.sent += k as u64,
                Err(_) => break,
            }
        }
    }

    /// Read everything available and check it.
    pub(crate) fn drain(&mut self, sim: &mut Sim, node: usize, id: SocketId) {
        let conn = sim.conn(node, id);
        while let Ok(n) = conn.recv(&mut self.rbuf) {
            if n == 0 {
                break;
            }
            pattern(self.received, &mut self.expect[..n]);
            assert!(
                self.rbuf[..n] == self.expect[..n],
                "stream corrupted near offset {}",
                self.received
            );
            self.received += n as u64;
        }
    }

    pub(crate) fn done(&self) -> bool {
        self.received == self.total
    }

    pub(crate) fn received(&self) -> u64 {
        self.received
    }
}

fn perfect() -> LinkConfig {
    LinkConfig::new().delay(Duration::from_millis(5))
}

#[test]
fn handshake_connects_both_sides() {
    let mut p = Pair::new(perfect(), perfect(), ConnectionConfig::default(), 1);
    let (c, s) = p.connect(ConnectionConfig::default());
    let client = p.sim.conn(p.client, c);
    assert_eq!(client.state(), State::Connected);
    let peer = client.peer_id();
    let server = p.sim.conn(p.server, s);
    assert_eq!(server.state(), State::Connected);
    assert_eq!(server.local_id(), peer);
    assert_eq!(server.peer_id(), c);
}

#[test]
fn small_transfer_on_a_clean_link() {
    let mut p = Pair::new(perfect(), perfect(), ConnectionConfig::default(), 2);
    let (c, s) = p.connect(ConnectionConfig::default());
    let mut check = StreamCheck::new(1_000_000);
    let (cn, sn) = (p.client, p.server);
    let ok = p.sim.run_until(Duration::from_secs(5), |sim| {
        check.pump(sim, cn, c);
        check.drain(sim, sn, s);
        check.done()
    });
    assert!(ok, "received {} bytes", check.received());
}

#[test]
fn stream_64mib_survives_loss_reordering_and_duplication() {
    let lossy = || {
        LinkConfig::new()
            .rate_bps(200_000_000)
            .delay(Duration::from_millis(10))
            .queue_bytes(2_000_000)
            .loss(LossModel::bernoulli(0.01))
            .reorder(0.01, Duration::from_millis(2))
            .duplicate(0.01)
    };
    let mut p = Pair::new(lossy(), lossy(), ConnectionConfig::default(), 3);
    let (c, s) = p.connect(ConnectionConfig::default());
    let mut check = StreamCheck::new(64 << 20);
    let (cn, sn) = (p.client, p.server);
    let ok = p.sim.run_until(Duration::from_secs(120), |sim| {
        check.pump(sim, cn, c);
        check.drain(sim, sn, s);
        check.done()
    });
    let stats = p.sim.conn(cn, c).stats();
    assert!(
        ok,
        "received {} of {} bytes; {stats:?}",
        check.received(),
        64 << 20
    );
    assert!(
        stats.retransmitted > 0,
        "a lossy link must cause retransmissions"
    );
    let rstats = p.sim.conn(sn, s).stats();
    assert!(
        rstats.duplicates > 0,
        "duplication must be seen and discarded"
    );
}

/// Hosts whose processes are preempted now and then (`Sim::stall_node`: up to 10 ms, 50
/// times a second at each end) still move a stream intact and in order: what arrives during
/// a stall waits and is handled when it ends.
#[test]
fn a_stream_crosses_stalling_hosts_intact() {
    let path = || {
        LinkConfig::new()
            .rate_bps(100_000_000)
            .delay(Duration::from_millis(10))
            .queue_bytes(250_000)
    };
    let mut p = Pair::new(path(), path(), ConnectionConfig::default(), 6);
    let (c, s) = p.connect(ConnectionConfig::default());
    let (cn, sn) = (p.client, p.server);
    p.sim.stall_node(cn, 50.0, Duration::from_millis(10), 61);
    p.sim.stall_node(sn, 50.0, Duration::from_millis(10), 62);
    let mut check = StreamCheck::new(16 << 20);
    let ok = p.sim.run_until(Duration::from_secs(30), |sim| {
        check.pump(sim, cn, c);
        check.drain(sim, sn, s);
        check.done()
    });
    assert!(ok, "received {} bytes", check.received());
    let held = (p.sim.nodes[cn].held, p.sim.nodes[sn].held);
    assert!(held.0 > 100 && held.1 > 1_000, "datagrams held {held:?}");
}

#[test]
fn wrap_of_sequence_numbers_at_2_pow_31() {
    let mut p = Pair::new(perfect(), perfect(), ConnectionConfig::default(), 4);
    p.sim.nodes[p.client]
        .endpoint
        .set_next_isn(crate::seq::SeqNumber::new(crate::seq::SeqNumber::MAX - 100));
    let (c, s) = p.connect(ConnectionConfig::default());
    let mut check = StreamCheck::new(2_000_000);
    let (cn, sn) = (p.client, p.server);
    assert!(p.sim.run_until(Duration::from_secs(10), |sim| {
        check.pump(sim, cn, c);
        check.drain(sim, sn, s);
        check.done()
    }));
}

#[test]
fn graceful_close_delivers_everything_then_eof() {
    let mut p = Pair::new(perfect(), perfect(), ConnectionConfig::default(), 5);
    let (c, s) = p.connect(ConnectionConfig::default());
    let (cn, sn) = (p.client, p.server);
    let now = p.sim.now;
    let data = vec![7u8; 300_000];
    assert_eq!(p.sim.conn(cn, c).send(now, &data), Ok(300_000));
    p.sim.conn(cn, c).close(now);
    let mut got = 0usize;
    let mut eof = false;
    let mut buf = vec![0u8; 65536];
    assert!(p.sim.run_until(Duration::from_secs(10), |sim| {
        loop {
            match sim.conn(sn, s).recv(&mut buf) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => got += n,
                Err(_) => break,
            }
        }
        eof
    }));
    assert_eq!(got, 300_000);
    assert_eq!(p.sim.conn(cn, c).state(), State::Closed);
    assert_eq!(p.sim.conn(sn, s).error(), Some(ConnectionError::PeerClosed));
    // Both ends drained and were forgotten by their endpoints (the drive contract's third
    // step), so nothing routes to them any more.
    p.sim.run_for(Duration::from_millis(100));
    for node in [cn, sn] {
        assert_eq!(p.sim.nodes[node].endpoint.connection_count(), 0);
    }
}

/// A lost Shutdown must not turn a completed transfer into an error at the reader: the
/// closing side sends two. The first is dropped here; the reader still sees the end.
#[test]
fn the_reader_sees_the_end_when_one_shutdown_is_lost() {
    let mut p = Pair::new(perfect(), perfect(), ConnectionConfig::default(), 28);
    let (c, s) = p.connect(ConnectionConfig::default());
    let (cn, sn) = (p.client, p.server);
    let mut dropped = 0;
    p.sim.interceptor = Some(Box::new(move |_, d: Vec<u8>| {
        let shutdown = d.len() >= 4 && d[0] == 0x80 && d[1] == 0x05;
        if shutdown && dropped == 0 {
            dropped += 1;
            return vec![];
        }
        vec![d]
    }));
    let now = p.sim.now;
    assert_eq!(p.sim.conn(cn, c).send(now, &[5; 100_000]), Ok(100_000));
    p.sim.conn(cn, c).close(now);
    let mut got = 0;
    let mut buf = vec![0u8; 65536];
    let ended = p.sim.run_until(Duration::from_secs(5), |sim| loop {
        match sim.conn(sn, s).recv(&mut buf) {
            Ok(0) => return true,
            Ok(n) => got += n,
            Err(_) => return false,
        }
    });
    assert!(ended, "no end of stream");
    assert_eq!(got, 100_000);
    assert_eq!(p.sim.conn(sn, s).error(), Some(ConnectionError::PeerClosed));
}

/// Issue 10: a connection's internal queues stay bounded over a long lossy transfer (the
/// event queue used to grow by one entry per ACK wherever nobody drained it).
#[test]
fn issue_10_queues_stay_bounded_over_a_long_transfer() {
    let link = || {
        LinkConfig::new()
            .rate_bps(1_000_000_000)
            .delay(Duration::from_millis(10))
            .queue_bytes(2_500_000)
            .loss(LossModel::bernoulli(0.005))
    };
    let mut p = Pair::new(link(), link(), ConnectionConfig::default(), 10);
    let (c, s) = p.connect(ConnectionConfig::default());
    let mut check = StreamCheck::new(128 << 20);
    let (cn, sn) = (p.client, p.server);
    let ok = p.sim.run_until(Duration::from_secs(60), |sim| {
        check.pump(sim, cn, c);
        check.drain(sim, sn, s);
        check.done()
    });
    assert!(ok, "received {} bytes", check.received());
    let (control, events) = p.sim.max_queues;
    assert!(events <= 4, "{events} events queued between two drives");
    assert!(
        control <= 256,
        "{control} control packets queued between two drives"
    );
}

#[test]
fn vanished_peer_is_declared_broken_by_exp() {
    let mut p = Pair::new(perfect(), perfect(), ConnectionConfig::default(), 6);
    let (c, _s) = p.connect(ConnectionConfig::default());
    let (cn, sn) = (p.client, p.server);
    let now = p.sim.now;
    p.sim.conn(cn, c).send(now, &[1u8; 10_000]).unwrap();
    p.sim.kill(sn);
    let start = p.sim.now;
    assert!(p.sim.run_until(Duration::from_secs(120), |sim| {
        sim.conn(cn, c).state() == State::Closed
    }));
    let took = p.sim.now - start;
    assert_eq!(p.sim.conn(cn, c).error(), Some(ConnectionError::PeerLost));
    // 4.11: 17 rounds of N·300 ms on a short RTT ≈ 46 s.
    assert!(
        took > Duration::from_secs(30) && took < Duration::from_secs(60),
        "took {took:?}"
    );
    let mut buf = [0u8; 10];
    assert_eq!(
        p.sim.conn(cn, c).recv(&mut buf),
        Err(RecvError::Closed(ConnectionError::PeerLost))
    );
}

/// A reader that stops reading shuts the writer's window with everything sent acknowledged:
/// the writer has nothing to resend on EXP and must send keep-alives, or the reader would
/// declare it lost after ~46 s. Reading again resumes the stream.
#[test]
fn stalled_reader_keeps_the_connection_alive() {
    let mut p = Pair::new(perfect(), perfect(), ConnectionConfig::default(), 8);
    let (c, s) = p.connect(ConnectionConfig::default());
    let (cn, sn) = (p.client, p.server);
    let mut check = StreamCheck::new(40 << 20);
    p.sim.run_until(Duration::from_secs(120), |sim| {
        check.pump(sim, cn, c);
        false
    });
    assert_eq!(p.sim.conn(cn, c).state(), State::Connected);
    assert_eq!(p.sim.conn(sn, s).state(), State::Connected);
    assert!(p.sim.conn(cn, c).stats().keepalives_sent > 0);
    let ok = p.sim.run_until(Duration::from_secs(30), |sim| {
        check.pump(sim, cn, c);
        check.drain(sim, sn, s);
        check.done()
    });
    assert!(ok, "received {} bytes", check.received());
}

#[test]
fn idle_connection_stays_alive_with_keepalives() {
    let mut p = Pair::new(perfect(), perfect(), ConnectionConfig::default(), 7);
    let (c, s) = p.connect(ConnectionConfig::default());
    p.sim.run_for(Duration::from_secs(120));
    assert_eq!(p.sim.conn(p.client, c).state(), State::Connected);
    assert_eq!(p.sim.conn(p.server, s).state(), State::Connected);
    assert!(p.sim.conn(p.client, c).stats().keepalives_sent > 0);
}

#[test]
fn connect_to_nobody_times_out() {
    let mut sim = Sim::new();
    let a = sim.add_node(1);
    let b = sim.add_node(2);
    sim.route(a, b, vec![]);
    sim.route(b, a, vec![]);
    // b does not listen: requests to socket 0 are dropped.
    let c = sim.connect(a, b, ConnectionConfig::default());
    assert!(
        sim.run_until(Duration::from_secs(10), |sim| sim.conn(a, c).state()
            == State::Closed)
    );
    assert_eq!(
        sim.conn(a, c).error(),
        Some(ConnectionError::ConnectTimeout)
    );
    assert!(sim.now >= crate::time::Instant::from_micros(3_000_000));
}

#[test]
fn wrong_socket_type_is_refused() {
    let mut p = Pair::new(
        perfect(),
        perfect(),
        ConnectionConfig::new(Mode::Message),
        8,
    );
    let c = p
        .sim
        .connect(p.client, p.server, ConnectionConfig::default());
    let cn = p.client;
    assert!(p
        .sim
        .run_until(Duration::from_secs(5), |sim| sim.conn(cn, c).state()
            == State::Closed));
    assert_eq!(p.sim.conn(cn, c).error(), Some(ConnectionError::Refused));
}

#[test]
fn rendezvous_connects_and_moves_data() {
    let mut sim = Sim::new();
    let a = sim.add_node(11);
    let b = sim.add_node(12);
    let l1 = sim.add_link(perfect(), 1);
    let l2 = sim.add_link(perfect(), 2);
    sim.route(a, b, vec![l1]);
    sim.route(b, a, vec![l2]);
    let mut cfg = ConnectionConfig::default();
    cfg.rendezvous(true);
    let ca = sim.connect(a, b, cfg.clone());
    let cb = sim.connect(b, a, cfg);
    assert!(sim.run_until(Duration::from_secs(5), |sim| {
        sim.conn(a, ca).state() == State::Connected && sim.conn(b, cb).state() == State::Connected
    }));
    assert_eq!(sim.conn(a, ca).peer_id(), cb);
    assert_eq!(sim.conn(b, cb).peer_id(), ca);
    let mut check = StreamCheck::new(500_000);
    assert!(sim.run_until(Duration::from_secs(5), |sim| {
        check.pump(sim, a, ca);
        check.drain(sim, b, cb);
        check.done()
    }));
}

#[test]
fn handshake_survives_heavy_loss() {
    let lossy = || {
        LinkConfig::new()
            .delay(Duration::from_millis(20))
            .loss(LossModel::bernoulli(0.3))
    };
    let mut p = Pair::new(lossy(), lossy(), ConnectionConfig::default(), 9);
    let (c, s) = p.connect(ConnectionConfig::default());
    let mut check = StreamCheck::new(200_000);
    let (cn, sn) = (p.client, p.server);
    assert!(p.sim.run_until(Duration::from_secs(60), |sim| {
        check.pump(sim, cn, c);
        check.drain(sim, sn, s);
        check.done()
    }));
}

mod listener_flood;
mod messages;
mod raw_peer;
mod shared_port;
mod small;

/// A reader that empties a small receive buffer only every 100 ms must not make the sender
/// wait for its retransmission timeout: the freed space is advertised at once.
#[test]
fn slow_reader_window_updates_avoid_timeouts() {
    let mut server_cfg = ConnectionConfig::default();
    server_cfg.recv_buffer_pkts(64).unwrap();
    let link = || LinkConfig::new().delay(Duration::from_millis(10));
    let mut p = Pair::new(link(), link(), server_cfg, 41);
    let (c, s) = p.connect(ConnectionConfig::default());
    let mut check = StreamCheck::new(3_000_000);
    let (cn, sn) = (p.client, p.server);
    let mut next_read = p.sim.now;
    let start = p.sim.now;
    assert!(p.sim.run_until(Duration::from_secs(30), |sim| {
        check.pump(sim, cn, c);
        if sim.now >= next_read {
            check.drain(sim, sn, s);
            next_read = sim.now + Duration::from_millis(100);
            sim.app_wake = Some(next_read);
        }
        check.done()
    }));
    let took = p.sim.now - start;
    let stats = p.sim.conn(cn, c).stats();
    println!("slow reader: {took:?}, sender timeouts {}", stats.timeouts);
    assert_eq!(
        stats.timeouts, 0,
        "sender stalled into its timeout: {stats:?}"
    );
}

#[test]
fn server_to_client_stream() {
    let mut p = Pair::new(perfect(), perfect(), ConnectionConfig::default(), 12);
    let (c, s) = p.connect(ConnectionConfig::default());
    let mut check = StreamCheck::new(4 << 20);
    let (cn, sn) = (p.client, p.server);
    let start = p.sim.now;
    assert!(p.sim.run_until(Duration::from_secs(30), |sim| {
        check.pump(sim, sn, s);
        check.drain(sim, cn, c);
        check.done()
    }));
    println!("server -> client 4 MiB: {:?}", p.sim.now - start);
}

mod cc_fair;
mod cc_ledbat;
mod cc_model;
