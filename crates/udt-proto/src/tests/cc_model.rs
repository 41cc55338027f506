//! The model-based controller beside UDT's native one in the simulated network: utilisation
//! under random loss, fairness among its own flows, sharing with native flows, and how much
//! queue each keeps.
//!
//! Like `throughput.rs` these are virtual-time protocol-behaviour checks (deterministic,
//! seeded), not performance claims. Tables print with `--nocapture`; the model's utilisation
//! grid is snapshotted as a regression guard (native's column is printed beside it, but only
//! `throughput.rs` snapshots native). The long grid is `#[ignore]`d; run everything with
//! `cargo test -p udt-proto --release cc_model -- --include-ignored --nocapture`.

use std::sync::Arc;
use std::time::Duration;

use udt_netsim::{LinkConfig, LossModel};

use super::sim::{HostStalls, Pair, Sim, LAB_HOSTS};
use crate::config::ConnectionConfig;
use crate::congestion::{ControllerFactory, CubicFactory, ModelFactory, NativeFactory};
use crate::connection::State;
use crate::seq::SocketId;

/// IP + UDP header bytes the simulator does not count, so a "1 Gbit/s" link carries what a
/// 1 Gbit/s Ethernet path would (as in `throughput.rs`).
const WIRE_OVERHEAD: u64 = 28;
const FULL_DATAGRAM: u64 = 1472;
/// How often the queue and the RTTs are sampled.
const SAMPLE_EVERY: Duration = Duration::from_millis(1);

fn datagram_rate(wire_bps: u64) -> u64 {
    wire_bps * FULL_DATAGRAM / (FULL_DATAGRAM + WIRE_OVERHEAD)
}

fn native() -> Arc<dyn ControllerFactory> {
    Arc::new(NativeFactory::default())
}

/// UDT's CUBIC window (`--cc cubic`): the loss-based reference, and what the default model
/// competes as when it takes its competitors for loss-based flows.
fn cubic() -> Arc<dyn ControllerFactory> {
    Arc::new(CubicFactory::default())
}

fn model() -> Arc<dyn ControllerFactory> {
    Arc::new(ModelFactory::default())
}

/// The model with the competition mode off, so the fair-share rule
/// (`congestion/model/share.rs`) acts all the time: the rule holds model flows to one
/// another, but lowers the model below an equal share beside loss-based flows, so the default
/// (mode on) lets it act only while the competition detector has nothing to say.
fn model_sharing() -> Arc<dyn ControllerFactory> {
    let mut factory = ModelFactory::default();
    factory.config.tcp_friendly(false);
    Arc::new(factory)
}

/// One bulk flow: its base RTT and its controller (both ends use it).
#[derive(Clone)]
struct Flow {
    rtt: Duration,
    cc: Arc<dyn ControllerFactory>,
    buffers: Buffers,
}

/// How a flow's buffers are sized.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Buffers {
    /// 40,000 packets each, set explicitly (as a user who knows the BDP would).
    Tuned,
    /// Left at the defaults: autotuned.
    Default,
    /// 4.11's fixed defaults (autotuning off).
    Fixed,
}

fn flows(cc: &Arc<dyn ControllerFactory>, rtts_ms: &[u64]) -> Vec<Flow> {
    rtts_ms
        .iter()
        .map(|&ms| Flow {
            rtt: Duration::from_millis(ms),
            cc: cc.clone(),
            buffers: Buffers::Tuned,
        })
        .collect()
}

/// The shared bottleneck: rate, random loss, drop-tail queue of one BDP at `queue_rtt`.
#[derive(Clone, Copy)]
struct Link {
    wire_bps: u64,
    loss: f64,
    queue_rtt: Duration,
}

/// The bottleneck of the RTT-fairness pairs: 200 Mbit/s, no random loss, a queue of one
/// BDP of the longer (200 ms) path.
const PAIR_LINK: Link = Link {
    wire_bps: 200_000_000,
    loss: 0.0,
    queue_rtt: Duration::from_millis(200),
};

/// What a run measured over its measurement window [from, seconds).
struct Outcome {
    /// Mean goodput per flow, bits per second.
    goodput_bps: Vec<f64>,
    /// Mean queueing delay at the bottleneck.
    queue_delay: Duration,
    /// Mean smoothed RTT of each flow's sender over its base RTT, minus 1.
    rtt_inflation: Vec<f64>,
}

impl Outcome {
    fn total_bps(&self) -> f64 {
        self.goodput_bps.iter().sum()
    }
}

fn bulk_config(flow: &Flow) -> ConnectionConfig {
    let mut c = ConnectionConfig::default();
    match flow.buffers {
        // Tuned buffers: above the BDP of 1 Gbit/s × 200 ms (16,700 packets) plus the queue.
        Buffers::Tuned => {
            c.recv_buffer_pkts(40_000).unwrap();
            c.send_buffer_pkts(40_000).unwrap();
            c.flow_control_pkts(40_000).unwrap();
        }
        Buffers::Default => {}
        Buffers::Fixed => {
            c.buffer_autotune_limit(None);
        }
    }
    c.controller(flow.cc.clone());
    c
}

/// Per-flow ends: client node, client socket, server node, accepted socket.
type Ends = (usize, SocketId, usize, Option<SocketId>);

/// The shared link and each flow's ends, whose hosts stall as `stalls` says.
fn build(
    sim: &mut Sim,
    flows: &[Flow],
    link: Link,
    seed: u64,
    stalls: Option<HostStalls>,
) -> (usize, Vec<Ends>) {
    let rate = datagram_rate(link.wire_bps);
    let queue = LinkConfig::bdp_bytes(rate, link.queue_rtt).max(64 * 1500);
    let shared = sim.add_link(
        LinkConfig::new()
            .rate_bps(rate)
            .queue_bytes(queue)
            .loss(LossModel::bernoulli(link.loss)),
        seed,
    );
    let mut ends = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        let (client, server) = sim.add_dumbbell_flow(shared, f.rtt, seed, i as u64);
        if let Some(stalls) = stalls {
            sim.stall_hosts((client, server), stalls, seed, i as u64);
        }
        sim.listen(server, bulk_config(f));
        let c = sim.connect(client, server, bulk_config(f));
        ends.push((client, c, server, None));
    }
    (shared, ends)
}

/// Keep every sender's buffer full and drain every receiver; returns bytes read per flow. A
/// connection is taken to act on only when there is something to do (see `Sim::peek`).
fn pump(sim: &mut Sim, ends: &mut [Ends], chunk: &[u8], rbuf: &mut [u8], got: &mut [u64]) {
    pump_from(sim, ends, &[], chunk, rbuf, got);
}

/// [`pump`], each flow's writer idle until its time in `starts` (a flow not in it writes at
/// once).
fn pump_from(
    sim: &mut Sim,
    ends: &mut [Ends],
    starts: &[crate::time::Instant],
    chunk: &[u8],
    rbuf: &mut [u8],
    got: &mut [u64],
) {
    for (i, (client, c, server, s)) in ends.iter_mut().enumerate() {
        if s.is_none() {
            *s = sim.nodes[*server].accepted.first().copied();
        }
        let now = sim.now;
        let started = starts.get(i).is_none_or(|&at| now >= at);
        let sender = sim.peek(*client, *c);
        if started
            && sender.state() == State::Connected
            && sender.send_buffer_free() > chunk.len() / 2
        {
            let conn = sim.conn(*client, *c);
            while conn.send_buffer_free() > chunk.len() / 2 {
                if conn.send(now, chunk).is_err() {
                    break;
                }
            }
        }
        if let Some(s) = s {
            got[i] += sim.read_all(*server, *s, rbuf);
        }
    }
}

/// Run bulk `flows` over `link` for `seconds`, measuring from second `from` on.
fn run(flows: &[Flow], link: Link, seconds: u64, from: u64, seed: u64) -> Outcome {
    run_on_hosts(flows, link, None, seconds, from, seed)
}

/// [`run`] with both ends of every flow stalling as `stalls` says.
fn run_on_hosts(
    flows: &[Flow],
    link: Link,
    stalls: Option<HostStalls>,
    seconds: u64,
    from: u64,
    seed: u64,
) -> Outcome {
    run_staggered(flows, &[], link, stalls, seconds, from, seed)
}

/// [`run_on_hosts`] with flow `i` writing its first byte `starts_s[i]` seconds in (flows
/// past the slice's end at once): latecomers.
fn run_staggered(
    flows: &[Flow],
    starts_s: &[u64],
    link: Link,
    stalls: Option<HostStalls>,
    seconds: u64,
    from: u64,
    seed: u64,
) -> Outcome {
    let mut sim = Sim::new();
    let (shared, mut ends) = build(&mut sim, flows, link, seed, stalls);
    let starts: Vec<_> = starts_s
        .iter()
        .map(|&s| sim.now + Duration::from_secs(s))
        .collect();
    let chunk = vec![0u8; 256 * 1024];
    let mut rbuf = vec![0u8; 1 << 20];
    let mut got = vec![0u64; flows.len()];
    let mut at_from = vec![0u64; flows.len()];
    let start = sim.now;
    let measure_from = start + Duration::from_secs(from);
    let mut next_sample = measure_from;
    let (mut queue_sum, mut samples) = (0.0f64, 0u64);
    let mut rtt_sum = vec![0.0f64; flows.len()];
    let rate = datagram_rate(link.wire_bps) as f64;
    let trace = std::env::var_os("UDT_SIM_TRACE").is_some();
    let mut next_trace = start;
    sim.run_until(Duration::from_secs(seconds), |sim| {
        if sim.now < measure_from {
            at_from.clone_from(&got);
        }
        pump_from(sim, &mut ends, &starts, &chunk, &mut rbuf, &mut got);
        if trace && sim.now >= next_trace {
            next_trace += Duration::from_millis(100);
            trace_flows(sim, &ends, start, &got);
        }
        if sim.now >= next_sample {
            next_sample += SAMPLE_EVERY;
            samples += 1;
            queue_sum += sim.queued_bytes(shared) as f64 * 8.0 / rate;
            for (i, (client, c, _, _)) in ends.iter().enumerate() {
                let rtt = sim.conn(*client, *c).path_stats().rtt.as_secs_f64();
                rtt_sum[i] += rtt / flows[i].rtt.as_secs_f64() - 1.0;
            }
        }
        sim.app_wake = Some(if trace {
            next_sample.min(next_trace)
        } else {
            next_sample
        });
        false
    });
    let span = (seconds - from) as f64;
    let n = samples.max(1) as f64;
    Outcome {
        goodput_bps: (0..flows.len())
            .map(|i| (got[i] - at_from[i]) as f64 * 8.0 / span)
            .collect(),
        queue_delay: Duration::from_secs_f64(queue_sum / n),
        rtt_inflation: rtt_sum.iter().map(|s| s / n).collect(),
    }
}

/// `UDT_SIM_TRACE=1`: each flow's sender state every 100 ms. The trace wakes the simulated
/// application every 100 ms, which moves the timing of everything after, so a traced run is
/// a different run of the scenario (one 20/200 ms pair read a ratio of 3.47 traced, 1.85
/// not): trace to see how a run behaves, not to read its figures.
fn trace_flows(sim: &mut Sim, ends: &[Ends], start: crate::time::Instant, got: &[u64]) {
    let t = (sim.now - start).as_secs_f64();
    for (i, (client, c, _, _)) in ends.iter().enumerate() {
        let conn = sim.conn(*client, *c);
        let p = conn.path_stats();
        let st = conn.stats();
        println!(
            "t={t:.1} flow {i}: rate={:.0}pps cwnd={} flight={} rtt={:?} loss={} retx={} \
             timeouts={} got={}MB",
            1.0 / p.send_period.as_secs_f64(),
            p.congestion_window_pkts,
            p.flight_pkts,
            p.rtt,
            st.send_loss,
            st.retransmitted,
            st.timeouts,
            got[i] >> 20
        );
    }
}

/// Jain's fairness index.
fn jain(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    sum * sum / (x.len() as f64 * sq)
}

fn gig(loss: f64, rtt_ms: u64) -> Link {
    Link {
        wire_bps: 1_000_000_000,
        loss,
        queue_rtt: Duration::from_millis(rtt_ms),
    }
}

fn mbits(x: &[f64]) -> Vec<f64> {
    x.iter().map(|v| (v / 1e5).round() / 10.0).collect()
}

/// The acceptance targets: >= 90% of 1 Gbit/s at 100 ms with no loss, >= 80% at 1% random
/// loss (native UDT reaches about 2% there).
#[test]
fn model_fills_1gbit_100ms_with_and_without_random_loss() {
    for (loss, want) in [(0.0, 0.90), (0.01, 0.80)] {
        let out = run(&flows(&model(), &[100]), gig(loss, 100), 20, 5, 1);
        let util = out.total_bps() / datagram_rate(1_000_000_000) as f64;
        println!(
            "model, 1 Gbit/s 100 ms, loss {:.2}%: utilisation {:.1}%, queue delay {:.2?}",
            loss * 100.0,
            util * 100.0,
            out.queue_delay
        );
        assert!(util >= want, "loss {loss}: utilisation {util:.3}");
    }
}

/// Issue 12: a user who sets no buffer options gets what one who sized them for the path
/// gets. 4.11's fixed 8192 packets cap a window at about 480 Mbit/s at 200 ms (the check
/// that this test can fail); autotuned buffers grow to what the path needs.
///
/// Medians of three seeds: one flow under random loss is chaotic (a lost retransmission
/// stalls it for a round trip or two), and single seeds of either kind spread over 82-96%.
/// Over seeds 1-8, autotuned buffers averaged 91.1% and tuned ones 88.5%, but seed 7 alone
/// read 86.7 against 92.7.
#[test]
fn default_buffers_grow_to_fill_a_long_fat_path() {
    let util: Vec<f64> = [Buffers::Fixed, Buffers::Default, Buffers::Tuned]
        .into_iter()
        .map(|buffers| median_utilisation(buffers, 200, 0.001))
        .collect();
    let [fixed, auto, tuned] = util[..] else {
        unreachable!()
    };
    assert!(fixed < 0.5, "4.11's buffers: {fixed:.3}");
    assert!(
        auto >= 0.95 * tuned,
        "autotuned {auto:.3} against tuned {tuned:.3}"
    );
}

/// At 1% random loss the cumulative ACK stands still behind a hole most of the time, and a
/// hole whose retransmission is lost too holds it for another round trip: an autotuned
/// receive buffer of two spans of RTT + SYN at the arrival speed held `model` by its flow
/// window at 1 Gbit/s × 100 ms (74.2% of the link against 91.8% with tuned buffers; three
/// spans 89.5%). The autotuned buffers keep up with buffers tuned by hand (40,000 packets),
/// medians of three seeds over seconds 4-14.
#[test]
fn default_buffers_hold_a_lossy_long_path() {
    let auto = median_utilisation(Buffers::Default, 100, 0.01);
    let tuned = median_utilisation(Buffers::Tuned, 100, 0.01);
    assert!(
        auto >= 0.95 * tuned,
        "autotuned {auto:.3} against tuned {tuned:.3}"
    );
}

/// One `model` flow alone at 1 Gbit/s with `buffers`, `rtt_ms` and `loss`: the median link
/// utilisation of seeds 5-7 over seconds 4-14 (one flow under random loss is chaotic).
fn median_utilisation(buffers: Buffers, rtt_ms: u64, loss: f64) -> f64 {
    let mut runs: Vec<f64> = [5, 6, 7]
        .into_iter()
        .map(|seed| {
            let flow = Flow {
                rtt: Duration::from_millis(rtt_ms),
                cc: model(),
                buffers,
            };
            run(&[flow], gig(loss, rtt_ms), 14, 4, seed).total_bps() / 1e9
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    println!(
        "model, 1 Gbit/s {rtt_ms} ms, {}% loss, {buffers:?} buffers: utilisation {:.1?}%",
        loss * 100.0,
        runs.iter().map(|u| u * 100.0).collect::<Vec<_>>()
    );
    runs[1]
}

/// Utilisation of one flow over RTT × random loss at 1 Gbit/s with a BDP queue, model beside
/// native; the model's column is snapshotted.
#[test]
#[ignore = "32 runs of 1 Gbit/s for 20 virtual seconds; run in release"]
fn loss_by_rtt_table_model_vs_native() {
    let mut table = String::from("rtt_ms  loss%   model%  (1 Gbit/s, BDP queue, seconds 5-20)\n");
    let mut both = String::from("rtt_ms  loss%   native%  model%\n");
    for rtt_ms in [10u64, 50, 100, 200] {
        for loss in [0.0, 0.0001, 0.001, 0.01] {
            let seed = 40 + rtt_ms;
            let util = |cc| run(&flows(&cc, &[rtt_ms]), gig(loss, rtt_ms), 20, 5, seed);
            let m = util(model()).total_bps() / 1e7;
            let n = util(native()).total_bps() / 1e7;
            let pct = loss * 100.0;
            table.push_str(&format!("{rtt_ms:>6}  {pct:>5.2}  {m:>6.1}\n"));
            both.push_str(&format!("{rtt_ms:>6}  {pct:>5.2}  {n:>7.1}  {m:>6.1}\n"));
        }
    }
    println!("{both}");
    insta::assert_snapshot!(table);
}

/// σ/μ of `x` (population σ): 0 is an even split.
fn cov(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    var.sqrt() / mean
}

/// 2, 4 and 8 model flows with the same RTT share a 200 Mbit/s, 50 ms bottleneck fairly (with
/// the fair-share rule; the default is held to a looser bar, and its eight flows to the
/// median of eight CUBIC flows on the same seeds): the median σ/μ of five seeds at most
/// [`SAME_RTT_COV`] (issue 12's bar is 5%; see the constant).
///
/// The median, because one seed's σ/μ moves a lot with any change to the timing of ACKs or
/// arrival reports: over 14 seeds each, two flows read 0.003-0.111 before the arrival speed
/// kept fractions of a microsecond and 0.001-0.131 after, with medians of 0.042 and
/// 0.037, and the single seed this test used went from 0.026 to 0.125. Five seeds since
/// stream writes fill up an unsent tail packet (which changes every packet's size after a
/// write's end): seeds 1-20 read medians 0.041 before and 0.044 after for two flows, 0.054
/// and 0.072 for four (means 0.046 / 0.050 and 0.069 / 0.073), but this test's first three
/// seeds for two flows went from a median under 0.1 to 0.126 (0.068, 0.126, 0.183).
#[test]
fn model_flows_share_fairly() {
    let link = Link {
        wire_bps: 200_000_000,
        loss: 0.0,
        queue_rtt: Duration::from_millis(50),
    };
    let mut default_eight = None;
    for (name, cc, bar) in [
        ("model (sharing)", model_sharing(), SAME_RTT_COV),
        ("model (default)", model(), DEFAULT_SAME_RTT_COV),
    ] {
        for n in [2usize, 4, 8] {
            let (median, covs) = median_cov(name, &cc, n, link);
            assert!(
                median <= bar,
                "{name}, {n} flows: median σ/μ {median:.3} of {covs:.3?}"
            );
            if name == "model (default)" && n == 8 {
                default_eight = Some(median);
            }
        }
    }
    // The reference: the loss-based flow the default competes as once eight of them have
    // overflowed the queue (see `DEFAULT_SAME_RTT_COV`), eight of them on the same seeds.
    let (cubic_eight, covs) = median_cov("cubic (reference)", &cubic(), 8, link);
    let default_eight = default_eight.expect("the default ran eight flows");
    assert!(
        default_eight <= cubic_eight,
        "8 default model flows: median σ/μ {default_eight:.3}, above 8 cubic flows' \
         {cubic_eight:.3} of {covs:.3?}"
    );
}

/// The median σ/μ (and each seed's, sorted) of `n` flows of `cc` at 50 ms through `link`,
/// over the five seeds [`model_flows_share_fairly`] gives `n` flows; each run printed.
fn median_cov(
    name: &str,
    cc: &Arc<dyn ControllerFactory>,
    n: usize,
    link: Link,
) -> (f64, Vec<f64>) {
    let mut covs = Vec::new();
    for seed in [10, 20, 30, 40, 50].map(|s| s + n as u64) {
        let out = run(&flows(cc, &vec![50; n]), link, 40, 20, seed);
        let c = cov(&out.goodput_bps);
        println!(
            "{name}, {n} flows, seed {seed}, 200 Mbit/s 50 ms: Mbit/s {:?} Jain {:.3}, \
             σ/μ {c:.3}, utilisation {:.1}%, queue delay {:.2?}",
            mbits(&out.goodput_bps),
            jain(&out.goodput_bps),
            out.total_bps() / 2e6,
            out.queue_delay
        );
        covs.push(c);
    }
    covs.sort_by(f64::total_cmp);
    (covs[covs.len() / 2], covs)
}

/// The default model's bar in [`model_flows_share_fairly`]: with the competition mode on the
/// fair-share rule acts only while the competition detector has nothing to say, and flows
/// that overflowed the queue compete among themselves as CUBIC flows (σ/μ 0.12 for four
/// flows in the merge that made both; 0.28 before either; medians 0.003, 0.072 and 0.099
/// for 2, 4 and 8 flows since the rule acts with the mode on, against 0.037, 0.120 and
/// 0.169 just before; 0.020, 0.036 and 0.099 since start-up's overshoot costs no back-off,
/// which also took the default's 20/200 ms pair of [`rtt_fairness_20_vs_200ms`] from 1.97
/// to 1.44; 0.027, 0.039 and 0.156, and the pair 1.85, in session 39, after changes to the
/// competition's entries and exits; 0.016, 0.035 and 0.175, and the pair 0.72, once the
/// sampler timed ACK spans by the receiver's stamps). Issue 12's 5% is met with 2 and 4
/// flows, not with 8 (0.177 in session 72). Traced there (seed 18): all eight enter the
/// competition within 23 ms of one loss with the queue full, all try the rate-based model
/// together 10 s later and find the queue empty, and all compete again 0.78 s after it, when
/// their estimates, each the highest of its delivery samples and together 5-15% over the link,
/// have refilled the queue while the fair-share rule rests after a trial: CUBIC flows for 92%
/// of the measured seconds. Eight flows of UDT's CUBIC itself on the same seeds read
/// 0.246-0.301 (median 0.277), so the test also holds the default to CUBIC's median: no less
/// fair among its own than the loss-based flow it competes as.
///
/// A guard against regressions, not a goal: over 45 seeds four default flows read σ/μ
/// 0.046-0.372 (median 0.108, 6 runs above 0.2) before the arrival speed kept fractions of a
/// microsecond and 0.026-0.394 (median 0.118, 10 above 0.2) after; this test's three seeds
/// gave 0.157 and then 0.215 as their median (of five now: see the test).
const DEFAULT_SAME_RTT_COV: f64 = 0.25;

/// The bar of [`model_flows_share_fairly`]. Issue 12 asks for 5%; the fair-share rule
/// (`congestion/model/share.rs`) brought 2, 4 and 8 flows from σ/μ 0.029, 0.277 and 0.198 to
/// 0.040, 0.061 and 0.037 with this test's seeds, and over the nine runs of
/// [`model_fairness_over_seeds`] from 0.003-0.354 to 0.018-0.101, so 5% is not met in every
/// run yet (the heavy test holds its worst run to 1.5 times this bar).
const SAME_RTT_COV: f64 = 0.1;

/// The heavy variant of [`model_flows_share_fairly`] and [`rtt_fairness_20_vs_200ms`]: 2, 4 and
/// 8 flows with three seeds each, and the 20 ms against 200 ms pair with four seeds (σ/μ and
/// ratios printed; the worst σ/μ and the median ratio held to the bars).
#[test]
#[ignore = "9 same-RTT runs and 4 RTT pairs of 40-60 virtual seconds; run in release"]
fn model_fairness_over_seeds() {
    let link = Link {
        wire_bps: 200_000_000,
        loss: 0.0,
        queue_rtt: Duration::from_millis(50),
    };
    let mut worst: f64 = 0.0;
    for n in [2usize, 4, 8] {
        for seed in 100..103u64 {
            let out = run(&flows(&model_sharing(), &vec![50; n]), link, 40, 20, seed);
            let c = cov(&out.goodput_bps);
            worst = worst.max(c);
            println!(
                "{n} flows, seed {seed}: σ/μ {c:.3}, utilisation {:.1}%, queue delay {:.2?}",
                out.total_bps() / 2e6,
                out.queue_delay
            );
        }
    }
    let long = Link {
        queue_rtt: Duration::from_millis(200),
        ..link
    };
    let mut ratios = Vec::new();
    for seed in [30, 100, 101, 102] {
        let g = run(&flows(&model_sharing(), &[20, 200]), long, 60, 30, seed).goodput_bps;
        ratios.push(g[0] / g[1]);
    }
    println!("worst σ/μ {worst:.3}; 20 vs 200 ms ratios {ratios:.2?}");
    assert!(worst <= 1.5 * SAME_RTT_COV, "worst σ/μ {worst:.3}");
    // The median pair within the bar, and none back at the 2.1 of before the fair-share
    // rule: over 26 seeds the ratio read 0.97-1.50 (median 1.15) before the arrival speed
    // kept fractions of a microsecond and 0.93-1.83 (median 1.19, one above 1.55) after.
    let mut sorted = ratios.clone();
    sorted.sort_by(f64::total_cmp);
    let median = (sorted[1] + sorted[2]) / 2.0;
    assert!(within_rtt_bar(median), "median of {ratios:.2?}");
    assert!(
        ratios.iter().all(|r| (0.5..=2.0).contains(r)),
        "{ratios:.2?}"
    );
}

/// Issue 12, open: two `model` flows on a 1 Gbit/s × 50 ms bottleneck (a one-BDP queue),
/// seconds 5-20 of 20, seeds 1-10, through quiet hosts and through hosts that stall as the
/// lab's do ([`LAB_HOSTS`]). In the lab such pairs read σ/μ 0.002-0.579 over 22 runs
/// (median 0.118) where two kernel BBR or two kernel CUBIC flows each took 0.99-1.00 of an
/// equal share (the BBR pair at its 4 MiB buffer ceiling; tuned, 0.98-1.02: session 76). With the fair-share rule's target at `α / d` alone, quiet hosts here gave a
/// median of 0.054 (0.002-0.118) and stalled hosts 0.176 (0.095-0.375), the lab's drift,
/// which the quiet simulator hides; the stalls that matter are the senders' (receivers
/// alone: 0.050, senders alone: 0.161). The rule's `K / d²` on short queues (session 75)
/// took the lab's pair to 0.082 against 0.267 (twelve runs each, paired), but here it reads
/// 0.048 and 0.181 with the default `K` (0.25), 0.018 and 0.105 with `K` = 0.5, which did no
/// better in the lab: the simulator's stalls do not stand for the lab in that choice. The
/// bar guards against regressions; issue 12 asks for 0.05.
#[test]
#[ignore = "20 runs of two flows at 1 Gbit/s for 20 virtual seconds; run in release"]
fn two_flows_at_1gbit_on_stalled_hosts() {
    let link = gig(0.0, 50);
    let pair = |stalls, seed| run_on_hosts(&flows(&model(), &[50, 50]), link, stalls, 20, 5, seed);
    median_cov_over_seeds("quiet hosts", |seed| pair(None, seed));
    let stalled = median_cov_over_seeds("stalled hosts", |seed| pair(Some(LAB_HOSTS), seed));
    assert!(
        stalled <= STALLED_PAIR_COV,
        "two flows on stalled hosts: median σ/μ {stalled:.3}"
    );
}

/// The median σ/μ of the flows' goodputs over seeds 1-10 of `run`, each seed printed.
fn median_cov_over_seeds(name: &str, run: impl Fn(u64) -> Outcome) -> f64 {
    let covs: Vec<f64> = (1..=10)
        .map(|seed| {
            let out = run(seed);
            let c = cov(&out.goodput_bps);
            println!(
                "{name}, seed {seed}: Mbit/s {:?}, σ/μ {c:.3}, utilisation {:.1}%",
                mbits(&out.goodput_bps),
                out.total_bps() / 1e7
            );
            c
        })
        .collect();
    let median = super::median(covs.clone());
    println!("{name}: median σ/μ {median:.3} of {covs:.3?}");
    median
}

/// The bar of [`two_flows_at_1gbit_on_stalled_hosts`]: main read 0.176 when it was written,
/// 0.181 with the rule's `K / d²` (session 75).
const STALLED_PAIR_COV: f64 = 0.25;

/// How far apart a 20 ms and a 200 ms flow may end up. Issue 12 asks for 1.25; with the
/// fair-share rule four seeds gave 1.04, 1.39, 1.21 and 1.16 (before it: 2.12, 2.09, 1.32,
/// 2.11), so the bar here is 1.5 until the last seed comes in.
const RTT_RATIO: f64 = 1.5;

/// Whether a 20 ms flow's goodput over a 200 ms one's is within [`RTT_RATIO`] either way.
fn within_rtt_bar(ratio: f64) -> bool {
    (1.0 / RTT_RATIO..=RTT_RATIO).contains(&ratio)
}

/// Issue 12: a model flow at 20 ms and one at 200 ms on one bottleneck get rates within
/// [`RTT_RATIO`] of each other (the 20 ms flow got 2.12 times the other's before the fair-share
/// rule, 1.04 after it). Native and UDT's CUBIC are printed beside it (CUBIC, a window
/// that grows per round trip, gives the 20 ms flow 2.67 times the other's here, and 1.86-3.56
/// over seeds 30 and 100-103; the default model 0.61-2.45, median 0.83).
#[test]
fn rtt_fairness_20_vs_200ms() {
    let link = PAIR_LINK;
    for (name, cc) in [
        ("native", native()),
        ("model (default)", model()),
        ("model (sharing)", model_sharing()),
        ("cubic (reference)", cubic()),
    ] {
        let out = run(&flows(&cc, &[20, 200]), link, 60, 30, 30);
        let g = &out.goodput_bps;
        println!(
            "{name}: RTT 20 ms vs 200 ms: Mbit/s {:?}, ratio {:.2}, Jain {:.3}",
            mbits(g),
            g[0] / g[1],
            jain(g)
        );
        assert!(g.iter().all(|&x| x > 0.0));
        if name == "model (sharing)" {
            assert!(within_rtt_bar(g[0] / g[1]), "ratio {:.2}", g[0] / g[1]);
        }
    }
}

/// The default model's 20/200 ms pair starves neither flow: each keeps at least a tenth of
/// the link. In these two seeds one flow competed as a CUBIC flow, an EXP timeout took its
/// window to 4 packets, and the trial that followed returned to the rate-based model at that
/// window's rate, 13 packets a second: its retransmissions then took every sending slot,
/// no new packet could measure the path, and the flow moved 0.6 (seed 105, the 200 ms flow)
/// and 0.8 Mbit/s (seed 110, the 20 ms one) of the 200 until the end (see
/// `Competition::held_window`). Issue 12's 25% between the two is not met by the default: it
/// is held to no bar here.
#[test]
fn the_default_20_200_ms_pair_starves_neither_flow() {
    let link = PAIR_LINK;
    for seed in [105, 110] {
        let g = run(&flows(&model(), &[20, 200]), link, 60, 30, seed).goodput_bps;
        println!(
            "seed {seed}: Mbit/s {:?}, ratio {:.2}",
            mbits(&g),
            g[0] / g[1]
        );
        let floor = link.wire_bps as f64 / 10.0;
        assert!(
            g.iter().all(|&x| x >= floor),
            "seed {seed}: {:?}",
            mbits(&g)
        );
    }
}

/// A 10 ms flow beside a 200 ms one on the latter's one-BDP queue is not held to a fraction
/// of its rate. Both compete as CUBIC flows for much of the run. Each trial's drain used to
/// judge the queue near full at ¾ of the flow's own floor: 7.5 ms of a queue whose
/// height was about 200 ms. So the 10 ms flow resumed with a cut after most trials, while
/// the 200 ms flow's trials went on as the rate-based model. In seeds 3 and 4 the 10 ms flow
/// moved 0.24 and 0.15 times the other's rate. Judged against the height the queue reached
/// (`QueueWatch::queue_near_full`), 1.11 and 1.09.
///
/// The pair is chaotic: which flow a trial or a timeout catches decides a seed. Over seeds
/// 1-12 the ratio read 0.17-1.79 (median 1.13, four seeds below 0.5), and with a
/// competition entered from the drain on the cubic plateau, uncut, 0.16-4.89 (median 0.58).
/// So the median of sixteen seeds is held to the bar, not each seed. (Eight were, until
/// repaired holes counted as delivered: seeds 1-8 then read a median of 2.12 against 0.91
/// before, seeds 9-24 1.19 against 1.42.)
#[test]
fn a_short_flow_on_a_long_flows_deep_queue_keeps_half_its_rate_or_more() {
    let link = PAIR_LINK;
    let ratios: Vec<f64> = (1..=16)
        .map(|seed| {
            let g = run(&flows(&model(), &[10, 200]), link, 60, 30, seed).goodput_bps;
            let ratio = g[0] / g[1];
            println!("seed {seed}: Mbit/s {:?}, ratio {ratio:.2}", mbits(&g));
            ratio
        })
        .collect();
    let median = super::median(ratios.clone());
    assert!(
        (0.5..=2.0).contains(&median),
        "median {median:.2} of {ratios:.2?}"
    );
}

/// Reported: native and model flows on one 200 Mbit/s, 50 ms bottleneck (BDP queue). The
/// model must not starve native completely.
#[test]
fn mixed_native_and_model_shares_are_reported() {
    let link = Link {
        wire_bps: 200_000_000,
        loss: 0.0,
        queue_rtt: Duration::from_millis(50),
    };
    for (n_native, n_model) in [(1usize, 1usize), (2, 2)] {
        let mut fl = flows(&native(), &vec![50; n_native]);
        fl.extend(flows(&model(), &vec![50; n_model]));
        let out = run(&fl, link, 40, 20, 50 + n_native as u64);
        let (nat, mdl) = out.goodput_bps.split_at(n_native);
        let nat_sum: f64 = nat.iter().sum();
        let total = out.total_bps();
        println!(
            "{n_native} native + {n_model} model: native Mbit/s {:?}, model Mbit/s {:?}, \
             native share {:.1}%, utilisation {:.1}%",
            mbits(nat),
            mbits(mdl),
            nat_sum / total * 100.0,
            total / 2e6
        );
        assert!(nat_sum > 0.0, "native starved");
    }
}

/// Queue the controllers keep on a 1 Gbit/s, 100 ms path with a BDP queue: mean queueing
/// delay and mean RTT inflation over the base RTT, one flow and two (seconds 5-20).
#[test]
fn queue_occupancy_is_reported() {
    let mut rows = Vec::new();
    for (name, cc) in [("native", native()), ("model", model())] {
        for n in [1usize, 2] {
            let out = run(&flows(&cc, &vec![100; n]), gig(0.0, 100), 20, 5, 60);
            let inflation = out.rtt_inflation.iter().sum::<f64>() / n as f64;
            rows.push((name, n, out.total_bps() / 1e7, out.queue_delay, inflation));
        }
    }
    println!("cc      flows  util%  queue delay  RTT inflation");
    for (name, n, util, delay, inflation) in &rows {
        println!(
            "{name:<7} {n:>5}  {util:>5.1}  {:>8.1} ms  {:>8.1}%",
            delay.as_secs_f64() * 1e3,
            inflation * 100.0
        );
    }
    // One model flow keeps the queue nearly empty. Several keep a standing queue (their
    // bandwidth estimates add up to more than the link, as with BBR v1), reported above.
    let model_delay = rows[2].3;
    assert!(
        model_delay < Duration::from_millis(10),
        "one model flow keeps a queue of {model_delay:?}"
    );
}

/// Deterministic: the same seed gives the same numbers (the snapshot depends on it).
#[test]
fn model_runs_are_reproducible() {
    let link = Link {
        wire_bps: 100_000_000,
        loss: 0.001,
        queue_rtt: Duration::from_millis(20),
    };
    let a = run(&flows(&model(), &[20]), link, 4, 1, 7).goodput_bps;
    let b = run(&flows(&model(), &[20]), link, 4, 1, 7).goodput_bps;
    assert_eq!(a, b);
}

/// Sub-millisecond paths, where UDT's ACKs (at most one a millisecond) come ten times further
/// apart than a round trip: the model must still fill the link. With delivery-rate markers
/// spaced by the RTT alone the ring filled within the first packets after each ACK, every
/// sample read at most the ring's capacity per ACK gap, and the estimate stuck there (42% of
/// 1 Gbit/s, 11% of 4 Gbit/s; on loopback ~2.3 Gbit/s where the native controller reached
/// 6-12).
#[test]
fn model_fills_sub_millisecond_paths() {
    for (gbit, rtt_us, seed) in [(1u64, 100u64, 3u64), (4, 100, 4)] {
        let link = Link {
            wire_bps: gbit * 1_000_000_000,
            loss: 0.0,
            queue_rtt: Duration::from_millis(1),
        };
        let flow = Flow {
            rtt: Duration::from_micros(rtt_us),
            cc: model(),
            buffers: Buffers::Tuned,
        };
        let out = run(&[flow], link, 3, 1, seed);
        let util = out.total_bps() / (gbit as f64 * 1e9);
        println!(
            "model, {gbit} Gbit/s {rtt_us} µs: utilisation {:.1}%, queue delay {:.2?}",
            util * 100.0,
            out.queue_delay
        );
        assert!(util >= 0.85, "{gbit} Gbit/s: utilisation {util:.3}");
    }
}

/// Issue 12: retransmissions stay within 1.5x what the link dropped (no spurious storms), on
/// short paths with small queues where the model's startup overshoots most.
#[test]
fn retransmissions_follow_link_drops_on_a_short_path() {
    for (mbit, rtt_us, queue_ms, loss) in [(45u64, 200u64, 10u64, 0.0), (1000, 200, 1, 0.001)] {
        let link = Link {
            wire_bps: mbit * 1_000_000,
            loss,
            queue_rtt: Duration::from_millis(queue_ms),
        };
        let flow = Flow {
            rtt: Duration::from_micros(rtt_us),
            cc: model(),
            buffers: Buffers::Default,
        };
        let mut sim = Sim::new();
        let (shared, mut ends) = build(&mut sim, &[flow], link, 3, None);
        let chunk = vec![0u8; 256 * 1024];
        let mut rbuf = vec![0u8; 1 << 20];
        let mut got = vec![0u64; 1];
        sim.run_until(Duration::from_secs(4), |sim| {
            pump(sim, &mut ends, &chunk, &mut rbuf, &mut got);
            sim.app_wake = Some(sim.now + Duration::from_millis(1));
            false
        });
        let dropped = sim.link_stats(shared).dropped();
        let (client, c, _, _) = ends[0];
        let st = sim.conn(client, c).stats();
        let goodput = got[0] as f64 * 8.0 / 4e6;
        println!(
            "{mbit} Mbit/s, RTT {rtt_us} µs, queue {queue_ms} ms, loss {loss}: goodput {goodput:.1} \
             Mbit/s, link dropped {dropped}, sent {}, retransmitted {}",
            st.packets_sent, st.retransmitted
        );
        assert!(goodput > mbit as f64 * 0.7, "goodput {goodput:.1} Mbit/s");
        assert!(
            st.retransmitted as f64 <= dropped as f64 * 1.5 + 10.0,
            "{} retransmissions for {dropped} drops",
            st.retransmitted
        );
    }
}

/// Issue 12: 90% of the link within 2 s at 100 ms RTT (1 Gbit/s, BDP queue, no loss, default
/// buffers). The time is when goodput over a 100 ms window first reaches 90% of the link.
#[test]
fn model_reaches_90_percent_within_2_s_at_100_ms() {
    let link = gig(0.0, 100);
    let flow = Flow {
        rtt: Duration::from_millis(100),
        cc: model(),
        buffers: Buffers::Default,
    };
    let mut sim = Sim::new();
    let (_, mut ends) = build(&mut sim, &[flow], link, 21, None);
    let chunk = vec![0u8; 256 * 1024];
    let mut rbuf = vec![0u8; 1 << 20];
    let mut got = vec![0u64; 1];
    let start = sim.now;
    let window = Duration::from_millis(100);
    let (mut next, mut last_got, mut reached) = (start + window, 0u64, None);
    sim.run_until(Duration::from_secs(4), |sim| {
        pump(sim, &mut ends, &chunk, &mut rbuf, &mut got);
        if sim.now >= next {
            let bps = (got[0] - last_got) as f64 * 8.0 / window.as_secs_f64();
            if reached.is_none() && bps >= 0.9e9 {
                reached = Some(sim.now - start);
            }
            last_got = got[0];
            next += window;
        }
        sim.app_wake = Some(next);
        reached.is_some()
    });
    println!("model, 1 Gbit/s 100 ms: 90% of the link after {reached:?}");
    assert!(
        reached.is_some_and(|t| t <= Duration::from_secs(2)),
        "{reached:?}"
    );
}

/// Between our peers (GSO announced both ways, so the receiver reports its front) at
/// 1 Gbit/s x `rtt` with `loss` random loss each way and a BDP queue, the sender running
/// `cc`: megabits the application read from `from` to `to` after its first write.
fn megabits_read(
    cc: Arc<dyn ControllerFactory>,
    (rtt, loss, seed): (Duration, f64, u64),
    (from, to): (Duration, Duration),
) -> f64 {
    let mut config = ConnectionConfig::default();
    config.controller(cc);
    let (mut pair, c, s) = Pair::lossy_gso_peers(rtt, loss, config, seed);
    let (client, server) = (pair.client, pair.server);
    pair.sim.run_for(rtt);
    let chunk = vec![7u8; 256 * 1024];
    let mut rbuf = vec![0u8; 1 << 20];
    let mut got = 0u64;
    let start = pair.sim.now;
    pair.sim.run_until(to, |sim| {
        let now = sim.now;
        let conn = sim.conn(client, c);
        while conn.send_buffer_free() > chunk.len() && conn.send(now, &chunk).is_ok() {}
        let read = sim.read_all(server, s, &mut rbuf);
        if now - start >= from {
            got += read;
        }
        false
    });
    got as f64 * 8.0 / 1e6
}

/// Random loss holds UDT's cumulative ACK at each hole for a round trip, and start-up grew
/// only about 1.5 times a round: its window counted what arrived behind holes as in flight,
/// and its delivery samples spanned each hole (the sender heard of arrivals behind one only
/// when another loss's NAK showed them). Between our peers the receiver now reports its
/// front in its ACKs (`Capabilities::ACK_FRONT`), and start-up's window leaves the packets
/// behind holes out of what it counts. Megabits read in the first 2 s at 1% loss, medians
/// of seeds 4-6: 478 before, 700 after (1,940 at most at 970 Mbit/s of payload).
#[test]
fn between_our_peers_model_starts_up_through_random_loss() {
    let mut runs: Vec<f64> = (4..7)
        .map(|seed| {
            let path = (Duration::from_millis(100), 0.01, seed);
            megabits_read(model(), path, (Duration::ZERO, Duration::from_secs(2)))
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    println!("model, GSO peers, 1 Gbit/s x 100 ms, 1% loss: read in 2 s {runs:.0?} Mbit");
    assert!(runs[1] >= 600.0, "{runs:.0?} Mbit");
}

/// A round that start-up's overshoot ends in is judged at its NAKs once it stalls, and
/// again when it ends, and its losses are the overshoot's each time: the estimate stays
/// what the path delivered. Judged at its end by its loss rate, a lost repair that held the
/// ACK cut a lone flow's estimate after the drain (to 0.69): at 1 Gbit/s x 200 ms, started
/// with a 333-packet window (20 Mbit/s over the RTT), seeds 4 and 7 then read 2,721 and
/// 2,712 Mbit in seconds 4-7, against 2,967 and 2,966 with the estimate kept (the link
/// carries 2,967). With 32 packets these seeds lose no repair there; the lab's 15 s flows
/// at 100 ms without loss had one run of six at 806 Mbit/s against 898-904 (session 95, not
/// traced).
#[test]
fn start_ups_overshoot_leaves_the_estimate_however_often_it_is_judged() {
    let mut factory = ModelFactory::default();
    factory.config.initial_window_pkts(333.0);
    let cc: Arc<dyn ControllerFactory> = Arc::new(factory);
    for seed in [4, 7] {
        let path = (Duration::from_millis(200), 0.0, seed);
        let span = (Duration::from_secs(4), Duration::from_secs(7));
        let read = megabits_read(cc.clone(), path, span);
        println!(
            "model, GSO peers, 1 Gbit/s x 200 ms, seed {seed}: read in seconds 4-7 {read:.0} Mbit"
        );
        assert!(read >= 2_850.0, "seed {seed}: {read:.0} Mbit");
    }
}

/// Issue 12's 0 ms cells: the lab's "0 ms" path has a few hundred microseconds of RTT and a
/// 64-packet queue (0.77 ms at 1 Gbit/s), the smallest the lab gives. The bars are the
/// issue's (95/90/85% at 0/0.1/1% loss). With probe phases of one min RTT, shorter than the
/// ACK gap, a flow that left startup low never grew: 19% without loss.
#[test]
fn model_fills_a_zero_rtt_path_with_a_64_packet_queue() {
    for (loss, seed, bar) in [(0.0, 5u64, 0.95), (0.001, 6, 0.90), (0.01, 7, 0.85)] {
        let link = Link {
            wire_bps: 1_000_000_000,
            loss,
            queue_rtt: Duration::ZERO,
        };
        let flow = Flow {
            rtt: Duration::from_micros(300),
            cc: model(),
            buffers: Buffers::Default,
        };
        let out = run(&[flow], link, 4, 1, seed);
        let util = out.total_bps() / datagram_rate(1_000_000_000) as f64;
        println!(
            "model, 1 Gbit/s 300 µs, 64-packet queue, loss {loss}: utilisation {:.1}%, queue \
             delay {:.2?}",
            util * 100.0,
            out.queue_delay
        );
        assert!(util >= bar, "loss {loss}: utilisation {util:.3}");
    }
}

/// A lone flow whose gain cycle empties the queue keeps its min RTT without probe RTT, which
/// halved its rate for a fifth of a second or more every 10 s: alone at 1 Gbit/s × 200 ms
/// without loss it moved 96.9% of the link over seconds 10-30 with probe RTT, 98.8%
/// without (issue 12 asks for 95% without loss at every RTT).
#[test]
fn a_lone_flow_on_a_long_path_keeps_its_min_rtt_without_probe_rtt() {
    let util = alone_on_a_lossy_path(&model(), 200, 0.0, (30, 10), 1);
    println!(
        "model alone, 1 Gbit/s 200 ms, no loss: {:.1}% of the link",
        util * 100.0
    );
    assert!(util >= 0.98, "{util:.3}");
}

/// Issue 12's bars on short lossy paths (90% at 0.1%, 85% at 1% random loss), for the default
/// model, competition mode on. Alone on such a path the model's own probing, the ACK timing
/// and the holes make the RTT read a few milliseconds above its floor, which the mode's first
/// versions took for competitors: the CUBIC window then held the flow at 13 Mbit/s of
/// 1 Gbit/s at 10 ms and 1% loss (71% at 0.1%). A fast subset of
/// [`model_alone_on_lossy_paths_every_rtt`].
#[test]
fn model_holds_short_lossy_paths() {
    for (rtt_ms, loss, seed, bar) in [
        (10u64, 0.001, 1u64, 0.90),
        (10, 0.01, 3, 0.85),
        (20, 0.01, 4, 0.85),
    ] {
        let util = alone_on_a_lossy_path(&model(), rtt_ms, loss, (6, 2), seed);
        println!(
            "model alone, 1 Gbit/s {rtt_ms} ms, loss {:.1}%: {:.1}% of the link",
            loss * 100.0,
            util * 100.0
        );
        assert!(util >= bar, "{rtt_ms} ms, loss {loss}: {util:.3}");
    }
}

/// One model flow (`cc`) alone on 1 Gbit/s with a one-BDP queue (the lab's 64 packets at
/// 0 ms, where the path's RTT is 300 µs) and random `loss`: its share of the link over
/// seconds `from`..`seconds`.
fn alone_on_a_lossy_path(
    cc: &Arc<dyn ControllerFactory>,
    rtt_ms: u64,
    loss: f64,
    (seconds, from): (u64, u64),
    seed: u64,
) -> f64 {
    let rtt = if rtt_ms == 0 {
        Duration::from_micros(300)
    } else {
        Duration::from_millis(rtt_ms)
    };
    let flow = Flow {
        rtt,
        cc: cc.clone(),
        buffers: Buffers::Default,
    };
    let out = run(&[flow], gig(loss, rtt_ms), seconds, from, seed);
    out.total_bps() / datagram_rate(1_000_000_000) as f64
}

/// The model with its competition mode (`ModelConfig::tcp_friendly`) on or off.
fn model_competing(on: bool) -> Arc<dyn ControllerFactory> {
    let mut factory = ModelFactory::default();
    factory.config.tcp_friendly(on);
    Arc::new(factory)
}

/// Issue 12's lossy bars at every RTT of its grid (0, 10, 20, 50, 100 and 200 ms at 0.1% and
/// 1% random loss: 90% and 85% of the link) for the model with its competition mode on,
/// measured after start-up (longer at longer RTTs), beside the same model with the mode off.
/// Each cell must meet the bar, or, where the model without the mode misses it too (100 and
/// 200 ms at 1%: the rate-based model's own limit, not the detector's), lose no more than
/// 3% to it. Each cell is the median of three seeds: at 1% loss a lone flow's goodput is
/// chaotic (100 ms: 0.75-0.92 of the link over seeds 170-175), and with the fair-share
/// rule's `K` at 0.5, one cut of another size at 4 s moved seed 170 from 0.757 to 0.689, the
/// rest of the run's estimates alike (session 75). Heavy: run in release with
/// `--include-ignored`.
#[test]
#[ignore = "72 runs of 1 Gbit/s for up to 30 virtual seconds; run in release"]
fn model_alone_on_lossy_paths_every_rtt() {
    let (on, off) = (model_competing(true), model_competing(false));
    let mut misses = Vec::new();
    for (rtt_ms, span) in [
        (0u64, (6u64, 2u64)),
        (10, (10, 2)),
        (20, (10, 2)),
        (50, (20, 5)),
    ]
    .into_iter()
    .chain([(100, (30, 10)), (200, (30, 10))])
    {
        for (loss, bar) in [(0.001, 0.90f64), (0.01, 0.85)] {
            let median = |cc: &Arc<dyn ControllerFactory>| {
                let seeds = [70, 1070, 2070].map(|s| s + rtt_ms);
                super::median(
                    seeds
                        .map(|seed| alone_on_a_lossy_path(cc, rtt_ms, loss, span, seed))
                        .to_vec(),
                )
            };
            let (with, without) = (median(&on), median(&off));
            println!(
                "model alone, 1 Gbit/s {rtt_ms} ms, loss {:.1}%: {:.1}% of the link with the \
                 competition mode, {:.1}% without (seconds {}-{})",
                loss * 100.0,
                with * 100.0,
                without * 100.0,
                span.1,
                span.0
            );
            if with < bar.min(without * 0.97) {
                misses.push(format!(
                    "{rtt_ms} ms, loss {loss}: {with:.3} ({without:.3} off)"
                ));
            }
        }
    }
    assert!(misses.is_empty(), "below the bar: {misses:?}");
}

/// Issue 12 ("fair among udt flows"), a latecomer: one model flow has a 1 Gbit/s × 50 ms link
/// (a one-BDP queue) to itself for 5 s, then a second joins; σ/μ of their goodputs over
/// seconds 25-45, seeds 1-10. The default read a median of 0.259 (0.126-0.425) when this was
/// written, with the competition mode off 0.041 (0.002-0.078): the newcomer's start-up
/// overflowed the queue, the incumbent took that loss with the queue full for a loss-based
/// competitor's and competed as a CUBIC flow, the newcomer's drain then found that CUBIC
/// queue standing and competed too, and two CUBIC windows at 1 Gbit/s × 50 ms converge over
/// epochs of ten seconds and more. Since the incumbent judges a full queue that was empty
/// lately only once a newcomer would have drained (`await_newcomer` in `model.rs`), the
/// default reads 0.046 (seed 1 still 0.383). The lab's counterpart is `LATE=5
/// scripts/bench-among-udt.sh` (BENCHMARKS, session 76), where two kernel BBR flows even out
/// within two seconds. Issue 12 asks for 0.05.
#[test]
#[ignore = "20 runs of two flows at 1 Gbit/s for 45 virtual seconds; run in release"]
fn a_latecomer_at_1gbit() {
    let link = gig(0.0, 50);
    let late = |cc: &Arc<dyn ControllerFactory>, seed| {
        run_staggered(&flows(cc, &[50, 50]), &[0, 5], link, None, 45, 25, seed)
    };
    let default = median_cov_over_seeds("default", |seed| late(&model(), seed));
    let sharing =
        median_cov_over_seeds("competition mode off", |seed| late(&model_sharing(), seed));
    assert!(
        default <= 0.1,
        "a latecomer, default: median σ/μ {default:.3}"
    );
    assert!(
        sharing <= 0.1,
        "a latecomer, mode off: median σ/μ {sharing:.3}"
    );
}

/// Issue 12 ("fair to TCP where the loss is congestion") at the rate the issue is about: one
/// model flow beside one kernel-like CUBIC flow (UDT's CUBIC window with HyStart on, sending
/// at twice its window's rate, as an unpaced kernel flow does) on a 1 Gbit/s × 50 ms link
/// with a one-BDP queue; the model's goodput over an equal share over seconds 10-40, seeds
/// 1-8. Two outcomes, by seed. Where the CUBIC flow leaves start-up's queue standing, the
/// model's drain verdict sees it and the two compete as CUBIC windows: 1.00-1.21. Where
/// HyStart ends the CUBIC flow's slow start early, the verdict finds no standing queue, the
/// model stays rate-based, and the fair-share rule (`congestion/model/share.rs`) cuts it at
/// each cruise phase for the 4-8 ms queue that the CUBIC window keeps (seed 2: 25,000-28,000
/// packets a second of 81,000 from 4 s to 20 s, then, as the CUBIC window grows past the
/// BDP, down to 5,000 before the first overflow makes the model compete at 34.9 s): 0.39-0.42
/// (five seeds of eight). That is TCP Vegas beside Reno: a flow that yields to delay loses
/// to one that grows until loss. With the rule off the same seeds read 1.72 (the model's
/// probes overflow the queue and the CUBIC flow stays small). When this was written the
/// median read 0.42; the lab's counterpart (`RATE=1gbit RTT=50ms
/// scripts/bench-beside-tcp.sh 4 30 1 cubic model`) read 0.72 (BENCHMARKS, session 77).
/// Issue 12 asks for 0.8-1.25; the bar here guards against the model starving further.
#[test]
#[ignore = "8 runs of two flows at 1 Gbit/s for 40 virtual seconds; run in release"]
fn one_model_flow_beside_kernel_like_cubic_at_1gbit() {
    let link = gig(0.0, 50);
    let mut kernel_like = CubicFactory::default();
    kernel_like.config.pacing_gain(2.0).hystart(true);
    let kernel_like: Arc<dyn ControllerFactory> = Arc::new(kernel_like);
    let shares: Vec<f64> = (1..=8)
        .map(|seed| {
            let mut pair = flows(&model(), &[50]);
            pair.extend(flows(&kernel_like, &[50]));
            let g = run(&pair, link, 40, 10, seed).goodput_bps;
            let share = g[0] / ((g[0] + g[1]) / 2.0);
            println!(
                "seed {seed}: Mbit/s {:?}, model / equal share {share:.2}",
                mbits(&g)
            );
            share
        })
        .collect();
    let median = super::median(shares.clone());
    println!("model beside one kernel-like CUBIC flow: median {median:.2} of {shares:.2?}");
    assert!(
        median >= 0.3,
        "the model beside CUBIC at 1 Gbit/s: median {median:.2}"
    );
}
