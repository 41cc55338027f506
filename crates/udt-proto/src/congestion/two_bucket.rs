//! A windowed minimum that needs no history: the lowest sample of the current bucket of time
//! and of the one before it, so a minimum is forgotten one to two buckets after it was seen.
//! `model` keeps its RTT floors this way; `ledbat` its ACKs' lateness floor.

use std::time::Duration;

use crate::time::Instant;

/// The lowest of the samples in a bucket of time and the bucket before it.
#[derive(Clone, Copy, Debug)]
pub(super) struct TwoBucketMin<T = Duration> {
    now: Option<T>,
    prev: Option<T>,
    start: Instant,
}

impl<T: Copy + Ord> TwoBucketMin<T> {
    pub(super) fn new(at: Instant) -> Self {
        Self {
            now: None,
            prev: None,
            start: at,
        }
    }

    pub(super) fn min(&self) -> Option<T> {
        match (self.now, self.prev) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Add a sample at `at`, first starting a new bucket if this one is `bucket` old.
    pub(super) fn push(&mut self, at: Instant, sample: T, bucket: Option<Duration>) {
        if bucket.is_some_and(|b| at - self.start >= b) {
            self.prev = self.now.take();
            self.start = at;
        }
        self.now = Some(self.now.map_or(sample, |m| m.min(sample)));
    }
}
