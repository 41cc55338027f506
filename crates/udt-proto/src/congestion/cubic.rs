//! A window-based CUBIC controller (RFC 9438), the loss-based algorithm Linux TCP runs by
//! default, for UDT (`--cc cubic`).
//!
//! Why UDT has it: it is the deterministic stand-in for kernel TCP in the simulator. The
//! question "is `model` fair to TCP where the loss is congestion" (issue 12) needs TCP-like
//! flows on the same simulated bottleneck, and N `cubic` UDT flows are that: the same window
//! arithmetic, the same reaction to loss. The window arithmetic (`CubicWindow`) is also
//! what `model` runs while it competes with loss-based flows, so the two cannot drift apart.
//! It is also a plain choice for a user who wants UDT to behave exactly like TCP.
//!
//! What it does, in UDT's terms:
//! * **slow start** from 10 packets (RFC 6928): the window grows by what each ACK
//!   acknowledges, until the first loss, or, with [`CubicConfig::hystart`] on, until the
//!   round trip rises as Linux's HyStart reads it (`cubic/hystart.rs`). Off by default: the
//!   simulator's drop-tail queue gives a crisp signal, and a test bed should be simple; on,
//!   it is the stand-in for kernel CUBIC where another flow's queue meets its slow start,
//!   and so it also takes Linux's floor under the growth of a flow that has never lost (5% a
//!   round trip, `CubicWindow::with_linux_floor`), which decides how fast such a flow
//!   recovers from an early exit;
//! * **a loss** (a NAK reporting sequence numbers not reported before) is one congestion
//!   event per round trip: the window drops to β = 0.7 of itself (RFC 9438 §4.6), with fast
//!   convergence (§4.7), and no further cut until the cumulative ACK passes what had been
//!   sent at the cut (what TCP's recovery does);
//! * **congestion avoidance**: the window follows `W_cubic(t) = C·(t − K)³ + W_max` with
//!   C = 0.4 in packets and seconds (§4.2), or the Reno-friendly estimate `W_est` where that
//!   is larger (§4.3), and grows only while the flow uses it;
//! * **an EXP timeout** drops the window to the minimum and slow-starts back to β of what it
//!   was (§4.8);
//! * **pacing**: the window per RTT times 1.2 (2 in slow start; see
//!   [`CubicConfig::pacing_gain`]), as Linux paces TCP, but per the lowest smoothed RTT seen
//!   rather than the current one: Linux's smoothed RTT follows each packet's sample, UDT's
//!   follows one ACK in 10 ms smoothed twice and lags the queue by
//!   a round trip or more, so a flow paced by it after a cut sent too slowly to keep its
//!   window in flight. The window, not the pacer, sets the rate.
//!
//! UDT acknowledges cumulatively, and the connection counts everything after a hole as in
//! flight until the hole is repaired, where TCP with SACK counts only what is really in the
//! network. The window handed to the connection therefore adds the packets between the
//! cumulative ACK and the receiver's known front (a NAK ending at `l` proves `l + 1` arrived),
//! so a hole does not stall the flow for a round trip.
//!
//! Every hook is O(1) apart from `on_loss`, which is linear in the NAK's ranges.

mod hystart;

use std::time::Duration;

use self::hystart::HyStart;
use super::loss_tracker::LossTracker;
use super::{
    duration_from_micros_f64, AckInfo, Controller, ControllerFactory, ControllerInit, LossInfo,
    SentInfo, TimeoutInfo,
};
use crate::time::Instant;

/// RFC 9438 §4.6: the multiplicative decrease factor.
pub(super) const BETA: f64 = 0.7;
/// RFC 9438 §4.2: the cubic growth constant, packets per second³.
const C: f64 = 0.4;
/// RFC 9438 §4.3: the Reno-friendly additive increase per round trip, 3(1 − β)/(1 + β).
const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);
/// Pacing gains: the window per RTT times this (Linux: 2 in slow start, 1.2 afterwards).
pub(super) const PACING_GAIN: f64 = 1.2;
const SLOW_START_PACING_GAIN: f64 = 2.0;
/// Largest window, packets, whatever the peer advertises (keeps the arithmetic finite).
const MAX_WINDOW_PKTS: f64 = 1e9;
/// Linux's floor under a never-lost flow's growth: a window's worth of ACKs adds at least
/// this share of it (5% a round trip).
const LINUX_FLOOR_GROWTH: f64 = 0.05;

/// The CUBIC window arithmetic of RFC 9438, in packets and seconds, without any notion of
/// ACKs or losses: callers say when a congestion event happened and how much was
/// acknowledged.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct CubicWindow {
    cwnd: f64,
    ssthresh: f64,
    /// The window just before the last reduction (`W_max`, after fast convergence).
    w_max: f64,
    /// The window just before the last reduction, as it was (`cwnd_prior`).
    cwnd_prior: f64,
    /// The Reno-friendly estimate (`W_est`).
    w_est: f64,
    /// Seconds from the epoch's start until the window is back at `w_max` (`K`).
    k_secs: f64,
    /// When the current congestion-avoidance epoch began.
    epoch: Option<Instant>,
    min_pkts: f64,
    /// Linux's floor under the growth of a flow that has never lost (see
    /// [`CubicWindow::with_linux_floor`]), and whether it still applies.
    linux_floor: bool,
    never_lost: bool,
}

impl CubicWindow {
    /// A window of `initial` packets in slow start, never below `min_pkts`.
    pub(super) fn new(initial: f64, min_pkts: f64) -> Self {
        let mut window = Self {
            cwnd: initial,
            ssthresh: f64::INFINITY,
            w_max: initial,
            cwnd_prior: initial,
            w_est: initial,
            k_secs: 0.0,
            epoch: None,
            min_pkts,
            linux_floor: false,
            never_lost: true,
        };
        window.clamp();
        window
    }

    /// Grow by at least 5% a round trip in congestion avoidance until the first loss or
    /// timeout, as Linux CUBIC does (`bictcp_update` caps its ACKs per increment at 20 while
    /// `last_max_cwnd` is 0). A flow that HyStart took out of slow start without a loss
    /// starts its epoch at its own window, where `W_cubic` is flat for seconds; the floor is
    /// what brings such a flow back within seconds instead of minutes (the lab, session 64:
    /// kernel CUBIC that left slow start at 28-178 segments beside the scavenger kept 40-68%
    /// of its rate over 8 s at 1 Gbit/s x 50 ms).
    pub(super) fn with_linux_floor(mut self) -> Self {
        self.linux_floor = true;
        self
    }

    /// The window, packets.
    pub(super) fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// What the window is heading for: the slow-start threshold while below it (after a
    /// timeout, the window restarts from the minimum towards β of what it was), else the
    /// window itself.
    pub(super) fn target(&self) -> f64 {
        if self.in_slow_start() && self.ssthresh.is_finite() {
            self.ssthresh
        } else {
            self.cwnd
        }
    }

    /// Whether the window is below the slow-start threshold.
    pub(super) fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Leave slow start at the window it has, without a loss (HyStart): the epoch starts at
    /// this window, as it does when slow start reaches its threshold.
    pub(super) fn end_slow_start(&mut self, now: Instant) {
        if self.in_slow_start() {
            self.ssthresh = self.cwnd;
            self.w_max = self.cwnd;
            self.cwnd_prior = self.cwnd;
            self.start_epoch(now);
        }
    }

    /// Start congestion avoidance at `cwnd` packets as if a congestion event had just taken
    /// the window there from `w_max` (what a controller switching to CUBIC mid-flow does).
    pub(super) fn restart(&mut self, now: Instant, cwnd: f64, w_max: f64) {
        self.cwnd = cwnd;
        self.clamp();
        self.ssthresh = self.cwnd;
        self.cwnd_prior = w_max.max(self.cwnd);
        self.w_max = self.cwnd_prior;
        self.start_epoch(now);
    }

    /// `acked` packets were newly acknowledged at `now`, with `rtt` the smoothed round trip.
    pub(super) fn on_ack(&mut self, now: Instant, acked: f64, rtt: Duration) {
        if acked <= 0.0 {
            return;
        }
        if self.in_slow_start() {
            self.cwnd = (self.cwnd + acked).min(self.ssthresh.max(self.cwnd));
            if !self.in_slow_start() {
                // Slow start ended without loss: the epoch starts at this window.
                self.w_max = self.cwnd;
                self.cwnd_prior = self.cwnd;
                self.start_epoch(now);
            }
        } else {
            self.avoid(now, acked, rtt.as_secs_f64());
        }
        self.clamp();
    }

    /// Congestion avoidance (RFC 9438 §4.2-4.4): aim at `W_cubic(t + RTT)`, at most 1.5× the
    /// window, and never below the Reno-friendly estimate.
    fn avoid(&mut self, now: Instant, acked: f64, rtt: f64) {
        let before = self.cwnd;
        let epoch = *self.epoch.get_or_insert(now);
        let t = (now - epoch).as_secs_f64();
        let target = self.w_cubic(t + rtt).clamp(self.cwnd, 1.5 * self.cwnd);
        let cubic = self.cwnd + (target - self.cwnd) / self.cwnd * acked;
        // §4.3: W_est grows by α per window acknowledged, by 1 once past cwnd_prior.
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            ALPHA
        };
        self.w_est += alpha * acked / self.cwnd;
        self.cwnd = if self.w_cubic(t) < self.w_est {
            self.w_est.max(self.cwnd)
        } else {
            cubic
        };
        if self.linux_floor && self.never_lost {
            self.cwnd = self.cwnd.max(before + acked * LINUX_FLOOR_GROWTH);
        }
    }

    fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k_secs).powi(3) + self.w_max
    }

    /// A congestion event at `now`: fast convergence, then the window drops to β of itself.
    pub(super) fn on_congestion(&mut self, now: Instant) {
        self.never_lost = false;
        self.cwnd_prior = self.cwnd;
        self.w_max = if self.cwnd < self.w_max {
            self.cwnd * (1.0 + BETA) / 2.0
        } else {
            self.cwnd
        };
        self.cwnd *= BETA;
        self.clamp();
        self.ssthresh = self.cwnd;
        self.start_epoch(now);
    }

    /// An EXP timeout: the minimum window, slow start up to β of the old window.
    pub(super) fn on_timeout(&mut self) {
        self.never_lost = false;
        if self.cwnd > self.min_pkts {
            self.ssthresh = (self.cwnd * BETA).max(self.min_pkts);
            self.cwnd_prior = self.cwnd;
            self.w_max = self.cwnd;
        }
        self.cwnd = self.min_pkts;
        self.epoch = None;
    }

    fn start_epoch(&mut self, now: Instant) {
        self.epoch = Some(now);
        self.w_est = self.cwnd;
        self.k_secs = ((self.w_max - self.cwnd).max(0.0) / C).cbrt();
    }

    fn clamp(&mut self) {
        self.cwnd = if self.cwnd.is_finite() {
            self.cwnd.clamp(self.min_pkts, MAX_WINDOW_PKTS)
        } else {
            self.min_pkts
        };
    }
}

/// CUBIC's parameters. [`Default`] follows RFC 9438 (β 0.7, C 0.4) with RFC 6928's initial
/// window of 10 packets and a floor of 4 packets (UDT paces retransmissions at the period,
/// so a smaller window would repair losses at a crawl).
#[derive(Clone, Debug, PartialEq)]
pub struct CubicConfig {
    initial_window_pkts: f64,
    min_window_pkts: f64,
    pacing_gain: f64,
    hystart: bool,
}

impl CubicConfig {
    /// Window at `init`, packets (default 10). At least the minimum window.
    pub fn initial_window_pkts(&mut self, pkts: f64) -> &mut Self {
        self.initial_window_pkts = if pkts >= 1.0 { pkts } else { 1.0 };
        self
    }

    /// The smallest window, packets (default 4). At least 1.
    pub fn min_window_pkts(&mut self, pkts: f64) -> &mut Self {
        self.min_window_pkts = if pkts >= 1.0 { pkts } else { 1.0 };
        self
    }

    /// Pace at the window per RTT times `gain` after slow start (default 1.2, Linux's with
    /// pacing on; at least 1). Kernel TCP under the default qdisc does not pace at all, but
    /// sends what each ACK lets out in a burst: a large gain is that, for the simulator's
    /// "kernel-like" competitors (bursty flows lose out of step, so the queue they keep
    /// never drains).
    pub fn pacing_gain(&mut self, gain: f64) -> &mut Self {
        self.pacing_gain = if gain >= 1.0 { gain.min(1e3) } else { 1.0 };
        self
    }

    /// Leave slow start when the round trip rises, as Linux's HyStart does, and grow at
    /// least 5% a round trip until the first loss, as Linux CUBIC does (default off; see the
    /// module doc).
    pub fn hystart(&mut self, on: bool) -> &mut Self {
        self.hystart = on;
        self
    }

    /// The smallest window the controller ever reports, packets.
    pub fn min_window_value(&self) -> f64 {
        self.min_window_pkts.min(self.initial_window_pkts)
    }
}

impl Default for CubicConfig {
    /// RFC 6928's 10-packet initial window and a 4-packet floor.
    fn default() -> Self {
        Self {
            initial_window_pkts: 10.0,
            min_window_pkts: 4.0,
            pacing_gain: PACING_GAIN,
            hystart: false,
        }
    }
}

/// The CUBIC controller. Build one per connection with [`Cubic::new`] or a
/// [`CubicFactory`], then drive it through [`Controller`].
#[derive(Clone, Debug)]
pub struct Cubic {
    config: CubicConfig,
    window: CubicWindow,
    losses: LossTracker,
    max_window_pkts: f64,
    srtt: Duration,
    /// The lowest smoothed RTT seen, which the pacer uses.
    min_rtt: Option<Duration>,
    /// HyStart's state, when [`CubicConfig::hystart`] is on.
    hystart: Option<HyStart>,
}

impl Cubic {
    /// A controller in its `init` state for [`ControllerInit::default`] at time zero; the
    /// connection calls [`Controller::init`] with the real values.
    pub fn new(config: CubicConfig) -> Self {
        Self::fresh(config, Instant::ZERO, &ControllerInit::default())
    }

    fn fresh(config: CubicConfig, now: Instant, init: &ControllerInit) -> Self {
        let min = config.min_window_value();
        Self {
            hystart: config.hystart.then(|| HyStart::new(now, init.isn)),
            window: {
                let window = CubicWindow::new(config.initial_window_pkts, min);
                if config.hystart {
                    window.with_linux_floor()
                } else {
                    window
                }
            },
            losses: LossTracker::new(init.isn),
            max_window_pkts: f64::from(init.max_window_pkts).max(min),
            srtt: init.rtt.max(Duration::from_micros(1)),
            min_rtt: None,
            config,
        }
    }

    /// The configuration this controller runs with.
    pub fn config(&self) -> &CubicConfig {
        &self.config
    }

    /// The congestion window itself, packets (without the packets beyond holes that
    /// [`Controller::window_pkts`] adds).
    pub fn cwnd_pkts(&self) -> f64 {
        self.window.cwnd()
    }

    /// Whether the controller is in slow start.
    pub fn in_slow_start(&self) -> bool {
        self.window.in_slow_start()
    }

    /// The inter-packet period in microseconds: the lowest RTT seen (the initial RTT until
    /// an ACK brings one) over the paced window.
    pub fn period_us(&self) -> f64 {
        let gain = if self.in_slow_start() {
            SLOW_START_PACING_GAIN.max(self.config.pacing_gain)
        } else {
            self.config.pacing_gain
        };
        let rtt = self.min_rtt.unwrap_or(self.srtt);
        rtt.as_secs_f64() * 1e6 / (gain * self.window.cwnd())
    }
}

impl Default for Cubic {
    fn default() -> Self {
        Self::new(CubicConfig::default())
    }
}

impl Controller for Cubic {
    fn init(&mut self, now: Instant, init: &ControllerInit) {
        *self = Self::fresh(self.config.clone(), now, init);
    }

    fn on_ack(&mut self, now: Instant, ack: &AckInfo) {
        if !ack.rtt.is_zero() {
            self.srtt = ack.rtt;
            self.min_rtt = Some(self.min_rtt.map_or(ack.rtt, |m| m.min(ack.rtt)));
        }
        let flight = f64::from(
            self.losses
                .last_ack()
                .offset_to(ack.largest_sent.next())
                .max(0),
        );
        if let Some(hystart) = &mut self.hystart {
            let judge = self.window.in_slow_start() && self.window.cwnd() >= hystart::LOW_WINDOW;
            if hystart.on_ack(now, ack, judge) {
                self.window.end_slow_start(now);
            }
        }
        let newly = self.losses.on_ack(ack.ack) as f64;
        // Grow only a window the flow uses (RFC 9438 §5.8, after RFC 7661): half of it in
        // flight, since pacing at 1.2× spreads the window over most of a round trip.
        if flight * 2.0 >= self.window.cwnd() {
            self.window.on_ack(now, newly, self.srtt);
        }
    }

    fn on_loss(&mut self, now: Instant, loss: &LossInfo<'_>) {
        if self.losses.on_loss(loss) > 0 && self.losses.try_cut(now, self.srtt, loss.largest_sent) {
            self.window.on_congestion(now);
        }
    }

    fn on_timeout(&mut self, now: Instant, info: &TimeoutInfo) {
        self.losses.try_cut(now, self.srtt, info.largest_sent);
        self.window.on_timeout();
    }

    fn on_packet_sent(&mut self, now: Instant, info: &SentInfo) {
        if let Some(hystart) = self.hystart.as_mut().filter(|_| !info.retransmit) {
            let rtt = self.min_rtt.unwrap_or(self.srtt);
            hystart.on_sent(now, info.seq, rtt);
        }
    }

    fn window_pkts(&self) -> f64 {
        let window = self.window.cwnd() + self.losses.beyond_holes();
        window.min(self.max_window_pkts.max(self.config.min_window_value()))
    }

    fn send_period(&self) -> Duration {
        duration_from_micros_f64(self.period_us())
    }

    fn name(&self) -> &'static str {
        CubicFactory::NAME
    }
}

/// Builds [`Cubic`] controllers with one configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CubicFactory {
    /// The configuration every controller gets.
    pub config: CubicConfig,
}

impl CubicFactory {
    /// The controller's name in logs, stats and `--cc`.
    pub const NAME: &'static str = "cubic";
}

impl ControllerFactory for CubicFactory {
    fn build(&self) -> Box<dyn Controller> {
        Box::new(Cubic::new(self.config.clone()))
    }

    fn name(&self) -> &'static str {
        Self::NAME
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::congestion::LossRange;
    use crate::seq::SeqNumber;

    fn at(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn a_congestion_event_cuts_to_beta_and_cubic_growth_returns_to_w_max_after_k() {
        let mut w = CubicWindow::new(10.0, 4.0);
        w.restart(at(0), 100.0, 100.0);
        w.on_congestion(at(0));
        assert!((w.cwnd() - 70.0).abs() < 1e-9);
        // K = cbrt(30 / 0.4) ≈ 4.22 s: ACK a window every 100 ms until then.
        let rtt = Duration::from_millis(100);
        let mut t = 0;
        while t < 4_200 {
            t += 100;
            let acked = w.cwnd();
            w.on_ack(at(t), acked, rtt);
        }
        assert!((w.cwnd() - 100.0).abs() < 3.0, "cwnd {}", w.cwnd());
        // A second event below W_max: fast convergence lowers W_max.
        w.cwnd = 90.0;
        w.on_congestion(at(t));
        assert!((w.w_max - 90.0 * 0.85).abs() < 1e-9);
    }

    /// Slow start left at 50 packets without a loss (HyStart), 50 ms round trips: RFC 9438's
    /// cubic curve is flat there (`W_max` is the window itself, K = 0) and only the
    /// Reno-friendly packet a round trip moves it; Linux's floor grows it 5% a round trip
    /// until the first loss, and after one it makes no difference.
    #[test]
    fn a_never_lost_window_grows_five_percent_a_round_trip_with_linux_floor() {
        let rtt = Duration::from_millis(50);
        // The window's growth over ten round trips, each acknowledging a window.
        let grow = |w: &mut CubicWindow| {
            let start = w.cwnd();
            for i in 1..=10 {
                let acked = w.cwnd();
                w.on_ack(at(50 * i), acked, rtt);
            }
            w.cwnd() / start
        };
        let left_at_50 = |floor: bool| {
            let mut w = CubicWindow::new(10.0, 4.0);
            if floor {
                w = w.with_linux_floor();
            }
            w.on_ack(at(0), 40.0, rtt);
            w.end_slow_start(at(0));
            assert!((w.cwnd() - 50.0).abs() < 1e-9);
            w
        };
        let (mut floor, mut plain) = (left_at_50(true), left_at_50(false));
        let with_floor = grow(&mut floor.clone());
        assert!(
            (with_floor - 1.05f64.powi(10)).abs() < 0.02,
            "x{with_floor}"
        );
        let without = grow(&mut plain.clone());
        assert!((without - 1.2).abs() < 0.01, "RFC 9438 alone: x{without}");
        // After a loss the floor is gone: both grow as CUBIC does.
        floor.on_congestion(at(0));
        plain.on_congestion(at(0));
        assert_eq!(grow(&mut floor), grow(&mut plain));
    }

    #[test]
    fn reno_friendly_region_grows_by_alpha_per_round_trip_on_small_windows() {
        let mut w = CubicWindow::new(10.0, 4.0);
        w.restart(at(0), 100.0, 100.0);
        w.on_congestion(at(0));
        let start = w.cwnd();
        // Short RTT: cubic growth is negligible over 10 round trips of 1 ms, and W_est stays
        // below the window before the cut (past it, it grows by 1 a round trip).
        for i in 1..=10 {
            let acked = w.cwnd();
            w.on_ack(at(i), acked, Duration::from_millis(1));
        }
        let grown = w.cwnd() - start;
        assert!((grown - 10.0 * ALPHA).abs() < 0.5, "grew {grown}");
    }

    #[test]
    fn slow_start_doubles_then_a_loss_ends_it_once_per_round_trip() {
        let mut cubic = Cubic::default();
        let init = ControllerInit {
            isn: SeqNumber::new(0),
            ..ControllerInit::default()
        };
        cubic.init(at(0), &init);
        let ack = |seq: u32, sent: u32| AckInfo {
            ack: SeqNumber::new(seq),
            rtt: Duration::from_millis(50),
            recv_rate_pkts: 0,
            bandwidth_pkts: 0,
            largest_sent: SeqNumber::new(sent),
            receiver_time: None,
        };
        cubic.on_ack(at(50), &ack(10, 30));
        assert!(cubic.in_slow_start());
        assert_eq!(cubic.cwnd_pkts(), 20.0);
        let ranges = [LossRange {
            first: SeqNumber::new(12),
            last: SeqNumber::new(12),
        }];
        let loss = LossInfo {
            first_lost: SeqNumber::new(12),
            ranges: &ranges,
            largest_sent: SeqNumber::new(30),
            rtt: Duration::from_millis(50),
            recv_rate_pkts: 0,
            bandwidth_pkts: 0,
            receiver_time: None,
        };
        cubic.on_loss(at(60), &loss);
        assert!(!cubic.in_slow_start());
        assert!((cubic.cwnd_pkts() - 14.0).abs() < 1e-9);
        // The packets past the hole (10..13) count towards the window the connection sees.
        assert!((cubic.window_pkts() - 14.0 - 3.0).abs() < 1e-9);
        // A second loss before the ACK passes sequence 30 is the same event.
        let later = [LossRange {
            first: SeqNumber::new(20),
            last: SeqNumber::new(21),
        }];
        cubic.on_loss(
            at(70),
            &LossInfo {
                ranges: &later,
                ..loss
            },
        );
        assert!((cubic.cwnd_pkts() - 14.0).abs() < 1e-9);
    }
}
