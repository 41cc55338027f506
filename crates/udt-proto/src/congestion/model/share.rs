//! The model's fair-share rule among flows like itself: at the end of each cruise phase of
//! the probe-bandwidth gain cycle, a flow that sees a standing queue moves its bandwidth
//! estimate a step down towards the larger of `α / d` and `K / d²`, where `d` is the lowest
//! queueing delay of the last 100-200 ms (acted on between 2 and 50 ms), `α` a fixed number
//! of packets (32) and `K` a fixed number of packet-seconds (0.25). Flows below the target
//! are left to the gain cycle's probes.
//!
//! Why: the model's rate comes from a max filter that probing (× 1.25) raises and congestion
//! back-offs (× 0.8) lower, both in proportion to the rate, so flows that share a bottleneck
//! keep whatever ratio startup left them (4 flows on one 200 Mbit/s × 50 ms link: σ/μ 0.28
//! after 40 s). In a FIFO queue each flow holds packets in proportion to its rate: with the
//! same delay `d` in front of all of them, a flow sending `x` packets per second keeps `x · d`
//! packets queued. Holding each flow's own share of the queue to the same `α` (the
//! equilibrium of TCP Vegas and FAST TCP: Jin, Wei, Low, "FAST TCP", IEEE/ACM ToN 2006) gives
//! every flow the same `x = α / d`, whatever its RTT, since `d` is the same for all of them.
//!
//! The delay is the lowest RTT (delivery-rate samples and the smoothed ACK/ACK2 RTT, which
//! waits for no hole) over the last [`WINDOW`], minus the min RTT, looked at only from the
//! fourth phase of the cycle on: by then a flow alone has drained the queue its 1.25 probe
//! built, so it reads no standing queue and the rule leaves it alone. The window is the same
//! time for every flow, so a 20 ms flow does not read the passing queue of a 200 ms flow's
//! probe as standing (per-phase minima held a 20 ms flow to 0.24 of a 200 ms one). Delays up
//! to a floor (2 ms by default) are not acted on, so RTT-measurement noise never caps a lone
//! flow (at `α = 32`, a 1 ms error would cap it at 32,000 packets a second), and a queue that
//! short costs nothing. After entering probe bandwidth the rule waits four round trips (see
//! `SHARE_SETTLE_RTTS` in `model.rs`), so start-up's own queue is not taken for a standing one.
//!
//! A queue that loss-based flows keep standing would hold the model to `α / d`, far below an
//! equal share (0.41 of one beside one CUBIC flow in `cc_fair` with the competition mode
//! off); the competition detector owns that case. So with
//! [`super::ModelConfig::tcp_friendly`] on (the default) the rule rests whenever the
//! detector has the queue in hand: until its verdict on the queue after the drain, while
//! competing or testing the queue, and within 10 s of a trial; and a competition that begins
//! after the rule has cut starts from the estimate as it was before the cuts (see
//! `share_fairly` in `model.rs`); nor while the model holds beside competitors that ignore
//! loss (`judge_loss_blind`), whose queue stands whatever the model does. Beside CUBIC the
//! rule then never acts in `cc_fair`, while 2-4 model flows at one RTT, which keep the queue
//! short of the detector's "full", share as with the mode off (`model_flows_share_fairly`,
//! medians of five seeds, rule resting → acting: σ/μ 0.037 → 0.003 for 2 flows, 0.120 →
//! 0.072 for 4, 0.169 → 0.099 for 8; the queue 29-38 ms → 7-12 ms for 2). Flows that
//! overflow the queue before the rule can act (8 at one RTT on a one-BDP queue, or a 200 ms
//! flow's start-up beside a 20 ms one) still take each other for loss-based flows and
//! compete as CUBIC flows (the 20/200 ms ratio 2.14 → 1.97; 1.44 since start-up's own
//! overshoot no longer cuts the estimate by a fifth, which had left the flows' ratios to
//! chance from their first seconds on).
//!
//! **Short queues (`K / d²`).** Any target that depends on `d` alone gives every flow the
//! same rate where the flows meet it, but only if that point lies above the 2 ms noise
//! floor. Under `α / d` alone, `n` flows share a link of `C` packets a second at `d = n α /
//! C`: 0.77 ms for two flows at 1 Gbit/s, 1.5 ms for four. There every flow reads a queue
//! far above its `α` and is cut towards a target far below its rate, so the cuts are
//! nearly proportional and, the max filter taking the next delivery samples, each flow's
//! estimate follows its own share: a random walk of the flows' ratio that nothing pulls
//! back (the lab's pair at 1 Gbit/s × 50 ms: σ/μ 0.002-0.579 over 22 runs in session 74,
//! median 0.118, where two kernel BBR flows each took 0.98-1.02 of an equal share). In the
//! simulator the walk is driven by the senders' host stalls (two flows: 0.054 on quiet
//! hosts, 0.176 with both ends stalling as the lab's do, 0.161 with the senders alone,
//! 0.050 with the receivers alone). `K / d²` lets each flow keep `K / d` packets queued,
//! more the shorter the queue, so two flows at 1 Gbit/s meet at `d = √(2 K / C)`, 2.5 ms,
//! and four at 3.5 ms; above `K / α` (7.8 ms) `α / d` is the larger and the rule is as it
//! was (eight flows at 200 Mbit/s meet near 15 ms). In the lab (session 75, paired with
//! the rule as it was): two flows at 1 Gbit/s σ/μ 0.082 against 0.267 (medians of twelve
//! runs), four 0.145 against 0.305; but eight at 1 Gbit/s, which `α / d` alone puts at
//! 3.1 ms and `K / d²` at 4.9, 0.101 against 0.067, and eight at 200 Mbit/s 0.218 against
//! 0.236. `K` = 0.5 (crossover at 15.6 ms) did as well for two and four flows, worse for
//! eight (1 Gbit/s: 0.123 against 0.078; 200 Mbit/s: 0.282 against 0.187). The simulator
//! does not reproduce the lab here: through its stalled hosts the pair reads 0.181 with
//! `K` = 0.25 and 0.105 with 0.5. `K / d²` at every delay (`K` = 1, session 74) held the
//! queue of two 200 Mbit/s flows near 11 ms, past half a 20 ms flow's floor RTT, where its
//! competition detector reads "full". Two flows at 200 Mbit/s × 50 ms now meet at 5.5 ms
//! instead of 3.8 (`model_flows_share_fairly`, medians of five seeds: σ/μ 0.037 against
//! 0.016; four and eight flows unchanged). A lone flow at 1 Gbit/s is trimmed now and then
//! when its estimate, a little above the link, has built a queue over 2 ms in the cruise
//! phases (50 ms: 903 against 909 Mbit/s without the rule, medians of three, session 73;
//! the lab's lone flows read the same with `K / d²` and without it in session 75).
//!
//! Tried and dropped (simulator, 2-8 flows at 200 Mbit/s × 50 ms and the 20/200 ms pair, three
//! seeds each): moving flows *up* towards `α / d` as well, as FAST TCP does (the max filter
//! takes every higher delivery sample, so the estimate cannot be steered up and down: σ/μ up
//! to 0.34); a separate cap instead of resetting the filter (the queue swung from empty to
//! full every second as the cap was lifted); skipping the probe while the queue stands;
//! ignoring delivery samples for a round after a cut (utilisation fell to 84-90%); and not
//! acting on delays above the flow's own RTT (the 200 ms flow then starved the 20 ms one);
//! FAST TCP's own step, `γ (α − x d) / RTT` (the 20 ms flow, stepping ten times harder, got
//! 0.45 of the 200 ms one's rate); and `α` growing as `√x`, to spare fast lone flows (the
//! targets then sat so near the rates that 8 flows were left at σ/μ 0.38). With the
//! competition mode on: letting the rule act whenever the model was not competing (gated on
//! the live state alone, not on the detector's verdicts and trials) cut the model beside
//! CUBIC before and between its competitions, so it competed from smaller windows: 0.66 of
//! an equal share beside one CUBIC flow (median of five seeds, against 1.02) and 0.70
//! beside four kernel-like ones (against 1.00), failing `cc_fair`. For stalls (see
//! `FairShare::window_min`), ignoring the readings of a whole window after 100 ms without
//! one instead of waiting for both halves: the same for lone lossy flows, but with the mode
//! off this test's 20/200 ms pair went from 1.42 to 1.56. A floor on each cut, the estimate
//! that would drain the standing queue within one RTT (`bw · min_rtt / (min_rtt + d)`), to
//! spare lone flows: the floor is looser for short RTTs, so the 200 ms flow of the pair took
//! the larger share (0.58 with the mode off). Holding the window to one BDP, `α` and an ACK
//! period's data while the rule sees a standing queue short of the watch's "full" (session
//! 73): the cuts alone are undone by the next delivery samples, and eight default flows at
//! 200 Mbit/s × 50 ms refilled the queue after each probe RTT and competed as CUBIC flows;
//! held, they went from σ/μ 0.177 to 0.025 in the simulator. But in the lab two and four
//! flows at 1 Gbit/s × 50 ms lost 1.5 points of utilisation (94.2% against 95.7%, medians
//! of three, paired), and eight at 200 Mbit/s lose at start-up and compete anyway (see
//! BENCHMARKS, session 73). A target of `K / d²` (`K` = 1 packet-second: each flow may
//! queue more the shorter the queue, so two flows at 1 Gbit/s would settle at 4.9 ms, above
//! the noise floor; session 74): the lab's pair at 1 Gbit/s read σ/μ 0.072 against 0.13
//! (medians of eight, paired), and eight flows in the simulator 0.042 against 0.177, but the
//! simulator's 20/200 ms pair went from 0.83 to 1.43 and the 10/200 ms one from 1.25 to 2.03
//! (medians of five and sixteen seeds), and eight flows with the mode off from 0.060 to
//! 0.155. Delivery samples capped at a cut's estimate for one smoothed RTT, so that packets
//! sent before a cut do not undo it: worse everywhere (two flows at 1 Gbit/s in the
//! simulator 0.205 against 0.032).

use std::time::Duration;

use crate::time::Instant;

/// How far back the lowest RTT is taken: long enough that a short-RTT flow's window spans
/// whole gain cycles and flows of every RTT read the queue over the same time, short enough
/// to fit in one cruise phase of a 200 ms flow (its own probe's queue is not in it).
const WINDOW: Duration = Duration::from_millis(200);
/// Standing delays above this are left alone: a queue that deep is some flow's start-up (or a
/// loss-based flow's), not a share to even out, and moving towards `α / d` from it cut a 20 ms
/// flow to a few hundred packets a second while a 200 ms flow started up beside it.
const MAX_DELAY: Duration = Duration::from_millis(50);
/// How fast the estimate moves towards `α / d`: a phase of `t` seconds moves it the fraction
/// `1 − e^(−8 t)` of the way (a third per 50 ms, 80% per 200 ms), so flows with short and
/// long phases (RTTs) move at the same pace per second. (4 per second left a 20 ms flow 1.5-1.7
/// times a 200 ms one's rate over three seeds; 12 let one pair of 2 flows drift to σ/μ 0.28.)
const STEP_PER_S: f64 = 8.0;

/// The rule's settings, part of [`super::ModelConfig`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct ShareConfig {
    /// `α`: packets each flow may keep in a standing queue.
    pub(super) queue_pkts: f64,
    /// `K`: packet-seconds; each flow may keep `K / d` packets in a standing queue of delay
    /// `d` where that is more than `α` (0: never).
    pub(super) short_queue_pkt_secs: f64,
    /// Standing delays up to this are ignored.
    pub(super) min_delay: Duration,
}

impl Default for ShareConfig {
    fn default() -> Self {
        Self {
            queue_pkts: 32.0,
            short_queue_pkt_secs: 0.25,
            min_delay: Duration::from_millis(2),
        }
    }
}

impl ShareConfig {
    /// The rate, in packets a second, that the rule moves a flow towards when the standing
    /// queue is `delay` deep.
    fn target(&self, delay: Duration) -> f64 {
        let d = delay.as_secs_f64();
        (self.queue_pkts / d).max(self.short_queue_pkt_secs / (d * d))
    }
}

/// The lowest RTT over the last [`WINDOW`] / 2 to [`WINDOW`], kept as the minima of two
/// successive half-windows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct FairShare {
    halves: [Option<Duration>; 2],
    half_started: Instant,
    /// Readings before this are of packets sent before the latest restart.
    ignore_until: Instant,
}

impl FairShare {
    /// No readings yet.
    pub(super) fn new(now: Instant) -> Self {
        Self {
            halves: [None; 2],
            half_started: now,
            ignore_until: now,
        }
    }

    /// An RTT reading at `now` (zero readings are ignored).
    pub(super) fn on_rtt(&mut self, now: Instant, rtt: Duration) {
        if now < self.ignore_until {
            return;
        }
        let age = now - self.half_started;
        if age >= WINDOW {
            self.halves = [None; 2];
        } else if age >= WINDOW / 2 {
            self.halves = [self.halves[1], None];
        }
        if age >= WINDOW / 2 {
            self.half_started = now;
        }
        if !rtt.is_zero() {
            self.halves[1] = Some(self.halves[1].map_or(rtt, |m| m.min(rtt)));
        }
    }

    /// Forget every reading, and ignore those of the next `rtt`: they are of packets sent
    /// before `now`, into the queue start-up built (a flow that entered probe bandwidth took
    /// the tail of its own start-up queue for a standing one and cut itself to a fraction of
    /// 1 Gbit/s).
    pub(super) fn restart(&mut self, now: Instant, rtt: Duration) {
        *self = Self::new(now);
        self.ignore_until = now + rtt;
    }

    /// The lowest reading in the window, once both halves hold readings. A silent half
    /// spans a stall (UDT's receiver sends no ACK while the cumulative ACK waits for a lost
    /// retransmission), and the first readings after one are of packets held behind the
    /// hole, not of a standing queue: alone at 1 Gbit/s × 200 ms with 1% random loss, a flow
    /// whose window held only the first ACK after a stall (28 ms above its min RTT) cut
    /// itself from 78,000 to 17,000 packets a second, no loss having been reported in that
    /// phase to hold the rule back (20 s runs: 39% of the link instead of 48%).
    fn window_min(&self) -> Option<Duration> {
        match self.halves {
            [Some(a), Some(b)] => Some(a.min(b)),
            _ => None,
        }
    }

    /// A phase of `span` ended, for a flow whose estimate is `bw_pkts` and whose min RTT is
    /// `min_rtt`: with a standing queue and the estimate above the target for its delay
    /// (`ShareConfig::target`), the estimate a step towards it; otherwise `None`.
    pub(super) fn phase_end(
        &mut self,
        config: &ShareConfig,
        bw_pkts: f64,
        min_rtt: Duration,
        span: Duration,
    ) -> Option<f64> {
        let delay = self.window_min()?.checked_sub(min_rtt)?;
        if delay <= config.min_delay || delay > MAX_DELAY {
            return None;
        }
        let target = config.target(delay);
        let step = 1.0 - (-STEP_PER_S * span.as_secs_f64()).exp();
        (bw_pkts > target).then_some(bw_pkts - step * (bw_pkts - target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PHASE: Duration = Duration::from_millis(50);

    /// One phase of 50 ms whose window holds the given RTT readings, 1 ms apart, in each of
    /// its halves: the new estimate, if any.
    fn phase(rtts_ms: &[u64], bw: f64, min_rtt_ms: u64) -> Option<f64> {
        let mut s = FairShare::new(Instant::ZERO);
        let half = WINDOW.as_micros() as u64 / 2;
        for start in [0, half] {
            for (i, &ms) in (0u64..).zip(rtts_ms) {
                s.on_rtt(
                    Instant::from_micros(start + i * 1000),
                    Duration::from_millis(ms),
                );
            }
        }
        let config = ShareConfig::default();
        s.phase_end(&config, bw, Duration::from_millis(min_rtt_ms), PHASE)
    }

    #[test]
    fn a_drained_queue_leaves_the_estimate_alone() {
        assert_eq!(phase(&[80, 50, 60], 100_000.0, 50), None);
        assert_eq!(phase(&[51], 100_000.0, 50), None, "within the noise floor");
        assert_eq!(phase(&[], 100_000.0, 50), None);
    }

    #[test]
    fn a_standing_queue_moves_a_large_estimate_towards_alpha_over_d() {
        let alpha = ShareConfig::default().queue_pkts;
        let target = alpha / 0.020; // 20 ms standing, above K / α
        let step = 1.0 - (-STEP_PER_S * PHASE.as_secs_f64()).exp();
        let down = phase(&[70, 80], 4.0 * target, 50).expect("cut");
        assert!((down - (4.0 - 3.0 * step) * target).abs() < 1e-6, "{down}");
        assert_eq!(phase(&[70, 80], 0.9 * target, 50), None, "below α / d");
    }

    #[test]
    fn a_short_standing_queue_allows_k_over_d_packets_each() {
        let config = ShareConfig::default();
        let d = 0.004; // 4 ms standing, below K / α
        let target = config.short_queue_pkt_secs / (d * d);
        assert!(target > config.queue_pkts / d);
        assert!((config.target(Duration::from_millis(4)) - target).abs() < 1e-6);
        assert!(phase(&[54, 60], 1.1 * target, 50).is_some());
        assert_eq!(phase(&[54, 60], 0.9 * target, 50), None, "below K / d²");
        let at_1gbit = 2.0 * config.target(Duration::from_micros(2_500));
        assert!(
            (78_000.0..86_000.0).contains(&at_1gbit),
            "two flows share 1 Gbit/s (83,333 packets a second) near 2.5 ms: {at_1gbit}"
        );
    }

    #[test]
    fn readings_older_than_the_window_are_forgotten() {
        let mut s = FairShare::new(Instant::ZERO);
        s.on_rtt(Instant::ZERO, Duration::from_millis(50));
        for ms in (0..=WINDOW.as_millis() as u64).step_by(10) {
            s.on_rtt(Instant::from_micros(ms * 1000), Duration::from_millis(60));
        }
        let config = ShareConfig::default();
        let min_rtt = Duration::from_millis(50);
        assert!(s.phase_end(&config, 1e6, min_rtt, PHASE).is_some());
        s.restart(Instant::from_micros(300_000), min_rtt);
        s.on_rtt(Instant::from_micros(340_000), Duration::from_millis(60));
        assert_eq!(
            s.phase_end(&config, 1e6, min_rtt, PHASE),
            None,
            "sent before"
        );
        s.on_rtt(Instant::from_micros(360_000), Duration::from_millis(60));
        assert_eq!(
            s.phase_end(&config, 1e6, min_rtt, PHASE),
            None,
            "one half only"
        );
        s.on_rtt(Instant::from_micros(420_000), Duration::from_millis(60));
        assert!(s.phase_end(&config, 1e6, min_rtt, PHASE).is_some());
    }

    #[test]
    fn a_window_that_spans_a_stall_leaves_the_estimate_alone() {
        let mut s = FairShare::new(Instant::ZERO);
        for ms in (0..=WINDOW.as_millis() as u64).step_by(10) {
            s.on_rtt(Instant::from_micros(ms * 1000), Duration::from_millis(50));
        }
        // No reading for a whole window, then one held behind a hole.
        let after = 2 * WINDOW.as_micros() as u64 + 50_000;
        s.on_rtt(Instant::from_micros(after), Duration::from_millis(80));
        let config = ShareConfig::default();
        let min_rtt = Duration::from_millis(50);
        assert_eq!(s.phase_end(&config, 1e6, min_rtt, PHASE), None);
    }

    #[test]
    fn flows_at_other_rtts_converge_to_the_same_rate() {
        let (mut short, mut long) = (20_000.0, 10_000.0);
        for _ in 0..100 {
            short = phase(&[30], short, 20).expect("standing");
            long = phase(&[210], long, 200).expect("standing");
        }
        assert!((short - long).abs() < 1.0, "{short} vs {long}");
    }
}
