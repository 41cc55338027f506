//! Virtual time for the sans-IO core.
//!
//! The core never reads a clock: every input carries `now`. An [`Instant`] is a count of
//! nanoseconds since an epoch the caller picks (the runtime uses its start, simulations use
//! zero), which makes runs reproducible and lets simulations jump straight to the next
//! deadline. Durations are plain [`std::time::Duration`]. Nanoseconds, not the microseconds
//! UDT puts on the wire, because pacing at 10 Gbit/s needs sub-microsecond periods: rounding a
//! 12.9 µs period down to 12 µs would send 7% faster than the controller asked.

use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A point in time, in nanoseconds since a caller-chosen epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

impl Instant {
    /// The epoch itself.
    pub const ZERO: Self = Self(0);

    /// The time `micros` microseconds after the epoch.
    pub const fn from_micros(micros: u64) -> Self {
        Self(micros.saturating_mul(1000))
    }

    /// The time `nanos` nanoseconds after the epoch.
    pub const fn from_nanos(nanos: u64) -> Self {
        Self(nanos)
    }

    /// The time `d` after the epoch.
    pub fn from_duration(d: Duration) -> Self {
        Self(duration_nanos(d))
    }

    /// Whole microseconds since the epoch.
    pub const fn as_micros(self) -> u64 {
        self.0 / 1000
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Time elapsed since the epoch, as a `Duration`.
    pub const fn since_epoch(self) -> Duration {
        Duration::from_nanos(self.0)
    }

    /// `self - earlier`, or zero when `earlier` is later (time never runs backwards here).
    pub fn saturating_duration_since(self, earlier: Self) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self - d`, saturating at the epoch.
    pub fn saturating_sub(self, d: Duration) -> Self {
        Self(self.0.saturating_sub(duration_nanos(d)))
    }

    /// `self + d`, saturating at the far future instead of overflowing.
    pub fn saturating_add(self, d: Duration) -> Self {
        Self(self.0.saturating_add(duration_nanos(d)))
    }
}

impl Add<Duration> for Instant {
    type Output = Self;
    fn add(self, d: Duration) -> Self {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub for Instant {
    type Output = Duration;
    /// Saturating: an earlier minus a later instant is zero.
    fn sub(self, earlier: Self) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

/// Whole microseconds in `d`, saturating at `u64::MAX`.
pub fn duration_micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Nanoseconds in `d`, saturating at `u64::MAX`.
pub fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Instant::from_micros(10);
        assert_eq!(t + Duration::from_micros(5), Instant::from_micros(15));
        assert_eq!(Instant::ZERO - t, Duration::ZERO);
        assert_eq!(t - Instant::ZERO, Duration::from_micros(10));
        assert_eq!(
            Instant::from_nanos(u64::MAX - 1) + Duration::from_secs(1),
            Instant::from_nanos(u64::MAX)
        );
        // Sub-microsecond periods accumulate exactly (pacing depends on it).
        let mut p = Instant::ZERO;
        for _ in 0..1000 {
            p += Duration::from_nanos(12_900);
        }
        assert_eq!(p.as_nanos(), 12_900_000);
    }
}
