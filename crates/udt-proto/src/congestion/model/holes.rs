//! The holes the receiver reported lost and has not got yet, so that each counts as delivered
//! once its retransmission arrives.
//!
//! The sampler's front passes a hole as soon as a NAK reports it, and the hole is not
//! delivered then. Its retransmission is, later, and nothing else tells the sampler so: UDT's
//! cumulative ACK passing the hole is the only sign. Without counting those repairs a flow
//! at a loss rate `p` measured `1 - p` of what reached the receiver, and its estimate, the
//! highest such sample, sank round after round where kernel BBR, which counts retransmissions
//! it delivers, holds its own (beside ten BBR flows at 200 Mbit/s × 50 ms, 10-19% of each
//! sample's packets lost, the samples after a 1.25 probe read 0.90-0.96 of the estimate).
//!
//! Bounded: at most [`MAX_HOLES`] ranges are remembered; the oldest is forgotten beyond that
//! and its repair never counts, which only undercounts delivery as before.

use std::collections::VecDeque;

use crate::seq::SeqNumber;

/// Ranges remembered at most (32 KiB): a round trip at 1 Gbit/s × 200 ms carries about 16,600
/// packets, so this holds every hole of one at up to 25% random loss, each hole its own
/// range. The deque grows only as holes are reported: a loss-free connection allocates
/// nothing.
const MAX_HOLES: usize = 4096;

/// Reported holes ahead of the cumulative ACK, in sequence order, and the repairs counted.
#[derive(Clone, Debug, Default)]
pub(super) struct Holes {
    /// Inclusive, disjoint, ascending ranges.
    ranges: VecDeque<(SeqNumber, SeqNumber)>,
    /// Sequence numbers repaired so far.
    repaired: u64,
}

impl Holes {
    /// `first..=last` was reported lost for the first time; it lies after every hole
    /// remembered (the model counts a loss only beyond the highest it counted).
    pub(super) fn on_lost(&mut self, first: SeqNumber, last: SeqNumber) {
        if let Some(back) = self.ranges.back_mut() {
            if back.1.next() == first {
                back.1 = last;
                return;
            }
        }
        if self.ranges.len() == MAX_HOLES {
            self.ranges.pop_front();
        }
        self.ranges.push_back((first, last));
    }

    /// Sequence numbers repaired so far: holes the cumulative ACK passed.
    pub(super) fn repaired(&self) -> u64 {
        self.repaired
    }

    /// The cumulative ACK reached `ack`: every hole before it was repaired.
    pub(super) fn on_ack(&mut self, ack: SeqNumber) {
        let repaired = &mut self.repaired;
        while let Some(hole) = self.ranges.front_mut() {
            if ack <= hole.0 {
                break;
            }
            if ack <= hole.1 {
                *repaired += u64::from(hole.0.len_to(ack.prev()));
                hole.0 = ack;
                break;
            }
            *repaired += u64::from(hole.0.len_to(hole.1));
            self.ranges.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(n: u32) -> SeqNumber {
        SeqNumber::new(n)
    }

    /// Repairs counted by the ACK to `ack`.
    fn ack(holes: &mut Holes, ack: u32) -> u64 {
        let before = holes.repaired();
        holes.on_ack(seq(ack));
        holes.repaired() - before
    }

    #[test]
    fn an_ack_repairs_the_holes_before_it_once() {
        let mut holes = Holes::default();
        holes.on_lost(seq(10), seq(12));
        holes.on_lost(seq(20), seq(20));
        assert_eq!(ack(&mut holes, 10), 0, "the ACK stops at the first hole");
        assert_eq!(ack(&mut holes, 12), 2, "10 and 11 arrived");
        assert_eq!(ack(&mut holes, 25), 2, "12 and 20");
        assert_eq!(ack(&mut holes, 30), 0, "nothing is counted twice");
        assert_eq!(holes.repaired(), 4);
    }

    #[test]
    fn adjacent_reports_merge_and_sequence_numbers_wrap() {
        let mut holes = Holes::default();
        holes.on_lost(seq(SeqNumber::MAX - 1), seq(SeqNumber::MAX));
        holes.on_lost(seq(0), seq(1));
        assert_eq!(holes.ranges.len(), 1);
        assert_eq!(ack(&mut holes, 2), 4);
    }

    #[test]
    fn the_oldest_hole_is_forgotten_beyond_the_bound() {
        let mut holes = Holes::default();
        for i in 0..=MAX_HOLES as u32 {
            holes.on_lost(seq(2 * i), seq(2 * i));
        }
        assert_eq!(holes.ranges.len(), MAX_HOLES);
        assert_eq!(ack(&mut holes, 2 * MAX_HOLES as u32 + 1), MAX_HOLES as u64);
    }
}
