//! How the scavenger tells that someone else arrived on the path (see the parent module doc,
//! "someone else arrived" and "an idle queue"): once per round trip in congestion
//! avoidance, a rise of the queue or a rate that fell while a queue stands cuts the window;
//! cuts are spaced a round trip apart; and idle-queue restarts that keep meeting cuts wait
//! longer. Kept apart from the window rules because they are what makes LEDBAT a scavenger
//! at 1 Gbit/s, and each is judged on its own in the tests.

use super::{Ledbat, LedbatPhase, IDLE_ROUNDS, MAX_CUT, MIN_CUT};
use crate::seq::SeqNumber;
use crate::time::Instant;

/// In congestion avoidance the flow's own window barely moves, so a rise of the queueing
/// delay by more than this fraction of the target over one round trip is someone else's
/// traffic arriving: cut as if the queue stood that far above the target.
const RISE: f64 = 0.125;
/// The rounds after slow start (or a slowdown's ramp) that neither the rise nor the rate
/// rule judges: what was sent at the end of the ramp is still reaching the queue.
const SETTLE_ROUNDS: u32 = 2;
/// With a queue at the bottleneck (the link is busy), a round that delivered less than this
/// share of the best rate seen means others take the rest: cut, even without a rise.
const SHARED_RATE: f64 = 0.8;
/// The best rate fades by this fraction a round trip, so a changed path is forgotten.
const RATE_FADE: f64 = 1.0 / 256.0;
/// An idle-queue restart that meets a cut within this many round trips of its slow start's
/// end was contested: another flow holds the link and only leaves the queue empty because
/// it keeps none (BBR-like). The wait before the next restart grows fourfold, up to
/// [`MAX_RESTART_WAIT_ROUNDS`]; an uncontested restart halves it.
const CONTESTED_ROUNDS: u32 = 8;
const MAX_RESTART_WAIT_ROUNDS: u32 = 16;

/// One round trip of congestion avoidance: it ends when the ACKs pass `end`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Round {
    end: SeqNumber,
    /// The cumulative ACK and the time when it began.
    acked_from: SeqNumber,
    began: Instant,
    /// The queueing delay when it began, seconds.
    queue: f64,
    /// Rounds since congestion avoidance began.
    index: u32,
}

impl Ledbat {
    /// A cut happened now (the caller changes the window): no further one until the ACKs
    /// show its effect, and a restart it follows closely was contested.
    pub(super) fn note_cut(&mut self, now: Instant) {
        self.cut_by = Some(self.largest_sent);
        self.last_cut = Some(now);
        let rtt = self.rtt();
        if self
            .restart_ended
            .take()
            .is_some_and(|ended| now - ended <= rtt * CONTESTED_ROUNDS)
        {
            self.restart_wait_rounds = (self.restart_wait_rounds * 4).min(MAX_RESTART_WAIT_ROUNDS);
        }
    }

    /// A restart that met no cut for [`CONTESTED_ROUNDS`] round trips was not contested: the
    /// path was idle, and the next restart may come sooner.
    pub(super) fn settle_restart(&mut self, now: Instant) {
        let rtt = self.rtt();
        if self
            .restart_ended
            .is_some_and(|ended| now - ended > rtt * CONTESTED_ROUNDS)
        {
            self.restart_ended = None;
            self.restart_wait_rounds = (self.restart_wait_rounds / 2).max(IDLE_ROUNDS);
        }
    }

    /// Once per round trip in congestion avoidance: a queue that rose by more than [`RISE`]
    /// of the target is cut as if it stood that far above the target (see the module doc).
    pub(super) fn check_rise(&mut self, now: Instant, queueing: f64, target: f64) {
        if self.phase != LedbatPhase::Avoidance {
            self.round = None;
            return;
        }
        let Some(round) = self.round else {
            self.begin_round(now, queueing, 0);
            return;
        };
        if self.last_ack <= round.end {
            return;
        }
        self.begin_round(now, queueing, round.index.saturating_add(1));
        // The first rounds still carry slow start's (or the ramp's) overshoot and rate.
        if round.index < SETTLE_ROUNDS {
            return;
        }
        let start = round.queue;
        let secs = (now - round.began).as_secs_f64();
        let rate = f64::from(round.acked_from.offset_to(self.last_ack).max(0)) / secs.max(1e-6);
        self.max_rate_pps = rate.max(self.max_rate_pps * (1.0 - RATE_FADE));
        let rise = queueing - start;
        let shared = queueing > RISE * target && rate < SHARED_RATE * self.max_rate_pps;
        if (rise > RISE * target || shared) && self.may_cut(now) {
            self.note_cut(now);
            self.cwnd_pkts *= 1.0 - (rise / target).clamp(MIN_CUT, MAX_CUT);
            self.clamp_window();
        }
    }

    /// A round trip of congestion avoidance begins now, the `index`th since it began.
    fn begin_round(&mut self, now: Instant, queueing: f64, index: u32) {
        self.round = Some(Round {
            end: self.largest_sent,
            acked_from: self.last_ack,
            began: now,
            queue: queueing,
            index,
        });
    }

    /// Whether a cut may happen now: once the last one shows in the ACKs, or a round trip
    /// after it while the ACKs stall (another flow's losses hold the queue full, and ours
    /// wait for repair behind them: a scavenger does not wait that out).
    pub(super) fn may_cut(&self, now: Instant) -> bool {
        let rtt = self.rtt();
        match self.last_cut {
            None => true,
            Some(cut) => (!self.frozen() && cut < now) || now - cut >= rtt,
        }
    }
}
