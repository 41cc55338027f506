//! Which losses are news: the receiver names a hole again until it is repaired (its periodic
//! NAK repeats the ranges still missing, `loss_list.rs`), and a window-based controller that
//! cut on every report would cut once a round trip for as long as a repair takes. The
//! tracker counts each sequence number once ([`FreshLosses`], which `ledbat` and `model` use
//! alone), and [`LossTracker`] adds TCP's recovery rule of one cut per window of data for
//! `cubic`.

use super::{LossInfo, LossRange};
use crate::seq::SeqNumber;

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
    /// The largest sequence sent at the last cut: no new cut until the ACK passes it.
    cut_at: Option<SeqNumber>,
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

    /// Whether a cut now would be a new congestion event (the ACK has passed what was sent
    /// at the last one); if so, remembers `largest_sent` as this cut's mark.
    pub(super) fn try_cut(&mut self, largest_sent: SeqNumber) -> bool {
        if self.cut_at.is_some_and(|mark| self.last_ack <= mark) {
            return false;
        }
        self.cut_at = Some(largest_sent);
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
