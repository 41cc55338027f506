//! LEDBAT's delay measurement (see the parent module doc for why round trips from the
//! sender's own send times): a ring of marked packets that turns cumulative ACKs into delay
//! samples, and RFC 6817 §3.4's two filters over them, the current delay (minimum of the
//! last few samples) and the base delay (minimum over per-minute buckets).
//!
//! Fixed arrays only: nothing is allocated per packet or per sample, and every call is O(1)
//! amortised (a marker is pushed once and popped once; the filters scan at most
//! [`MAX_CURRENT_FILTER`] and [`MAX_BASE_HISTORY`] entries).

use std::time::Duration;

use crate::seq::SeqNumber;
use crate::time::Instant;

/// Outstanding markers: [`MARKERS_PER_RTT`] per round trip for four round trips of flight.
const MARKERS: usize = 64;
/// Markers placed per round trip (each sample carries at most 1/16 RTT of marker spacing).
const MARKERS_PER_RTT: u32 = 16;
/// Most delay samples the current-delay filter keeps.
pub(super) const MAX_CURRENT_FILTER: usize = 16;
/// Most per-minute buckets the base-delay history keeps.
pub(super) const MAX_BASE_HISTORY: usize = 60;
/// Length of one base-delay bucket (RFC 6817 §3.4.1: one minute).
const BUCKET: Duration = Duration::from_secs(60);

/// One marked packet: when it left.
#[derive(Clone, Copy, Debug)]
struct Marker {
    seq: SeqNumber,
    sent_at: Instant,
}

/// Marked packets waiting for the cumulative ACK to pass them.
#[derive(Clone, Debug)]
pub(super) struct Markers {
    ring: [Marker; MARKERS],
    head: usize,
    len: usize,
    last_mark: Option<Instant>,
}

impl Markers {
    pub(super) fn new(now: Instant, isn: SeqNumber) -> Self {
        let blank = Marker {
            seq: isn,
            sent_at: now,
        };
        Self {
            ring: [blank; MARKERS],
            head: 0,
            len: 0,
            last_mark: None,
        }
    }

    /// A new packet `seq` leaves at `now`: mark it if the ring has room and the last marker
    /// is at least 1/[`MARKERS_PER_RTT`] of `rtt` old.
    pub(super) fn on_sent(&mut self, now: Instant, seq: SeqNumber, rtt: Duration) {
        let spacing = rtt / MARKERS_PER_RTT;
        if self.len == MARKERS || self.last_mark.is_some_and(|t| now - t < spacing) {
            return;
        }
        self.ring[(self.head + self.len) % MARKERS] = Marker { seq, sent_at: now };
        self.len += 1;
        self.last_mark = Some(now);
    }

    /// The cumulative ACK reached `ack` at `now`: pop the markers it passed and return the
    /// newest one's age, the delay sample (the packet that arrived last before the ACK).
    pub(super) fn on_ack(&mut self, now: Instant, ack: SeqNumber) -> Option<Duration> {
        let mut newest = None;
        while self.len > 0 && self.ring[self.head].seq < ack {
            newest = Some(self.ring[self.head].sent_at);
            self.head = (self.head + 1) % MARKERS;
            self.len -= 1;
        }
        newest.map(|sent| now.saturating_duration_since(sent))
    }
}

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
