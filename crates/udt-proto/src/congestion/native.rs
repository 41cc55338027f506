//! UDT's native congestion control, exactly as libudt 4.11's `CUDTCC` does it (protocol fact
//! sheet §5.2–§5.5): window-limited slow start, then rate control with a DAIMD rule — an
//! increase sized from the packet-pair link-capacity estimate (`10^ceil(log10(b·MSS·8))`), a
//! 1/1.125 decrease per congestion period with a few randomised extra decreases, and a window
//! sized from the receiver's arrival speed.
//!
//! State is kept the way 4.11 keeps it — the period as `f64` microseconds
//! (`m_dPktSndPeriod`), the counters as integers — so the same inputs give the same numbers.
//!
//! Deviations from 4.11, all deliberate:
//! * `DecRandom` comes from a PCG32 stream seeded with [`ControllerInit::seed`], one draw per
//!   new congestion period. 4.11 reseeds libc `rand()` with `LastDecSeq` and draws once,
//!   which makes it a function of the sequence number and the platform's libc; we keep the
//!   distribution (`max(1, ceil(AvgNAKNum · U))`, U uniform on [0, 1]) and make it
//!   reproducible across platforms.
//! * The period is capped at [`Native::MAX_PERIOD_US`] (100 s) so it stays finite under an
//!   endless stream of NAKs; 4.11 would multiply by 1.125 without bound.
//! * An MSS of 0 is treated as 1 (4.11 never sees one; it would make the increase NaN).
//! * Slow start is ACK-clocked (unless [`NativeConfig::ack_clocked_slow_start`] is off, as in
//!   [`NativeConfig::libudt`]): every numbered ACK grows the window by what it newly
//!   acknowledges, not only the first ACK of each 10 ms RC interval. With 4.11's ACK every
//!   SYN the two are the same; with our receiver's prompt ACKs (one per max(1 ms, RTT / 64))
//!   the window doubles per RTT on short paths instead of per 10 ms, so a 1 MB transfer on
//!   loopback takes a few milliseconds rather than 25. Rate control after slow start keeps
//!   4.11's once-per-interval gate. Leaving slow start, the period is set from the larger of
//!   4.11's smoothed receive rate A and the delivery rate measured from the ACKs of the last
//!   RC interval: A lags by a hundred milliseconds, and slow start may now end sooner.
//! * The RC interval clock is steady (unless [`NativeConfig::steady_rc_clock`] is off): an
//!   interval starts where the previous one ended, not at the ACK that happened to open it,
//!   so ACKs more frequent than SYN do not stretch intervals and slow the rate increase.

use std::time::Duration;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg32;

use super::{
    duration_from_micros_f64, AckInfo, Controller, ControllerFactory, ControllerInit, LossInfo,
    TimeoutInfo, SYN,
};
use crate::seq::SeqNumber;
use crate::time::{duration_micros, Instant};

/// Tunables of the native controller. [`Default`] is libudt 4.11 (`ccc.cpp`, `CUDTCC`).
#[derive(Clone, Debug, PartialEq)]
pub struct NativeConfig {
    min_inc: f64,
    decrease_factor: f64,
    max_decreases_per_period: u32,
    initial_window_pkts: f64,
    window_headroom_pkts: f64,
    rc_interval: Duration,
    ack_clocked_slow_start: bool,
    steady_rc_clock: bool,
}

impl NativeConfig {
    /// Exactly libudt 4.11's `CUDTCC`: like [`Default`], but slow start grows the window
    /// only at the first ACK of each RC interval, and each interval starts at the ACK that
    /// opened it.
    pub fn libudt() -> Self {
        Self {
            ack_clocked_slow_start: false,
            steady_rc_clock: false,
            ..Self::default()
        }
    }

    /// Whether every numbered ACK in slow start grows the window (default: on; 4.11: off,
    /// growth only once per RC interval). See the module documentation.
    pub fn ack_clocked_slow_start(&mut self, on: bool) -> &mut Self {
        self.ack_clocked_slow_start = on;
        self
    }

    /// Whether an RC interval starts where the previous one ended (default: on) rather than
    /// at the ACK that opened it (4.11). With 4.11's ACK every SYN the two agree; with ACKs
    /// every few ms, 4.11's rule stretches each interval to the next ACK after 10 ms (12.5 ms
    /// with ACKs 3.125 ms apart), slowing the rate increase by up to a fifth. After a pause
    /// of two intervals or more the clock restarts at the ACK, as in 4.11.
    pub fn steady_rc_clock(&mut self, on: bool) -> &mut Self {
        self.steady_rc_clock = on;
        self
    }

    /// Minimum rate increase per RC interval, in packets per SYN (4.11: 0.01 since Jan 2012;
    /// draft-03 says 1/MSS). Non-positive or NaN values become the smallest positive `f64`.
    pub fn min_inc(&mut self, packets_per_syn: f64) -> &mut Self {
        self.min_inc = if packets_per_syn > 0.0 {
            packets_per_syn
        } else {
            f64::MIN_POSITIVE
        };
        self
    }

    /// Period multiplier on a decrease (4.11: 1.125, i.e. the rate drops to 8/9). Values
    /// below 1 (or NaN) become 1.
    pub fn decrease_factor(&mut self, factor: f64) -> &mut Self {
        self.decrease_factor = if factor >= 1.0 { factor } else { 1.0 };
        self
    }

    /// The `5` in 4.11's `DecCount++ < 5`: a congestion period starts with one decrease and
    /// `DecCount = 1`, so at most `limit - 1` extra decreases follow (4.11: 5, i.e. 4 extra;
    /// 0.875⁵ ≈ 0.51, so the rate at most halves per period).
    pub fn max_decreases_per_period(&mut self, limit: u32) -> &mut Self {
        self.max_decreases_per_period = limit;
        self
    }

    /// Congestion window at `init` in packets (4.11: 16). At least 1.
    pub fn initial_window_pkts(&mut self, pkts: f64) -> &mut Self {
        self.initial_window_pkts = if pkts >= 1.0 { pkts } else { 1.0 };
        self
    }

    /// Packets added to the arrival-speed window after slow start, the `+ 16` in
    /// `A/10⁶·(RTT + SYN) + 16` (4.11: 16). At least 1.
    pub fn window_headroom_pkts(&mut self, pkts: f64) -> &mut Self {
        self.window_headroom_pkts = if pkts >= 1.0 { pkts } else { 1.0 };
        self
    }

    /// Rate-control interval: `on_ack` acts at most once per interval, and it is also the
    /// ACK timer the controller asks for (4.11: SYN = 10 ms). At least 1 µs.
    pub fn rc_interval(&mut self, interval: Duration) -> &mut Self {
        self.rc_interval = interval.max(Duration::from_micros(1));
        self
    }

    /// The smallest window this configuration can produce: the window starts at the
    /// initial value, only grows in slow start, and afterwards is at least the headroom.
    pub fn min_window_pkts(&self) -> f64 {
        self.initial_window_pkts.min(self.window_headroom_pkts)
    }
}

impl Default for NativeConfig {
    /// libudt 4.11 `CUDTCC`: min_inc 0.01, decrease 1.125, `DecCount < 5`, initial window 16,
    /// window headroom 16, RC interval SYN (10 ms); plus ACK-clocked slow start (see
    /// [`NativeConfig::libudt`] for 4.11 without it).
    fn default() -> Self {
        Self {
            min_inc: 0.01,
            decrease_factor: 1.125,
            max_decreases_per_period: 5,
            initial_window_pkts: 16.0,
            window_headroom_pkts: 16.0,
            rc_interval: SYN,
            ack_clocked_slow_start: true,
            steady_rc_clock: true,
        }
    }
}

/// The native UDT controller (4.11 `CUDTCC`). Build one per connection with
/// [`Native::new`] or a [`NativeFactory`], then drive it through [`Controller`].
#[derive(Clone, Debug)]
pub struct Native {
    config: NativeConfig,
    rng: Pcg32,
    // Inputs kept from the latest hook (4.11's CCC members).
    mss: u32,
    max_window_pkts: f64,
    rtt_us: f64,
    recv_rate_pkts: u32,
    bandwidth_pkts: u32,
    // CUDTCC state.
    last_rc_time: Instant,
    slow_start: bool,
    last_ack: SeqNumber,
    /// ACK-clocked slow start: start of the current delivery-rate window (time, ACK).
    delivery_mark: Option<(Instant, SeqNumber)>,
    /// Packets per second acknowledged over the last complete window (one RC interval).
    delivery_pps: f64,
    loss: bool,
    last_dec_seq: SeqNumber,
    last_dec_period_us: f64,
    avg_nak_num: u32,
    nak_count: u32,
    dec_random: u32,
    dec_count: u32,
    // Outputs.
    cwnd_pkts: f64,
    period_us: f64,
}

impl Native {
    /// Largest period we keep, in µs (100 s): a cap 4.11 does not have, there only so that
    /// endless decreases cannot reach infinity.
    pub const MAX_PERIOD_US: f64 = 100e6;

    /// A controller in its `init` state for [`ControllerInit::default`] at time zero; the
    /// connection calls [`Controller::init`] with the real values.
    pub fn new(config: NativeConfig) -> Self {
        let mut native = Self {
            rng: Pcg32::seed_from_u64(0),
            mss: 0,
            max_window_pkts: 0.0,
            rtt_us: 0.0,
            recv_rate_pkts: 0,
            bandwidth_pkts: 0,
            last_rc_time: Instant::ZERO,
            slow_start: true,
            last_ack: SeqNumber::new(0),
            delivery_mark: None,
            delivery_pps: 0.0,
            loss: false,
            last_dec_seq: SeqNumber::new(0),
            last_dec_period_us: 1.0,
            avg_nak_num: 0,
            nak_count: 0,
            dec_random: 1,
            dec_count: 0,
            cwnd_pkts: config.initial_window_pkts,
            period_us: 1.0,
            config,
        };
        native.reset(Instant::ZERO, &ControllerInit::default());
        native
    }

    /// Whether the controller is still in slow start.
    pub fn slow_start(&self) -> bool {
        self.slow_start
    }

    /// Inter-packet period in microseconds, unrounded (4.11 `m_dPktSndPeriod`).
    pub fn period_us(&self) -> f64 {
        self.period_us
    }

    /// Congestion window in packets (4.11 `m_dCWndSize`).
    pub fn cwnd_pkts(&self) -> f64 {
        self.cwnd_pkts
    }

    /// The configuration this controller runs with.
    pub fn config(&self) -> &NativeConfig {
        &self.config
    }

    /// Whether a loss was seen since the last rate increase (4.11 `m_bLoss`).
    pub fn loss_pending(&self) -> bool {
        self.loss
    }

    /// Last sequence number at which the rate was decreased (4.11 `m_iLastDecSeq`).
    pub fn last_dec_seq(&self) -> SeqNumber {
        self.last_dec_seq
    }

    /// Period before the last new-congestion-period decrease, in µs (`m_dLastDecPeriod`).
    pub fn last_dec_period_us(&self) -> f64 {
        self.last_dec_period_us
    }

    /// Smoothed number of NAKs per congestion period (4.11 `m_iAvgNAKNum`).
    pub fn avg_nak_num(&self) -> u32 {
        self.avg_nak_num
    }

    /// NAKs counted in the current congestion period (4.11 `m_iNAKCount`).
    pub fn nak_count(&self) -> u32 {
        self.nak_count
    }

    /// Every `dec_random`-th NAK of a period decreases the rate again (`m_iDecRandom`).
    pub fn dec_random(&self) -> u32 {
        self.dec_random
    }

    /// NAKs seen in the current congestion period (4.11 `m_iDecCount`).
    pub fn dec_count(&self) -> u32 {
        self.dec_count
    }

    /// 4.11 `CUDTCC::init`. `DecCount` is not reset, as in 4.11 (the constructor zeroes it).
    fn reset(&mut self, now: Instant, init: &ControllerInit) {
        self.rng = Pcg32::seed_from_u64(init.seed);
        self.mss = init.mss.max(1);
        self.max_window_pkts = f64::from(init.max_window_pkts);
        self.rtt_us = micros_f64(init.rtt);
        self.recv_rate_pkts = init.recv_rate_pkts;
        self.bandwidth_pkts = init.bandwidth_pkts;

        self.last_rc_time = now;
        self.slow_start = true;
        // 4.11 `m_iSndCurrSeqNo` at init is ISN - 1; LastDecSeq is one before that.
        self.last_ack = init.isn.prev();
        self.delivery_mark = None;
        self.delivery_pps = 0.0;
        self.loss = false;
        self.last_dec_seq = self.last_ack.prev();
        self.last_dec_period_us = 1.0;
        self.avg_nak_num = 0;
        self.nak_count = 0;
        self.dec_random = 1;
        self.cwnd_pkts = self.config.initial_window_pkts;
        self.period_us = 1.0;
    }

    /// `10⁶ / A` when a receive rate is known, else 4.11's window-based fallback. `inverted`
    /// selects the fallback's unit inversion that 4.11's `onLoss`/`onTimeout` have
    /// (`cwnd / (RTT + SYN)`, ≈ 1e-4 µs) instead of `onACK`'s `(RTT + SYN) / cwnd`.
    fn period_from_recv_rate(&self, inverted: bool) -> f64 {
        let period = if self.recv_rate_pkts > 0 {
            1_000_000.0 / f64::from(self.recv_rate_pkts)
        } else if inverted {
            self.cwnd_pkts / (self.rtt_us + self.rc_interval_us())
        } else {
            (self.rtt_us + self.rc_interval_us()) / self.cwnd_pkts
        };
        period.min(Self::MAX_PERIOD_US)
    }

    /// The window once out of slow start: packets arriving in RTT + SYN, plus headroom.
    fn arrival_window(&self) -> f64 {
        f64::from(self.recv_rate_pkts) / 1_000_000.0 * (self.rtt_us + self.rc_interval_us())
            + self.config.window_headroom_pkts
    }

    /// The rate increase for one RC interval, in packets per SYN (4.11 `onACK`, second half).
    fn increase(&self) -> f64 {
        let bandwidth = i64::from(self.bandwidth_pkts);
        // Spare capacity in packets/s, truncated toward zero like 4.11's (int64_t) cast.
        let mut spare = (f64::from(self.bandwidth_pkts) - 1_000_000.0 / self.period_us) as i64;
        // Slower than before the last decrease: grow by at most a ninth of the capacity.
        if self.period_us > self.last_dec_period_us && bandwidth / 9 < spare {
            spare = bandwidth / 9;
        }
        if spare <= 0 {
            return self.config.min_inc;
        }
        let mss = f64::from(self.mss);
        let bits = spare as f64 * mss * 8.0;
        let inc = 10f64.powf(bits.log10().ceil()) * 0.000_001_5 / mss;
        inc.max(self.config.min_inc)
    }

    /// `period = ceil(period · 1.125)`, capped.
    fn decrease(&mut self) {
        self.period_us = (self.period_us * self.config.decrease_factor)
            .ceil()
            .min(Self::MAX_PERIOD_US);
    }

    /// The first NAK beyond `LastDecSeq`: one decrease and a new congestion period.
    fn start_congestion_period(&mut self, largest_sent: SeqNumber) {
        self.last_dec_period_us = self.period_us;
        self.decrease();
        let avg = f64::from(self.avg_nak_num) * 0.875 + f64::from(self.nak_count) * 0.125;
        self.avg_nak_num = avg.ceil() as u32;
        self.nak_count = 1;
        self.dec_count = 1;
        self.last_dec_seq = largest_sent;
        // Deviation: 4.11 does srand(LastDecSeq); rand() / RAND_MAX. U is uniform on [0, 1].
        let uniform = f64::from(self.rng.next_u32()) / f64::from(u32::MAX);
        let random = (f64::from(self.avg_nak_num) * uniform).ceil() as u32;
        self.dec_random = random.max(1);
    }

    /// ACK-clocked slow start between RC intervals: grow by exactly the packets newly
    /// acknowledged (4.11's inclusive count, one more, stays with the once-per-interval
    /// growth). Leaving slow start here sets the period as 4.11's exit does; the rate
    /// increase waits for the next RC interval.
    fn grow_between_intervals(&mut self, now: Instant, ack: SeqNumber) {
        let newly = self.last_ack.offset_to(ack);
        if newly <= 0 {
            return;
        }
        self.cwnd_pkts += f64::from(newly);
        self.last_ack = ack;
        if self.cwnd_pkts > self.max_window_pkts {
            self.slow_start = false;
            self.period_us = self.exit_period(now, false);
        }
    }

    /// The rate the receiver acknowledged over the last RC interval, measured here from the
    /// ACKs themselves. ACK-clocked slow start can end within tens of milliseconds, before
    /// the smoothed receive rate A (one 1/8 step per 24-byte ACK, from 16 packets/s) has
    /// caught up; pacing at A then would start far below what the path just carried (seen
    /// on loopback: 80k instead of 220k packets/s, climbing back at 10k packets/s per s).
    fn track_delivery(&mut self, now: Instant, ack: SeqNumber) {
        let Some((since, from)) = self.delivery_mark else {
            self.delivery_mark = Some((now, ack));
            return;
        };
        let elapsed = now.saturating_duration_since(since);
        if elapsed >= self.config.rc_interval {
            self.delivery_pps = rate_pps(from.offset_to(ack), elapsed);
            self.delivery_mark = Some((now, ack));
        }
    }

    /// The period on leaving slow start: 4.11's `10⁶ / A` (or its fallback), except that in
    /// ACK-clocked slow start the rate is at least the delivery rate just measured (the
    /// last full interval, or the current one once it is a quarter interval long).
    fn exit_period(&self, now: Instant, inverted: bool) -> f64 {
        let period = self.period_from_recv_rate(inverted);
        if !self.config.ack_clocked_slow_start {
            return period;
        }
        let mut delivered = self.delivery_pps;
        if let Some((since, from)) = self.delivery_mark {
            let elapsed = now.saturating_duration_since(since);
            if elapsed >= self.config.rc_interval / 4 {
                delivered = delivered.max(rate_pps(from.offset_to(self.last_ack), elapsed));
            }
        }
        if delivered > 0.0 {
            period.min(1_000_000.0 / delivered)
        } else {
            period
        }
    }

    fn rc_interval_us(&self) -> f64 {
        micros_f64(self.config.rc_interval)
    }
}

impl Default for Native {
    fn default() -> Self {
        Self::new(NativeConfig::default())
    }
}

impl Controller for Native {
    fn init(&mut self, now: Instant, init: &ControllerInit) {
        self.reset(now, init);
    }

    /// 4.11 `CUDTCC::onACK` (fact sheet §5.3).
    fn on_ack(&mut self, now: Instant, ack: &AckInfo) {
        self.rtt_us = micros_f64(ack.rtt);
        self.recv_rate_pkts = ack.recv_rate_pkts;
        self.bandwidth_pkts = ack.bandwidth_pkts;
        if self.slow_start && self.config.ack_clocked_slow_start {
            self.track_delivery(now, ack.ack);
        }
        let since = now.saturating_duration_since(self.last_rc_time);
        if since < self.config.rc_interval {
            if self.slow_start && self.config.ack_clocked_slow_start {
                self.grow_between_intervals(now, ack.ack);
            }
            return;
        }
        self.last_rc_time = if self.config.steady_rc_clock && since < self.config.rc_interval * 2 {
            self.last_rc_time + self.config.rc_interval
        } else {
            now
        };

        if self.slow_start {
            // Inclusive count, so one more than the packets newly acknowledged (4.11 seqlen).
            self.cwnd_pkts += f64::from(self.last_ack.len_to(ack.ack));
            self.last_ack = ack.ack;
            if self.cwnd_pkts > self.max_window_pkts {
                self.slow_start = false;
                self.period_us = self.exit_period(now, false);
            }
        } else {
            self.cwnd_pkts = self.arrival_window();
        }
        if self.slow_start {
            return;
        }
        if self.loss {
            self.loss = false;
            return;
        }
        let inc = self.increase();
        let rc = self.rc_interval_us();
        self.period_us = (self.period_us * rc) / (self.period_us * inc + rc);
    }

    /// 4.11 `CUDTCC::onLoss` (fact sheet §5.4).
    fn on_loss(&mut self, now: Instant, loss: &LossInfo<'_>) {
        self.rtt_us = micros_f64(loss.rtt);
        self.recv_rate_pkts = loss.recv_rate_pkts;
        self.bandwidth_pkts = loss.bandwidth_pkts;
        if self.slow_start {
            self.slow_start = false;
            self.period_us = self.exit_period(now, true);
            if self.recv_rate_pkts > 0 {
                // Rate known: just start sending at it, no decrease and no loss flag.
                return;
            }
        }
        self.loss = true;

        if loss.first_lost > self.last_dec_seq {
            self.start_congestion_period(loss.largest_sent);
            return;
        }
        // Same congestion period. 4.11: `DecCount++ < 5 && ++NAKCount % DecRandom == 0`,
        // where the short circuit leaves NAKCount alone once DecCount reached the limit.
        let counted = self.dec_count < self.config.max_decreases_per_period;
        self.dec_count = self.dec_count.saturating_add(1);
        if counted {
            self.nak_count = self.nak_count.saturating_add(1);
            if self.nak_count % self.dec_random == 0 {
                self.decrease();
                self.last_dec_seq = loss.largest_sent;
            }
        }
    }

    /// 4.11 `CUDTCC::onTimeout` (fact sheet §5.5): ends slow start, otherwise does nothing.
    fn on_timeout(&mut self, _now: Instant, info: &TimeoutInfo) {
        self.rtt_us = micros_f64(info.rtt);
        self.recv_rate_pkts = info.recv_rate_pkts;
        if self.slow_start {
            self.slow_start = false;
            self.period_us = self.period_from_recv_rate(true);
        }
    }

    fn window_pkts(&self) -> f64 {
        self.cwnd_pkts
    }

    fn send_period(&self) -> Duration {
        duration_from_micros_f64(self.period_us)
    }

    /// 4.11 `CUDTCC::init` calls `setACKTimer(m_iRCInterval)`.
    fn ack_period(&self) -> Option<Duration> {
        Some(self.config.rc_interval)
    }

    fn name(&self) -> &'static str {
        NativeFactory::NAME
    }
}

/// Builds [`Native`] controllers with one [`NativeConfig`].
#[derive(Clone, Debug, Default)]
pub struct NativeFactory(pub NativeConfig);

impl NativeFactory {
    /// The controller's name in logs, stats and `--cc`.
    pub const NAME: &'static str = "native";
}

impl ControllerFactory for NativeFactory {
    fn build(&self) -> Box<dyn Controller> {
        Box::new(Native::new(self.0.clone()))
    }

    fn name(&self) -> &'static str {
        Self::NAME
    }
}

/// `pkts` over `span` in packets per second (0 for an empty span or a negative count).
fn rate_pps(pkts: i32, span: Duration) -> f64 {
    let secs = span.as_secs_f64();
    if pkts <= 0 || secs <= 0.0 {
        return 0.0;
    }
    f64::from(pkts) / secs
}

/// A duration in microseconds as `f64` (4.11 keeps RTT as an `int` of µs).
fn micros_f64(d: Duration) -> f64 {
    duration_micros(d) as f64
}

#[cfg(test)]
mod tests;
