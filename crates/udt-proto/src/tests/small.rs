//! Small transfers: how long until a short write is delivered *and acknowledged* (issue 3:
//! 1 MB on loopback in < 20 ms), and what the prompt ACKs that make them fast cost a bulk
//! flow in ACKs per second. Virtual time, so the time bounds are exact, not flaky.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use udt_netsim::LinkConfig;

use super::sim::Pair;
use super::watched::{Watched, Watcher};
use crate::config::ConnectionConfig;
use crate::congestion::{Controller, ControllerFactory, FixedRateFactory, ModelFactory, SentInfo};
use crate::stats::ConnectionStats;
use crate::time::Instant;
use crate::wire::Capabilities;

/// One write of `bytes` right after connecting, over a link of `rate_bps` and `rtt`; returns
/// the virtual time from the write until the sender holds nothing unacknowledged, and the
/// sender's and receiver's stats.
fn small_transfer(
    rate_bps: u64,
    rtt: Duration,
    bytes: usize,
    seed: u64,
) -> (Duration, ConnectionStats, ConnectionStats) {
    let link = || {
        LinkConfig::new()
            .rate_bps(rate_bps)
            .delay(rtt / 2)
            .queue_bytes(LinkConfig::bdp_bytes(rate_bps, rtt).max(4 << 20))
    };
    let mut p = Pair::new(link(), link(), ConnectionConfig::default(), seed);
    let (c, s) = p.connect(ConnectionConfig::default());
    let (cn, sn) = (p.client, p.server);
    let start = p.sim.now;
    let data = vec![0x5a; bytes];
    let mut written = 0;
    let mut rbuf = vec![0u8; 1 << 20];
    let mut got = 0;
    let ok = p.sim.run_until(Duration::from_secs(30), |sim| {
        let now = sim.now;
        if written < bytes {
            if let Ok(n) = sim.conn(cn, c).send(now, &data[written..]) {
                written += n;
            }
        }
        while let Ok(n) = sim.conn(sn, s).recv(&mut rbuf) {
            if n == 0 {
                break;
            }
            got += n;
        }
        written == bytes && sim.conn(cn, c).is_send_idle()
    });
    assert!(ok, "transfer of {bytes} bytes did not complete");
    assert_eq!(got, bytes, "the receiver read everything");
    let took = p.sim.now - start;
    let (cs, ss) = (p.sim.conn(cn, c).stats(), p.sim.conn(sn, s).stats());
    (took, cs, ss)
}

const TEN_GBIT: u64 = 10_000_000_000;

/// Loopback-like: 0.1 ms RTT, 10 Gbit/s. 4.11 (ACK every 10 ms, slow start growing once per
/// 10 ms) needs ~31 ms here for 1 MiB and 10 ms for one full packet.
#[test]
fn one_mib_on_a_fast_short_path_is_acknowledged_within_20_ms() {
    let (took, sender, receiver) = small_transfer(TEN_GBIT, Duration::from_micros(100), 1 << 20, 1);
    println!(
        "1 MiB, 0.1 ms RTT: {took:?}; numbered ACKs {}, light ACKs {}",
        receiver.acks_sent, receiver.light_acks_sent
    );
    assert!(took < Duration::from_millis(20), "took {took:?}");
    assert_eq!(sender.retransmitted, 0);
}

/// One full-size packet (no short tail to trigger 4.11's immediate ACK) is acknowledged on
/// arrival: one RTT plus serialisation, not a 10 ms ACK period.
#[test]
fn one_full_packet_is_acknowledged_in_about_one_rtt() {
    let (took, _, receiver) = small_transfer(TEN_GBIT, Duration::from_micros(100), 1456, 2);
    println!("1 packet, 0.1 ms RTT: {took:?}");
    assert!(took < Duration::from_micros(200), "took {took:?}");
    assert_eq!(receiver.acks_sent, 1);
}

/// On a long path the transfer is bounded by slow start's doubling per RTT from 16 packets:
/// 721 packets leave in 6 rounds, the last ACK returns in the 7th.
#[test]
fn one_mib_on_a_100ms_path_takes_at_most_7_rtts() {
    let rtt = Duration::from_millis(100);
    let (took, _, _) = small_transfer(1_000_000_000, rtt, 1 << 20, 3);
    let rtts = took.as_secs_f64() / rtt.as_secs_f64();
    println!("1 MiB, 100 ms RTT: {took:?} = {rtts:.2} RTTs");
    assert!(rtts <= 7.0, "took {took:?}");
}

/// A bulk flow of `seconds` over a link of `rate_bps` and `rtt` (a BDP queue), both sides
/// announcing `extensions` first, the sender with `sender`'s options; returns the
/// receiver's stats.
fn bulk_flow(
    rate_bps: u64,
    rtt: Duration,
    seconds: u64,
    extensions: Capabilities,
    sender: ConnectionConfig,
) -> ConnectionStats {
    let bdp = LinkConfig::bdp_bytes(rate_bps, rtt);
    let receiver = ConnectionConfig::default();
    bulk_flow_queued(rate_bps, rtt, bdp, seconds, extensions, sender, receiver)
}

/// [`bulk_flow`] through queues of `queue_bytes`, to a receiver with `receiver`'s options.
fn bulk_flow_queued(
    rate_bps: u64,
    rtt: Duration,
    queue_bytes: usize,
    seconds: u64,
    extensions: Capabilities,
    sender: ConnectionConfig,
    receiver: ConnectionConfig,
) -> ConnectionStats {
    let link = || {
        LinkConfig::new()
            .rate_bps(rate_bps)
            .delay(rtt / 2)
            .queue_bytes(queue_bytes)
    };
    let mut p = Pair::new(link(), link(), receiver, 4);
    let (c, s) = p.connect(sender);
    let (cn, sn) = (p.client, p.server);
    p.sim.conn(cn, c).set_local_extensions(extensions);
    p.sim.conn(sn, s).set_local_extensions(extensions);
    p.sim.run_for(rtt * 2);
    assert_eq!(p.sim.conn(sn, s).common_extensions(), extensions);
    let chunk = vec![0u8; 256 * 1024];
    let mut rbuf = vec![0u8; 1 << 20];
    p.sim.run_until(Duration::from_secs(seconds), |sim| {
        let now = sim.now;
        let conn = sim.conn(cn, c);
        while conn.send_buffer_free() > chunk.len() && conn.send(now, &chunk).is_ok() {}
        while let Ok(n) = sim.conn(sn, s).recv(&mut rbuf) {
            if n == 0 {
                break;
            }
        }
        false
    });
    p.sim.conn(sn, s).stats()
}

/// Prompt ACKs are bounded in time, not per packet: a bulk flow at 1 Gbit/s (10 ms RTT) gets
/// at most one numbered ACK per ms (plus 4.11's light ACK every 64 packets in between).
#[test]
fn bulk_flow_at_1_gbit_sends_at_most_1000_numbered_acks_a_second() {
    let seconds = 3;
    let r = bulk_flow(
        1_000_000_000,
        Duration::from_millis(10),
        seconds,
        Capabilities::NONE,
        ConnectionConfig::default(),
    );
    let per_s = |n: u64| n / seconds;
    println!(
        "1 Gbit/s bulk, 10 ms RTT: {} data packets/s, {} numbered ACKs/s, {} light ACKs/s",
        per_s(r.packets_received),
        per_s(r.acks_sent),
        per_s(r.light_acks_sent)
    );
    assert!(
        per_s(r.packets_received) > 30_000,
        "the flow did not get going"
    );
    assert!(per_s(r.acks_sent) <= 1_000, "{} ACKs/s", per_s(r.acks_sent));
}

/// Between two of our connections (GSO trains), a prompt ACK waits for 32 packets or a
/// write's end. A 45 Mbit/s flow on a fast link sends trains that arrive at wire speed, so
/// the arrival speed reads far above the flow and the prompt-ACK gap sits at its 1 ms
/// floor: the first packet of every train drew an ACK of its own and the rest another, two
/// ACKs (and ACK2s, and wake-ups at both ends) per train. (4.11 peers: 3.8 packets per ACK
/// here.)
#[test]
fn gso_peers_ack_a_train_once() {
    let seconds = 3;
    let rtt = Duration::from_millis(20);
    let mut sender = ConnectionConfig::default();
    sender.controller(Arc::new(FixedRateFactory::new(45_000_000 / 8)));
    let run = |ext| bulk_flow(1_000_000_000, rtt, seconds, ext, sender.clone());
    let (gso, plain) = (run(Capabilities::GSO), run(Capabilities::NONE));
    let per_ack = |r: &ConnectionStats| r.packets_received as f64 / r.acks_sent.max(1) as f64;
    println!(
        "45 Mbit/s paced on 1 Gbit/s, 20 ms RTT: GSO peers {} packets, {:.1} per numbered ACK; plain peers {} packets, {:.1} per ACK",
        gso.packets_received,
        per_ack(&gso),
        plain.packets_received,
        per_ack(&plain)
    );
    assert!(
        gso.packets_received > 3_000 * seconds,
        "the flow did not get going"
    );
    assert!(
        per_ack(&gso) >= 28.0,
        "{:.1} packets per ACK",
        per_ack(&gso)
    );
}

/// Asks for short trains or not, and counts the longest run of packets sent at one instant
/// (one train) from [`TrainWatch::SETTLE`] after the first packet on: in the first few
/// milliseconds the pacer pays back lateness (at most 5 ms of it, at twice the rate) in
/// bursts of its own.
#[derive(Debug)]
struct TrainWatch {
    short: bool,
    first: Option<Instant>,
    run: (Option<Instant>, u32),
    longest: Arc<AtomicU32>,
}

impl TrainWatch {
    const SETTLE: Duration = Duration::from_millis(100);
}

impl Watcher for TrainWatch {
    fn sent(&mut self, now: Instant, _info: &SentInfo) {
        self.run = match self.run {
            (Some(at), n) if at == now => (Some(at), n + 1),
            _ => (Some(now), 1),
        };
        let first = *self.first.get_or_insert(now);
        if now >= first + Self::SETTLE {
            self.longest.fetch_max(self.run.1, Relaxed);
        }
    }
    fn short_trains(&self) -> bool {
        self.short
    }
    fn name(&self) -> &'static str {
        "train-watch"
    }
}

#[derive(Debug)]
struct TrainWatchFactory {
    rate: FixedRateFactory,
    short: bool,
    longest: Arc<AtomicU32>,
}

impl ControllerFactory for TrainWatchFactory {
    fn build(&self) -> Box<dyn Controller> {
        Box::new(Watched {
            inner: self.rate.build(),
            watcher: TrainWatch {
                short: self.short,
                first: None,
                run: (None, 0),
                longest: self.longest.clone(),
            },
        })
    }
    fn name(&self) -> &'static str {
        "train-watch"
    }
}

/// Between GSO peers a 45 Mbit/s flow on a 20 ms path leaves in 16-packet trains, but a
/// controller that asks for short trains (`model` holding beside flows that ignore loss,
/// whose full queue drops a long train's tail) gets the 4-packet trains of a plain peer.
#[test]
fn a_controller_that_asks_for_short_trains_gets_them_between_gso_peers() {
    let longest = |short: bool| {
        let watch = Arc::new(TrainWatchFactory {
            rate: FixedRateFactory::new(45_000_000 / 8),
            short,
            longest: Arc::new(AtomicU32::new(0)),
        });
        let mut sender = ConnectionConfig::default();
        sender.controller(watch.clone());
        let r = bulk_flow(
            1_000_000_000,
            Duration::from_millis(20),
            2,
            Capabilities::GSO,
            sender,
        );
        assert!(r.packets_received > 3_000, "the flow did not get going");
        watch.longest.load(Relaxed)
    };
    let (long, short) = (longest(false), longest(true));
    println!("45 Mbit/s, 20 ms, GSO peers: longest train {long} packets, asked for short {short}");
    assert!(long >= crate::pacer::TRAIN_GSO_MIN_PKTS, "{long} packets");
    assert!(short <= crate::pacer::TRAIN_MIN_PKTS, "{short} packets");
}

/// On a short path the quarter RTT allows only the minimum train, but a flow held to
/// UDT_MAXBW between GSO peers earns longer ones while nothing is lost: capped at
/// 45 Mbit/s on a 1 Gbit/s x 100 µs path whose queues hold 64 packets, it leaves in
/// trains of 19-20 packets (a wake-up and a send per train at each end, not per 4 packets).
/// Where the queue holds one BDP (8 packets) the longer trains' tails are dropped, each loss
/// halves the trains, and the flow keeps its rate and loses little. A flow its controller
/// paces keeps the minimum train there (see `crate::pacer`).
#[test]
fn a_short_path_earns_long_trains_where_its_queue_takes_them() {
    let flow = |queue_pkts: usize, capped: bool| {
        let rate = if capped { 1_000_000_000 } else { 45_000_000 };
        let watch = Arc::new(TrainWatchFactory {
            rate: FixedRateFactory::new(rate / 8),
            short: false,
            longest: Arc::new(AtomicU32::new(0)),
        });
        let mut sender = ConnectionConfig::default();
        sender.controller(watch.clone());
        if capped {
            sender.max_bandwidth(Some(45_000_000 / 8));
        }
        let (rtt, seconds) = (Duration::from_micros(100), 3);
        let r = bulk_flow_queued(
            1_000_000_000,
            rtt,
            queue_pkts * 1500,
            seconds,
            Capabilities::GSO,
            sender,
            ConnectionConfig::default(),
        );
        let share = r.packets_received as f64 * 1500.0 * 8.0 / 45e6 / seconds as f64;
        let lost = r.recv_loss as f64 / r.packets_received.max(1) as f64;
        println!(
            "45 Mbit/s (capped: {capped}), 100 µs, queue {queue_pkts} packets: longest \
             train {}, {:.3} of the rate, {:.3}% lost",
            watch.longest.load(Relaxed),
            share,
            lost * 100.0
        );
        (watch.longest.load(Relaxed), share, lost)
    };
    let (deep, deep_share, deep_lost) = flow(64, true);
    // 19 slots, and a probe pair's partner when one falls in the train.
    assert!((19..=20).contains(&deep), "deep queue: {deep}");
    assert!(
        deep_share > 0.95 && deep_lost == 0.0,
        "{deep_share} {deep_lost}"
    );
    let (paced, _, _) = flow(64, false);
    assert_eq!(
        paced,
        crate::pacer::TRAIN_MIN_PKTS,
        "paced by its controller: {paced}"
    );
    let (_, bdp_share, bdp_lost) = flow(8, true);
    assert!(bdp_share > 0.95, "one-BDP queue: {bdp_share} of the rate");
    assert!(
        bdp_lost < 0.002,
        "one-BDP queue: {:.3}% lost",
        bdp_lost * 100.0
    );
}

/// With more in flight, a prompt ACK between our peers waits for up to 64 packets (half of
/// what the sender has in flight): at 200 Mbit/s and 20 ms, 340 packets are, and each ACK
/// then frees a whole GSO train. The flow must keep its rate: waiting for more packets than
/// are in flight would leave the sender to the 10 ms ACK timer.
#[test]
fn gso_peers_ack_half_what_is_in_flight() {
    let seconds = 3;
    let rtt = Duration::from_millis(20);
    let rate = 200_000_000 / 8;
    let mut sender = ConnectionConfig::default();
    sender.controller(Arc::new(FixedRateFactory::new(rate)));
    let r = bulk_flow(1_000_000_000, rtt, seconds, Capabilities::GSO, sender);
    let per_ack = r.packets_received as f64 / r.acks_sent.max(1) as f64;
    let sent_pkts = (rate * seconds / 1500) as f64;
    println!(
        "200 Mbit/s paced, 20 ms RTT, GSO peers: {} packets of {sent_pkts:.0} paced, {per_ack:.1} per numbered ACK",
        r.packets_received
    );
    assert!(
        r.packets_received as f64 > 0.9 * sent_pkts,
        "the flow fell behind its pace"
    );
    assert!(per_ack >= 56.0, "{per_ack:.1} packets per ACK");
}

/// Between our peers, light ACKs wait for twice the prompt-ACK count. A `model` sender
/// limited by its window sends what each ACK frees at once, the packets arrive bunched, and
/// a light ACK at 4.11's 64 packets went out just ahead of the numbered ACK it anticipated
/// (here 16-20% of all ACKs before; behind a 200 Mbit/s `tbf`, 43%), waking the sender for
/// nothing new.
#[test]
fn gso_peers_send_few_light_acks() {
    for rate in [200_000_000, 1_000_000_000] {
        let mut sender = ConnectionConfig::default();
        sender.controller(Arc::new(ModelFactory::default()));
        let r = bulk_flow(
            rate,
            Duration::from_millis(10),
            4,
            Capabilities::GSO,
            sender,
        );
        println!(
            "{} Mbit/s, 10 ms, model, GSO peers: {} packets, {} numbered and {} light ACKs",
            rate / 1_000_000,
            r.packets_received,
            r.acks_sent,
            r.light_acks_sent
        );
        assert!(
            r.light_acks_sent * 20 <= r.acks_sent,
            "{} light ACKs against {} numbered",
            r.light_acks_sent,
            r.acks_sent
        );
    }
}

/// Once data has flowed for 3 s, a prompt ACK between our peers waits for up to 128 packets:
/// at 200 Mbit/s and 20 ms, half of what is in flight is 166, so ACKs in the first 3 s come
/// every 64 packets and later every 128 or so (in flight permitting), while the flow keeps
/// its pace.
#[test]
fn gso_peers_space_acks_out_once_settled() {
    let rtt = Duration::from_millis(20);
    let rate = 200_000_000 / 8;
    let mut sender = ConnectionConfig::default();
    sender.controller(Arc::new(FixedRateFactory::new(rate)));
    let per_ack = |seconds: u64| {
        let r = bulk_flow(
            1_000_000_000,
            rtt,
            seconds,
            Capabilities::GSO,
            sender.clone(),
        );
        let sent_pkts = (rate * seconds / 1500) as f64;
        assert!(
            r.packets_received as f64 > 0.9 * sent_pkts,
            "{seconds} s: the flow fell behind its pace"
        );
        (r.packets_received, r.acks_sent)
    };
    let (early_pkts, early_acks) = per_ack(3);
    let (all_pkts, all_acks) = per_ack(8);
    let late = (all_pkts - early_pkts) as f64 / all_acks.saturating_sub(early_acks).max(1) as f64;
    let early = early_pkts as f64 / early_acks.max(1) as f64;
    println!("200 Mbit/s paced, 20 ms, GSO peers: {early:.1} packets per ACK in the first 3 s, {late:.1} after");
    assert!(early < 70.0, "{early:.1} packets per ACK before settling");
    assert!(late >= 100.0, "{late:.1} packets per ACK once settled");
}

/// Both sides know the round trip once connected, before any data or ACK2: the caller from
/// its last handshake request, the server from the keep-alive that answers its response,
/// with and without packet protection (sealed, the keep-alive still times it).
/// (4.11 starts at 100 ms and moves an eighth of the way per ACK2; on a 0.06 ms path the
/// model's start-up then paced at 16 packets per 100 ms and sometimes ended there.)
#[test]
fn both_sides_know_the_round_trip_from_the_handshake() {
    let rtt = Duration::from_millis(40);
    let link = || LinkConfig::new().rate_bps(TEN_GBIT).delay(rtt / 2);
    let mut keyed = ConnectionConfig::default();
    keyed.session_key(Some(crate::protect::SessionKey::from_bytes([7; 32])));
    for (config, what) in [(ConnectionConfig::default(), "plain"), (keyed, "protected")] {
        let mut p = Pair::new(link(), link(), config.clone(), 31);
        let (c, s) = p.connect(config);
        p.sim.run_for(rtt * 2);
        for (node, id, side) in [(p.client, c, "caller"), (p.server, s, "server")] {
            let measured = p.sim.conn(node, id).path_stats().rtt;
            assert!(
                measured >= rtt && measured <= rtt + Duration::from_millis(1),
                "{what}, {side}: {measured:?}"
            );
        }
    }
}

/// `model` under UDT_MAXBW, below a faster link on a short path: the cap paces it in earned
/// long trains, which reach the receiver as bursts, and delivery samples taken over
/// them read low (an ACK lands mid-train and the sampler counts only up to the newest
/// marker it passed); read as the path's rate, they pulled the estimate below the cap
/// and the flow to 0.54 of it. Packets the cap paces are application-limited, so such
/// samples only count when they raise the estimate, and the flow keeps its cap.
#[test]
fn model_under_a_rate_cap_keeps_the_cap() {
    let seconds = 3;
    let mut sender = ConnectionConfig::default();
    sender.controller(Arc::new(ModelFactory::default()));
    sender.max_bandwidth(Some(180_000_000 / 8));
    let r = bulk_flow_queued(
        200_000_000,
        Duration::from_micros(40),
        100 * 1500,
        seconds,
        Capabilities::GSO,
        sender,
        ConnectionConfig::default(),
    );
    let share = r.packets_received as f64 * 1500.0 * 8.0 / 180e6 / seconds as f64;
    println!("model capped at 180 Mbit/s on a 200 Mbit/s x 40 µs path: {share:.3} of the cap");
    assert!(share > 0.95, "{share:.3} of the cap");
}

/// A sender held to fewer packets in flight than a prompt ACK between our peers waits for
/// (32 at least) is not left to the 10 ms ACK timer: a window of 24 packets on a 0.2 ms
/// path moved 24 packets per timer tick (2,400 a second) where 4.11-like peers, which ACK
/// every 16 packets a millisecond apart, moved ten times as much. The receiver notices a
/// timer ACK that found fewer packets than it waited for, and waits for half that many
/// from then on.
#[test]
fn gso_peers_ack_a_window_smaller_than_the_prompt_count() {
    let seconds = 2;
    let rtt = Duration::from_micros(200);
    let mut sender = ConnectionConfig::default();
    sender.controller(Arc::new(FixedRateFactory {
        rate_bytes_per_sec: 500_000_000 / 8,
        window_pkts: Some(24),
    }));
    let run = |ext| bulk_flow(1_000_000_000, rtt, seconds, ext, sender.clone());
    let (gso, plain) = (run(Capabilities::GSO), run(Capabilities::NONE));
    let per_s = |r: &ConnectionStats| r.packets_received / seconds;
    println!(
        "24-packet window, 0.2 ms: GSO peers {} packets/s ({} ACKs), plain peers {} packets/s ({} ACKs)",
        per_s(&gso),
        gso.acks_sent,
        per_s(&plain),
        plain.acks_sent
    );
    assert!(
        per_s(&gso) * 2 >= per_s(&plain),
        "GSO peers {} packets/s against {}",
        per_s(&gso),
        per_s(&plain)
    );
}

/// A receive buffer of 32 packets on a 20 µs path (the lab's loopback with `--rcvbuf 48K`):
/// the sender is stopped by the flow window every 32 packets, and only an ACK that moves
/// the window lets it go on. That ACK waited for the prompt-ACK gap (1 ms) or, once the
/// application had read what the last ACK advertised, for the 10 ms ACK timer: 32 Mbit/s on
/// the loopback, 1.2 Gbit/s now. To a GSO peer the receiver ACKs at once a window the
/// sender has used up, and advertises space the application frees while the sender is
/// nearly stopped; 4.11-like peers keep 4.11's rules (printed for comparison).
#[test]
fn a_small_receive_buffer_is_refilled_at_once() {
    let seconds = 2;
    let rate = 500_000_000 / 8;
    let mut sender = ConnectionConfig::default();
    sender.controller(Arc::new(FixedRateFactory::new(rate)));
    let mut receiver = ConnectionConfig::default();
    receiver.recv_buffer_pkts(32).unwrap();
    let rtt = Duration::from_micros(20);
    for (extensions, peers) in [
        (Capabilities::GSO, "GSO"),
        (Capabilities::NONE, "4.11-like"),
    ] {
        let r = bulk_flow_queued(
            1_000_000_000,
            rtt,
            64 * 1500,
            seconds,
            extensions,
            sender.clone(),
            receiver.clone(),
        );
        let share = r.packets_received as f64 * 1500.0 / (rate * seconds) as f64;
        println!(
            "{peers} peers: {share:.3} of 500 Mbit/s through a 32-packet buffer, {} ACKs",
            r.acks_sent
        );
        if extensions == Capabilities::GSO {
            assert!(share > 0.9, "{peers} peers: {share:.3} of the rate");
        }
    }
}

/// Hides from the connection that the wrapped controller sizes its windows for spaced ACKs
/// (a [`Watched`] forwards no such claim): the same controller, acknowledged every SYN.
#[derive(Debug)]
struct Unspaced;

impl Watcher for Unspaced {
    fn name(&self) -> &'static str {
        "unspaced"
    }
}

#[derive(Debug)]
struct UnspacedFactory(ModelFactory);

impl ControllerFactory for UnspacedFactory {
    fn build(&self) -> Box<dyn Controller> {
        Box::new(Watched {
            inner: self.0.build(),
            watcher: Unspaced,
        })
    }
    fn name(&self) -> &'static str {
        "unspaced"
    }
}

/// One `model` flow between GSO peers on a 1 ms path (the veth pair's round trip) at
/// `rate_bps` through queues of `queue_bytes`, for `seconds`: packets received and numbered
/// ACKs sent. `asks`: the controller says it sizes its windows for spaced ACKs (`model`
/// itself), or not (behind [`UnspacedFactory`]).
fn model_flow(rate_bps: u64, queue_bytes: usize, seconds: u64, asks: bool) -> (u64, u64) {
    let mut sender = ConnectionConfig::default();
    if asks {
        sender.controller(Arc::new(ModelFactory::default()));
    } else {
        sender.controller(Arc::new(UnspacedFactory(ModelFactory::default())));
    }
    let rtt = Duration::from_millis(1);
    let (ext, receiver) = (Capabilities::GSO, ConnectionConfig::default());
    let r = bulk_flow_queued(rate_bps, rtt, queue_bytes, seconds, ext, sender, receiver);
    (r.packets_received, r.acks_sent)
}

/// Between our peers, a receiver spaces its ACKs for a sender whose controller sizes its
/// windows for it (`model`): on a 45 Mbit/s link (3,860 packets a second) one ACK per
/// 128 packets would be 33 ms, so two SYNs apart, about 50 a second; and the flow keeps its
/// pace (`congestion::sparse_acks`). The same `model` behind a wrapper that does not say so
/// is acknowledged every 32 packets (prompt ACKs; behind the threaded runtime's holds, at
/// its 10 ms timer). A 128 KiB queue, as the veth pair's `tbf`.
#[test]
fn gso_peers_space_acks_for_a_sender_that_sizes_for_them() {
    let settled = |asks| {
        let run = |seconds| model_flow(45_000_000, 128 << 10, seconds, asks);
        let ((early_pkts, early_acks), (all_pkts, all_acks)) = (run(3), run(8));
        ((all_pkts - early_pkts) / 5, (all_acks - early_acks) / 5)
    };
    let ((pkts, acks), (pkts_syn, acks_syn)) = (settled(true), settled(false));
    println!(
        "model at 45 Mbit/s, 1 ms, GSO peers, seconds 3-8: spaced {pkts} packets/s, {acks} ACKs/s; every SYN {pkts_syn} packets/s, {acks_syn} ACKs/s"
    );
    assert!(acks <= 60, "{acks} ACKs a second, spaced");
    assert!(acks_syn >= 90, "{acks_syn} ACKs a second, every SYN");
    assert!(
        pkts as f64 >= 0.98 * pkts_syn as f64,
        "spaced {pkts} packets a second against {pkts_syn}"
    );
}

/// From about 110 Mbit/s on (9,600 packets a second, which the receiver takes a third
/// faster: 128 packets in 10 ms) a receiver keeps UDT's ACK timing even for a sender that
/// asked for spaced ACKs: a `model` flow at 200 Mbit/s is acknowledged as often, and moves
/// as much, as the same controller that did not ask.
#[test]
fn gso_peers_keep_syn_acks_for_a_fast_sender() {
    let run = |asks| model_flow(200_000_000, 256 << 10, 4, asks);
    let ((pkts, acks), (pkts_syn, acks_syn)) = (run(true), run(false));
    println!(
        "model at 200 Mbit/s, 1 ms, GSO peers, 4 s: asked {pkts} packets, {acks} ACKs; did not ask {pkts_syn} packets, {acks_syn} ACKs"
    );
    assert!(
        acks as f64 >= 0.9 * acks_syn as f64,
        "{acks} ACKs against {acks_syn}"
    );
    assert!(
        pkts as f64 >= 0.98 * pkts_syn as f64,
        "{pkts} packets against {pkts_syn}"
    );
}
