//! [`Link`]: one direction of a simulated path, from `push` to `poll_deliver`.
//!
//! The pipeline a pushed packet goes through, in order:
//!
//! 0. **Stalls**: a packet pushed while the link is stalled enters it when the stall ends
//!    (see the `stall` module).
//! 1. **MTU**: longer than `mtu` → [`Verdict::DroppedMtu`].
//! 2. **Random loss** ([`LossModel`](crate::LossModel)), applied on arrival, before the queue:
//!    a lost packet takes no queue space or link time, like loss upstream of the bottleneck
//!    → [`Verdict::DroppedLoss`].
//! 3. **Drop-tail queue and serialization** (see the `queue` module): the departure time is
//!    fixed on acceptance → [`Verdict::DroppedQueueFull`] if it does not fit.
//! 4. **Duplication**: an accepted packet may get a copy; both copies leave at the same time
//!    (duplication happens past the bottleneck) and go through step 5 independently.
//! 5. **Delivery time** = departure + `delay` + jitter draw, raised to the previous delivery
//!    time unless `jitter_reorders`; then + `reorder_delay` if the packet is picked for
//!    reordering (this extra delay is not propagated, so later packets overtake it); then,
//!    if that time falls in a stall, the stall's end. The payload may get one bit flipped.
//!
//! Scheduled packets wait in a binary heap keyed by (delivery time, insertion counter), so
//! equal times come out in push order and every operation is O(log n).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::Duration;

use crate::config::LinkConfig;
use crate::loss::LossState;
use crate::queue::Serializer;
use crate::rng::{chance, flip_random_bit, stream, uniform_duration, Streams, STALL_STREAM};
use crate::stall::StallSchedule;

/// What happened to a pushed packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Accepted: it (and a duplicate, if one was made) will be delivered.
    Queued,
    /// Lost by the random loss model.
    DroppedLoss,
    /// Dropped because the queue was full (drop-tail).
    DroppedQueueFull,
    /// Dropped because it is longer than the MTU.
    DroppedMtu,
}

/// Counters of one link. After every scheduled packet has been delivered,
/// `delivered + dropped() == pushed + duplicated`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets pushed.
    pub pushed: u64,
    /// Packets handed out by `poll_deliver` (duplicates included).
    pub delivered: u64,
    /// Packets lost by the random loss model.
    pub dropped_loss: u64,
    /// Packets dropped by the full queue.
    pub dropped_queue: u64,
    /// Packets dropped for exceeding the MTU.
    pub dropped_mtu: u64,
    /// Extra copies made by duplication.
    pub duplicated: u64,
    /// Copies with a bit flipped (empty payloads are never counted).
    pub corrupted: u64,
    /// Copies given the extra reorder delay.
    pub reordered: u64,
    /// Payload bytes pushed.
    pub bytes_pushed: u64,
    /// Payload bytes handed out by `poll_deliver`.
    pub bytes_delivered: u64,
    /// Largest queue occupancy seen right after accepting a packet, in bytes.
    pub max_queue_bytes: usize,
}

impl LinkStats {
    /// All drops together.
    pub fn dropped(&self) -> u64 {
        self.dropped_loss + self.dropped_queue + self.dropped_mtu
    }
}

/// A delivered packet with the time it was due, for callers that care about lateness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery<T> {
    /// Scheduled delivery time (at or before the `now` it was polled at).
    pub at: Duration,
    /// The tag given to `push`.
    pub tag: T,
    /// The payload (possibly with one bit flipped).
    pub data: Vec<u8>,
}

/// One direction of a simulated path. `T` is an opaque tag carried with each packet (a flow
/// id, addresses...); it is cloned only when a packet is duplicated.
///
/// Call order: [`push`](Self::push) packets as they are sent; ask
/// [`next_deadline`](Self::next_deadline) when to come back; at that time drain
/// [`poll_deliver`](Self::poll_deliver) until it returns `None`. `now` should not go
/// backwards; if it does nothing breaks, the earlier time is just taken as given.
#[derive(Debug, Clone)]
pub struct Link<T = ()> {
    config: LinkConfig,
    serializer: Serializer,
    loss: LossState,
    rng: Streams,
    pending: BinaryHeap<Pending<T>>,
    /// Insertion counter: the tie-breaker that keeps equal delivery times in push order.
    next_seq: u64,
    /// Delivery time of the last packet scheduled without reordering (the FIFO floor used when
    /// jitter must not reorder).
    last_delivery: Duration,
    stalls: StallSchedule,
    stats: LinkStats,
}

impl<T: Clone> Link<T> {
    /// A link with `config`, whose random draws all derive from `seed`: same seed, same config
    /// and same pushes give the same deliveries.
    pub fn new(config: LinkConfig, seed: u64) -> Self {
        Self {
            serializer: Serializer::new(config.rate_bps),
            stalls: StallSchedule::with_rng(
                config.stall_rate,
                config.stall_max,
                stream(seed, STALL_STREAM),
            ),
            config,
            loss: LossState::default(),
            rng: Streams::new(seed),
            pending: BinaryHeap::new(),
            next_seq: 0,
            last_delivery: Duration::ZERO,
            stats: LinkStats::default(),
        }
    }

    /// Offers a packet to the link at `now`; see the module doc for the pipeline.
    pub fn push(&mut self, now: Duration, tag: T, data: Vec<u8>) -> Verdict {
        match self.offer(now, tag, data) {
            Ok(()) => Verdict::Queued,
            Err((verdict, _)) => verdict,
        }
    }

    /// Like [`push`](Self::push), but a dropped packet's buffer is handed back with the
    /// verdict, so a real-time caller (the lab's forwarder) can recycle it instead of freeing
    /// and allocating one per packet. Same draws and stats as `push`.
    pub fn offer(
        &mut self,
        now: Duration,
        tag: T,
        data: Vec<u8>,
    ) -> Result<(), (Verdict, Vec<u8>)> {
        self.stats.pushed += 1;
        self.stats.bytes_pushed += data.len() as u64;
        self.stalls.prune(now);
        let now = self.stalls.hold(now);
        if data.len() > self.config.mtu {
            self.stats.dropped_mtu += 1;
            return Err((Verdict::DroppedMtu, data));
        }
        if self.loss.lose(&self.config.loss, &mut self.rng.loss) {
            self.stats.dropped_loss += 1;
            return Err((Verdict::DroppedLoss, data));
        }
        let accepted = self
            .serializer
            .enqueue(now, data.len(), self.config.queue_bytes);
        let Some(depart) = accepted else {
            self.stats.dropped_queue += 1;
            return Err((Verdict::DroppedQueueFull, data));
        };
        let queued = usize::try_from(self.serializer.queued_bytes(now)).unwrap_or(usize::MAX);
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(queued);
        if chance(&mut self.rng.duplicate, self.config.duplicate_prob) {
            self.stats.duplicated += 1;
            let copy = data.clone();
            self.schedule(depart, tag.clone(), data);
            self.schedule(depart, tag, copy);
        } else {
            self.schedule(depart, tag, data);
        }
        Ok(())
    }

    /// The next packet due at or before `now`, in delivery order (ties in push order).
    pub fn poll_deliver(&mut self, now: Duration) -> Option<(T, Vec<u8>)> {
        self.poll_delivery(now).map(|d| (d.tag, d.data))
    }

    /// Like [`poll_deliver`](Self::poll_deliver), also telling when the packet was due.
    pub fn poll_delivery(&mut self, now: Duration) -> Option<Delivery<T>> {
        if self.pending.peek()?.at > now {
            return None;
        }
        let p = self.pending.pop()?;
        self.stats.delivered += 1;
        self.stats.bytes_delivered += p.data.len() as u64;
        Some(Delivery {
            at: p.at,
            tag: p.tag,
            data: p.data,
        })
    }

    /// The earliest pending delivery time, if any packet is in flight.
    pub fn next_deadline(&self) -> Option<Duration> {
        self.pending.peek().map(|p| p.at)
    }

    /// Counters so far.
    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// The current configuration.
    pub fn config(&self) -> &LinkConfig {
        &self.config
    }

    /// Replaces the configuration; it applies to packets pushed from now on (packets already
    /// accepted keep their schedule). A changed loss model restarts in its initial state.
    pub fn set_config(&mut self, config: LinkConfig) {
        self.serializer.set_rate(config.rate_bps);
        self.stalls
            .reconfigure(config.stall_rate, config.stall_max, self.last_delivery);
        if config.loss != self.config.loss {
            self.loss = LossState::default();
        }
        self.config = config;
    }

    /// Bytes accepted but not yet serialized at `now` (0 with an infinite rate).
    pub fn queued_bytes(&self, now: Duration) -> usize {
        usize::try_from(self.serializer.queued_bytes(now)).unwrap_or(usize::MAX)
    }

    /// Packets scheduled but not yet delivered (in the queue or in flight).
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// Computes the delivery time of one copy leaving the transmitter at `depart`, applies
    /// corruption, and schedules it.
    fn schedule(&mut self, depart: Duration, tag: T, mut data: Vec<u8>) {
        let jitter = uniform_duration(&mut self.rng.jitter, self.config.jitter);
        let mut at = depart
            .saturating_add(self.config.delay)
            .saturating_add(jitter);
        if !self.config.jitter_reorders {
            at = self.stalls.hold(at.max(self.last_delivery));
            self.last_delivery = at;
        }
        if chance(&mut self.rng.reorder, self.config.reorder_prob) {
            self.stats.reordered += 1;
            at = at.saturating_add(self.config.reorder_delay);
        }
        if self.config.jitter_reorders || self.config.reorder_prob > 0.0 {
            at = self.stalls.hold(at);
        }
        if chance(&mut self.rng.corrupt, self.config.corrupt_prob)
            && flip_random_bit(&mut self.rng.corrupt, &mut data)
        {
            self.stats.corrupted += 1;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.pending.push(Pending { at, seq, tag, data });
    }
}

/// A scheduled copy. Ordered by (delivery time, insertion counter), reversed so that
/// `BinaryHeap` (a max-heap) pops the earliest first.
#[derive(Debug, Clone)]
struct Pending<T> {
    at: Duration,
    seq: u64,
    tag: T,
    data: Vec<u8>,
}

impl<T> PartialEq for Pending<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl<T> Eq for Pending<T> {}

impl<T> PartialOrd for Pending<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Pending<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

#[cfg(test)]
mod tests;
