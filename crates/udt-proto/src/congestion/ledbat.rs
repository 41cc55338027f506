//! A scavenger controller after LEDBAT (RFC 6817, the algorithm uTP runs): it fills what the
//! other traffic leaves idle and backs off as soon as a queue builds, so a background
//! transfer (`udt cp --priority background`, `--cc ledbat`) gets out of the way of everything
//! else on the path within a few round trips and takes the capacity back when they end.
//!
//! # The delay signal
//!
//! LEDBAT steers the queueing delay it adds at the bottleneck towards a target. RFC 6817
//! measures one-way delay (receiver clock minus sender timestamp); this controller measures
//! the round trip at the sender instead, from its own send times:
//! * it marks a new packet every so often (a fixed ring, [`MARKERS`] deep) and, when a
//!   cumulative ACK passes a marker, takes `now − sent` of the *newest* marker passed as a
//!   delay sample. That packet arrived just before the receiver sent the ACK, so the sample
//!   is the path's round trip plus at most one marker spacing of ACK delay;
//! * the *current* delay is the minimum of the last [`LedbatConfig::current_filter`] samples
//!   (RFC 6817 §3.4.2's filter; it also removes the ACK-timer delay that some samples carry
//!   and the inflation of a sample whose ACK waited for a repaired hole), and the *base*
//!   delay is the minimum over per-minute buckets of the last
//!   [`LedbatConfig::base_history`] minutes (§3.4.1). Their difference is the queueing delay.
//!
//! Why not the alternatives: the RTT that UDT's ACKs carry is the receiver's ACK/ACK2
//! estimate smoothed by 1/8 per ACK, and the sender smooths it by 1/8 again; at one ACK per
//! 10 ms that lags a change in the queue by ~150 ms, several round trips on the paths LEDBAT
//! is meant to protect. A true one-way delay needs the receiver's clock: either the receiver
//! reports it in a custom 0x7FFF message, which only a peer running this code sends (a
//! libudt 4.11 peer or a server with another controller never would, and the scavenger must
//! work against any server), or the ACK's header timestamp is paired with the send time of
//! the packet it covers, which the [`AckInfo`] hook does not carry today. Own send times need
//! nothing from the peer and change nothing on the wire. The price of a round-trip signal is
//! that queueing on the reverse path (ACKs stuck behind someone's upload) also reads as
//! congestion: the scavenger then yields to traffic in either direction, which errs on the
//! side a background transfer should.
//!
//! # The window
//!
//! Per ACK that newly acknowledges `n` packets, with `q` the queueing delay and
//! `off = (target − q) / target` (RFC 6817 §2.4.2):
//! * **slow start** (at start, and again once the queue has stayed below a quarter of the
//!   target for two round trips: the path has idle capacity): `cwnd += gain · n`, which at
//!   gain 1 is exactly TCP's slow start and never faster. It ends when `q` reaches 3/4 of the
//!   target (as LEDBAT++ does, draft-irtf-iccrg-ledbat-plus-plus §4.1) or on a loss. Without
//!   it, LEDBAT's linear growth of one packet per round trip would need 400 round trips to
//!   fill 100 Mbit/s × 50 ms.
//! * **below target**: `cwnd += gain · off · n / cwnd`, at most `gain` packets per round trip.
//! * **above target**: `cwnd −= min(1/2, −off) · n`, a multiplicative decrease of up to half
//!   the window per round trip (LEDBAT++ §4.3). RFC 6817's own decrease is as slow as its
//!   increase (one packet per round trip per target of excess), which on a long fat path
//!   takes minutes to yield; a scavenger may always back off faster.
//! * the window grows only while the flow used it (RFC 6817's `flightsize + ALLOWED_INCREASE`
//!   rule, stated for UDT's ACKs, which cover many packets): if the packets in flight when the
//!   ACK arrived were more than [`LedbatConfig::allowed_increase_pkts`] below the window, it
//!   does not grow;
//! * **loss** halves the window, at most once per round trip (§2.4.2); an EXP timeout drops
//!   it to the minimum (§2.4.2, "cwnd = 1 MSS" there; UDT's minimum here is two packets).
//!
//! Pacing: the window per current round trip times 1.25 (2 in slow start), so packets leave
//! evenly instead of in window-sized bursts that a shallow queue would drop.
//!
//! # The target
//!
//! RFC 6817 caps TARGET at 100 ms, and uTP uses 100 ms. The default here is
//! [`LedbatConfig::DEFAULT_TARGET`], 25 ms, because a target only works if the bottleneck's
//! queue can hold that much delay: below it the flow never sees "above target", fills the
//! queue until it overflows and competes by loss like any TCP. UDT runs on fast long paths,
//! where a buffer of one BDP at 10-50 ms or a switch's few milliseconds is common, and a
//! scavenger that added 100 ms to everyone's latency would be no scavenger for interactive
//! traffic beside it. The floor is the noise of the signal: samples carry up to a marker
//! spacing of ACK delay, and UDT acknowledges every 10 ms (SYN), so targets much below 10 ms
//! would chase noise. 25 ms keeps 2.5 ACK periods of headroom and still fits a one-BDP queue
//! at RTTs from 25 ms up. Shallow-buffered paths want a smaller target, deep buffers (home
//! routers) allow a larger one: [`LedbatConfig::target`].
//!
//! Every hook is O(1) amortised (markers are pushed once and popped once; the base history
//! is a fixed array of [`LedbatConfig::base_history`] ≤ 60 buckets).

#[cfg(test)]
mod tests;

use std::time::Duration;

use super::{
    duration_from_micros_f64, AckInfo, Controller, ControllerFactory, ControllerInit, LossInfo,
    SentInfo, TimeoutInfo,
};
use crate::seq::SeqNumber;
use crate::time::Instant;

/// Outstanding markers: [`MARKERS_PER_RTT`] per round trip for four round trips of flight.
const MARKERS: usize = 64;
/// Markers placed per round trip (each sample carries at most 1/16 RTT of marker spacing).
const MARKERS_PER_RTT: u32 = 16;
/// Most delay samples the current-delay filter keeps.
const MAX_CURRENT_FILTER: usize = 16;
/// Most per-minute buckets the base-delay history keeps.
const MAX_BASE_HISTORY: usize = 60;
/// Length of one base-delay bucket (RFC 6817 §3.4.1: one minute).
const BUCKET: Duration = Duration::from_secs(60);
/// Pacing gains: the window is spread over a round trip, a little faster than it drains.
const PACING_GAIN: f64 = 1.25;
const SLOW_START_PACING_GAIN: f64 = 2.0;
/// Slow start ends at this fraction of the target.
const SLOW_START_EXIT: f64 = 0.75;
/// Slow start resumes after the queueing delay stayed below this fraction of the target for
/// [`IDLE_ROUNDS`] round trips.
const IDLE_QUEUE: f64 = 0.25;
const IDLE_ROUNDS: u32 = 2;
/// Largest window, packets, whatever the peer advertises (keeps the arithmetic finite).
const MAX_WINDOW_PKTS: f64 = 1e9;

/// LEDBAT's parameters. [`Default`] follows RFC 6817 (GAIN 1, BASE_HISTORY 10 minutes,
/// CURRENT_FILTER 4, ALLOWED_INCREASE 1, MIN_CWND 2) except for the target, 25 ms instead of
/// 100 ms (see the module doc), and an initial window of 10 packets (RFC 6928's, where RFC
/// 6817 allows at most TCP's).
#[derive(Clone, Debug, PartialEq)]
pub struct LedbatConfig {
    target: Duration,
    gain: f64,
    base_history: usize,
    current_filter: usize,
    allowed_increase_pkts: f64,
    initial_window_pkts: f64,
    min_window_pkts: f64,
}

impl LedbatConfig {
    /// The default queueing-delay target.
    pub const DEFAULT_TARGET: Duration = Duration::from_millis(25);

    /// Queueing delay the flow aims to add at the bottleneck (default 25 ms). Clamped to
    /// [1 ms, 100 ms], RFC 6817's upper bound.
    pub fn target(&mut self, target: Duration) -> &mut Self {
        self.target = target.clamp(Duration::from_millis(1), Duration::from_millis(100));
        self
    }

    /// Window gain (default 1, RFC 6817's maximum): packets added per round trip at zero
    /// queueing delay, and the slow-start multiplier. Clamped to (0, 1].
    pub fn gain(&mut self, gain: f64) -> &mut Self {
        self.gain = if gain > 0.0 { gain.min(1.0) } else { 1.0 };
        self
    }

    /// Minutes of base-delay history (default 10). Clamped to [1, 60].
    pub fn base_history(&mut self, minutes: usize) -> &mut Self {
        self.base_history = minutes.clamp(1, MAX_BASE_HISTORY);
        self
    }

    /// Delay samples the current-delay minimum filter spans (default 4). Clamped to [1, 16].
    pub fn current_filter(&mut self, samples: usize) -> &mut Self {
        self.current_filter = samples.clamp(1, MAX_CURRENT_FILTER);
        self
    }

    /// How far the window may run ahead of the packets in flight and still grow (default 1).
    pub fn allowed_increase_pkts(&mut self, pkts: f64) -> &mut Self {
        self.allowed_increase_pkts = if pkts >= 0.0 { pkts } else { 0.0 };
        self
    }

    /// Window at `init` in packets (default 10). At least the minimum window.
    pub fn initial_window_pkts(&mut self, pkts: f64) -> &mut Self {
        self.initial_window_pkts = if pkts >= 1.0 { pkts } else { 1.0 };
        self
    }

    /// Smallest window in packets (default 2). At least 1.
    pub fn min_window_pkts(&mut self, pkts: f64) -> &mut Self {
        self.min_window_pkts = if pkts >= 1.0 { pkts } else { 1.0 };
        self
    }

    /// The target in use.
    pub fn target_value(&self) -> Duration {
        self.target
    }

    /// The minimum window in use.
    pub fn min_window_value(&self) -> f64 {
        self.min_window_pkts
    }
}

impl Default for LedbatConfig {
    fn default() -> Self {
        Self {
            target: Self::DEFAULT_TARGET,
            gain: 1.0,
            base_history: 10,
            current_filter: 4,
            allowed_increase_pkts: 1.0,
            initial_window_pkts: 10.0,
            min_window_pkts: 2.0,
        }
    }
}

/// One sampled packet: when it left.
#[derive(Clone, Copy, Debug)]
struct Marker {
    seq: SeqNumber,
    sent_at: Instant,
}

/// The delay filters of RFC 6817 §3.4: the minimum of the last few samples (current) and
/// the minimum over per-minute buckets (base). Fixed arrays, nothing allocated per sample.
#[derive(Clone, Debug)]
struct DelayFilters {
    current: [Duration; MAX_CURRENT_FILTER],
    current_len: usize,
    current_next: usize,
    current_cap: usize,
    base: [Duration; MAX_BASE_HISTORY],
    base_len: usize,
    base_last: usize,
    base_cap: usize,
    bucket_start: Instant,
}

impl DelayFilters {
    fn new(now: Instant, current_cap: usize, base_cap: usize) -> Self {
        Self {
            current: [Duration::ZERO; MAX_CURRENT_FILTER],
            current_len: 0,
            current_next: 0,
            current_cap: current_cap.clamp(1, MAX_CURRENT_FILTER),
            base: [Duration::ZERO; MAX_BASE_HISTORY],
            base_len: 0,
            base_last: 0,
            base_cap: base_cap.clamp(1, MAX_BASE_HISTORY),
            bucket_start: now,
        }
    }

    fn push(&mut self, now: Instant, sample: Duration) {
        self.current[self.current_next] = sample;
        self.current_next = (self.current_next + 1) % self.current_cap;
        self.current_len = (self.current_len + 1).min(self.current_cap);
        if self.base_len == 0 {
            self.base[0] = sample;
            self.base_len = 1;
            self.bucket_start = now;
        } else if now - self.bucket_start >= BUCKET {
            // A new minute: a fresh bucket, overwriting the oldest once the history is full.
            self.base_last = (self.base_last + 1) % self.base_cap;
            self.base[self.base_last] = sample;
            self.base_len = (self.base_len + 1).min(self.base_cap);
            self.bucket_start = now;
        } else {
            let last = &mut self.base[self.base_last];
            *last = (*last).min(sample);
        }
    }

    /// The minimum of the recent samples, if any.
    fn current(&self) -> Option<Duration> {
        self.current[..self.current_len].iter().copied().min()
    }

    /// The minimum over the base history, if any.
    fn base(&self) -> Option<Duration> {
        self.base[..self.base_len].iter().copied().min()
    }
}

/// The LEDBAT scavenger. Build one per connection with [`Ledbat::new`] or a
/// [`LedbatFactory`], then drive it through [`Controller`].
#[derive(Clone, Debug)]
pub struct Ledbat {
    config: LedbatConfig,
    max_window_pkts: f64,
    initial_rtt: Duration,
    markers: [Marker; MARKERS],
    head: usize,
    len: usize,
    last_mark: Option<Instant>,
    filters: DelayFilters,
    last_ack: SeqNumber,
    slow_start: bool,
    /// Since when the queue has looked idle (below [`IDLE_QUEUE`] of the target).
    idle_since: Option<Instant>,
    last_halving: Option<Instant>,
    cwnd_pkts: f64,
}

impl Ledbat {
    /// A controller in its `init` state for [`ControllerInit::default`] at time zero; the
    /// connection calls [`Controller::init`] with the real values.
    pub fn new(config: LedbatConfig) -> Self {
        Self::fresh(config, Instant::ZERO, &ControllerInit::default())
    }

    fn fresh(config: LedbatConfig, now: Instant, init: &ControllerInit) -> Self {
        let blank = Marker {
            seq: init.isn,
            sent_at: now,
        };
        let mut ledbat = Self {
            max_window_pkts: f64::from(init.max_window_pkts).min(MAX_WINDOW_PKTS),
            initial_rtt: init.rtt.max(Duration::from_micros(1)),
            markers: [blank; MARKERS],
            head: 0,
            len: 0,
            last_mark: None,
            filters: DelayFilters::new(now, config.current_filter, config.base_history),
            last_ack: init.isn,
            slow_start: true,
            idle_since: None,
            last_halving: None,
            cwnd_pkts: config.initial_window_pkts,
            config,
        };
        ledbat.clamp_window();
        ledbat
    }

    /// The configuration this controller runs with.
    pub fn config(&self) -> &LedbatConfig {
        &self.config
    }

    /// The current round-trip estimate: the filtered delay, or the initial RTT until a
    /// sample arrives.
    pub fn rtt(&self) -> Duration {
        self.filters
            .current()
            .filter(|d| !d.is_zero())
            .unwrap_or(self.initial_rtt)
    }

    /// The queueing delay estimate: current minus base delay (zero before any sample).
    pub fn queueing_delay(&self) -> Duration {
        match (self.filters.current(), self.filters.base()) {
            (Some(current), Some(base)) => current.saturating_sub(base),
            _ => Duration::ZERO,
        }
    }

    /// Whether the controller is in slow start.
    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }

    /// The inter-packet period in microseconds: the round trip over the paced window.
    pub fn period_us(&self) -> f64 {
        let gain = if self.slow_start {
            SLOW_START_PACING_GAIN
        } else {
            PACING_GAIN
        };
        self.rtt().as_secs_f64() * 1e6 / (gain * self.cwnd_pkts)
    }

    /// Mark `seq` if the ring has room and the last marker is old enough.
    fn mark(&mut self, now: Instant, seq: SeqNumber) {
        let spacing = self.rtt() / MARKERS_PER_RTT;
        if self.len == MARKERS || self.last_mark.is_some_and(|t| now - t < spacing) {
            return;
        }
        self.markers[(self.head + self.len) % MARKERS] = Marker { seq, sent_at: now };
        self.len += 1;
        self.last_mark = Some(now);
    }

    /// Pop the markers `ack` passed; the delay sample is the newest one's age.
    fn take_sample(&mut self, now: Instant, ack: SeqNumber) -> Option<Duration> {
        let mut newest = None;
        while self.len > 0 && self.markers[self.head].seq < ack {
            newest = Some(self.markers[self.head].sent_at);
            self.head = (self.head + 1) % MARKERS;
            self.len -= 1;
        }
        newest.map(|sent| now.saturating_duration_since(sent))
    }

    /// Slow start's entry and exit by the queueing delay; see the module doc.
    fn update_phase(&mut self, now: Instant, queueing: f64, target: f64) {
        if self.slow_start {
            if queueing >= SLOW_START_EXIT * target {
                self.slow_start = false;
                self.idle_since = None;
            }
            return;
        }
        if queueing >= IDLE_QUEUE * target {
            self.idle_since = None;
            return;
        }
        let since = *self.idle_since.get_or_insert(now);
        if now - since >= self.rtt() * IDLE_ROUNDS {
            self.slow_start = true;
        }
    }

    /// The window after `newly` packets were acknowledged with `flight` in flight before.
    fn update_window(&mut self, newly: f64, flight: f64, queueing: f64, target: f64) {
        let old = self.cwnd_pkts;
        let gain = self.config.gain;
        let off = (target - queueing) / target;
        let next = if self.slow_start {
            old + gain * newly
        } else if off >= 0.0 {
            old + gain * off * newly / old
        } else {
            old - (-off).min(0.5) * newly
        };
        let cwnd_limited = flight + self.config.allowed_increase_pkts >= old;
        self.cwnd_pkts = if cwnd_limited { next } else { next.min(old) };
        self.clamp_window();
    }

    fn clamp_window(&mut self) {
        let floor = self.config.min_window_pkts;
        let cap = self.max_window_pkts.max(floor);
        self.cwnd_pkts = if self.cwnd_pkts.is_finite() {
            self.cwnd_pkts.clamp(floor, cap)
        } else {
            floor
        };
    }
}

impl Default for Ledbat {
    fn default() -> Self {
        Self::new(LedbatConfig::default())
    }
}

impl Controller for Ledbat {
    fn init(&mut self, now: Instant, init: &ControllerInit) {
        *self = Self::fresh(self.config.clone(), now, init);
    }

    fn on_packet_sent(&mut self, now: Instant, info: &SentInfo) {
        if !info.retransmit {
            self.mark(now, info.seq);
        }
    }

    fn on_ack(&mut self, now: Instant, ack: &AckInfo) {
        if ack.ack <= self.last_ack {
            return;
        }
        let flight = f64::from(self.last_ack.offset_to(ack.largest_sent.next()).max(0));
        let newly = f64::from(self.last_ack.offset_to(ack.ack).max(0));
        self.last_ack = ack.ack;
        if let Some(sample) = self.take_sample(now, ack.ack) {
            self.filters.push(now, sample);
        }
        let queueing = self.queueing_delay().as_secs_f64();
        let target = self.config.target.as_secs_f64();
        self.update_phase(now, queueing, target);
        self.update_window(newly, flight, queueing, target);
    }

    fn on_loss(&mut self, now: Instant, _loss: &LossInfo<'_>) {
        self.slow_start = false;
        self.idle_since = None;
        let rtt = self.rtt();
        if self.last_halving.is_some_and(|at| now - at < rtt) {
            return;
        }
        self.last_halving = Some(now);
        self.cwnd_pkts /= 2.0;
        self.clamp_window();
    }

    fn on_timeout(&mut self, now: Instant, _info: &TimeoutInfo) {
        self.slow_start = false;
        self.idle_since = None;
        self.last_halving = Some(now);
        self.cwnd_pkts = self.config.min_window_pkts;
    }

    fn window_pkts(&self) -> f64 {
        self.cwnd_pkts
    }

    fn send_period(&self) -> Duration {
        duration_from_micros_f64(self.period_us())
    }

    fn name(&self) -> &'static str {
        LedbatFactory::NAME
    }
}

/// Builds [`Ledbat`] controllers with one configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LedbatFactory {
    /// The configuration every controller gets.
    pub config: LedbatConfig,
}

impl LedbatFactory {
    /// The controller's name in logs, stats and `--cc`.
    pub const NAME: &'static str = "ledbat";
}

impl ControllerFactory for LedbatFactory {
    fn build(&self) -> Box<dyn Controller> {
        Box::new(Ledbat::new(self.config.clone()))
    }

    fn name(&self) -> &'static str {
        Self::NAME
    }
}
