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

/// A stall process of its own, for a caller that stalls something other than a link: a
/// simulated host whose process is preempted, say (sender and receiver share the lab's two
/// cores with the forwarder). Same process as [`LinkConfig::stalls`](crate::LinkConfig::stalls).
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
    stalls: Stalls,
    rng: Pcg64Mcg,
    rate: f64,
    max: Duration,
}

impl StallSchedule {
    /// `rate` stalls a second on average (at or below 0, or NaN: none), each lasting up to
    /// `max` (uniform), drawn from `seed`.
    pub fn new(rate: f64, max: Duration, seed: u64) -> Self {
        Self {
            stalls: Stalls::default(),
            rng: Pcg64Mcg::seed_from_u64(seed),
            rate,
            max,
        }
    }

    /// The end of the stall that holds `t`, if one does. Times asked should not go back:
    /// stalls that ended by `t` are forgotten.
    pub fn stalled_until(&mut self, t: Duration) -> Option<Duration> {
        self.stalls.prune(t);
        let end = self.stalls.hold(&mut self.rng, self.rate, self.max, t);
        (end > t).then_some(end)
    }
}

/// The lazily generated stall schedule of one link.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stalls {
    /// Generated stalls as `[start, end)`, sorted and disjoint, none ending before the
    /// latest time pruned to.
    windows: VecDeque<(Duration, Duration)>,
    /// The end of the last generated stall (the next one starts after it).
    generated_to: Duration,
}

impl Stalls {
    /// The time a packet meeting the link at `t` is handled: the end of the stall holding
    /// `t`, or `t` itself. `rate` (stalls a second) at or below 0, NaN, or a zero `max` means
    /// no stalls, and draws nothing.
    pub(crate) fn hold(
        &mut self,
        rng: &mut Pcg64Mcg,
        rate: f64,
        max: Duration,
        t: Duration,
    ) -> Duration {
        if rate.is_nan() || rate <= 0.0 || max.is_zero() {
            return t;
        }
        self.generate(rng, rate.min(MAX_RATE), max.min(MAX_STALL), t);
        let i = self.windows.partition_point(|&(_, end)| end <= t);
        match self.windows.get(i) {
            Some(&(start, end)) if start <= t => end,
            _ => t,
        }
    }

    /// Forgets the stalls that ended by `t`: no packet will meet the link before it again.
    pub(crate) fn prune(&mut self, t: Duration) {
        while self.windows.front().is_some_and(|&(_, end)| end <= t) {
            self.windows.pop_front();
        }
    }

    /// Restarts the schedule at `t` (the configuration changed).
    pub(crate) fn restart(&mut self, t: Duration) {
        self.windows.clear();
        self.generated_to = t;
    }

    /// Extends the schedule until a stall starts after `t`.
    fn generate(&mut self, rng: &mut Pcg64Mcg, rate: f64, max: Duration, t: Duration) {
        let mean_gap = Duration::try_from_secs_f64(1.0 / rate).unwrap_or(Duration::MAX);
        if t.saturating_sub(self.generated_to) > SKIP_AFTER {
            self.generated_to = t;
        }
        while self.windows.back().is_none_or(|&(start, _)| start <= t) {
            let start = self
                .generated_to
                .saturating_add(exponential_duration(rng, mean_gap));
            // Lengths in (0, max]: every stall moves the schedule on by at least 1 ns.
            let len = uniform_duration(rng, max.saturating_sub(Duration::from_nanos(1)))
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
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut stalls = Stalls::default();
        for rate in [0.0, -1.0, f64::NAN] {
            assert_eq!(stalls.hold(&mut rng, rate, MS, 5 * MS), 5 * MS);
        }
        assert_eq!(stalls.hold(&mut rng, 100.0, Duration::ZERO, 5 * MS), 5 * MS);
        assert!(stalls.windows.is_empty());
    }

    #[test]
    fn stalls_come_at_the_rate_and_last_up_to_the_max() {
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut stalls = Stalls::default();
        let (rate, max) = (200.0, 2 * MS);
        // Probe every 10 µs for 10 s: the share of probes held is the share of time stalled.
        let (mut held, mut probes, mut longest) = (0u64, 0u64, Duration::ZERO);
        let mut t = Duration::ZERO;
        while t < Duration::from_secs(10) {
            let at = stalls.hold(&mut rng, rate, max, t);
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
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let mut stalls = Stalls::default();
        let first = stalls.hold(&mut rng, 50.0, MS, Duration::ZERO);
        assert_eq!(first, Duration::ZERO);
        let (start, end) = stalls.windows[0];
        assert_eq!(stalls.hold(&mut rng, 50.0, MS, start), end);
        assert_eq!(stalls.hold(&mut rng, 50.0, MS, end), end);
        assert_eq!(stalls.hold(&mut rng, 50.0, MS, (start + end) / 2), end);
    }

    #[test]
    fn the_end_of_time_does_not_loop() {
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let mut stalls = Stalls::default();
        let t = stalls.hold(&mut rng, 1e12, Duration::MAX, Duration::MAX);
        assert_eq!(t, Duration::MAX);
        // A time far past the schedule starts a fresh one instead of filling the span.
        let mut stalls = Stalls::default();
        let late = Duration::from_secs(3600 * 24 * 365);
        assert!(stalls.hold(&mut rng, 1e12, Duration::MAX, late) <= late + MAX_STALL);
        assert!(stalls.windows.len() < 10);
    }
}
