//! Which losses are news: the receiver names a hole again until it is repaired (its periodic
//! NAK repeats the ranges still missing, `loss_list.rs`), and a window-based controller that
//! cut on every report would cut once a round trip for as long as a repair takes. The
//! tracker counts each sequence number once ([`FreshLosses`], which `ledbat` and `model` use
//! alone), and [`LossTracker`] adds TCP's recovery rule of one cut per window of data for
//! `cubic`, with a lapse for recoveries whose repairs are lost too.

use std::time::Duration;

use super::{LossInfo, LossRange};
use crate::seq::SeqNumber;
use crate::time::Instant;

/// How long a recovery may last, in smoothed RTTs and at least, before a fresh loss is a new
/// congestion event even though the ACK has not passed the last cut's mark.
const RECOVERY_RTTS: u32 = 3;
const RECOVERY_MIN: Duration = Duration::from_millis(200);

/// Which sequence numbers a NAK reports for the first time: the receiver reports lost packets
/// in order, so everything up to the highest reported before is a repeat.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct FreshLosses {
    /// The highest sequence number reported lost so far.
    highest_lost: Option<SeqNumber>,
}

impl FreshLosses {
    /// A NAK: returns how many sequence numbers it reports for the first time (ranges that
    /// make no sense, ending at or beyond what was sent, are ignored).
    pub(super) fn on_loss(&mut self, loss: &LossInfo<'_>) -> u64 {
        self.on_loss_each(loss, |_, _| {})
    }

    /// [`FreshLosses::on_loss`], calling `fresh(first, last)` for each part of a range that
    /// is reported for the first time, in order (a controller that tracks its holes).
    pub(super) fn on_loss_each(
        &mut self,
        loss: &LossInfo<'_>,
        mut fresh: impl FnMut(SeqNumber, SeqNumber),
    ) -> u64 {
        let mut count = 0u64;
        for range in Self::valid(loss) {
            let first = match self.highest_lost {
                Some(h) => range.first.max_seq(h.next()),
                None => range.first,
            };
            if first <= range.last {
                count += u64::from(first.len_to(range.last));
                self.highest_lost = Some(range.last);
                fresh(first, range.last);
            }
        }
        count
    }

    /// Where the NAK puts the receiver's front: the sequence number after the highest range
    /// that makes sense, if any does.
    pub(super) fn front(loss: &LossInfo<'_>) -> Option<SeqNumber> {
        Self::valid(loss)
            .map(|r| r.last.next())
            .reduce(|a, b| a.max_seq(b))
    }

    /// The NAK's ranges that make sense: in order, and before what was sent.
    fn valid<'a>(loss: &'a LossInfo<'_>) -> impl Iterator<Item = &'a LossRange> {
        loss.ranges
            .iter()
            .filter(|r| r.first <= r.last && r.last < loss.largest_sent)
    }
}

/// Losses, once per sequence number, and the one-cut-per-round-trip rule: the parts of TCP's
/// loss recovery that a window-based controller over UDT's NAKs needs.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct LossTracker {
    fresh: FreshLosses,
    /// The largest sequence sent at the last cut, and when: no new cut until the ACK passes
    /// it or the recovery lapses (see [`LossTracker::try_cut`]).
    cut_at: Option<(SeqNumber, Instant)>,
    /// The receiver's known front: the cumulative ACK, or past it when a NAK shows so.
    front: SeqNumber,
    last_ack: SeqNumber,
}

impl LossTracker {
    pub(super) fn new(isn: SeqNumber) -> Self {
        Self {
            fresh: FreshLosses::default(),
            cut_at: None,
            front: isn,
            last_ack: isn,
        }
    }

    /// A cumulative ACK: returns the packets it newly acknowledged.
    pub(super) fn on_ack(&mut self, ack: SeqNumber) -> u64 {
        let newly = self.last_ack.offset_to(ack).max(0).unsigned_abs();
        if newly > 0 {
            self.last_ack = ack;
            self.front = self.front.max_seq(ack);
        }
        u64::from(newly)
    }

    /// A NAK: returns how many sequence numbers it reports for the first time (see
    /// [`FreshLosses::on_loss`]); it also moves the receiver's known front.
    pub(super) fn on_loss(&mut self, loss: &LossInfo<'_>) -> u64 {
        if let Some(front) = FreshLosses::front(loss) {
            self.front = self.front.max_seq(front);
        }
        self.fresh.on_loss(loss)
    }

    /// Whether a cut now would be a new congestion event: the ACK has passed what was sent
    /// at the last one, or [`RECOVERY_RTTS`] smoothed RTTs (at least [`RECOVERY_MIN`]) have
    /// gone by since it. If so, remembers `largest_sent` and `now` as this cut's mark.
    ///
    /// The lapse is for repairs that are lost too: the cumulative ACK then creeps one
    /// repaired hole at a time, and a window that waits for it to pass the mark keeps
    /// growing on what arrives beyond the holes. Eleven such flows at 100 Mbit/s x 40 ms
    /// (666 packets of pipe and queue) had the first reach 9,000 packets and lose a quarter
    /// of what it sent. Linux leaves such a recovery by its retransmission timer, whose
    /// least value is 200 ms; two RTTs were too short for a scavenger beside these flows to
    /// come back within 2 s at 1 Gbit/s (see BENCHMARKS.md, session 98).
    pub(super) fn try_cut(
        &mut self,
        now: Instant,
        srtt: Duration,
        largest_sent: SeqNumber,
    ) -> bool {
        if let Some((mark, at)) = self.cut_at {
            let lapse = (srtt * RECOVERY_RTTS).max(RECOVERY_MIN);
            if self.last_ack <= mark && now - at < lapse {
                return false;
            }
        }
        self.cut_at = Some((largest_sent, now));
        true
    }

    /// Packets between the cumulative ACK and the receiver's known front: received beyond a
    /// hole, which the connection still counts as in flight.
    pub(super) fn beyond_holes(&self) -> f64 {
        f64::from(self.last_ack.offset_to(self.front).max(0))
    }

    /// The cumulative ACK.
    pub(super) fn last_ack(&self) -> SeqNumber {
        self.last_ack
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    /// One cut per recovery: none until the ACK passes the mark, unless the recovery has
    /// lasted three smoothed RTTs (at least 200 ms).
    #[test]
    fn a_recovery_ends_at_its_mark_or_lapses() {
        let isn = SeqNumber::new(0);
        let seq = |n: u32| SeqNumber::new(n);
        let srtt = Duration::from_millis(100);
        let mut t = LossTracker::new(isn);
        assert!(t.try_cut(at(0), srtt, seq(100)));
        assert!(!t.try_cut(at(50), srtt, seq(120)));
        t.on_ack(seq(100));
        assert!(
            !t.try_cut(at(60), srtt, seq(130)),
            "the ACK must pass the mark"
        );
        t.on_ack(seq(101));
        assert!(t.try_cut(at(70), srtt, seq(200)));
        // Repairs lost too: the ACK creeps below the mark, and the recovery lapses.
        t.on_ack(seq(150));
        assert!(!t.try_cut(at(369), srtt, seq(300)));
        assert!(t.try_cut(at(370), srtt, seq(300)));
        // On a short path the lapse is 200 ms at least.
        let mut short = LossTracker::new(isn);
        let srtt = Duration::from_millis(10);
        assert!(short.try_cut(at(0), srtt, seq(100)));
        assert!(!short.try_cut(at(199), srtt, seq(100)));
        assert!(short.try_cut(at(200), srtt, seq(100)));
    }
}
