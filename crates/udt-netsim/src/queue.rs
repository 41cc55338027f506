//! The serialization stage of a link: one transmitter sending a packet at a time at the link
//! rate, fed by a drop-tail FIFO.
//!
//! No packet is stored here. Because the transmitter is work-conserving and FIFO, a packet's
//! departure time is known the moment it is accepted: `max(now, busy_until) + len * 8 / rate`.
//! The queue is therefore just `busy_until` plus the departure times of the packets not yet
//! gone (with a running byte count), which is what the drop-tail decision needs.
//!
//! Time is kept in exact integer nanoseconds. The fractional nanosecond left over by each
//! serialization is carried to the next one, so a back-to-back run of packets takes exactly
//! `floor(total_bits * 1e9 / rate)` ns however long it is: no drift over long runs.
//!
//! **Queue occupancy:** a packet counts as queued from its acceptance until its departure (the
//! end of its serialization), so the packet on the wire counts too. This is how a real NIC's
//! ring or a router's buffer holds it, and it makes `queue_bytes` the upper bound on the bytes
//! accepted but not yet fully sent.

use std::collections::VecDeque;
use std::time::Duration;

/// Nanoseconds per second, for the bit-time arithmetic.
const NANOS_PER_SEC: u128 = 1_000_000_000;

/// The transmitter and its drop-tail queue.
#[derive(Debug, Clone)]
pub(crate) struct Serializer {
    /// Link rate in bit/s; `None` means infinite (no serialization delay and no queue).
    rate_bps: Option<u64>,
    /// When the transmitter finishes the last accepted packet (whole nanoseconds).
    busy_until: Duration,
    /// Fraction of a nanosecond past `busy_until`, in units of `1 / rate_bps` ns.
    remainder: u64,
    /// Accepted packets still in the queue: (departure time, value of `enqueued` just after
    /// this packet was added). Departure times are non-decreasing.
    waiting: VecDeque<(Duration, u64)>,
    /// Bytes ever accepted (wrapping; only differences are used).
    enqueued: u64,
    /// Bytes ever departed among the entries already removed from `waiting` (wrapping).
    departed: u64,
}

impl Serializer {
    /// A transmitter at `rate_bps` (`None` = infinite; 0 is treated as 1 bit/s).
    pub(crate) fn new(rate_bps: Option<u64>) -> Self {
        Self {
            rate_bps: rate_bps.map(|r| r.max(1)),
            busy_until: Duration::ZERO,
            remainder: 0,
            waiting: VecDeque::new(),
            enqueued: 0,
            departed: 0,
        }
    }

    /// Changes the rate for packets accepted from now on; queued packets keep their departure
    /// times (they were scheduled at the old rate).
    pub(crate) fn set_rate(&mut self, rate_bps: Option<u64>) {
        let rate_bps = rate_bps.map(|r| r.max(1));
        if rate_bps != self.rate_bps {
            self.rate_bps = rate_bps;
            // The remainder's unit depends on the rate; dropping it costs under 1 ns once.
            self.remainder = 0;
        }
    }

    /// Bytes accepted but not yet departed at `now`. O(log n), so it can take `&self`.
    pub(crate) fn queued_bytes(&self, now: Duration) -> u64 {
        let gone = self.waiting.partition_point(|&(depart, _)| depart <= now);
        let departed = match gone.checked_sub(1).and_then(|i| self.waiting.get(i)) {
            Some(&(_, mark)) => mark,
            None => self.departed,
        };
        self.enqueued.wrapping_sub(departed)
    }

    /// Accepts a `len`-byte packet at `now` if the queue then holds at most `limit` bytes, and
    /// returns its departure time (end of serialization); `None` means drop-tail.
    ///
    /// With an infinite rate the packet departs at `now` and the limit does not apply.
    pub(crate) fn enqueue(&mut self, now: Duration, len: usize, limit: usize) -> Option<Duration> {
        let Some(rate) = self.rate_bps else {
            return Some(now);
        };
        self.expire(now);
        let len = len as u64;
        let queued = self.enqueued.wrapping_sub(self.departed);
        if queued.saturating_add(len) > limit as u64 {
            return None;
        }
        let start = if now > self.busy_until {
            // Idle link: the carried fraction belonged to the past.
            self.remainder = 0;
            now
        } else {
            self.busy_until
        };
        self.busy_until = start.saturating_add(self.serialization_time(len, rate));
        self.enqueued = self.enqueued.wrapping_add(len);
        self.waiting.push_back((self.busy_until, self.enqueued));
        Some(self.busy_until)
    }

    /// Forgets the packets that have departed by `now` (amortized O(1) per packet).
    fn expire(&mut self, now: Duration) {
        while let Some(&(depart, mark)) = self.waiting.front() {
            if depart > now {
                break;
            }
            self.departed = mark;
            self.waiting.pop_front();
        }
    }

    /// Time to send `len` bytes at `rate`, carrying the sub-nanosecond remainder.
    fn serialization_time(&mut self, len: u64, rate: u64) -> Duration {
        let rate = u128::from(rate);
        let numerator = u128::from(len) * 8 * NANOS_PER_SEC + u128::from(self.remainder);
        // remainder < rate, which fits in u64.
        self.remainder = (numerator % rate) as u64;
        Duration::from_nanos(u64::try_from(numerator / rate).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn back_to_back_packets_do_not_drift() {
        // 1337 bytes at a prime rate: every packet leaves a fractional nanosecond.
        let rate = 999_999_937;
        let mut s = Serializer::new(Some(rate));
        let mut last = Duration::ZERO;
        for _ in 0..100_000 {
            last = s.enqueue(Duration::ZERO, 1337, usize::MAX).unwrap();
        }
        let bits = 100_000u128 * 1337 * 8;
        assert_eq!(last.as_nanos(), bits * NANOS_PER_SEC / u128::from(rate));
    }

    #[test]
    fn idle_link_starts_at_now() {
        let mut s = Serializer::new(Some(8_000_000)); // 1 byte per microsecond
        assert_eq!(s.enqueue(MS, 1000, usize::MAX), Some(2 * MS));
        assert_eq!(s.enqueue(MS, 1000, usize::MAX), Some(3 * MS));
        assert_eq!(s.enqueue(10 * MS, 500, usize::MAX), Some(10 * MS + MS / 2));
    }

    #[test]
    fn queued_bytes_counts_until_departure() {
        let mut s = Serializer::new(Some(8_000_000));
        for _ in 0..3 {
            s.enqueue(Duration::ZERO, 1000, usize::MAX);
        }
        assert_eq!(s.queued_bytes(Duration::ZERO), 3000);
        assert_eq!(s.queued_bytes(MS - Duration::from_nanos(1)), 3000);
        assert_eq!(s.queued_bytes(MS), 2000);
        assert_eq!(s.queued_bytes(3 * MS), 0);
        // Expiry on the next enqueue gives the same answer as the binary search.
        s.enqueue(2 * MS, 10, usize::MAX);
        assert_eq!(s.queued_bytes(2 * MS), 1010);
    }

    #[test]
    fn drop_tail_limit_is_inclusive() {
        let mut s = Serializer::new(Some(8_000_000));
        assert!(s.enqueue(Duration::ZERO, 600, 1000).is_some());
        assert!(s.enqueue(Duration::ZERO, 400, 1000).is_some());
        assert!(s.enqueue(Duration::ZERO, 1, 1000).is_none());
        assert!(s.enqueue(Duration::from_micros(600), 600, 1000).is_some());
    }

    #[test]
    fn infinite_rate_has_no_queue() {
        let mut s = Serializer::new(None);
        assert_eq!(s.enqueue(MS, 1 << 30, 0), Some(MS));
        assert_eq!(s.queued_bytes(MS), 0);
    }

    #[test]
    fn zero_rate_is_one_bit_per_second() {
        let mut s = Serializer::new(Some(0));
        assert_eq!(
            s.enqueue(Duration::ZERO, 1, usize::MAX),
            Some(Duration::from_secs(8))
        );
    }
}
