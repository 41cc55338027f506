//! The LEDBAT scavenger in the simulated network: alone it fills the link; when a `native`
//! or `model` flow starts on the same bottleneck it yields within a few round trips, and it
//! takes the capacity back after that flow ends.
//!
//! Virtual-time protocol-behaviour checks (deterministic, seeded) on shares of the link, not
//! performance claims. Print the per-100-ms time series with `--nocapture` and
//! `UDT_SIM_TRACE=1`.

use std::sync::Arc;
use std::time::Duration;

use udt_netsim::{LinkConfig, LossModel};

use super::sim::Sim;
use crate::config::ConnectionConfig;
use crate::congestion::{ControllerFactory, LedbatFactory, ModelFactory, NativeFactory};
use crate::connection::State;
use crate::seq::SocketId;
use crate::time::Instant;

/// The bottleneck: 100 Mbit/s of UDP payload-and-UDT-header bytes (the simulator does not
/// count IP/UDP headers), 50 ms base RTT, a drop-tail queue of one BDP.
const LINK_BPS: u64 = 100_000_000;
const RTT: Duration = Duration::from_millis(50);
/// Goodput is binned this finely.
const BIN: Duration = Duration::from_millis(100);

fn ledbat() -> Arc<dyn ControllerFactory> {
    Arc::new(LedbatFactory::default())
}

/// One bulk flow: its controller (both ends use it) and when its application has data.
#[derive(Clone)]
struct Flow {
    cc: Arc<dyn ControllerFactory>,
    from: Duration,
    until: Duration,
}

impl Flow {
    fn active(&self, t: Duration) -> bool {
        t >= self.from && t < self.until
    }
}

/// Per-flow ends: client node, client socket, server node, accepted socket.
type Ends = (usize, SocketId, usize, Option<SocketId>);

fn bulk_config(cc: &Arc<dyn ControllerFactory>) -> ConnectionConfig {
    let mut c = ConnectionConfig::default();
    c.controller(cc.clone());
    c
}

fn build(sim: &mut Sim, flows: &[Flow], seed: u64) -> Vec<Ends> {
    let queue = LinkConfig::bdp_bytes(LINK_BPS, RTT);
    let shared = sim.add_link(
        LinkConfig::new()
            .rate_bps(LINK_BPS)
            .queue_bytes(queue)
            .loss(LossModel::bernoulli(0.0)),
        seed,
    );
    let mut ends = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        let (client, server) = sim.add_dumbbell_flow(shared, RTT, seed, i as u64);
        sim.listen(server, bulk_config(&f.cc));
        let c = sim.connect(client, server, bulk_config(&f.cc));
        ends.push((client, c, server, None));
    }
    ends
}

/// Fill the send buffers of the flows active at `t` and drain every receiver.
fn pump(sim: &mut Sim, flows: &[Flow], ends: &mut [Ends], t: Duration, got: &mut [u64]) {
    let chunk = [0u8; 64 * 1024];
    let mut rbuf = [0u8; 64 * 1024];
    for (i, (client, c, server, s)) in ends.iter_mut().enumerate() {
        if s.is_none() {
            *s = sim.nodes[*server].accepted.first().copied();
        }
        let now = sim.now;
        let conn = sim.conn(*client, *c);
        if flows[i].active(t) && conn.state() == State::Connected {
            while conn.send_buffer_free() > chunk.len() && conn.send(now, &chunk).is_ok() {}
        }
        if let Some(s) = s {
            let conn = sim.conn(*server, *s);
            while let Ok(n) = conn.recv(&mut rbuf) {
                if n == 0 {
                    break;
                }
                got[i] += n as u64;
            }
        }
    }
}

/// Run `flows` for `seconds`; returns the bytes each flow delivered in each [`BIN`].
fn run(flows: &[Flow], seconds: u64, seed: u64) -> Vec<Vec<u64>> {
    let mut sim = Sim::new();
    let mut ends = build(&mut sim, flows, seed);
    let mut got = vec![0u64; flows.len()];
    let mut bins: Vec<Vec<u64>> = vec![Vec::new(); flows.len()];
    let mut at_bin = got.clone();
    let start = sim.now;
    let mut next_bin = start + BIN;
    let trace = std::env::var_os("UDT_SIM_TRACE").is_some();
    sim.run_until(Duration::from_secs(seconds), |sim| {
        let t = sim.now - start;
        pump(sim, flows, &mut ends, t, &mut got);
        if sim.now >= next_bin {
            next_bin += BIN;
            for (i, bin) in bins.iter_mut().enumerate() {
                bin.push(got[i] - at_bin[i]);
            }
            at_bin.clone_from(&got);
            if trace {
                trace_flows(sim, &ends, start);
            }
        }
        sim.app_wake = Some(next_bin);
        false
    });
    bins
}

fn trace_flows(sim: &mut Sim, ends: &[Ends], start: Instant) {
    let t = (sim.now - start).as_secs_f64();
    for (i, (client, c, _, _)) in ends.iter().enumerate() {
        let conn = sim.conn(*client, *c);
        let p = conn.path_stats();
        println!(
            "t={t:.1} flow {i}: cwnd={:.0} flight={} rtt={:?} loss={}",
            p.congestion_window_pkts,
            p.flight_pkts,
            p.rtt,
            conn.stats().send_loss
        );
    }
}

/// A flow's share of the link's capacity over `[from, until)`.
fn share(bins: &[u64], from: Duration, until: Duration) -> f64 {
    let (a, b) = (bin_index(from), bin_index(until).min(bins.len()));
    let bytes: u64 = bins[a..b].iter().sum();
    bytes as f64 * 8.0 / (LINK_BPS as f64 * (until - from).as_secs_f64())
}

fn bin_index(t: Duration) -> usize {
    (t.as_nanos() / BIN.as_nanos()) as usize
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// Alone on the link it takes most of it, from a cold start.
#[test]
fn ledbat_alone_fills_most_of_100mbit_50ms() {
    let flow = Flow {
        cc: ledbat(),
        from: Duration::ZERO,
        until: secs(20),
    };
    let bins = run(&[flow], 12, 1);
    let util = share(&bins[0], secs(2), secs(12));
    println!(
        "ledbat alone, 100 Mbit/s 50 ms: {:.1}% of the link",
        util * 100.0
    );
    assert!(util >= 0.85, "utilisation {util:.3}");
}

/// When the flow `other` starts beside a scavenger at [`OTHER_FROM`], how the two fare,
/// against `other` alone in the same schedule.
struct Yield {
    /// The scavenger's share before the other flow starts, once it runs, and after it ends.
    before: f64,
    during: f64,
    after: f64,
    /// The other flow's delivery while it runs, beside the scavenger over alone.
    other_kept: f64,
    /// The same over its first second.
    other_kept_first: f64,
    /// How long after the other flow started until the scavenger took, in every second
    /// from then on, no more than the other flow leaves idle (see [`yield_time`]).
    yield_time: Option<Duration>,
}

const OTHER_FROM: Duration = Duration::from_secs(6);
const OTHER_UNTIL: Duration = Duration::from_secs(16);
const YIELD_SECONDS: u64 = 22;
/// How much more than the idle capacity counts as yielded: a tenth of the link.
const YIELD_SLACK: f64 = 0.1;

fn beside(other: &Arc<dyn ControllerFactory>, seed: u64) -> Yield {
    let scavenger = Flow {
        cc: ledbat(),
        from: Duration::ZERO,
        until: secs(YIELD_SECONDS),
    };
    let other = Flow {
        cc: other.clone(),
        from: OTHER_FROM,
        until: OTHER_UNTIL,
    };
    let alone = run(std::slice::from_ref(&other), YIELD_SECONDS, seed);
    let both = run(&[scavenger, other], YIELD_SECONDS, seed);
    if std::env::var_os("UDT_SIM_TRACE").is_some() {
        for (i, (a, b)) in both[0].iter().zip(&both[1]).enumerate() {
            println!(
                "{:.1}s ledbat {a} other {b} alone {}",
                i as f64 / 10.0,
                alone[0][i]
            );
        }
    }
    let during = (OTHER_FROM, OTHER_UNTIL);
    Yield {
        before: share(&both[0], secs(3), OTHER_FROM),
        during: share(&both[0], OTHER_FROM + secs(4), OTHER_UNTIL),
        after: share(&both[0], OTHER_UNTIL + secs(2), secs(YIELD_SECONDS)),
        other_kept: share(&both[1], during.0, during.1) / share(&alone[0], during.0, during.1),
        other_kept_first: share(&both[1], during.0, during.0 + secs(1))
            / share(&alone[0], during.0, during.0 + secs(1)),
        yield_time: yield_time(&both[0], &alone[0]),
    }
}

/// See [`Yield::yield_time`]: from then on, in every second the scavenger takes at
/// most what the other flow leaves idle when alone, plus [`YIELD_SLACK`] of the link.
fn yield_time(scavenger: &[u64], alone: &[u64]) -> Option<Duration> {
    let second = Duration::from_secs(1);
    let (first, last) = (bin_index(OTHER_FROM), bin_index(OTHER_UNTIL - second));
    let yields = |i: usize| {
        let t = BIN * i as u32;
        share(scavenger, t, t + second) <= 1.0 - share(alone, t, t + second) + YIELD_SLACK
    };
    let mut since = None;
    for i in first..=last {
        match (yields(i), since) {
            (true, None) => since = Some(i),
            (false, Some(_)) => since = None,
            _ => {}
        }
    }
    since.map(|i| (BIN * i as u32).saturating_sub(OTHER_FROM))
}

/// Beside a competing flow that runs from 6 s to 16 s, LEDBAT gives way and keeps a small
/// share, and once the other ends it takes the link back.
///
/// Against `native` (loss-based: it fills the queue) the yield is as fast as native's own
/// ramp allows: from about 12 round trips after it starts, LEDBAT takes no more than what
/// native alone would leave idle. Against `model` (BBR-like: it keeps almost no queue) the
/// delay signal only sees model's 1.25× probes, so LEDBAT is pushed down over seconds,
/// not round trips: it ends with a small share, but model gets only about three quarters of
/// what it gets alone over the ten seconds. That is asserted as such, not hidden.
#[test]
fn ledbat_yields_to_native_and_model_and_takes_the_link_back() {
    let native: Arc<dyn ControllerFactory> = Arc::new(NativeFactory::default());
    let model: Arc<dyn ControllerFactory> = Arc::new(ModelFactory::default());
    // (name, controller, seeds, most LEDBAT may take while it runs, least the other keeps of
    // its alone delivery, longest median yield time). The yield time beside native is
    // bimodal over seeds (0.6 s in four of seeds 2-7, 3.3 s in two), so its median over five
    // seeds is what is asserted, with every seed within 5 s. Model kept 85-88% with LEDBAT
    // at 6-7% over seeds 3-7.
    let cases = [
        ("native", native, 2..=6u64, 0.15, 0.85, Some(RTT * 20)),
        ("model", model, 2..=2u64, 0.2, 0.7, None),
    ];
    for (name, cc, seeds, most, least_kept, longest) in cases {
        let mut times = Vec::new();
        for seed in seeds {
            let y = beside(&cc, seed);
            println!(
                "ledbat beside {name}, seed {seed}: ledbat before {:.1}%, during {:.1}%, after \
                 {:.1}% of the link; {name} kept {:.1}% of its alone delivery ({:.1}% in its \
                 first second), yield time {:?}",
                y.before * 100.0,
                y.during * 100.0,
                y.after * 100.0,
                y.other_kept * 100.0,
                y.other_kept_first * 100.0,
                y.yield_time,
            );
            assert!(y.before >= 0.9, "{name}: before {:.3}", y.before);
            assert!(y.during <= most, "{name}: during {:.3}", y.during);
            assert!(y.after >= 0.8, "{name}: after {:.3}", y.after);
            assert!(
                y.other_kept >= least_kept,
                "{name}: kept {:.3}",
                y.other_kept
            );
            times.push(y.yield_time.unwrap_or(Duration::MAX));
        }
        if let Some(longest) = longest {
            times.sort();
            let median = times[times.len() / 2];
            assert!(median <= longest, "{name}: yield times {times:?}");
            assert!(
                times.iter().all(|t| *t <= secs(5)),
                "{name}: yield times {times:?}"
            );
        }
    }
}

/// Two scavengers: one from the start, one from 6 s to 16 s. The later one is not starved
/// (a ramp that stopped at 3/4 of the target after each slowdown once left it 3% of the
/// link), though LEDBAT's additive increase evens the two out only slowly: reported, with
/// the later flow's share asserted to be at least a third of the earlier one's.
#[test]
fn a_later_ledbat_flow_is_not_starved() {
    let first = Flow {
        cc: ledbat(),
        from: Duration::ZERO,
        until: secs(YIELD_SECONDS),
    };
    let second = Flow {
        cc: ledbat(),
        from: OTHER_FROM,
        until: OTHER_UNTIL,
    };
    let bins = run(&[first, second], OTHER_UNTIL.as_secs(), 3);
    let from = OTHER_FROM + secs(3);
    let (a, b) = (
        share(&bins[0], from, OTHER_UNTIL),
        share(&bins[1], from, OTHER_UNTIL),
    );
    println!(
        "two ledbat flows, the second from 6 s: {:.1}% and {:.1}% of the link in seconds 9-16",
        a * 100.0,
        b * 100.0
    );
    assert!(a + b >= 0.85, "together {:.3}", a + b);
    assert!(b >= a / 3.0, "later flow {b:.3} beside {a:.3}");
}
