//! How the scavenger tells that someone else arrived on the path (see the parent module doc,
//! "someone else arrived" and "an idle queue"): once per round trip in congestion
//! avoidance, a rise of the queue or a rate that fell while a queue stands cuts the window,
//! and a queue that stays risen for a round trip (an arrival) cuts it to a sixteenth;
//! cuts are spaced a round trip apart; and idle-queue restarts that keep meeting cuts wait
//! longer. Kept apart from the window rules because they are what makes LEDBAT a scavenger
//! at 1 Gbit/s, and each is judged on its own in the tests.

use std::time::Duration;

use super::{Ledbat, LedbatPhase, IDLE_ROUNDS, MAX_CUT, MIN_CUT};
use crate::seq::SeqNumber;
use crate::time::Instant;

/// In congestion avoidance the flow's own window barely moves, so a rise of the queueing
/// delay by more than this fraction of the target over one round trip, in a round that
/// delivered less than [`RISE_RATE`] of the best rate seen or after a round that rose by
/// [`RISE_BEFORE`], is someone else's traffic arriving: cut as if the queue stood that far
/// above the target.
const RISE: f64 = 0.125;
/// A rise counts (see [`RISE`]) in a round that delivered less than this share of the best
/// rate seen (or after a rising round, [`RISE_BEFORE`]): at a busy bottleneck whoever adds
/// to the queue takes the flow's rate, and a lone rise at the flow's full rate is its own
/// packets or the path's delay noise. Alone in the lab (1 Gbit/s x 50 ms) a flow met about
/// ten rule-(a) cuts in 16 s, 9 of 10 traced in rounds at 0.89-1.0 of its best rate on
/// rises just over the threshold, each leaving the window 13-22% under the path for the 16
/// round trips before an idle queue may restart (BENCHMARKS.md, sessions 68 and 69).
const RISE_RATE: f64 = 0.9;
/// A rise at the full rate still counts (see [`RISE`]) after a round whose queue rose by
/// this much of the target (1 ms at 25 ms): a newcomer in slow start doubles its packets a
/// round trip, so the round before rose too, while before the lab's noise rises the queue
/// had mostly held or fallen (at most 0.6 ms up, nine of nine traced in session 68). Traced
/// in session 69 it caught a kernel CUBIC's start a round before the rate showed it, and
/// let two of a lone flow's noise rises through in 16 s (BENCHMARKS.md, session 69).
const RISE_BEFORE: f64 = RISE / 3.0;
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
/// A queue (the current, filtered one: a minimum over 40 ms of samples) that stands this
/// far (of the target) above the lowest mean of the last [`FLOOR_ROUNDS`] round trips,
/// more than the flow's own window growth explains, for [`ARRIVAL_PERSIST`] of a round trip
/// without a break, is someone else arriving: the scavenger then keeps only
/// [`ARRIVAL_KEEP`] of its window. Against a floor a few rounds old, it sees a newcomer's
/// slow start while the newcomer still sends a few percent of the link: soon enough that
/// the queue drains before the newcomer's own delay signal (Linux CUBIC's HyStart exits
/// slow start on a rise of an eighth of its smallest RTT) takes it for a full path. A
/// newcomer's queue keeps rising; the lab's delay noise (a 1 Gbit/s emulator and receiver
/// sharing two cores) comes and goes within a round: judged at single ACKs, at 1.5 ms or
/// 3 ms, it cut the flow alone every second or two.
///
/// A mean, not the lowest queue seen: under a steady window the filtered queue of a flow
/// alone in the lab swings by 5 ms within a round trip (17.6-23.7 ms at 6,213 packets,
/// 1 Gbit/s x 50 ms), so its ordinary level stood 3 ms above its lowest dip for a round
/// trip every few seconds and cut it to a sixteenth.
const ARRIVAL_RISE: f64 = 0.12;
/// Where the queue holds still within a round (a quiet path), an arrival is a foreign rise
/// of this much of the target, at least (1.5 ms at 25 ms), and at least [`NOISE_MARGIN`]
/// times the queue's usual spread within a round; never more than [`ARRIVAL_RISE`].
///
/// Why: kernel CUBIC's HyStart ends slow start on a rise of an eighth of its lowest round
/// trip, 7.8 ms at 50 ms beside a scavenger's 12 ms queue, and a newcomer doubling each round
/// trip adds that within about one round after its queue passes 3 ms. In the simulator
/// (`ledbat_yields_to_hystart_cubic_at_1gbit`) a 3 ms threshold cut the scavenger only
/// after cubic's slow start had ended at 2,600 packets (62% of the path) in three seeds of
/// five, and cubic then crept up for seconds beside it; 1.5 ms cut it in time in all five.
/// The lab's 1 Gbit/s emulator, with sender, receiver and emulator sharing two cores, moves
/// the scavenger's queue by several milliseconds within a round, and judging it more finely
/// there cost the flow alone a third of its rate (a quarter-round persistence: 430-600
/// Mbit/s against 760-820 in the same sitting), so the threshold follows the noise it sees.
/// There it came below 3 ms in 11 of 1,240 rounds of a flow alone, which had fewer false
/// arrival cuts than with the fixed 3 ms (6 against 14 in eight alternating pairs), and in
/// a quarter of the rounds over two full scavenger experiments (BENCHMARKS.md, session 59).
const ARRIVAL_RISE_QUIET: f64 = 0.06;
/// The arrival threshold's margin over the queue's spread within a round.
const NOISE_MARGIN: f64 = 2.0;
/// How fast the spread's average follows each round's: slowly, so that a newcomer's rising
/// queue (a spread of its own) does not raise the threshold before it is caught.
const NOISE_GAIN: f64 = 1.0 / 16.0;
/// How long, in round trips, the queue must stand above the floor (see [`ARRIVAL_RISE`]).
const ARRIVAL_PERSIST: f64 = 1.0;
/// Round trips after an arrival before an idle queue may restart: the newcomer's slow
/// start needs a few more doublings to fill what the cut left.
pub(super) const ARRIVAL_WAIT_ROUNDS: u32 = 16;
/// Round trips of queue minima the arrival rule keeps (this one and the ones before).
const FLOOR_ROUNDS: usize = 3;
/// What an arrival leaves of the window: little enough that one cut takes the scavenger under
/// a tenth of the link (its window held the path's BDP and its own standing queue, up to
/// 1.5 BDP), so that the queue drains at once and the newcomer's doublings meet an empty
/// link.
pub(super) const ARRIVAL_KEEP: f64 = 0.0625;

/// One round trip of congestion avoidance: it ends when the ACKs pass `end`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Round {
    end: SeqNumber,
    /// The cumulative ACK and the time when it began.
    acked_from: SeqNumber,
    began: Instant,
    /// The queueing delay when it began, seconds.
    queue: f64,
    /// How far the queue rose over the round before (seconds; 0 for the first).
    rise_before: f64,
    /// Rounds since congestion avoidance began.
    index: u32,
}

/// One sample of the floor: a queueing delay (seconds) and the flow's own window when it
/// was seen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Level {
    queue: f64,
    window: f64,
}

/// The levels one round saw, summed, and its lowest and highest queue.
#[derive(Clone, Copy, Debug, Default)]
struct RoundLevels {
    queue: f64,
    window: f64,
    seen: u32,
    low: f64,
    high: f64,
}

impl RoundLevels {
    fn add(&mut self, level: Level) {
        if self.seen == 0 {
            (self.low, self.high) = (level.queue, level.queue);
        }
        self.low = self.low.min(level.queue);
        self.high = self.high.max(level.queue);
        self.queue += level.queue;
        self.window += level.window;
        self.seen = self.seen.saturating_add(1);
    }

    /// How far the queue moved within the round (seconds), if it saw two levels.
    fn spread(&self) -> Option<f64> {
        (self.seen > 1).then_some(self.high - self.low)
    }

    /// The round's mean queue and window, if it saw any.
    fn mean(&self) -> Option<Level> {
        (self.seen > 0).then(|| Level {
            queue: self.queue / f64::from(self.seen),
            window: self.window / f64::from(self.seen),
        })
    }
}

/// The levels of each of the last [`FLOOR_ROUNDS`] rounds, the current one last (see
/// [`ARRIVAL_RISE`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Floor {
    rounds: [RoundLevels; FLOOR_ROUNDS],
    /// Since when the queue has stood above the floor by the arrival threshold.
    above_since: Option<Instant>,
    /// How far the queue moves within a round, smoothed over rounds (seconds; see
    /// [`ARRIVAL_RISE_QUIET`]). Kept across [`Floor::clear`].
    noise: Option<f64>,
}

impl Floor {
    /// A new round begins at `level`: the oldest round drops out, and the round that ended
    /// adds its spread to the noise.
    fn begin(&mut self, level: Level) {
        if let Some(spread) = self.rounds[FLOOR_ROUNDS - 1].spread() {
            let noise = self.noise.get_or_insert(spread);
            *noise += (spread - *noise) * NOISE_GAIN;
        }
        self.rounds.rotate_left(1);
        self.rounds[FLOOR_ROUNDS - 1] = RoundLevels::default();
        self.see(level);
    }

    /// The round in progress saw `level`.
    fn see(&mut self, level: Level) {
        self.rounds[FLOOR_ROUNDS - 1].add(level);
    }

    /// The lowest mean queue of the rounds remembered (since the last [`Floor::clear`]),
    /// with the round's mean window.
    fn lowest(&self) -> Option<Level> {
        self.rounds
            .iter()
            .filter_map(RoundLevels::mean)
            .reduce(|a, b| if b.queue < a.queue { b } else { a })
    }

    fn clear(&mut self) {
        *self = Self {
            noise: self.noise,
            ..Self::default()
        };
    }

    /// The foreign rise that counts as an arrival (seconds), for a `target` in seconds:
    /// [`ARRIVAL_RISE`] of it while the queue is noisy or its noise not yet known, down to
    /// [`ARRIVAL_RISE_QUIET`] of it where the queue holds still.
    fn arrival_rise(&self, target: f64) -> f64 {
        let high = ARRIVAL_RISE * target;
        let low = ARRIVAL_RISE_QUIET * target;
        self.noise
            .map_or(high, |noise| (NOISE_MARGIN * noise).clamp(low, high))
    }

    /// The queue stood above the floor by more than the threshold at `now` (`above`) or
    /// not: whether it has stood there for `persist` without a break.
    fn held_above(&mut self, above: bool, now: Instant, persist: Duration) -> bool {
        if !above {
            self.above_since = None;
            return false;
        }
        let since = *self.above_since.get_or_insert(now);
        now - since >= persist
    }
}

impl Ledbat {
    /// A cut happened now (the caller changes the window): no further one until the ACKs
    /// show its effect, and a restart it follows closely was contested.
    pub(super) fn note_cut(&mut self, now: Instant) {
        self.cut_by = Some(self.largest_sent);
        self.last_cut = Some(now);
        self.refilled = false;
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
    /// of the target in a round that delivered less than [`RISE_RATE`] of the best rate, or
    /// after a round that rose by [`RISE_BEFORE`], is cut as if it stood that far above the
    /// target (see the module doc);
    /// and a queue that stands [`ARRIVAL_RISE`] above the floor of the last rounds for a
    /// round trip, judged at every ACK, is an arrival.
    pub(super) fn check_rise(&mut self, now: Instant, queueing: f64, target: f64) {
        if self.phase != LedbatPhase::Avoidance {
            self.round = None;
            self.floor.clear();
            return;
        }
        let Some(round) = self.round else {
            self.begin_round(now, queueing, 0, 0.0);
            return;
        };
        // The settling rounds' queue is still the ramp's, not a floor to rise from.
        if round.index >= SETTLE_ROUNDS {
            let level = self.level(queueing);
            self.floor.see(level);
            self.check_arrival(now, level, target);
        }
        if self.last_ack <= round.end {
            return;
        }
        let rise = queueing - round.queue;
        self.begin_round(now, queueing, round.index.saturating_add(1), rise);
        // The first rounds still carry slow start's (or the ramp's) overshoot and rate.
        if round.index < SETTLE_ROUNDS {
            return;
        }
        let secs = (now - round.began).as_secs_f64();
        let rate = f64::from(round.acked_from.offset_to(self.last_ack).max(0)) / secs.max(1e-6);
        self.max_rate_pps = rate.max(self.max_rate_pps * (1.0 - RATE_FADE));
        self.round_rate_pps = rate;
        let shared = queueing > RISE * target && rate < SHARED_RATE * self.max_rate_pps;
        tracing::trace!(
            queue_ms = queueing * 1e3,
            rise_ms = rise * 1e3,
            rate_pps = rate,
            best_pps = self.max_rate_pps,
            cwnd = self.cwnd_pkts,
            arrival_ms = self.floor.arrival_rise(target) * 1e3,
            "ledbat: round"
        );
        let rise_cut = rise > RISE * target
            && (rate < RISE_RATE * self.max_rate_pps || round.rise_before > RISE_BEFORE * target);
        if (rise_cut || shared) && self.may_cut(now) {
            self.note_cut(now);
            let keep = 1.0 - (rise / target).clamp(MIN_CUT, MAX_CUT);
            tracing::debug!(
                rise_ms = rise * 1e3,
                shared,
                from = self.cwnd_pkts,
                keep,
                "ledbat: someone else's queue or rate, cut"
            );
            self.cwnd_pkts *= keep;
            self.clamp_window();
            self.restart_wait_rounds = self.restart_wait_rounds.max(ARRIVAL_WAIT_ROUNDS);
        }
    }

    /// The queue now, with the window.
    fn level(&self, queue: f64) -> Level {
        Level {
            queue,
            window: self.cwnd_pkts,
        }
    }

    /// A round trip of congestion avoidance begins now, the `index`th since it began, after
    /// a round whose queue rose by `rise_before`.
    fn begin_round(&mut self, now: Instant, queueing: f64, index: u32, rise_before: f64) {
        self.round = Some(Round {
            end: self.largest_sent,
            acked_from: self.last_ack,
            began: now,
            queue: queueing,
            rise_before,
            index,
        });
        if index >= SETTLE_ROUNDS {
            self.floor.begin(self.level(queueing));
        }
    }

    /// See [`ARRIVAL_RISE`]: keep [`ARRIVAL_KEEP`] of the window, remember the window for the
    /// ramp back once the queue is idle again, and let no restart come before
    /// [`ARRIVAL_WAIT_ROUNDS`] (someone is there).
    fn check_arrival(&mut self, now: Instant, level: Level, target: f64) {
        let (Some(floor), true) = (self.floor.lowest(), self.max_rate_pps > 0.0) else {
            return;
        };
        // What the flow's own window growth adds to the queue at the best rate it has seen:
        // no one else's. (Not the packets in flight: read at ACKs every 10 ms, they swing by
        // an ACK period's worth of packets.)
        let own = (level.window - floor.window).max(0.0) / self.max_rate_pps;
        let foreign = level.queue - floor.queue - own;
        let persist = self.rtt().mul_f64(ARRIVAL_PERSIST);
        let threshold = self.floor.arrival_rise(target);
        let held = self.floor.held_above(foreign > threshold, now, persist);
        if !held || !self.may_cut(now) {
            return;
        }
        self.note_cut(now);
        tracing::debug!(
            queue_ms = level.queue * 1e3,
            floor_ms = floor.queue * 1e3,
            foreign_ms = foreign * 1e3,
            from = self.cwnd_pkts,
            "ledbat: an arrival, cut to a sixteenth"
        );
        self.full_window = self.full_window.max(self.cwnd_pkts);
        self.cwnd_pkts *= ARRIVAL_KEEP;
        self.clamp_window();
        self.restart_wait_rounds = self.restart_wait_rounds.max(ARRIVAL_WAIT_ROUNDS);
        self.floor.clear();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn level(queue_ms: f64, window: f64) -> Level {
        Level {
            queue: queue_ms / 1e3,
            window,
        }
    }

    /// Delay noise under a steady window: a round with one sample at no queue and three at
    /// 4 ms. Its floor is their mean, 3 ms, so the 4 ms level stands 1 ms above it, not 4 ms
    /// (which, at more than an eighth of the 25 ms target, was an arrival).
    #[test]
    fn the_floor_is_the_lowest_round_mean() {
        let mut floor = Floor::default();
        floor.begin(level(4.0, 100.0));
        for queue in [0.0, 4.0, 4.0] {
            floor.see(level(queue, 100.0));
        }
        let lowest = floor.lowest().expect("a round was seen");
        assert!((lowest.queue - 0.003).abs() < 1e-9, "{lowest:?}");
        assert!((lowest.window - 100.0).abs() < 1e-9, "{lowest:?}");
        // A later round with a lower mean (and its window) is the floor; a higher one is not.
        floor.begin(level(2.0, 90.0));
        floor.see(level(2.0, 110.0));
        assert_eq!(floor.lowest(), Some(level(2.0, 100.0)));
        floor.begin(level(9.0, 100.0));
        assert_eq!(floor.lowest(), Some(level(2.0, 100.0)));
        // Three rounds on, the first has dropped out.
        floor.begin(level(5.0, 100.0));
        floor.begin(level(6.0, 100.0));
        assert_eq!(floor.lowest(), Some(level(5.0, 100.0)));
    }

    /// The arrival threshold: an eighth of the target until the queue's spread within a round
    /// is known, then twice that spread, between a sixteenth and an eighth of the target.
    #[test]
    fn the_arrival_threshold_follows_the_queues_noise() {
        let target = 0.025;
        let mut floor = Floor::default();
        assert!((floor.arrival_rise(target) - 0.003).abs() < 1e-9);
        // Quiet rounds (the queue moves by 0.1 ms within each): the floor of 1.5 ms.
        for _ in 0..40 {
            floor.begin(level(10.0, 100.0));
            floor.see(level(10.1, 100.0));
        }
        assert!((floor.arrival_rise(target) - 0.0015).abs() < 1e-9);
        // Rounds that swing by 4 ms: back to 3 ms after a few rounds, and kept across a clear.
        for _ in 0..40 {
            floor.begin(level(10.0, 100.0));
            floor.see(level(14.0, 100.0));
        }
        floor.clear();
        assert!((floor.arrival_rise(target) - 0.003).abs() < 1e-9);
        // In between, twice the spread: 1 ms rounds give 2 ms.
        let mut floor = Floor::default();
        for _ in 0..200 {
            floor.begin(level(10.0, 100.0));
            floor.see(level(11.0, 100.0));
        }
        assert!((floor.arrival_rise(target) - 0.002).abs() < 1e-6);
    }
}
