//! Loss lists: the sender's set of sequence numbers to retransmit and the receiver's set of
//! gaps still missing (§6).
//!
//! Both are sets of inclusive sequence ranges kept sorted, disjoint and maximal (adjacent
//! ranges are merged), bounded by a capacity in packets (4.11: 2 × flow window) so a peer
//! cannot make them grow without limit. Ranges are keyed in a `BTreeMap` by an *unwrapped*
//! 64-bit position (see `Unwrapper`), which turns the 2³¹ wrap into plain integer order: insert
//! and remove are O(log n) per range touched, `first` is O(log n) with a tiny constant.

// `pub` items here are the API of the `internals` feature (udt-bench: some exist only for it);
// without it the module is crate-private.
#![cfg_attr(not(feature = "internals"), allow(unreachable_pub, dead_code))]

use std::collections::BTreeMap;
use std::time::Duration;

use crate::seq::SeqNumber;
use crate::time::Instant;

#[cfg(test)]
mod tests;

/// Sequence numbers the sender must retransmit (from NAKs and EXP timeouts).
#[derive(Clone, Debug)]
pub struct SenderLossList {
    set: RangeSet<()>,
}

impl SenderLossList {
    /// An empty list holding at most `capacity_pkts` sequence numbers.
    pub fn new(capacity_pkts: u32) -> Self {
        Self {
            set: RangeSet::new(capacity_pkts),
        }
    }

    /// Adds `first..=last` (ignored when `last` is before `first`). When the list would exceed
    /// its capacity, the lowest new numbers are kept and the rest dropped. Returns how many
    /// numbers were not already in the list and are now.
    pub fn insert(&mut self, first: SeqNumber, last: SeqNumber) -> u32 {
        self.set.insert(first, last, ())
    }

    /// Drops every number before `seq` (they were acknowledged).
    pub fn remove_before(&mut self, seq: SeqNumber) {
        self.set.remove_before(seq);
    }

    /// Drops every number up to and including `last` (message drop, §6.6).
    pub fn remove_through(&mut self, last: SeqNumber) {
        self.set.remove_before(last.next());
    }

    /// Drops `first..=last`.
    pub fn remove_range(&mut self, first: SeqNumber, last: SeqNumber) {
        self.set.remove_range(first, last);
    }

    /// Removes and returns the smallest number (the next retransmission).
    pub fn pop_first(&mut self) -> Option<SeqNumber> {
        self.set.pop_first()
    }

    /// The smallest number.
    pub fn first(&self) -> Option<SeqNumber> {
        self.set.first()
    }

    /// Whether `seq` is in the list.
    pub fn contains(&self, seq: SeqNumber) -> bool {
        self.set.contains(seq)
    }

    /// Number of sequence numbers held (not ranges).
    pub fn len(&self) -> u32 {
        self.set.len
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.set.len == 0
    }

    /// The capacity in packets.
    pub fn capacity(&self) -> u32 {
        self.set.capacity
    }

    /// The ranges, in order, as inclusive `(first, last)` pairs.
    pub fn ranges(&self) -> impl Iterator<Item = (SeqNumber, SeqNumber)> + '_ {
        self.set.ranges().map(|(first, last, ())| (first, last))
    }

    /// Empties the list.
    pub fn clear(&mut self) {
        self.set.clear();
    }
}

/// Gaps the receiver has seen and not yet filled, with per-range NAK report state.
#[derive(Clone, Debug)]
pub struct ReceiverLossList {
    set: RangeSet<ReportState>,
}

/// When a range was last reported in a NAK, and how many times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ReportState {
    last: Option<Instant>,
    count: u32,
}

/// Caps the periodic NAK back-off at this many intervals.
const MAX_BACKOFF: u32 = 16;

impl ReceiverLossList {
    /// An empty list holding at most `capacity_pkts` sequence numbers.
    pub fn new(capacity_pkts: u32) -> Self {
        Self {
            set: RangeSet::new(capacity_pkts),
        }
    }

    /// Adds the gap `first..=last`, not yet reported. Same capacity rule and return value as
    /// [`SenderLossList::insert`].
    pub fn insert(&mut self, first: SeqNumber, last: SeqNumber) -> u32 {
        self.set.insert(first, last, ReportState::default())
    }

    /// Adds a gap that was just reported by the immediate NAK (§4.4), so the periodic NAK
    /// waits one interval before repeating it.
    pub fn insert_reported(&mut self, first: SeqNumber, last: SeqNumber, now: Instant) -> u32 {
        let state = ReportState {
            last: Some(now),
            count: 1,
        };
        self.set.insert(first, last, state)
    }

    /// A retransmission filled `seq`: removes it (splitting its range if needed). Returns
    /// whether it was in the list.
    pub fn remove(&mut self, seq: SeqNumber) -> bool {
        if !self.set.contains(seq) {
            return false;
        }
        self.set.remove_range(seq, seq);
        true
    }

    /// Drops `first..=last` (a message drop request, §6.6).
    pub fn remove_range(&mut self, first: SeqNumber, last: SeqNumber) {
        self.set.remove_range(first, last);
    }

    /// Drops every number before `seq`.
    pub fn remove_before(&mut self, seq: SeqNumber) {
        self.set.remove_before(seq);
    }

    /// The first range, if it was never reported or last reported at least `after` before
    /// `now`, marked reported at `now` (its back-off count unchanged): the range the ACK
    /// waits for, which the periodic NAK repeats without back-off.
    pub fn first_due(&mut self, now: Instant, after: Duration) -> Option<(SeqNumber, SeqNumber)> {
        let (&key, entry) = self.set.map.iter_mut().next()?;
        if entry.meta.last.is_some_and(|t| now < t + after) {
            return None;
        }
        entry.meta.last = Some(now);
        Some((self.set.unwrap.seq(key), self.set.unwrap.seq(entry.last)))
    }

    /// When the first range was last reported (`None`: never, or nothing is missing).
    pub fn first_reported(&self) -> Option<Instant> {
        self.set
            .map
            .values()
            .next()
            .and_then(|entry| entry.meta.last)
    }

    /// The smallest missing number (the ACK point when present, §4.2).
    pub fn first(&self) -> Option<SeqNumber> {
        self.set.first()
    }

    /// Number of missing sequence numbers (not ranges).
    pub fn len(&self) -> u32 {
        self.set.len
    }

    /// Whether nothing is missing.
    pub fn is_empty(&self) -> bool {
        self.set.len == 0
    }

    /// The ranges, in order, as inclusive `(first, last)` pairs.
    pub fn ranges(&self) -> impl Iterator<Item = (SeqNumber, SeqNumber)> + '_ {
        self.set.ranges().map(|(first, last, _)| (first, last))
    }

    /// Whether `seq` is missing.
    pub fn contains(&self, seq: SeqNumber) -> bool {
        self.set.contains(seq)
    }

    /// Empties the list.
    pub fn clear(&mut self) {
        self.set.clear();
    }

    /// Up to `max_ranges` ranges due for a periodic NAK, in order, marked reported at `now`.
    ///
    /// A range is due if it was never reported, or if `now` is at least `interval × k` after
    /// its last report, where k is how often it was reported (capped at 16): the draft's
    /// k·RTT back-off, so a range the sender keeps failing to repair is repeated less and
    /// less often. Merged ranges take the state of the more urgent part; a split range keeps
    /// its state in both halves. Scans every range: meant for a timer, not per packet.
    pub fn ranges_due(
        &mut self,
        now: Instant,
        interval: Duration,
        max_ranges: usize,
    ) -> Vec<(SeqNumber, SeqNumber)> {
        let mut due = Vec::new();
        for (&key, entry) in self.set.map.iter_mut() {
            if due.len() >= max_ranges {
                break;
            }
            if !entry.meta.is_due(now, interval) {
                continue;
            }
            entry.meta = ReportState {
                last: Some(now),
                count: entry.meta.count.saturating_add(1),
            };
            due.push((self.set.unwrap.seq(key), self.set.unwrap.seq(entry.last)));
        }
        due
    }
}

impl ReportState {
    fn is_due(&self, now: Instant, interval: Duration) -> bool {
        match self.last {
            None => true,
            Some(last) => now >= last + interval * self.count.clamp(1, MAX_BACKOFF),
        }
    }
}

/// What a range remembers besides its bounds, and how two merged ranges combine it.
trait RangeMeta: Copy {
    fn merge(self, other: Self) -> Self;
}

impl RangeMeta for () {
    fn merge(self, _other: Self) -> Self {}
}

impl RangeMeta for ReportState {
    /// The more urgent state wins: never reported, else the older report.
    fn merge(self, other: Self) -> Self {
        match (self.last, other.last) {
            (None, _) => self,
            (_, None) => other,
            (Some(a), Some(b)) if a <= b => self,
            _ => other,
        }
    }
}

/// Maps wrapping sequence numbers to monotonic 64-bit keys.
///
/// It remembers one (seq, key) reference and moves it to every number it converts, so as
/// long as successive numbers are within 2³⁰ of each other (every window the protocol keeps
/// is), keys keep increasing through the 2³¹ wrap.
#[derive(Clone, Copy, Debug)]
struct Unwrapper {
    seq: SeqNumber,
    key: u64,
}

impl Unwrapper {
    /// Keys start far from 0 so numbers before the first one seen still get positive keys.
    const START: u64 = 1 << 40;

    fn new() -> Self {
        Self {
            seq: SeqNumber::new(0),
            key: Self::START,
        }
    }

    /// The key of `seq`, moving the reference to it.
    fn key(&mut self, seq: SeqNumber) -> u64 {
        let key = self.peek(seq);
        *self = Self { seq, key };
        key
    }

    /// The key of `seq` without moving the reference.
    fn peek(&self, seq: SeqNumber) -> u64 {
        self.key
            .wrapping_add_signed(i64::from(self.seq.offset_to(seq)))
    }

    /// The sequence number of a key (inverse of [`Self::key`] within the window).
    fn seq(&self, key: u64) -> SeqNumber {
        // Keys in the set are within the 2^30 window of the reference.
        let delta = key.wrapping_sub(self.key) as i64;
        self.seq + delta as i32
    }
}

/// A bounded set of disjoint, non-adjacent inclusive ranges of unwrapped keys.
#[derive(Clone, Debug)]
struct RangeSet<M> {
    /// First key of each range → its last key and metadata.
    map: BTreeMap<u64, Entry<M>>,
    unwrap: Unwrapper,
    len: u32,
    capacity: u32,
}

#[derive(Clone, Copy, Debug)]
struct Entry<M> {
    last: u64,
    meta: M,
}

impl<M: RangeMeta> RangeSet<M> {
    fn new(capacity: u32) -> Self {
        Self {
            map: BTreeMap::new(),
            unwrap: Unwrapper::new(),
            len: 0,
            capacity,
        }
    }

    fn clear(&mut self) {
        self.map.clear();
        self.len = 0;
    }

    /// Adds the uncovered parts of `first..=last`, lowest first, until the capacity is
    /// reached. Returns the count added.
    fn insert(&mut self, first: SeqNumber, last: SeqNumber, meta: M) -> u32 {
        if last < first {
            return 0;
        }
        let (a, b) = (self.unwrap.key(first), self.unwrap.key(last));
        let mut cur = a;
        let mut added = 0u32;
        while cur <= b && self.len < self.capacity {
            if let Some((_, entry)) = self.map.range(..=cur).next_back() {
                if entry.last >= cur {
                    cur = entry.last + 1;
                    continue;
                }
            }
            let next_start = self.map.range(cur + 1..).next().map(|(&start, _)| start);
            let gap_end = next_start.map_or(b, |start| b.min(start - 1));
            let room = u64::from(self.capacity - self.len);
            let piece_end = gap_end.min(cur + room - 1);
            self.add_disjoint(cur, piece_end, meta);
            added += (piece_end - cur + 1) as u32;
            cur = piece_end + 1;
        }
        added
    }

    /// Inserts `a..=b`, which overlaps nothing, merging with touching neighbours.
    fn add_disjoint(&mut self, a: u64, b: u64, meta: M) {
        self.len += (b - a + 1) as u32;
        let mut start = a;
        let mut entry = Entry { last: b, meta };
        if let Some((&prev_start, prev)) = self.map.range(..a).next_back() {
            if prev.last + 1 == a {
                start = prev_start;
                entry.meta = prev.meta.merge(meta);
            }
        }
        if let Some(next) = self.map.remove(&(b + 1)) {
            entry.last = next.last;
            entry.meta = entry.meta.merge(next.meta);
        }
        self.map.insert(start, entry);
    }

    fn remove_range(&mut self, first: SeqNumber, last: SeqNumber) {
        if last < first {
            return;
        }
        let (a, b) = (self.unwrap.key(first), self.unwrap.key(last));
        self.remove_keys(a, b);
    }

    fn remove_before(&mut self, seq: SeqNumber) {
        let Some(&lowest) = self.map.keys().next() else {
            return;
        };
        let end = self.unwrap.key(seq);
        if end > lowest {
            self.remove_keys(lowest, end - 1);
        }
    }

    /// Removes every key in `a..=b`, trimming or splitting ranges that stick out.
    fn remove_keys(&mut self, a: u64, b: u64) {
        if let Some((_, prev)) = self.map.range_mut(..a).next_back() {
            if prev.last >= a {
                let old_last = prev.last;
                prev.last = a - 1;
                let meta = prev.meta;
                self.len -= (old_last.min(b) - a + 1) as u32;
                if old_last > b {
                    self.map.insert(
                        b + 1,
                        Entry {
                            last: old_last,
                            meta,
                        },
                    );
                    return;
                }
            }
        }
        while let Some((&start, _)) = self.map.range(a..=b).next() {
            let Some(entry) = self.map.remove(&start) else {
                break;
            };
            self.len -= (entry.last.min(b) - start + 1) as u32;
            if entry.last > b {
                self.map.insert(b + 1, entry);
            }
        }
    }

    fn pop_first(&mut self) -> Option<SeqNumber> {
        let first = self.map.first_entry()?;
        let start = *first.key();
        let entry = *first.get();
        first.remove();
        if entry.last > start {
            self.map.insert(start + 1, entry);
        }
        self.len -= 1;
        Some(self.unwrap.seq(start))
    }

    fn first(&self) -> Option<SeqNumber> {
        self.map.keys().next().map(|&key| self.unwrap.seq(key))
    }

    fn contains(&self, seq: SeqNumber) -> bool {
        let key = self.unwrap.peek(seq);
        self.map
            .range(..=key)
            .next_back()
            .is_some_and(|(_, entry)| entry.last >= key)
    }

    fn ranges(&self) -> impl Iterator<Item = (SeqNumber, SeqNumber, M)> + '_ {
        self.map.iter().map(|(&start, entry)| {
            (
                self.unwrap.seq(start),
                self.unwrap.seq(entry.last),
                entry.meta,
            )
        })
    }
}
