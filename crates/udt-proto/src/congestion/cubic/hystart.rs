//! HyStart's delay rule (Ha and Rhee, 2011), as Linux CUBIC runs it: slow start ends, without
//! a loss, in the round trip whose first few round-trip samples all read more than
//! `max(4 ms, min(16 ms, base / 8))` above the lowest round trip the flow has seen.
//!
//! Why UDT's `cubic` has it (off by default, [`CubicConfig::hystart`]): kernel TCP leaves
//! slow start this way, and what another flow does to the queue while a kernel CUBIC flow is
//! in slow start decides where it ends. A scavenger that rebuilds its standing queue under a
//! newcomer's slow start ends it at a few percent of the link, and the newcomer then creeps up
//! for seconds (the lab saw it; BENCHMARKS.md, session 59). The simulator's stand-in for
//! kernel TCP needs the rule to show that. Linux's ACK-train rule (slow start ends when the
//! ACKs of one round arrive over more than half the base round trip) is left out: on a path
//! shared with a flow that fills the link the delay rule fires first, and UDT's ACKs (one per
//! 10 ms or per 16-128 packets) do not make trains TCP's per-segment ACKs make.
//!
//! Samples are round trips from the sender's own send times (`congestion/rtt_sample.rs`),
//! one per ACK that passes a marked packet, less the ACK's wait at a receiver that stamps it.
//!
//! [`CubicConfig::hystart`]: super::CubicConfig::hystart

use std::time::Duration;

use super::super::rtt_sample::{AckHold, Markers};
use super::super::AckInfo;
use crate::seq::SeqNumber;
use crate::time::Instant;

/// Linux's `hystart_low_window`: no exit below this window, packets.
pub(super) const LOW_WINDOW: f64 = 16.0;
/// Linux's `HYSTART_MIN_SAMPLES`: a round is judged once it has this many samples.
const MIN_SAMPLES: u32 = 8;
/// Bounds of the rise that ends slow start (Linux's `HYSTART_DELAY_MIN` and `_MAX`).
const RISE_MIN: Duration = Duration::from_millis(4);
const RISE_MAX: Duration = Duration::from_millis(16);
/// Delay samples per round trip. Linux takes one per ACK; the stand-in's figures beside the
/// scavenger (BENCHMARKS.md, sessions 62-65) were taken with 16, so it keeps them.
const MARKERS_PER_RTT: u32 = 16;

/// The delay rule's state: the flow's lowest round trip, and the round in progress.
#[derive(Clone, Debug)]
pub(super) struct HyStart {
    markers: Markers,
    hold: AckHold,
    /// The lowest sample seen (Linux's `delay_min`).
    base: Option<Duration>,
    /// The round in progress ends once the cumulative ACK passes this.
    round_end: SeqNumber,
    /// The lowest sample of the round so far, and how many it has seen.
    round_min: Option<Duration>,
    samples: u32,
}

impl HyStart {
    pub(super) fn new(now: Instant, isn: SeqNumber) -> Self {
        Self {
            markers: Markers::new(now, isn, MARKERS_PER_RTT),
            hold: AckHold::new(now),
            base: None,
            round_end: isn,
            round_min: None,
            samples: 0,
        }
    }

    /// A new packet (not a retransmission) left at `now`; `rtt` spaces the markers.
    pub(super) fn on_sent(&mut self, now: Instant, seq: SeqNumber, rtt: Duration) {
        self.markers.on_sent(now, seq, rtt);
    }

    /// A cumulative ACK at `now`: whether slow start should end, judged only while `judge`
    /// (in slow start, at a window of at least [`LOW_WINDOW`]).
    pub(super) fn on_ack(&mut self, now: Instant, ack: &AckInfo, judge: bool) -> bool {
        let wait = ack
            .receiver_time
            .map_or(Duration::ZERO, |stamp| self.hold.on_ack(now, stamp));
        let sample = self
            .markers
            .on_ack(now, ack.ack)
            .map(|s| s.saturating_sub(wait));
        if ack.ack > self.round_end {
            self.round_end = ack.largest_sent;
            self.round_min = None;
            self.samples = 0;
        }
        let Some(sample) = sample else {
            return false;
        };
        let base = *self
            .base
            .insert(self.base.map_or(sample, |b| b.min(sample)));
        let round_min = *self
            .round_min
            .insert(self.round_min.map_or(sample, |m| m.min(sample)));
        if !judge {
            return false;
        }
        if self.samples < MIN_SAMPLES {
            self.samples += 1;
            return false;
        }
        round_min > base + (base / 8).clamp(RISE_MIN, RISE_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds a HyStart rounds of slow start: each round sends the window evenly over the
    /// round trip, and every packet's ACK comes back one round trip (base plus that round's
    /// queue) after it left, one ACK per 8 packets. Returns the window at which it said
    /// "leave", if it did within `rounds`.
    fn slow_start(queue_ms: impl Fn(u32) -> f64, rounds: u32) -> Option<u32> {
        let base = Duration::from_millis(50);
        let t0 = Instant::from_micros(1_000_000);
        let mut h = HyStart::new(t0, SeqNumber::new(0));
        let mut window = 10u32;
        let mut next = 0u32;
        let mut start = t0;
        // ACKs of the previous round, to be fed in time order with this round's sends.
        let mut acks: Vec<(Instant, u32)> = Vec::new();
        for round in 0..rounds {
            let rtt = base + Duration::from_secs_f64(queue_ms(round) / 1e3);
            let mut events: Vec<(Instant, Option<u32>)> =
                acks.drain(..).map(|(at, seq)| (at, Some(seq))).collect();
            for j in 0..window {
                let at = start + rtt * j / window;
                events.push((at, None));
                if (j + 1) % 8 == 0 || j + 1 == window {
                    acks.push((at + rtt, next + j + 1));
                }
            }
            events.sort_by_key(|e| e.0);
            let mut seq = next;
            for (at, ack) in events {
                match ack {
                    None => {
                        h.on_sent(at, SeqNumber::new(seq), rtt);
                        seq += 1;
                    }
                    Some(ack) => {
                        let judge = f64::from(window) >= LOW_WINDOW;
                        let info = AckInfo {
                            ack: SeqNumber::new(ack),
                            rtt,
                            recv_rate_pkts: 0,
                            bandwidth_pkts: 0,
                            largest_sent: SeqNumber::new(seq).prev(),
                            receiver_time: None,
                        };
                        if h.on_ack(at, &info, judge) {
                            return Some(window);
                        }
                    }
                }
            }
            next = seq;
            start += rtt;
            window *= 2;
        }
        None
    }

    #[test]
    fn a_flat_round_trip_never_ends_slow_start() {
        assert_eq!(slow_start(|_| 0.0, 12), None);
    }

    /// At a 50 ms base the rise that counts is 6.25 ms. Sending rounds 3 on read a queue of
    /// 0, 2, 4, 6, 8, 10 ms: round 7 (8 ms) is the first above the rise, but a judged round
    /// begins when the ACKs pass what was sent when the last one ended, mid-way through a
    /// sending round, so its first samples still carry round 6's 6 ms. Slow start ends on
    /// round 8's samples, fed while round 9 (5,120 packets) is sent.
    #[test]
    fn a_rise_above_an_eighth_of_the_base_ends_it() {
        let ended = slow_start(|r| 2.0 * f64::from(r.saturating_sub(3)), 12);
        assert_eq!(ended, Some(5120));
        // A rise that stops at 6 ms, under the threshold, never ends it.
        assert_eq!(slow_start(|r| f64::from(r.min(6)), 12), None);
    }

    /// A standing queue that was there from the first sample is the base: only what rises
    /// above it counts.
    #[test]
    fn a_standing_queue_is_part_of_the_base() {
        assert_eq!(slow_start(|_| 25.0, 12), None);
        // A queue that drains for one round (a scavenger's slowdown) lowers the base, and
        // the same 25 ms rebuilt under the slow start then reads as a rise: it ends on the
        // first judged round clear of round 4's low samples, fed while round 7 (1,280
        // packets) is sent.
        let ended = slow_start(|r| if r == 4 { 0.0 } else { 25.0 }, 12);
        assert_eq!(ended, Some(1280));
    }
}
