//! Stalls: moments when the whole link stops, then resumes with what piled up.
//!
//! The lab's link is a user-space forwarder on a shared two-core machine. When its thread is
//! preempted (the kernel's other work, or the hypervisor taking the virtual CPU away) it
//! neither reads arriving packets nor writes due ones; on waking it writes everything that
//! fell due at once and offers the backlog to the emulated queue with the time it was read.
//! Endpoints then see queueing delay jump by up to the stall's length with no change in the
//! offered load: noise in exactly the signal a delay-based controller steers by. Uniform
//! jitter cannot stand in for it: with packets closer together than the jitter, the FIFO
//! floor turns it into a constant extra delay.
//!
//! A stall schedule is a Poisson process of stalls (`rate` a second) with lengths uniform
//! in (0, `max`], generated lazily from its own random stream as time advances. A packet
//! pushed during a stall enters the queue at the stall's end; one due for delivery during a
//! stall is delivered at its end.

use std::collections::VecDeque;
use std::time::Duration;

use rand_core::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::rng::{exponential_duration, uniform_duration};

/// At most this many stalls a second, and none longer than [`MAX_STALL`]: generating the
/// schedule costs time and memory per stall, so both are bounded per second simulated for
/// any configuration. (At this rate stalls of even 100 µs stop a link most of the time.)
const MAX_RATE: f64 = 10_000.0;
/// The longest stall: a longer `max` counts as this.
const MAX_STALL: Duration = Duration::from_secs(1);
/// A time this far past the generated schedule starts a fresh one there instead of filling
/// the span between (after the link sat idle, say). The gaps of a Poisson process are
/// memoryless, so that is the same process; only a later query back inside the skipped span
/// would find it without stalls, and queries run ahead of the earliest one by the delay and
/// queue only.
const SKIP_AFTER: Duration = Duration::from_secs(1);

/// A lazily generated stall schedule: a link's (built from its config), or one of its own for
/// a caller that stalls something other than a link, such as a simulated host whose process
/// is preempted (sender and receiver share the lab's two cores with the forwarder).
///
/// ```
/// use std::time::Duration;
/// use udt_netsim::StallSchedule;
///
/// let mut host = StallSchedule::new(100.0, Duration::from_millis(2), 7);
/// let mut t = Duration::ZERO;
/// let mut stalled = Duration::ZERO;
/// while t < Duration::from_secs(1) {
///     match host.stalled_until(t) {
///         Some(end) => { stalled += end - t; t = end; }
///         None => t += Duration::from_micros(100),
///     }
/// }
/// // About 100 stalls of 1 ms on average.
/// assert!(stalled > Duration::from_millis(50) && stalled < Duration::from_millis(150));
/// ```
#[derive(Debug, Clone)]
pub struct StallSchedule {
    /// Generated stalls as `[start, end)`, sorted and disjoint, none ending before the
    /// latest time pruned to.
    windows: VecDeque<(Duration, Duration)>,
    /// The end of the last generated stall (the next one starts after it).
    generated_to: Duration,
    rng: Pcg64Mcg,
    rate: f64,
    max: Duration,
}

impl StallSchedule {
    /// `rate` stalls a second on average (at or below 0, or NaN: none), each lasting up to
    /// `max` (uniform), drawn from `seed`.
    pub fn new(rate: f64, max: Duration, seed: u64) -> Self {
        Self::with_rng(rate, max, Pcg64Mcg::seed_from_u64(seed))
    }

    /// [`StallSchedule::new`] drawing from `rng` (a link's own stream).
    pub(crate) fn with_rng(rate: f64, max: Duration, rng: Pcg64Mcg) -> Self {
        Self {
            windows: VecDeque::new(),
            generated_to: Duration::ZERO,
            rng,
            rate,
            max,
        }
    }

    /// The end of the stall that holds `t`, if one does. Times asked should not go back:
    /// stalls that ended by `t` are forgotten.
    pub fn stalled_until(&mut self, t: Duration) -> Option<Duration> {
        self.prune(t);
        let end = self.hold(t);
        (end > t).then_some(end)
    }

    /// The time something meeting the schedule at `t` is handled: the end of the stall
    /// holding `t`, or `t` itself. With no stalls configured it draws nothing.
    pub(crate) fn hold(&mut self, t: Duration) -> Duration {
        let (rate, max) = (self.rate, self.max);
        if rate.is_nan() || rate <= 0.0 || max.is_zero() {
            return t;
        }
        self.generate(rate.min(MAX_RATE), max.min(MAX_STALL), t);
        let i = self.windows.partition_point(|&(_, end)| end <= t);
        match self.windows.get(i) {
            Some(&(start, end)) if start <= t => end,
            _ => t,
        }
    }

    /// Forgets the stalls that ended by `t`: nothing will meet the schedule before it again.
    pub(crate) fn prune(&mut self, t: Duration) {
        while self.windows.front().is_some_and(|&(_, end)| end <= t) {
            self.windows.pop_front();
        }
    }

    /// A new `rate` and `max`; a changed pair restarts the schedule at `t`.
    pub(crate) fn reconfigure(&mut self, rate: f64, max: Duration, t: Duration) {
        if (rate, max) != (self.rate, self.max) {
            (self.rate, self.max) = (rate, max);
            self.windows.clear();
            self.generated_to = t;
        }
    }

    /// Extends the schedule until a stall starts after `t`.
    fn generate(&mut self, rate: f64, max: Duration, t: Duration) {
        let mean_gap = Duration::try_from_secs_f64(1.0 / rate).unwrap_or(Duration::MAX);
        if t.saturating_sub(self.generated_to) > SKIP_AFTER {
            self.generated_to = t;
        }
        while self.windows.back().is_none_or(|&(start, _)| start <= t) {
            let start = self
                .generated_to
                .saturating_add(exponential_duration(&mut self.rng, mean_gap));
            // Lengths in (0, max]: every stall moves the schedule on by at least 1 ns.
            let len = uniform_duration(&mut self.rng, max.saturating_sub(Duration::from_nanos(1)))
                + Duration::from_nanos(1);
            let end = start.saturating_add(len);
            if end == self.generated_to {
                // Saturated at the end of time: nothing further can be generated.
                break;
            }
            self.windows.push_back((start, end));
            self.generated_to = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn no_stalls_draw_nothing() {
        for (rate, max) in [
            (0.0, MS),
            (-1.0, MS),
            (f64::NAN, MS),
            (100.0, Duration::ZERO),
        ] {
            let mut stalls = StallSchedule::new(rate, max, 1);
            assert_eq!(stalls.hold(5 * MS), 5 * MS);
            assert!(stalls.windows.is_empty());
        }
    }

    #[test]
    fn stalls_come_at_the_rate_and_last_up_to_the_max() {
        let (rate, max) = (200.0, 2 * MS);
        let mut stalls = StallSchedule::new(rate, max, 7);
        // Probe every 10 µs for 10 s: the share of probes held is the share of time stalled.
        let (mut held, mut probes, mut longest) = (0u64, 0u64, Duration::ZERO);
        let mut t = Duration::ZERO;
        while t < Duration::from_secs(10) {
            let at = stalls.hold(t);
            assert!(at >= t);
            if at > t {
                held += 1;
                longest = longest.max(at - t);
            }
            probes += 1;
            stalls.prune(t);
            t += Duration::from_micros(10);
        }
        // 200 stalls a second of 1 ms on average: about a fifth of the time.
        let stalled = held as f64 / probes as f64;
        assert!((0.16..0.2).contains(&stalled), "stalled {stalled:.3}");
        assert!(longest <= max && longest > max * 9 / 10, "{longest:?}");
    }

    #[test]
    fn a_time_inside_a_stall_waits_for_its_end() {
        let mut stalls = StallSchedule::new(50.0, MS, 3);
        let first = stalls.hold(Duration::ZERO);
        assert_eq!(first, Duration::ZERO);
        let (start, end) = stalls.windows[0];
        assert_eq!(stalls.hold(start), end);
        assert_eq!(stalls.hold(end), end);
        assert_eq!(stalls.hold((start + end) / 2), end);
    }

    #[test]
    fn the_end_of_time_does_not_loop() {
        let mut stalls = StallSchedule::new(1e12, Duration::MAX, 5);
        let t = stalls.hold(Duration::MAX);
        assert_eq!(t, Duration::MAX);
        // A time far past the schedule starts a fresh one instead of filling the span.
        let mut stalls = StallSchedule::new(1e12, Duration::MAX, 5);
        let late = Duration::from_secs(3600 * 24 * 365);
        assert!(stalls.hold(late) <= late + MAX_STALL);
        assert!(stalls.windows.len() < 10);
    }
}
