//! LEDBAT's delay filters over the round-trip samples of `congestion/rtt_sample.rs`
//! (see the parent module doc for why round trips from the sender's own send times):
//! RFC 6817 §3.4's current delay (minimum of the last few samples) and base delay (minimum
//! over per-minute buckets).
//!
//! Fixed arrays only: nothing is allocated per sample, and every call scans at most
//! [`MAX_CURRENT_FILTER`] and [`MAX_BASE_HISTORY`] entries.

use std::time::Duration;

use crate::time::Instant;

/// Most delay samples the current-delay filter keeps.
pub(super) const MAX_CURRENT_FILTER: usize = 16;
/// Most per-minute buckets the base-delay history keeps.
pub(super) const MAX_BASE_HISTORY: usize = 60;
/// Length of one base-delay bucket (RFC 6817 §3.4.1: one minute).
const BUCKET: Duration = Duration::from_secs(60);

/// The current- and base-delay filters.
#[derive(Clone, Debug)]
pub(super) struct DelayFilters {
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
    /// Filters over the last `current_cap` samples and `base_cap` minutes (each clamped to
    /// its array).
    pub(super) fn new(now: Instant, current_cap: usize, base_cap: usize) -> Self {
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

    /// Fold in one delay sample taken at `now`.
    pub(super) fn push(&mut self, now: Instant, sample: Duration) {
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

    /// The latest sample, unfiltered, if any.
    pub(super) fn latest(&self) -> Option<Duration> {
        let last = (self.current_next + self.current_cap - 1) % self.current_cap;
        (self.current_len > 0).then(|| self.current[last])
    }

    /// The minimum of the recent samples, if any.
    pub(super) fn current(&self) -> Option<Duration> {
        self.current[..self.current_len].iter().copied().min()
    }

    /// The minimum over the base history, if any.
    pub(super) fn base(&self) -> Option<Duration> {
        self.base[..self.base_len].iter().copied().min()
    }
}
