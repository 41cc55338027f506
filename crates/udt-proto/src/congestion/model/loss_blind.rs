//! Competitors that do not yield to loss (TCP BBR v1 and its kin), and how the model holds
//! its ground beside them.
//!
//! The competition mode (`model/competition.rs`) takes a loss with a full queue for
//! congestion and turns the model into a CUBIC flow, which is fair where the competitors cut
//! their rate on loss too. BBR v1 does not: ten BBR flows on a 1 Gbit/s, 50 ms link with a
//! one-BDP queue keep it overflowing and lose 5.9% of their packets. A loss-based flow cannot
//! hold a window at that loss rate: a kernel CUBIC flow beside them starved within 6 s, and so
//! did the model as a CUBIC flow (0.05-0.11 of an equal share in the lab).
//!
//! Loss-based competitors cannot keep a queue overflowing round after round: each of them
//! cuts within a round trip of its own loss, so losses come in episodes, and at the loss rate
//! of a large window they are rare (well under a percent). So a *persistent* loss rate of
//! [`LOSS_RATE`] or more, with the queue full, says the competitors ignore loss. Two signs of
//! it:
//! * as the rate-based model, [`LOSSY_ROUNDS`] of the last [`ROUNDS`] rounds lost something and
//!   together they lost [`LOSS_RATE`] of what they sent ([`LossHistory::overflowing_lately`]);
//! * as a CUBIC flow, the window has collapsed to an eighth of where it began, with
//!   [`LOSS_RATE`] lost since then ([`collapsed`]): a loss-based competitor would have cut
//!   too and let the window settle at its share.
//!
//! The model then *holds*: for [`HOLD`] it stays rate-based and neither competes as a CUBIC
//! flow nor backs off on the overflowing queue's losses (the 20% heavy-loss rule stays), as
//! BBR does beside it. Two things make its rate model hold a share in an overflowing queue
//! as BBR's does, and neither is wanted alone (`model.rs` applies them while holding):
//! * repaired holes count as delivered (`model/sampler.rs`): without that each gain cycle reads
//!   the loss rate below the last;
//! * the window is the gain times the BDP plus the packets beyond holes, without the terms
//!   for queueing and repair that a lone flow needs: BBR flows are held to two BDPs in
//!   flight, and a model flow without that cap took 4-5 times an equal share beside them.
//!
//! When the hold ends, the next loss with a full queue decides again from the rounds since.
//!
//! Measured in the lab (`scripts/bench-beside-tcp.sh`, one flow beside 10 kernel BBR flows,
//! 1 Gbit/s, 50 ms): see BENCHMARKS.md, "Beside kernel TCP BBR". Small paths with many
//! loss-based flows (a few packets of window each) also lose several percent a round; there
//! the model can take BBR's share instead of CUBIC's.

use std::time::Duration;

/// Rounds the loss history spans.
const ROUNDS: usize = 8;
/// Of those, how many must have lost something: losses without pause.
const LOSSY_ROUNDS: usize = 6;
/// The loss rate that loss-based competitors do not keep up (BBR v2 takes 2% as its bound).
pub(super) const LOSS_RATE: f64 = 0.02;
/// Fewest packets sent over the history for its loss rate to count.
const MIN_SENT: u64 = 256;
/// How far a CUBIC window must have fallen from its start to count as collapsed.
const COLLAPSE: f64 = 1.0 / 8.0;
/// Fewest losses since a competition began for [`collapsed`] to judge it.
const MIN_COLLAPSE_LOSSES: u64 = 32;
/// How long the model holds before a full queue's loss is judged again.
pub(super) const HOLD: Duration = Duration::from_secs(10);

/// Packets sent and lost in one round.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Round {
    sent: u64,
    lost: u64,
}

/// The losses of the last [`ROUNDS`] rounds.
#[derive(Clone, Debug, Default)]
pub(super) struct LossHistory {
    rounds: [Round; ROUNDS],
    next: usize,
    len: usize,
}

impl LossHistory {
    /// Forget every round (start-up's overshoot is no evidence about competitors).
    pub(super) fn clear(&mut self) {
        *self = Self::default();
    }

    /// A round ended having sent `sent` new packets, with `lost` first reported in it.
    pub(super) fn push(&mut self, sent: u64, lost: u64) {
        self.rounds[self.next] = Round { sent, lost };
        self.next = (self.next + 1) % ROUNDS;
        self.len = (self.len + 1).min(ROUNDS);
    }

    /// Whether the last [`ROUNDS`] rounds lost without pause ([`LOSSY_ROUNDS`] of them lost
    /// something) and at [`LOSS_RATE`] or more of at least [`MIN_SENT`] packets.
    pub(super) fn overflowing_lately(&self) -> bool {
        if self.len < ROUNDS {
            return false;
        }
        let lossy = self.rounds.iter().filter(|r| r.lost > 0).count();
        let sent: u64 = self.rounds.iter().map(|r| r.sent).sum();
        let lost: u64 = self.rounds.iter().map(|r| r.lost).sum();
        lossy >= LOSSY_ROUNDS && sent >= MIN_SENT && lost as f64 >= LOSS_RATE * sent as f64
    }
}

/// Whether a CUBIC window that began at `start` packets and is now `cwnd` has collapsed
/// under losses that did not relent: it fell to [`COLLAPSE`] of its start while `lost` of the
/// `sent` packets since then were lost, at least [`MIN_COLLAPSE_LOSSES`] and [`LOSS_RATE`].
pub(super) fn collapsed(start: f64, cwnd: f64, sent: u64, lost: u64) -> bool {
    cwnd <= start * COLLAPSE
        && lost >= MIN_COLLAPSE_LOSSES
        && lost as f64 >= LOSS_RATE * sent.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_losses_without_pause_at_two_percent_are_overflow() {
        let mut h = LossHistory::default();
        for _ in 0..ROUNDS - 1 {
            h.push(1000, 50);
        }
        assert!(!h.overflowing_lately(), "too few rounds");
        h.push(1000, 50);
        assert!(h.overflowing_lately());
        // Loss-based competitors: an episode of heavy loss, then quiet rounds.
        for lost in [200, 100, 0, 0, 0, 0, 1, 0] {
            h.push(1000, lost);
        }
        assert!(!h.overflowing_lately(), "losses in episodes");
        // Losses in every round, but at a large window's rate (0.1%).
        for _ in 0..ROUNDS {
            h.push(1000, 1);
        }
        assert!(!h.overflowing_lately(), "a light loss rate");
        // A tiny flow's rounds say nothing.
        for _ in 0..ROUNDS {
            h.push(10, 2);
        }
        assert!(!h.overflowing_lately(), "too few packets");
        h.clear();
        assert!(!h.overflowing_lately());
    }

    #[test]
    fn a_window_collapses_only_to_an_eighth_under_steady_loss() {
        assert!(collapsed(800.0, 90.0, 2000, 120));
        assert!(!collapsed(800.0, 200.0, 2000, 120), "settled at a quarter");
        assert!(!collapsed(800.0, 90.0, 20_000, 120), "light loss");
        assert!(!collapsed(800.0, 90.0, 200, 20), "too few losses");
    }
}
