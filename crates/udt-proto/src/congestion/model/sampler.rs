//! The measurements behind the model controller: delivery-rate and RTT samples taken from
//! cumulative ACK progress, and a windowed max filter for the bandwidth estimate.
//!
//! UDT ACKs are cumulative and carry no selective acknowledgements, so "delivered" here is
//! the number of sequence numbers the receiver's *front* has passed, each counted once. The
//! front is the cumulative ACK, or further when a NAK shows it: the receiver NAKs a gap as
//! soon as the packet after it arrives, so a NAK whose last range ends at `l` proves `l + 1`
//! arrived. Without that, every random loss would hold the cumulative ACK back for a round
//! trip and every delivery-rate sample across it would read low. The holes the front passes
//! are subtracted again (a sample counts the losses reported during it), so an overflowing
//! queue cannot make the estimate grow, unless the cumulative ACK passed as many during the
//! sample (their retransmissions arrived: see [`HoleTally`] and `model/holes.rs`), so that, as
//! in BBR, a sample counts every packet the receiver got. A *marker* remembers, for one new
//! packet, when it was sent and how much had been delivered by then. When the ACK passes the
//! marker, the delivery rate over that span is `(delivered now − delivered then) /
//! interval`, where the interval is the longer of the send span and the ACK span (so a burst
//! of ACK progress after a hole is repaired cannot report more than the sending rate), and
//! `now − sent` is an RTT sample (it includes up to one ACK period of delay at the receiver,
//! which the min filter mostly removes). The ACK
//! span is timed between the receiver's arrival stamps on the two reports where it sends
//! them (ours do, in the header timestamp; 4.11 sends 0): the spacing at which reports reach
//! the sender also carries the receiver's read delays and the return path's.
//!
//! Markers are placed a fraction of an RTT (or of the gap between ACKs, when ACKs come further
//! apart than a round trip) apart in a fixed ring, so every hook is O(1) amortised and nothing
//! is allocated per packet. The ring must reach to the end of each ACK gap: a sample counts
//! delivery up to its marker but spans the whole gap, so a ring that filled early in the gap
//! would cap every sample at its own capacity.

use std::time::Duration;

use crate::seq::SeqNumber;
use crate::time::Instant;

/// How many markers can be outstanding: 8 per RTT for up to eight RTTs of flight, or 16 per
/// ACK gap for up to four gaps.
const MARKERS: usize = 64;
/// How many past states of delivery (one per advance of the front) [`Sampler::recent_rate`]
/// spans.
const HISTORY: usize = 16;

/// Holes counted so far: reported lost (the front passed them undelivered) and repaired
/// since (the cumulative ACK passed them: their retransmissions arrived).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct HoleTally {
    pub(super) lost: u64,
    pub(super) repaired: u64,
}

impl HoleTally {
    /// What a sample spanning `then` to `self` takes off the front's advance: the holes
    /// reported in the span, less those repaired in it. Repairs only offset holes, never add
    /// to the advance: the cumulative ACK, held back by one hole whose retransmission was
    /// lost too, passes a whole round trip's repaired holes at once, and counted as they
    /// come those bursts read as delivery rates far above the path's (beside ten kernel BBR
    /// flows a hold's estimate grew 3-9 times in 6.5-10 s). In a steady state repairs keep
    /// up with the holes, so a sample counts the front's advance, which is every packet the
    /// receiver got, retransmissions included, as BBR counts.
    fn undelivered_since(self, then: Self) -> u64 {
        let lost = self.lost.saturating_sub(then.lost);
        let repaired = self.repaired.saturating_sub(then.repaired);
        lost - repaired.min(lost)
    }
}

/// The delivery count as it stood after one advance of the front.
#[derive(Clone, Copy, Debug)]
struct Delivered {
    /// When the front advanced.
    at: Instant,
    /// Packets delivered by then.
    count: u64,
    /// Losses reported by then.
    lost: u64,
}

/// One sampled packet.
#[derive(Clone, Copy, Debug)]
struct Marker {
    seq: SeqNumber,
    sent_at: Instant,
    /// Packets delivered when this one was sent.
    delivered: u64,
    /// When `delivered` last grew, as of this packet's send time.
    delivered_time: Instant,
    /// The receiver's stamp on the report that grew it, if it had one.
    delivered_rtime: Option<u32>,
    /// Send time of the newest marker acknowledged when this one was sent.
    first_sent_time: Instant,
    /// Holes counted when this one was sent.
    holes: HoleTally,
    /// Sent while the controller held its rate down on purpose (probe RTT).
    limited: bool,
}

/// What one ACK taught the sampler.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct AckSample {
    /// Sequence numbers the front newly passed.
    pub(super) newly_acked: u64,
    /// The best delivery rate among the markers this ACK passed, packets per second.
    pub(super) rate_pkts: Option<f64>,
    /// The same for markers sent while the rate was held down: it only counts if it beats
    /// the estimate.
    pub(super) limited_rate_pkts: Option<f64>,
    /// The smallest RTT among the markers this ACK passed.
    pub(super) rtt: Option<Duration>,
}

/// Delivery accounting and the marker ring.
#[derive(Clone, Debug)]
pub(super) struct Sampler {
    markers: [Marker; MARKERS],
    head: usize,
    len: usize,
    last_mark: Option<Instant>,
    front: SeqNumber,
    delivered: u64,
    delivered_time: Instant,
    /// The receiver's stamp on the last report that moved the front (see
    /// [`Sampler::on_progress`]).
    delivered_rtime: Option<u32>,
    first_sent_time: Instant,
    /// The last [`HISTORY`] states of delivery, a ring ending at `history_head`.
    history: [Delivered; HISTORY],
    history_head: usize,
    history_len: usize,
}

impl Sampler {
    /// A sampler for a connection whose first packet is `isn`.
    pub(super) fn new(now: Instant, isn: SeqNumber) -> Self {
        let blank = Marker {
            seq: isn,
            sent_at: now,
            delivered: 0,
            delivered_time: now,
            delivered_rtime: None,
            first_sent_time: now,
            holes: HoleTally::default(),
            limited: false,
        };
        Self {
            markers: [blank; MARKERS],
            head: 0,
            len: 0,
            last_mark: None,
            front: isn,
            delivered: 0,
            delivered_time: now,
            delivered_rtime: None,
            first_sent_time: now,
            history: [Delivered {
                at: now,
                count: 0,
                lost: 0,
            }; HISTORY],
            history_head: 0,
            history_len: 0,
        }
    }

    /// The receiver's known front: everything before it has arrived or been reported lost.
    pub(super) fn front(&self) -> SeqNumber {
        self.front
    }

    /// A new packet `seq` leaves at `now`, with `lost` losses reported so far (`limited`:
    /// while the rate is held down on purpose); mark it if the last marker is at least
    /// `spacing` old and the ring has room.
    pub(super) fn on_sent(
        &mut self,
        now: Instant,
        seq: SeqNumber,
        spacing: Duration,
        holes: HoleTally,
        limited: bool,
    ) {
        // Packets that leave at one instant (a pacing train, one `sendmmsg`) are one send
        // event: the newest marker stands for the last of them, so a sample counts the whole
        // train. Marked at its first packet, a train acknowledged within one ACK gap counted
        // one packet per train (a 1 Gbit/s path with trains read 1% of its rate).
        if self.last_mark == Some(now) && self.len > 0 {
            let newest = (self.head + self.len - 1) % MARKERS;
            if self.markers[newest].seq < seq {
                self.markers[newest].seq = seq;
            }
            return;
        }
        if self.len == MARKERS || self.last_mark.is_some_and(|t| now - t < spacing) {
            return;
        }
        // A marker behind the ACK (a late send hook) would never be matched usefully.
        if seq < self.front {
            return;
        }
        let slot = (self.head + self.len) % MARKERS;
        self.markers[slot] = Marker {
            seq,
            sent_at: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            delivered_rtime: self.delivered_rtime,
            first_sent_time: self.first_sent_time,
            holes,
            limited,
        };
        self.len += 1;
        self.last_mark = Some(now);
    }

    /// The delivery rate over the remembered advances of the front (the last [`HISTORY`]),
    /// packets per second, holes the front passed left out; `None` before two advances.
    /// (On a 3,750 pkt/s veth path, 16 ACKs or 70 ms, it read 3,547-3,943 with a standing
    /// queue.)
    pub(super) fn recent_rate(&self) -> Option<f64> {
        if self.history_len < 2 {
            return None;
        }
        let newest = self.history[self.history_head];
        let oldest = self.history[(self.history_head + HISTORY + 1 - self.history_len) % HISTORY];
        let span = (newest.at - oldest.at).as_secs_f64();
        let lost = newest.lost.saturating_sub(oldest.lost);
        let delivered = newest
            .count
            .saturating_sub(oldest.count)
            .saturating_sub(lost);
        (span > 0.0).then(|| delivered as f64 / span)
    }

    /// Remember the state of delivery after the front advanced.
    fn record(&mut self, lost: u64) {
        self.history_head = (self.history_head + 1) % HISTORY;
        self.history_len = (self.history_len + 1).min(HISTORY);
        self.history[self.history_head] = Delivered {
            at: self.delivered_time,
            count: self.delivered,
            lost,
        };
    }

    /// At `now` the receiver is known to hold everything before `ack` (up to holes being
    /// repaired), and `lost` losses have been reported in all. Samples whose interval is
    /// shorter than `min_interval` are dropped (too short to average out ACK bunching).
    ///
    /// `rtime` is the report's receiver stamp (`AckInfo::receiver_time`): when it and the
    /// one a marker remembers are both there, the ACK span is measured between them, on the
    /// receiver's clock, rather than between the reports' arrivals here, which a receiver
    /// reading late or a bunching return path moves closer together.
    pub(super) fn on_progress(
        &mut self,
        now: Instant,
        ack: SeqNumber,
        min_interval: Duration,
        holes: HoleTally,
        rtime: Option<u32>,
    ) -> AckSample {
        let mut sample = AckSample::default();
        let advance = self.front.offset_to(ack);
        if advance <= 0 {
            return sample;
        }
        sample.newly_acked = advance.unsigned_abs().into();
        self.front = ack;
        self.delivered += sample.newly_acked;
        self.delivered_time = now;
        self.delivered_rtime = rtime;
        while self.len > 0 && self.markers[self.head].seq < ack {
            let m = self.markers[self.head];
            self.head = (self.head + 1) % MARKERS;
            self.len -= 1;
            self.first_sent_time = m.sent_at;
            let rtt = now - m.sent_at;
            sample.rtt = Some(sample.rtt.map_or(rtt, |r| r.min(rtt)));
            let ack_span =
                receiver_span(rtime, m.delivered_rtime).unwrap_or(now - m.delivered_time);
            let interval = (m.sent_at - m.first_sent_time).max(ack_span);
            if interval.is_zero() || interval < min_interval {
                continue;
            }
            // Count only up to the marker: what the ACK passed beyond it was (mostly) sent
            // later, and counting it would let a repaired hole report a burst.
            let beyond = u64::from(m.seq.next().offset_to(ack).unsigned_abs());
            let through_marker = self.delivered.saturating_sub(beyond);
            // Holes the front passed were not delivered: take those reported during the
            // sample, less those repaired in it.
            let delivered = through_marker
                .saturating_sub(m.delivered)
                .saturating_sub(holes.undelivered_since(m.holes));
            let rate = delivered as f64 / interval.as_secs_f64();
            tracing::trace!(
                rate_pps = rate as u64,
                delivered,
                ?interval,
                send_span = ?(m.sent_at - m.first_sent_time),
                ?ack_span,
                lost = holes.lost.saturating_sub(m.holes.lost),
                repaired = holes.repaired.saturating_sub(m.holes.repaired),
                beyond,
                "model: delivery sample"
            );
            let slot = if m.limited {
                &mut sample.limited_rate_pkts
            } else {
                &mut sample.rate_pkts
            };
            *slot = Some(slot.map_or(rate, |r| r.max(rate)));
        }
        self.record(holes.lost);
        sample
    }
}

/// The time between two receiver stamps (`then` before `now`, wrapping), if both are there
/// and in order: a later report stamped earlier (reordered, or a peer's nonsense) is no
/// span.
fn receiver_span(now: Option<u32>, then: Option<u32>) -> Option<Duration> {
    let span = now?.wrapping_sub(then?);
    (span < 1 << 31).then(|| Duration::from_micros(span.into()))
}

/// A running maximum over a window of rounds, kept as the best, second-best and third-best
/// values of successively later sub-windows (the classic three-sample windowed filter): O(1)
/// per update, no history.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct MaxFilter {
    window: u64,
    best: [(u64, f64); 3],
}

impl MaxFilter {
    /// An empty filter (maximum 0) over `window` rounds.
    pub(super) fn new(window: u64) -> Self {
        Self {
            window: window.max(1),
            best: [(0, 0.0); 3],
        }
    }

    /// Changes the window to `window` rounds (at least one) from the next update on.
    pub(super) fn set_window(&mut self, window: u64) {
        self.window = window.max(1);
    }

    /// The window, in rounds.
    #[cfg(test)]
    pub(super) fn window(&self) -> u64 {
        self.window
    }

    /// The maximum over the window.
    pub(super) fn max(&self) -> f64 {
        self.best[0].1
    }

    /// Forget everything and hold `value` from round `round` on.
    pub(super) fn reset(&mut self, round: u64, value: f64) {
        self.best = [(round, value); 3];
    }

    /// Add `value` measured in round `round` (rounds never go backwards).
    pub(super) fn update(&mut self, round: u64, value: f64) {
        let fresh = (round, value);
        if value >= self.best[0].1 || round.saturating_sub(self.best[2].0) > self.window {
            self.reset(round, value);
            return;
        }
        if value >= self.best[1].1 {
            self.best[1] = fresh;
            self.best[2] = fresh;
        } else if value >= self.best[2].1 {
            self.best[2] = fresh;
        }
        self.expire(round, fresh);
    }

    /// Age the sub-window champions so that the best never outlives the window, and keep the
    /// later candidates spread over it.
    fn expire(&mut self, round: u64, fresh: (u64, f64)) {
        let age = round.saturating_sub(self.best[0].0);
        if age > self.window {
            self.best = [self.best[1], self.best[2], fresh];
            if round.saturating_sub(self.best[0].0) > self.window {
                self.best = [self.best[1], self.best[2], fresh];
            }
        } else if self.best[1].0 == self.best[0].0 && age > self.window / 4 {
            self.best[1] = fresh;
            self.best[2] = fresh;
        } else if self.best[2].0 == self.best[1].0 && age > self.window / 2 {
            self.best[2] = fresh;
        }
    }
}
