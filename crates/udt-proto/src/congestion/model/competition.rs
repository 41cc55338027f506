//! Telling congestion from random loss, and what the model does when the loss is congestion.
//!
//! Holding the rate through random loss and yielding under congestion pull in opposite
//! directions (issue 12); the model tells them apart by the queue at the time of a loss.
//! Alone, it keeps the bottleneck's queue nearly empty: the 0.75 phase of each gain cycle
//! drains what the 1.25 phase queued (a quarter of the path's RTT at most), so whatever it
//! loses is random. Beside loss-based flows (TCP CUBIC, Reno, UDT's native DAIMD) losses come
//! with a full queue: those flows grow until it overflows. That is congestion, and rate-based
//! probing at the bandwidth estimate takes several times a fair share there (BBR v1's known
//! unfairness to CUBIC; 2-5.6× in the lab).
//!
//! [`QueueWatch`] keeps the floor (the lowest RTT over 30-60 s, frozen while competing, so a
//! standing queue is never mistaken for the path) and the recent RTT (the lowest of the last
//! half to whole floor: a sample held back by a hole is beaten by a clean one). A loss while
//! the recent RTT is above the floor by more than max(½ floor, 2 ms) is a loss with a full
//! queue, and the model starts to compete: it becomes a CUBIC flow (the same [`CubicWindow`]
//! as `--cc cubic`, RFC 9438). After a loss it starts at β of what it had in flight, aiming
//! at (1 + β)/2 of it (fast convergence: the rate-based model held more than its share);
//! without one (a queue still full after the drain) at its capped flight, on the cubic
//! epoch's plateau ([`Competition::without_loss`]). It cuts by β once per round trip with
//! loss, grows by the cubic and Reno-friendly rules while at least half the window is in
//! flight when an ACK comes (counting what that ACK covers), and paces at 1.2 × window per
//! floor RTT (the window, not the pacer, sets the rate).
//!
//! Whether the competitors are still there cannot be seen from inside CUBIC mode: alone, a
//! CUBIC flow also fills the queue until it overflows. So every [`TRIAL`] the model goes back
//! to its rate-based self at the rate it had while competing (the window over the round
//! trip, at most the delivery rate measured meanwhile), and drains first, as after start-up.
//! If the queue is still near full once the drain is behind (the RTT more than ¾ of the
//! floor above it, or ¾ of half the height the queue reached while competing where that is
//! more: [`QueueWatch::queue_near_full`]), the competitors are there and the
//! competition resumes where it stopped, window and all. Otherwise the trial goes on: if
//! they are gone, no loss comes with a full queue and the model stays; if not, the next such
//! loss resumes the competition (within [`MEMORY`]), with that loss as a congestion event.
//! (Waiting for that loss alone did not do beside many loss-based flows: a flow with a small
//! share meets few of their losses, and the gain cycle's probes climbed meanwhile. Beside 50
//! kernel CUBIC flows in the lab, 30 s flows took 2.4-4.6 times an equal share over their
//! last 3 s. A verdict at "standing", half the floor above it as after start-up, kept model
//! flows that compete with each other as CUBIC flows in that mode: four of them on one
//! bottleneck in the simulator shared at σ/μ 0.066 instead of 0.036; at ¾, 0.039. Eight,
//! whose queue reaches ¾ of the floor too, share at 0.16 instead of 0.10.)
//!
//! Five signals start a competition, none of which needs the queue to have been seen empty
//! since start-up (beside kernel TCP flows, which keep a one-BDP queue near full, it never
//! is, and a model flow that waited for that took 2.3 times an equal share in the lab):
//! * the queue is still full once the drain is [`settle`] behind (checked once per drain, no
//!   loss needed: the drain empties a queue the flow built alone, and kernel TCP flows lose
//!   so rarely that waiting for a loss let the model keep start-up's share for seconds);
//! * a loss with the queue full, as above; but if the lowest RTT of the last 2-4 s was at
//!   the floor ([`QueueWatch::recently_empty`]), the queue is judged once [`settle`] has
//!   passed instead, as after a drain: a newcomer's start-up fills an empty queue within a
//!   few round trips, and a model newcomer drains it again (a CUBIC one leaves it standing);
//! * a loss in cruise at the top of a wide RTT range: more than max(⅕ low, 2 ms) above the
//!   lowest RTT of the last 2-4 s ([`QueueWatch::at_the_top`]). A flow that starts after its
//!   competitors filled the queue takes their standing queue for its floor (BBR's latecomer
//!   problem), but their sawtooth still sweeps the RTT, and a drop-tail queue drops when it
//!   is full, at the top of that range. Alone, the model cruises with its probe's queue
//!   drained, so a random loss in cruise comes near the low RTT;
//! * at the end of a gain cycle, a queue that has stood for seconds without a loss
//!   ([`QueueWatch::standing_throughout`]): loss-based flows can keep a one-BDP queue
//!   standing between their losses, which may be seconds apart, while the rate-based model
//!   loses share to their growing windows;
//! * at the end of a gain cycle, a queue that never fell over the last four cycles while
//!   the estimate never rose, falling by a fifth in all ([`Trend`]): a window growing beside the
//!   model, seen before the queue has stood long enough, or high enough, for the signal
//!   above.
//!
//! Alone, the RTT can still read a few milliseconds above the floor on a short lossy path:
//! the samples of the model's own 1.25 probe come back a round trip and an ACK gap late, and
//! under random loss UDT's cumulative ACK waits for each hole's repair (at 1 Gbit/s × 10 ms,
//! 0.1-1% loss, the recent RTT read 13-18 ms and the smoothed one 12-14 ms, with a mean
//! queue under 1 ms; in the lab it sits 2-4 ms above a 10 ms floor, from the model's own
//! bursts). Three rules keep that from costing the link:
//! * the "top of the range" test skips the first [`PROBE_ECHO_PHASES`] cruise phases after
//!   the 0.75 phase, where every such false alarm in the simulator came;
//! * a loss while competing with the queue empty (by the recent RTT or, once random loss
//!   has cut the window to what the receiver acknowledges on its 10 ms timer, by the
//!   smoothed ACK/ACK2 RTT: [`QueueWatch::queue_empty_while_competing`]) ends the
//!   competition at once, back to the rate-based model at the estimate it had when it began
//!   to compete: a drop-tail queue drops only when full, so that loss is random. A false
//!   alarm then costs a few round trips of a CUBIC window instead of ten seconds of one (at
//!   10 ms and 1% loss in the simulator: 92-96% of the link instead of 1.2%);
//! * after [`RANDOM_LOSSES`] losses with the queue empty within [`RANDOM_MEMORY`]
//!   ([`QueueWatch::random_loss_lately`]) no loss is taken for congestion: the path has
//!   random loss, and a queue at a loss is as likely the model's own. In the lab, without
//!   this, the model went in and out of CUBIC mode three times a second at 10 ms and 0.1%
//!   (32 entries in 10 s, all from the top-of-range test, each ended by a random loss within
//!   50-150 ms): 701 Mbit/s of 1 Gbit/s against 937 with the mode off; with it, 925. A
//!   competition that such a loss ended counts as one of them, however the queue was seen
//!   empty ([`QueueWatch::count_random_loss`]): where only the smoothed RTT showed it, the same
//!   entries came back (two to four a second, 644-714 Mbit/s in the lab).
//!
//! Beside loss-based flows on a path without random loss, losses come with the queue full,
//! with one exception: paced cubic flows that cut in step empty the queue within a round
//! trip, and a loss reported then looks random. That happens once per cubic epoch (seconds),
//! so one such loss never ends a competition for long and three never come within
//! [`RANDOM_MEMORY`]; with one loss and 5 s instead, a latecomer beside 4 paced cubic flows
//! was kept from competing and starved at 0.01 of an equal share. Also tried and dropped:
//! taking an empty queue a few floors after entering for the model's own (one flow beside
//! 4-10 cubic flows then took 0.52-0.68 of an equal share, one beside a single kernel-like
//! flow 1.68).
//!
//! With `ModelConfig::own_queue_test` on, where the floor RTT is shorter than the gap between
//! ACKs, each of the three first starts a queue test in `model.rs` (`QueueTest`): there the
//! model's estimate can read above the link, and its own queue would otherwise look like
//! competitors'.
//!
//! Not every competitor that keeps the queue full yields to loss. BBR v1 flows pace at their
//! estimates whatever they lose, and 10-50 of them on a one-BDP queue lose 3-20% of what is
//! sent; a CUBIC window at that loss rate is a few packets (one `model` flow beside 10-50
//! kernel BBR flows took 0.04-0.14 of an equal share in the lab). Loss-based flows cannot
//! keep a loss rate that high, so while competing the model meters the loss rate its window
//! meets ([`Competition::loss_rate`]); above [`LOSS_BLIND_RATE`] over three stretches of a
//! second it takes the competitors for loss-blind and goes back to its rate-based self for
//! [`LOSS_BLIND_HOLD`] (see `ModelBased::judge_loss_blind`). When the hold ends, the next
//! loss with a full queue starts a competition again, which re-checks. The hold meters its
//! own loss too: loss-based flows yield to it (their slow starts one after another can look
//! loss-blind for three stretches), and where it loses under half the threshold in each of
//! three stretches, the competition it ended goes on ([`Hold::yielded`]).
//!
//! Start-up's own losses are ignored until the queue has been seen empty or [`settle`] has
//! passed since the drain. Two `model` flows alone keep a standing queue (their estimates add
//! up to more than the link, as with BBR v1); more of them can overflow a one-BDP queue and
//! then compete among themselves as CUBIC flows. The floor rotates only while not competing.

use std::time::Duration;

use super::super::cubic::{CubicWindow, BETA, PACING_GAIN};
use super::super::two_bucket::TwoBucketMin;
use crate::seq::SeqNumber;
use crate::time::Instant;

/// The floor is the lowest RTT of the current bucket and the one before; buckets rotate this
/// often while not competing.
const FLOOR_BUCKET: Duration = Duration::from_secs(30);
/// The recent RTT is the lowest of the current and the previous bucket of this many floors
/// (at least [`MIN_RECENT`]): long enough that a sample held back by a hole is beaten by a
/// clean one, short enough to show the queue as it was when a loss happened.
const RECENT_FLOORS: f64 = 0.5;
pub(super) const MIN_RECENT: Duration = Duration::from_millis(2);
/// With the model's queue test on, the recent RTT also spans at least this many gaps
/// between ACKs: where the round trip is far shorter than that gap, only the marker sent
/// just before the packet that triggers an ACK reads the round trip, the others read it plus
/// their wait for the ACK (up to a gap), so a window holding a single ACK's samples showed a
/// queue of several milliseconds on an idle 45 Mbit/s veth path (16 packets, 4.3 ms, per
/// ACK).
const RECENT_ACK_GAPS: u32 = 2;
/// Queue above the floor that counts as full at a loss: the larger of a fraction of the floor
/// and an absolute delay. Alone, the model's 1.25 phase queues a quarter of the floor at
/// most; beside flows that fill a one-BDP queue it is up to the whole floor.
const FULL_FRACTION: f64 = 0.5;
const FULL_MIN: Duration = Duration::from_millis(2);
/// Queue above the floor that counts as near full after a trial's drain (see
/// [`QueueWatch::queue_near_full`]): this fraction of the floor, or of half the height the
/// queue reached while competing if that is more.
const NEAR_FULL_FRACTION: f64 = 0.75;
const NEAR_FULL_HEIGHT_SHARE: f64 = 0.5;
/// A sample within this much of the floor (a fraction of it, or an absolute delay) shows an
/// empty queue.
const EMPTY_FRACTION: f64 = 0.125;
const EMPTY_MIN: Duration = Duration::from_millis(1);
/// The low RTT is the lowest of the current and the previous bucket of this long, or of
/// [`LOW_FLOORS`] floors if longer: long enough to hold the bottom of the competitors'
/// sawtooth (a loss cuts some of them, and the queue falls for a while), short enough to
/// leave out the empty queue that a flow starting beside them saw before they filled it.
const LOW_BUCKET: Duration = Duration::from_secs(2);
const LOW_FLOORS: u32 = 10;
/// Queue above the low RTT that counts as the top of a wide range at a loss, in cruise: a
/// fraction of the low RTT or an absolute delay, whichever is larger. Alone, the model cruises
/// with the queue its probe left drained, so a random loss in cruise comes within a few
/// percent of the low RTT; beside loss-based flows a loss comes when they have filled the
/// queue, at the top of the range their sawtooth sweeps.
const HIGH_FRACTION: f64 = 0.2;
const HIGH_MIN: Duration = Duration::from_millis(2);
/// How long after the drain the queue may still hold start-up's overshoot, in floors and at
/// least [`SETTLE_MIN`]: losses reported before then may be start-up's own.
const SETTLE_FLOORS: u32 = 10;
const SETTLE_MIN: Duration = Duration::from_millis(500);
/// Cruise phases after the gain cycle's 0.75 phase whose RTT samples still show the queue
/// of the model's own 1.25 probe (see [`clear_of_own_probe`]).
const PROBE_ECHO_PHASES: usize = 2;
/// Index of the gain cycle's first cruise phase (after 1.25 and 0.75).
const FIRST_CRUISE_PHASE: usize = 2;

/// How many losses with the queue empty, within how long, keep the model from taking a
/// loss for congestion (see [`QueueWatch::random_loss_lately`]).
const RANDOM_LOSSES: usize = 3;
const RANDOM_MEMORY: Duration = Duration::from_secs(2);

/// A loss rate the CUBIC window meets while competing above which the competitors do not
/// yield to loss (see [`Competition::loss_rate`]), and how long the model then stays
/// rate-based and takes no loss with a full queue for a competitor's.
pub(super) const LOSS_BLIND_RATE: f64 = 0.02;
pub(super) const LOSS_BLIND_HOLD: Duration = Duration::from_secs(10);
/// The loss the hold itself may meet in each of the meter's stretches for the competitors
/// to be taken for loss-based after all (see [`Hold::yielded`]).
const HOLD_YIELD_RATE: f64 = 0.5 * LOSS_BLIND_RATE;

/// How long the model competes before it tries its rate-based self again.
pub(super) const TRIAL: Duration = Duration::from_secs(10);
/// How long after a trial began a loss with a full queue resumes the competition as it was.
pub(super) const MEMORY: Duration = Duration::from_secs(10);

/// Floors after a competition began (or resumed) whose losses the meter leaves out.
const METER_SKIP_FLOORS: u32 = 2;
/// The shortest stretch, and in floors, over which the meter reports a loss rate.
const METER_SPAN: Duration = Duration::from_secs(1);
const METER_FLOORS: u32 = 10;
/// The fewest new packets, or losses, a stretch must hold for the meter to report on it: a
/// starved window sends a few dozen packets a second, and [`METER_MIN_LOST`] losses in fewer
/// than [`METER_MIN_SENT`] packets are already a loss rate of 4% or more.
const METER_MIN_SENT: u64 = 200;
const METER_MIN_LOST: u64 = 8;
/// How many complete stretches the meter reads together (see [`LossMeter`]).
const METER_STRETCHES: usize = 3;
/// The share of [`LOSS_BLIND_RATE`] each of the three stretches must lose for the meter to
/// report their pooled rate (see [`LossMeter`]).
const METER_EACH: f64 = 0.25;

/// The loss rate over stretches of at least [`METER_SPAN`] (or [`METER_FLOORS`] floors) and
/// [`METER_MIN_SENT`] packets or [`METER_MIN_LOST`] losses, from the running totals: the
/// last three complete stretches' pooled, when each lost at least [`METER_EACH`] of
/// [`LOSS_BLIND_RATE`], and otherwise the lowest of their rates.
///
/// One stretch is not enough: beside 10 unpaced CUBIC flows in the simulator, all starting
/// at once, the stretch after their slow starts overflowed the queue lost 6% of a 45-packet
/// window, and the model, taking them for flows that ignore loss, took twice an equal share;
/// every later stretch lost nothing. Two were not enough where the slow starts are spread:
/// beside ten kernel-like `cubic` flows started 0.2 s apart, the stretches read 20.7% then
/// 0.51%, and 17.7% then 7.0% (seeds 2 and 4), and the model took 2.17 and 2.20 equal
/// shares; with three, 0.95-1.02 over seeds 1-5, and beside ten loss-blind flows the
/// median over nine seeds stayed at 0.51. The lowest alone is too strict: beside one
/// kernel BBR flow at 100 Mbit/s x 40 ms, a 20-50 packet window sends about 300 packets a
/// second, and BBR's losses come in bursts, so the stretches read 2.8, 0.8, 4.3, 0.5, 2.4,
/// 0.7% and so on: about 2% over any two of them, never 2% in each, and the model stayed
/// at 0.09 of an equal share. A loss-based competitor leaves a window of 30 packets about
/// 0.2% (Reno's 1.22 / sqrt(p)); a quarter of the threshold in each stretch is 2.5 times
/// that, throughout.
#[derive(Clone, Copy, Debug, Default)]
struct LossMeter {
    /// Where the stretch in progress began: when, and the totals then.
    start: Option<(Instant, u64, u64)>,
    /// The last three complete stretches' new packets sent and first losses, the latest
    /// first.
    last: [Option<(u64, u64)>; METER_STRETCHES],
}

impl LossMeter {
    fn rate(&mut self, now: Instant, floor: Duration, sent: u64, lost: u64) -> Option<f64> {
        if !self.record(now, floor, sent, lost) {
            return None;
        }
        let lower = self.rates().fold(f64::INFINITY, f64::min);
        if lower >= METER_EACH * LOSS_BLIND_RATE {
            let stretches = self.last.iter().flatten();
            let pooled = stretches.fold((0, 0), |(s, l), &(sent, lost)| (s + sent, l + lost));
            Some(stretch_rate(pooled))
        } else {
            Some(lower)
        }
    }

    /// The highest loss rate of the last three stretches, once there are three.
    fn highest(&mut self, now: Instant, floor: Duration, sent: u64, lost: u64) -> Option<f64> {
        self.record(now, floor, sent, lost)
            .then(|| self.rates().fold(0.0, f64::max))
    }

    /// Closes the stretch in progress if it is long and full enough; returns whether there
    /// are three complete stretches.
    fn record(&mut self, now: Instant, floor: Duration, sent: u64, lost: u64) -> bool {
        let Some((at, sent0, lost0)) = self.start else {
            self.start = Some((now, sent, lost));
            return false;
        };
        let span = METER_SPAN.max(floor * METER_FLOORS);
        let (sent_in, lost_in) = (sent.saturating_sub(sent0), lost.saturating_sub(lost0));
        let enough = sent_in >= METER_MIN_SENT || lost_in >= METER_MIN_LOST;
        if now - at >= span && enough && sent_in > 0 {
            self.last.rotate_right(1);
            self.last[0] = Some((sent_in, lost_in));
            self.start = Some((now, sent, lost));
        }
        self.last.iter().all(Option::is_some)
    }

    /// The loss rates of the complete stretches.
    fn rates(&self) -> impl Iterator<Item = f64> + '_ {
        self.last
            .iter()
            .flatten()
            .map(|&stretch| stretch_rate(stretch))
    }
}

/// A stretch's loss rate: its first losses over its new packets sent.
fn stretch_rate((sent, lost): (u64, u64)) -> f64 {
    lost as f64 / sent as f64
}

/// The model holding its rate-based self after taking the competitors for loss-blind (see
/// `ModelBased::judge_loss_blind`): until when, the competition it left, and the loss it
/// meets meanwhile.
///
/// The meter can be wrong about loss-based flows whose slow starts come one after another:
/// beside ten kernel-like `cubic` flows started 0.2 s apart on a 1 Gbit/s x 50 ms path in
/// the simulator (a BDP of 4,166 packets), three stretches read 8% (seed 3), and the
/// flows then yielded to the hold: it lost 2.0% in its first second and 0-0.36% in each of
/// the nine after, while its estimate climbed from 38,798 to 65,185 packets a second, and
/// the model took 4.60 equal shares over the run. Beside flows that do ignore loss, the
/// hold loses far more: 8.8-53% a second beside ten loss-blind stand-ins at 100 Mbit/s x
/// 40 ms (seeds 1 and 2), with one second of 0.3% in 49.
#[derive(Clone, Debug)]
pub(super) struct Hold {
    until: Instant,
    left: Competition,
    meter: LossMeter,
}

impl Hold {
    /// A hold of [`LOSS_BLIND_HOLD`] from `now`, having left the competition `left`.
    pub(super) fn new(now: Instant, left: Competition) -> Self {
        Self {
            until: now + LOSS_BLIND_HOLD,
            left,
            meter: LossMeter::default(),
        }
    }

    /// Whether the hold has run its course.
    pub(super) fn over(&self, now: Instant) -> bool {
        now >= self.until
    }

    /// Whether the hold itself lost less than [`HOLD_YIELD_RATE`] in each of the meter's
    /// last three stretches: the competitors yield to loss, and the competition the verdict
    /// ended should go on. `sent` and `lost` are the model's running totals.
    pub(super) fn yielded(&mut self, now: Instant, floor: Duration, sent: u64, lost: u64) -> bool {
        self.meter
            .highest(now, floor, sent, lost)
            .is_some_and(|rate| rate < HOLD_YIELD_RATE)
    }

    /// The competition the hold began by leaving.
    pub(super) fn into_left(self) -> Competition {
        self.left
    }
}

/// Gain cycles over which [`Trend::yielding`] reads the estimate and the queue.
const TREND_CYCLES: usize = 4;
/// The share of the estimate [`TREND_CYCLES`] cycles back that it must have fallen below.
const TREND_FALL: f64 = 0.8;
/// How far, in floors (at least [`FULL_MIN`]), the queue must have risen over those cycles.
const TREND_RISE: f64 = 0.125;
/// How high, in floors (at least [`FULL_MIN`]), the queue must stand at the last cycle's end.
const TREND_QUEUE: f64 = 0.25;

/// The estimate and the queue at the ends of the last [`TREND_CYCLES`] + 1 gain cycles
/// without a loss or a change of mode, to see a window-based competitor grow beside the
/// rate-based model before the queue stands high enough, or long enough, for
/// [`QueueWatch::standing_throughout`].
///
/// A window that grows into the queue takes a growing share of what the link delivers,
/// and the model's estimate, its own delivery rate, follows that share down, cycle by
/// cycle, with no loss to tell it. Beside one paced `cubic` flow at 100 Mbit/s × 40 ms
/// (`cc_fair`, seed 5), the drain left 18.5 ms of queue over a 40.6 ms floor, short of
/// the half that would have made the model compete; a probe RTT at 10.2 s then reset the
/// low RTT that `standing_throughout` reads, and the cubic window grew until, at 12.5 s,
/// the estimate had fallen from 3,211 to 2,533 packets a second (an equal share is 4,166)
/// with the queue at 27 ms. Judged here, the model took 0.88 of an equal share, 0.60
/// without. The model's own queue cannot do this: what it queues is what it sends beyond
/// the link, so its estimate rises with it.
///
/// No step may go the wrong way. Among model flows, whose probes come and go, a first
/// version that compared only the first and last cycles fired on the queue's swings: eight
/// default `model` flows on one 200 Mbit/s × 50 ms link shared at a median σ/μ of 0.248
/// (main's build 0.166), and two of them at 0.221 and 0.134 on seeds 12 and 22 (0.031 and
/// 0.049); with every step checked, 0.174, and the two flows as main's.
#[derive(Clone, Debug, Default)]
pub(super) struct Trend {
    /// (estimate, queue delay) at the cycles' ends, oldest first; the first `len` of them
    /// since the last [`Trend::clear`].
    marks: [(f64, Duration); TREND_CYCLES + 1],
    len: usize,
}

impl Trend {
    /// A gain cycle ended with the estimate at `bw` packets a second and `queue` above the
    /// floor.
    pub(super) fn push(&mut self, bw: f64, queue: Duration) {
        self.marks.rotate_left(1);
        self.marks[TREND_CYCLES] = (bw, queue);
        self.len = (self.len + 1).min(self.marks.len());
    }

    /// Forget the cycles so far: a loss or a change of mode came between them.
    pub(super) fn clear(&mut self) {
        self.len = 0;
    }

    /// If over the cycles marked the estimate never rose, falling below [`TREND_FALL`] of
    /// where it was, while the queue never fell, rising by more than [`TREND_RISE`] of
    /// `floor` to more than [`TREND_QUEUE`] of it: the first estimate, what the model had
    /// before it yielded.
    pub(super) fn yielding(&self, floor: Duration) -> Option<f64> {
        if self.len < self.marks.len() {
            return None;
        }
        let [(first_bw, first_queue), .., (last_bw, last_queue)] = self.marks;
        let steps = || self.marks.windows(2).map(|w| (w[0], w[1]));
        let fell = last_bw < first_bw * TREND_FALL && steps().all(|(a, b)| b.0 <= a.0);
        let rose = last_queue > first_queue + floor.mul_f64(TREND_RISE).max(FULL_MIN)
            && steps().all(|(a, b)| b.1 >= a.1);
        let high = last_queue > floor.mul_f64(TREND_QUEUE).max(FULL_MIN);
        (fell && rose && high).then_some(first_bw)
    }
}

/// The RTT floor, the low RTT and the recent RTT (see the module doc).
#[derive(Clone, Debug)]
pub(super) struct QueueWatch {
    floor: TwoBucketMin,
    low: TwoBucketMin,
    recent: TwoBucketMin,
    /// Whether the queue has been seen empty, or the drain is [`SETTLE_FLOORS`] behind,
    /// since [`QueueWatch::disarm`]: until then a full queue may be the flow's own start-up.
    armed: bool,
    /// When [`QueueWatch::disarm`] was called.
    disarmed_at: Instant,
    /// When the last [`RANDOM_LOSSES`] losses with the queue empty came, at least a floor
    /// apart, oldest first (see [`QueueWatch::random_loss_lately`]).
    random_losses: [Option<Instant>; RANDOM_LOSSES],
    /// The smoothed gap between ACKs (see [`RECENT_ACK_GAPS`]); zero, and so no part of the
    /// recent window, unless the model's queue test is on.
    ack_gap: Duration,
    /// The highest RTT now (see [`QueueWatch::now`]) since the competition under way began
    /// or resumed: the top of the queue the competitors keep (see
    /// [`QueueWatch::queue_near_full`]).
    top: Option<Duration>,
    /// When a loss was last reported (see [`QueueWatch::standing_throughout`]).
    last_loss: Option<Instant>,
}

impl QueueWatch {
    pub(super) fn new(now: Instant) -> Self {
        Self {
            floor: TwoBucketMin::new(now),
            low: TwoBucketMin::new(now),
            recent: TwoBucketMin::new(now),
            armed: false,
            disarmed_at: now,
            random_losses: [None; RANDOM_LOSSES],
            ack_gap: Duration::ZERO,
            top: None,
            last_loss: None,
        }
    }

    /// Whether the queue has been seen empty, or the drain settled, since the last disarm.
    pub(super) fn armed(&self) -> bool {
        self.armed
    }

    /// The smoothed gap between ACKs is now `gap`.
    pub(super) fn set_ack_gap(&mut self, gap: Duration) {
        self.ack_gap = gap;
    }

    /// A loss reported at `now`: count it if the queue was empty (random loss) and the last
    /// one counted is a floor behind.
    pub(super) fn on_loss(&mut self, now: Instant) {
        if self.queue_empty() {
            self.count_random_loss(now);
        }
    }

    /// Some loss was reported at `now`, judged or not.
    pub(super) fn lost(&mut self, now: Instant) {
        self.last_loss = Some(now);
    }

    /// Counts a random loss at `now` if the last one counted is a floor behind: one that
    /// [`QueueWatch::on_loss`] found with the queue empty, or one that ended a competition
    /// (see `ModelBased::judge_random_loss`).
    pub(super) fn count_random_loss(&mut self, now: Instant) {
        let spacing = self.floor().unwrap_or(MIN_RECENT);
        let last = self.random_losses[RANDOM_LOSSES - 1];
        if last.is_none_or(|at| now - at >= spacing) {
            self.random_losses.rotate_left(1);
            self.random_losses[RANDOM_LOSSES - 1] = Some(now);
        }
    }

    /// Whether [`RANDOM_LOSSES`] losses came with the queue empty within the last
    /// [`RANDOM_MEMORY`]: the path has random loss, and a queue above the floor at a loss is
    /// as likely the model's own as competitors'. (Beside paced cubic flows that cut in step
    /// the queue empties within a round trip, and a loss reported then looks random too, but
    /// that happens once per cubic epoch of seconds.)
    pub(super) fn random_loss_lately(&self, now: Instant) -> bool {
        self.random_losses[0].is_some_and(|at| now - at < RANDOM_MEMORY)
    }

    /// The lowest RTT of the last 30-60 s (or longer, while competing).
    pub(super) fn floor(&self) -> Option<Duration> {
        self.floor.min()
    }

    /// An RTT sample at `now`; `frozen` while competing (the floor does not rotate).
    pub(super) fn on_rtt(&mut self, now: Instant, rtt: Duration, frozen: bool) {
        let recent = self
            .floor()
            .map_or(MIN_RECENT, |f| f.mul_f64(RECENT_FLOORS).max(MIN_RECENT))
            .max(self.ack_gap * RECENT_ACK_GAPS);
        let low = low_span(self.floor());
        self.floor.push(now, rtt, (!frozen).then_some(FLOOR_BUCKET));
        self.low.push(now, rtt, Some(low));
        self.recent.push(now, rtt, Some(recent));
        if let Some(floor) = self.floor() {
            let settled = now - self.disarmed_at >= settle(Some(floor));
            self.armed |= settled || !above(rtt, floor, EMPTY_FRACTION, EMPTY_MIN);
        }
    }

    /// Ignore full queues until the queue has been seen empty or start-up's overshoot has
    /// had time to leave: start-up overshoots by design, and losses it caused are reported
    /// while its queue drains (alone on a path with a one-BDP queue, the model took them for
    /// competitors and stayed a CUBIC flow). (Waiting for an empty queue alone never ended
    /// beside kernel TCP flows, which keep the queue near full: the model never competed.)
    pub(super) fn disarm(&mut self, now: Instant) {
        self.armed = false;
        self.disarmed_at = now;
    }

    /// Whether the queue is full as a loss is reported: both the recent RTT and `srtt`, the
    /// connection's smoothed ACK/ACK2 round trip, are above the floor by more than
    /// max(½ floor, 2 ms). Random loss alone never comes with that much queue; loss that
    /// loss-based competitors cause always does. (The delivery samples alone are not enough:
    /// under 1% random loss at 1 Gbit/s every sample for 100 ms or more waited for a hole's
    /// repair and read 60% above the floor. ACK/ACK2 pairs wait for no hole, but are smoothed
    /// twice and lag the queue by a round trip or more, so neither decides alone.)
    pub(super) fn queue_full(&self, srtt: Duration) -> bool {
        self.armed && self.queue_standing(srtt)
    }

    /// How far the RTT now (see [`QueueWatch::queue_standing`]) is above the floor.
    pub(super) fn standing_delay(&self, srtt: Duration) -> Option<Duration> {
        Some(self.now(srtt)?.saturating_sub(self.floor()?))
    }

    /// Whether the queue is full as the drain ends, armed or not (the drain is what arms the
    /// watch: it empties a queue the flow built alone).
    pub(super) fn queue_standing(&self, srtt: Duration) -> bool {
        self.now_above_floor(srtt, FULL_FRACTION)
    }

    /// A competition began or resumed: the top of the queue is measured afresh.
    pub(super) fn competition_began(&mut self) {
        self.top = None;
    }

    /// While competing, after each RTT sample: keep the highest RTT now, the lower of the
    /// recent samples' minimum and `srtt`, the connection's smoothed ACK/ACK2 round trip (so
    /// a sample held back by a hole's repair does not raise it).
    pub(super) fn on_competing(&mut self, srtt: Duration) {
        if let Some(now) = self.now(srtt) {
            self.top = Some(self.top.map_or(now, |top| top.max(now)));
        }
    }

    /// Whether others have kept the queue standing for seconds without a loss: the low RTT
    /// (the lowest of the last 2-4 s) and the RTT now are both more than max(½ floor, 2 ms)
    /// above the floor, and no loss was reported for a low RTT's span. Alone, the model's
    /// 0.75 phases empty its own queue every gain cycle. Kernel CUBIC flows can keep a
    /// one-BDP queue standing for seconds between their losses: beside four `cubic` flows
    /// whose start-up cuts left the queue refilling as the model's drain was judged (15.5 ms
    /// over a 41 ms floor, short of half of it), the model stayed rate-based for 8 s
    /// without a loss while the queue held 25-38 ms and their windows grew, its estimate
    /// falling from 2,708 to 1,481 packets a second (an equal share is 1,667); over twelve
    /// seeds the median share went from 0.81 to 0.98 with this signal. Not on paths whose
    /// floor is under twice [`FULL_MIN`], where the model's own bursts and ACK gaps can hold
    /// a queue of that size (see `ModelConfig::own_queue_test`); and not while losses come,
    /// when samples that wait for a hole's repair read high.
    pub(super) fn standing_throughout(&self, now: Instant, srtt: Duration) -> bool {
        let (Some(floor), Some(low)) = (self.floor(), self.low.min()) else {
            return false;
        };
        let quiet = self
            .last_loss
            .is_none_or(|at| now - at >= low_span(Some(floor)));
        self.armed
            && quiet
            && floor.mul_f64(FULL_FRACTION) >= FULL_MIN
            && above(low, floor, FULL_FRACTION, FULL_MIN)
            && self.queue_standing(srtt)
    }

    /// Whether the queue is nearly full, armed or not: the RTT now is more than ¾ of the
    /// floor above it. Loss-based flows keep a one-BDP queue near full (50 kernel CUBIC flows
    /// held the RTT at 1.8-2 floors in the lab); model flows competing with each other as
    /// CUBIC flows keep it nearer half full.
    ///
    /// Where the queue rose more than two floors above the floor while competing (a queue
    /// sized for longer paths than this flow's), ¾ of the floor is a small part of it, and
    /// the competitors' sawtooth seldom falls that low: the bar is then ¾ of half that
    /// height. With the floor alone, a 10 ms flow beside a 200 ms one on the latter's
    /// one-BDP queue (the simulator's pair) found the queue near full after most trials'
    /// drains and resumed with a cut, while the 200 ms flow's trials (¾ of its floor is
    /// 150 ms) went on as the rate-based model: in five seeds of six the 10 ms flow moved
    /// 0.15-0.27 times the other's rate; with the height, 1.09-1.14 in three of them.
    pub(super) fn queue_near_full(&self, srtt: Duration) -> bool {
        let (Some(floor), Some(now)) = (self.floor(), self.now(srtt)) else {
            return false;
        };
        let height = self
            .top
            .map_or(Duration::ZERO, |top| top.saturating_sub(floor));
        let base = floor.max(height.mul_f64(NEAR_FULL_HEIGHT_SHARE));
        now.saturating_sub(floor) > base.mul_f64(NEAR_FULL_FRACTION).max(FULL_MIN)
    }

    /// Whether the RTT now is more than max(`fraction` of the floor, [`FULL_MIN`]) above it.
    fn now_above_floor(&self, srtt: Duration, fraction: f64) -> bool {
        match (self.floor(), self.now(srtt)) {
            (Some(floor), Some(recent)) => above(recent, floor, fraction, FULL_MIN),
            _ => false,
        }
    }

    /// Whether, as a loss is reported in cruise, the RTT is at the top of a wide range: more
    /// than max(⅕ low, 2 ms) above the low RTT of the last few seconds. This needs no empty
    /// queue: a flow that started after its competitors filled the queue takes their
    /// standing queue for its floor, but their sawtooth still sweeps the RTT, and their
    /// losses come at its top (a drop-tail queue drops when it is full).
    pub(super) fn at_the_top(&self, srtt: Duration) -> bool {
        if !self.armed {
            return false;
        }
        match (self.low.min(), self.now(srtt)) {
            (Some(low), Some(recent)) => above(recent, low, HIGH_FRACTION, HIGH_MIN),
            _ => false,
        }
    }

    /// Whether the queue is empty as a loss is reported: the recent RTT is within
    /// max(⅛ floor, 1 ms) of the floor. A drop-tail queue drops only when it is full, so a
    /// loss with the queue empty is random, not congestion. (The smoothed RTT alone would
    /// not do: it lags by several round trips, and in the lab, where the model's own bursts
    /// keep some queue, it never came that close to the floor, so a false alarm kept the
    /// model a CUBIC flow under random loss until its trial. While competing it is a second
    /// reading: see [`QueueWatch::queue_empty_while_competing`].)
    pub(super) fn queue_empty(&self) -> bool {
        self.recent
            .min()
            .is_some_and(|recent| self.at_floor(recent))
    }

    /// Whether the queue is empty as a loss is reported while competing: by the recent RTT
    /// ([`QueueWatch::queue_empty`]) or by `srtt`, the smoothed ACK/ACK2 round trip, within
    /// the same margin of the floor. Random loss cuts a CUBIC window every round trip, and a
    /// window of a few dozen packets sends less than an ACK's worth per SYN: the receiver then
    /// acknowledges on its 10 ms timer, and every delivery sample reads the round trip plus
    /// its packet's wait for that ACK. Alone at 1 Gbit/s × 10 ms with 0.1% random loss in the
    /// lab, the recent RTT read 17-18 ms over a 10.1 ms floor with nothing queued (the
    /// smoothed RTT 10.4 ms), and the flow stayed a CUBIC flow at 2-4% of the link for the
    /// ten seconds until its trial. An ACK's round trip is timed from the ACK's sending,
    /// so it leaves that wait out; it lags the queue by several round trips, so it can only
    /// read empty once the queue has been gone for a while.
    pub(super) fn queue_empty_while_competing(&self, srtt: Duration) -> bool {
        self.queue_empty() || self.at_floor(srtt)
    }

    /// Whether `rtt` is within max(⅛ floor, 1 ms) of the floor: no queue.
    fn at_floor(&self, rtt: Duration) -> bool {
        self.floor()
            .is_some_and(|floor| !above(rtt, floor, EMPTY_FRACTION, EMPTY_MIN))
    }

    /// Whether a queue under test has drained: the recent RTT is within max(⅛ floor, 1 ms,
    /// half an ACK gap) of the floor. The ACK-gap term is for paths whose round trip is far
    /// shorter than the gap: there each RTT sample can read up to a gap long (see
    /// [`RECENT_ACK_GAPS`]), and an idle 45 Mbit/s veth path (4.3 ms between ACKs) read
    /// 1.0-1.6 ms over a 30 µs floor.
    pub(super) fn queue_drained(&self) -> bool {
        match (self.floor(), self.recent.min()) {
            (Some(floor), Some(recent)) => {
                let margin = EMPTY_MIN.max(self.ack_gap / 2);
                !above(recent, floor, EMPTY_FRACTION, margin)
            }
            _ => false,
        }
    }

    /// Whether the lowest RTT of the last 2-4 s is at the floor: the queue was empty lately.
    pub(super) fn recently_empty(&self) -> bool {
        self.low.min().is_some_and(|low| self.at_floor(low))
    }

    /// The floor, low and recent RTTs, for diagnostics.
    pub(super) fn readings(&self) -> [Option<Duration>; 3] {
        [self.floor(), self.low.min(), self.recent.min()]
    }

    /// The RTT now: the lower of the recent samples' minimum and `srtt`.
    fn now(&self, srtt: Duration) -> Option<Duration> {
        self.recent.min().map(|r| r.min(srtt))
    }
}

/// The span of one bucket of the low RTT (see [`LOW_BUCKET`]) for a floor of `floor`.
fn low_span(floor: Option<Duration>) -> Duration {
    floor.map_or(LOW_BUCKET, |f| (f * LOW_FLOORS).max(LOW_BUCKET))
}

/// Whether `rtt` is more than max(`fraction` of `base`, `min`) above `base`.
fn above(rtt: Duration, base: Duration, fraction: f64, min: Duration) -> bool {
    rtt.saturating_sub(base) > base.mul_f64(fraction).max(min)
}

/// Whether cruise phase `cycle_index` of the gain cycle is far enough from the model's own
/// 1.25 probe that a high RTT there is not the probe's queue. The probe queues a quarter of
/// the floor; the RTT samples that show it come back a round trip and an ACK gap later and
/// the recent RTT holds them up to one more floor, so in the first [`PROBE_ECHO_PHASES`]
/// cruise phases they still read above the low RTT. Alone at 1 Gbit/s × 10 ms and 0.1-1%
/// random loss, every loss taken for one "at the top" came in those phases.
pub(super) fn clear_of_own_probe(cycle_index: usize) -> bool {
    cycle_index >= FIRST_CRUISE_PHASE + PROBE_ECHO_PHASES
}

/// How long after the drain start-up's overshoot may still be in the queue or in the RTT
/// samples: [`SETTLE_FLOORS`] floors, at least [`SETTLE_MIN`].
pub(super) fn settle(floor: Option<Duration>) -> Duration {
    floor.map_or(SETTLE_MIN, |f| (f * SETTLE_FLOORS).max(SETTLE_MIN))
}

/// The model while it competes with loss-based flows: a CUBIC window (see the module doc).
#[derive(Clone, Debug)]
pub(super) struct Competition {
    window: CubicWindow,
    /// The largest sequence sent at the last cut: no new cut until the ACK passes it.
    cut_at: SeqNumber,
    /// When this stretch of competing began (entered or resumed).
    since: Instant,
    /// The model's bandwidth estimate when it began to compete, packets per second: where
    /// it goes back to if the losses turn out to be random.
    bw_at_entry: f64,
    /// The loss rate while competing (see [`LossMeter`]).
    meter: LossMeter,
}

impl Competition {
    /// Start competing at `now` after a loss with the queue full, with `inflight` packets in
    /// flight (what the model was sending into that queue): β of that, with the cubic epoch
    /// aiming at (1 + β)/2 of it (fast convergence, RFC 9438 §4.7: the rate-based model held
    /// more than its share, and aiming back at all of it kept that for many epochs).
    pub(super) fn after_loss(
        now: Instant,
        inflight: f64,
        largest_sent: SeqNumber,
        min: f64,
        bw_at_entry: f64,
    ) -> Self {
        let (cwnd, w_max) = (inflight * BETA, inflight * (1.0 + BETA) / 2.0);
        Self::starting(now, inflight, cwnd, w_max, largest_sent, min, bw_at_entry)
    }

    /// Start competing at `now` without a loss, at `window` packets: the cubic epoch starts
    /// on its plateau there (W_max = the window, K = 0), as a CUBIC flow that has grown back
    /// to where it last lost. There was no congestion event to cut for, and the caller's
    /// window already leaves the queue out (see `Entry::Drained`). Cut by β and aiming below
    /// it, as after a loss, the window stayed on the concave side for K ≈ 5-6 s: beside one
    /// kernel CUBIC flow at 100 Mbit/s × 40 ms the model took 0.60-0.74 of an equal share over
    /// 30 s, 0.81-1.01 without the cut (BENCHMARKS, session 50).
    pub(super) fn without_loss(
        now: Instant,
        window: f64,
        largest_sent: SeqNumber,
        min: f64,
        bw_at_entry: f64,
    ) -> Self {
        Self::starting(now, window, window, window, largest_sent, min, bw_at_entry)
    }

    /// A competition whose CUBIC window, begun at `inflight` packets, starts its epoch at
    /// `cwnd` aiming at `w_max`.
    fn starting(
        now: Instant,
        inflight: f64,
        cwnd: f64,
        w_max: f64,
        largest_sent: SeqNumber,
        min: f64,
        bw_at_entry: f64,
    ) -> Self {
        let mut window = CubicWindow::new(inflight, min);
        window.restart(now, cwnd, w_max);
        Self {
            window,
            cut_at: largest_sent,
            since: now,
            bw_at_entry,
            meter: LossMeter::default(),
        }
    }

    /// The loss rate the CUBIC window has met over the last three stretches of
    /// [`METER_SPAN`] or more (see [`LossMeter`]), once there are three: `sent` and `lost`
    /// are the model's running totals of new packets sent and first losses. The first
    /// [`METER_SKIP_FLOORS`] floors after the competition began are left out: their losses
    /// were caused by the rate-based model before it.
    pub(super) fn loss_rate(
        &mut self,
        now: Instant,
        floor: Duration,
        sent: u64,
        lost: u64,
    ) -> Option<f64> {
        if now - self.since < floor * METER_SKIP_FLOORS {
            return None;
        }
        self.meter.rate(now, floor, sent, lost)
    }

    /// The model's bandwidth estimate when it began to compete, packets per second.
    pub(super) fn bw_at_entry(&self) -> f64 {
        self.bw_at_entry
    }

    /// Whether it is time to try the rate-based model again.
    pub(super) fn trial_due(&self, now: Instant) -> bool {
        now - self.since >= TRIAL
    }

    /// Compete again after a trial of less than [`MEMORY`]: the window goes on from where it
    /// was, with the loss that ended the trial, if one did, as a congestion event.
    /// (Restarting from what the rate-based model then had in flight took a larger share at
    /// every trial.) A trial ended by the drain's verdict lost nothing, and a cut there was
    /// a congestion event every [`TRIAL`] that the competitors never had (beside one kernel
    /// CUBIC flow at 1 Gbit/s × 50 ms, where a traced run met losses 12 s apart, it
    /// resumed at 1,812 packets instead of 2,589). A window still in slow start after a
    /// timeout goes on from where it was heading (see [`Competition::held_window`]).
    pub(super) fn resume(
        &mut self,
        now: Instant,
        lost: bool,
        cum_ack: SeqNumber,
        largest_sent: SeqNumber,
    ) {
        self.since = now;
        self.meter = LossMeter::default();
        let held = self.held_window();
        if held > self.window.cwnd() {
            self.window.restart(now, held, held);
        }
        if lost {
            self.on_loss(now, 1, cum_ack, largest_sent);
        }
    }

    /// The CUBIC window, packets.
    pub(super) fn cwnd(&self) -> f64 {
        self.window.cwnd()
    }

    /// The window the competition holds, packets: the CUBIC window, or, in slow start after
    /// a timeout, the threshold it is heading for. The rate-based model that takes over at a
    /// trial has no slow start, and a timeout leaves the window at the minimum: taken for the
    /// flow's rate, 4 packets over 290 ms were 13 a second, a rate whose retransmissions
    /// alone filled every sending slot, so no new packet could measure the path again (a
    /// 200 ms flow beside a 20 ms one then moved 0.6 Mbit/s of a free 200 Mbit/s link for
    /// 45 s). A trial that ended at once cut that minimum again, and the resumed window grew
    /// from 4 packets for ten seconds.
    pub(super) fn held_window(&self) -> f64 {
        self.window.target()
    }

    /// Pacing period in microseconds: the path's floor RTT over 1.2 windows, so the window,
    /// not the pacer, sets the rate. (Paced by the smoothed RTT, which lags the queue by a
    /// round trip or more, the flow sent too slowly after each cut to keep its window in
    /// flight, and the queue, which its CUBIC competitors keep full, emptied.)
    pub(super) fn period_us(&self, floor: Duration) -> f64 {
        floor.as_secs_f64() * 1e6 / (PACING_GAIN * self.window.cwnd())
    }

    /// `newly` packets acknowledged, leaving `inflight` in flight; the window grows only
    /// while the flow uses at least half of it. Used as the ACK found it: the flight before
    /// the ACK, what it covered included. Where the round trip is shorter than the ACK period
    /// (a veth path: 50 µs against ACKs a millisecond or more apart) each ACK covers the
    /// whole window, the flight after it is always nothing, and judged by that a window of 4
    /// never grew: a flow held 18 Mbit/s of a 45 Mbit/s path for the 10 s until its trial.
    pub(super) fn on_ack(&mut self, now: Instant, newly: f64, inflight: f64, srtt: Duration) {
        if (inflight + newly) * 2.0 >= self.window.cwnd() {
            self.window.on_ack(now, newly, srtt);
        }
    }

    /// `fresh` losses newly reported at `now`, with the cumulative ACK at `cum_ack`: one cut
    /// per round trip.
    pub(super) fn on_loss(
        &mut self,
        now: Instant,
        fresh: u64,
        cum_ack: SeqNumber,
        largest_sent: SeqNumber,
    ) {
        if fresh > 0 && self.cut_at < cum_ack {
            self.window.on_congestion(now);
            self.cut_at = largest_sent;
        }
    }

    /// An EXP timeout: back to the minimum, slow start to β of the window.
    pub(super) fn on_timeout(&mut self, largest_sent: SeqNumber) {
        self.window.on_timeout();
        self.cut_at = largest_sent;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    const SRTT: Duration = Duration::from_millis(100);

    /// The meter reports only after three full stretches: their pooled rate if each lost at
    /// least a quarter of the threshold, otherwise the lowest of their rates. Lossy
    /// stretches as competitors' slow starts overflow the queue are not enough.
    #[test]
    fn the_loss_meter_needs_three_lossy_stretches() {
        let floor = Duration::from_millis(40);
        let mut m = LossMeter::default();
        assert_eq!(m.rate(at(0), floor, 0, 0), None);
        // A stretch shorter than a second, or with too few packets and losses, does not count.
        assert_eq!(m.rate(at(500), floor, 1_000, 100), None);
        assert_eq!(m.rate(at(1_000), floor, 100, 7), None);
        // A stretch of 10%, then one of 0.4% (under a quarter of 2%): still no reading.
        assert_eq!(m.rate(at(1_100), floor, 1_000, 100), None);
        assert_eq!(m.rate(at(2_200), floor, 2_000, 104), None);
        // Then 8%: the lowest of the three, 0.4%; then 12%, still 0.4%; then 10%: 8%,
        // 12% and 10% pooled.
        assert_eq!(m.rate(at(3_300), floor, 3_000, 184), Some(0.004));
        assert_eq!(m.rate(at(4_400), floor, 4_000, 304), Some(0.004));
        assert_eq!(m.rate(at(5_500), floor, 5_000, 404), Some(0.1));
        // BBR's bursts: 3%, 0.5% and 2.5% are 2% pooled; then 1.5% with the last two.
        let mut bursts = LossMeter::default();
        bursts.rate(at(0), floor, 0, 0);
        assert_eq!(bursts.rate(at(1_100), floor, 1_000, 30), None);
        assert_eq!(bursts.rate(at(2_200), floor, 2_000, 35), None);
        let pooled = bursts.rate(at(3_300), floor, 3_000, 60).expect("a reading");
        assert!((pooled - 0.02).abs() < 1e-12, "{pooled}");
        let pooled = bursts.rate(at(4_400), floor, 4_000, 75).expect("a reading");
        assert!((pooled - 0.015).abs() < 1e-12, "{pooled}");
        // On long paths a stretch spans ten floors.
        let mut long = LossMeter::default();
        let floor = Duration::from_millis(200);
        long.rate(at(0), floor, 0, 0);
        long.rate(at(1_500), floor, 1_000, 100);
        assert_eq!(long.rate(at(2_500), floor, 2_000, 200), None);
        long.rate(at(4_100), floor, 3_000, 300);
        assert_eq!(long.rate(at(6_200), floor, 4_000, 400), None);
        assert_eq!(long.rate(at(8_300), floor, 5_000, 500), Some(0.1));
    }

    /// A hold ends early once each of three stretches lost under 1% (the competitors
    /// yielded to it), not while any of them lost more; and it is over after ten seconds.
    #[test]
    fn a_hold_ends_when_its_own_loss_shows_competitors_that_yield() {
        let floor = Duration::from_millis(50);
        let left = Competition::without_loss(at(0), 279.0, SeqNumber::new(100), 4.0, 1e4);
        let mut hold = Hold::new(at(0), left);
        assert!(!hold.yielded(at(0), floor, 0, 0));
        // The slow starts' tail (2%), then 0% and 0.36%: the 2% is still among the three.
        assert!(!hold.yielded(at(1_000), floor, 30_000, 600));
        assert!(!hold.yielded(at(2_000), floor, 70_000, 600));
        assert!(!hold.yielded(at(3_000), floor, 120_000, 780));
        // Then 0.2%: three stretches under 1%.
        assert!(hold.yielded(at(4_000), floor, 170_000, 880));
        assert!(!hold.over(at(9_999)));
        assert!(hold.over(at(10_000)));
        assert_eq!(hold.into_left().cwnd(), 279.0);
        // Beside flows that ignore loss the hold loses a tenth to a half, with a rare quiet
        // second: 30%, 0.3%, 25%, 40%, 0.5%, 30% never yield.
        let left = Competition::without_loss(at(0), 30.0, SeqNumber::new(100), 4.0, 1e3);
        let mut blind = Hold::new(at(0), left);
        blind.yielded(at(0), floor, 0, 0);
        let per_second = [
            (500, 150),
            (600, 2),
            (500, 125),
            (500, 200),
            (600, 3),
            (500, 150),
        ];
        let (mut sent, mut lost) = (0, 0);
        for (i, (s, l)) in per_second.into_iter().enumerate() {
            (sent, lost) = (sent + s, lost + l);
            let now = at(1_000 * (i as u64 + 1));
            assert!(!blind.yielded(now, floor, sent, lost), "second {i}");
        }
    }

    /// Feed 320 ms of samples `queue_ms` above a 40 ms floor.
    fn samples(watch: &mut QueueWatch, t: &mut u64, queue_ms: u64) {
        for _ in 0..32 {
            *t += 10;
            watch.on_rtt(at(*t), Duration::from_millis(40 + queue_ms), false);
        }
    }

    #[test]
    fn only_a_queue_of_half_the_floor_is_full() {
        let mut watch = QueueWatch::new(at(0));
        assert!(!watch.queue_full(SRTT));
        watch.on_rtt(at(0), Duration::from_millis(40), false);
        let mut t = 0;
        // Start-up's queue, before the queue was ever seen empty, does not count.
        watch.disarm(at(0));
        samples(&mut watch, &mut t, 30);
        assert!(!watch.queue_full(SRTT));
        // The model's own probes: a quarter of the floor is no full queue.
        samples(&mut watch, &mut t, 10);
        assert!(!watch.queue_full(SRTT));
        samples(&mut watch, &mut t, 3);
        // A queue of 30 ms on a 40 ms path is.
        samples(&mut watch, &mut t, 30);
        assert!(watch.queue_full(SRTT));
        // The smoothed ACK/ACK2 round trip must agree.
        assert!(!watch.queue_full(Duration::from_millis(45)));
        // Only the recent samples count: a moment later the queue is gone.
        samples(&mut watch, &mut t, 3);
        assert!(!watch.queue_full(SRTT));
    }

    /// A queue that others keep standing: seen once the low RTT's span (2-4 s) holds neither
    /// an empty queue nor a loss. Not alone (the 0.75 phases empty the queue), not while
    /// losses come, not without the smoothed RTT, not on a path of a few milliseconds.
    #[test]
    fn a_queue_that_stands_for_seconds_without_a_loss() {
        let mut watch = QueueWatch::new(at(0));
        watch.on_rtt(at(0), Duration::from_millis(40), false);
        let mut t = 0;
        samples(&mut watch, &mut t, 0);
        samples(&mut watch, &mut t, 25);
        assert!(!watch.standing_throughout(at(t), SRTT));
        for _ in 0..16 {
            samples(&mut watch, &mut t, 25);
        }
        assert!(watch.standing_throughout(at(t), SRTT));
        assert!(!watch.standing_throughout(at(t), Duration::from_millis(45)));
        watch.lost(at(t));
        samples(&mut watch, &mut t, 25);
        assert!(!watch.standing_throughout(at(t), SRTT));
        for _ in 0..6 {
            samples(&mut watch, &mut t, 25);
        }
        assert!(watch.standing_throughout(at(t), SRTT));
        // A quarter of the floor is no standing queue, nor is one that empties each cycle.
        let (mut alone, mut t) = (QueueWatch::new(at(0)), 0);
        for _ in 0..16 {
            samples(&mut alone, &mut t, 10);
        }
        assert!(!alone.standing_throughout(at(t), SRTT));
        for _ in 0..16 {
            samples(&mut alone, &mut t, 30);
            samples(&mut alone, &mut t, 0);
        }
        assert!(!alone.standing_throughout(at(t), SRTT));
        // A 3 ms floor: 10 ms of queue may be the model's own bursts.
        let (mut short, mut t) = (QueueWatch::new(at(0)), 0);
        short.on_rtt(at(0), Duration::from_millis(3), false);
        for _ in 0..320 {
            t += 20;
            short.on_rtt(at(t), Duration::from_millis(13), false);
        }
        assert!(!short.standing_throughout(at(t), Duration::from_millis(13)));
    }

    /// A 10 ms flow beside flows that keep a queue of up to 200 ms: after a trial's drain,
    /// 30 ms of their queue is not near full (¾ of the floor would call it so), 160 ms is.
    /// Where the queue rose about one floor while competing, ¾ of the floor still decides.
    #[test]
    fn near_full_is_judged_against_the_height_the_queue_reached_while_competing() {
        let feed = |watch: &mut QueueWatch, t: &mut u64, rtt_ms: u64, competing: bool| {
            let rtt = Duration::from_millis(rtt_ms);
            for _ in 0..32 {
                *t += 10;
                watch.on_rtt(at(*t), rtt, competing);
                if competing {
                    watch.on_competing(rtt);
                }
            }
        };
        // A watch on a 10 ms floor whose competition saw the RTT reach `top_ms`.
        let competed = |top_ms: u64| {
            let (mut watch, mut t) = (QueueWatch::new(at(0)), 0);
            feed(&mut watch, &mut t, 10, false);
            watch.competition_began();
            feed(&mut watch, &mut t, top_ms, true);
            (watch, t)
        };
        let ms = Duration::from_millis;
        let (mut deep, mut t) = competed(210);
        feed(&mut deep, &mut t, 40, false);
        assert!(!deep.queue_near_full(ms(40)));
        feed(&mut deep, &mut t, 170, false);
        assert!(deep.queue_near_full(ms(170)));

        let (mut shallow, mut t) = competed(20);
        feed(&mut shallow, &mut t, 16, false);
        assert!(!shallow.queue_near_full(ms(16)));
        feed(&mut shallow, &mut t, 19, false);
        assert!(shallow.queue_near_full(ms(19)));
        // A new competition measures its own height.
        deep.competition_began();
        feed(&mut deep, &mut t, 20, true);
        feed(&mut deep, &mut t, 40, false);
        assert!(deep.queue_near_full(ms(40)));
    }

    /// A flow that started beside competitors that had filled the queue: its floor is their
    /// standing queue (80 ms on a 40 ms path), so the queue is never "full" above it, but their
    /// sawtooth sweeps the RTT over 80-100 ms, and a loss at 100 ms is at the top.
    #[test]
    fn a_loss_at_the_top_of_a_wide_range_needs_no_empty_queue() {
        let mut watch = QueueWatch::new(at(0));
        let mut t = 0;
        for _ in 0..4 {
            samples(&mut watch, &mut t, 40);
            samples(&mut watch, &mut t, 60);
        }
        assert!(!watch.queue_full(SRTT));
        assert!(watch.at_the_top(SRTT));
        // The bottom of the sweep is not the top.
        samples(&mut watch, &mut t, 42);
        assert!(!watch.at_the_top(SRTT));
        // Alone, the model cruises within a few percent of its low RTT: never the top.
        let mut alone = QueueWatch::new(at(0));
        let mut t = 0;
        for _ in 0..8 {
            samples(&mut alone, &mut t, 0);
            samples(&mut alone, &mut t, 4);
        }
        assert!(!alone.at_the_top(SRTT));
    }

    /// Start-up's queue is ignored until the queue is seen empty or a second has passed.
    #[test]
    fn the_watch_arms_once_start_up_has_had_time_to_drain() {
        let mut watch = QueueWatch::new(at(0));
        watch.on_rtt(at(0), Duration::from_millis(40), false);
        watch.disarm(at(0));
        let mut t = 0;
        samples(&mut watch, &mut t, 30);
        assert!(!watch.queue_full(SRTT));
        for _ in 0..3 {
            samples(&mut watch, &mut t, 30);
        }
        assert!(watch.queue_full(SRTT));
    }

    /// Random loss in CUBIC mode alone comes with the queue empty; a drop-tail queue's own
    /// losses never do.
    #[test]
    fn only_a_queue_near_the_floor_is_empty() {
        let mut watch = QueueWatch::new(at(0));
        assert!(!watch.queue_empty(), "no floor yet");
        let mut t = 0;
        samples(&mut watch, &mut t, 0);
        assert!(watch.queue_empty());
        // A queue of a quarter of the floor (a probe's) is not empty.
        samples(&mut watch, &mut t, 10);
        assert!(!watch.queue_empty());
        // A moment later it is gone.
        samples(&mut watch, &mut t, 1);
        assert!(watch.queue_empty());
    }

    /// A small CUBIC window is acknowledged on the receiver's 10 ms timer, so its delivery
    /// samples read up to 10 ms over the round trip with nothing queued; the ACK/ACK2 round
    /// trip leaves that wait out and shows the queue empty.
    #[test]
    fn a_smoothed_rtt_at_the_floor_shows_an_empty_queue_while_competing() {
        let mut watch = QueueWatch::new(at(0));
        let mut t = 0;
        samples(&mut watch, &mut t, 0);
        samples(&mut watch, &mut t, 8);
        assert!(!watch.queue_empty());
        assert!(watch.queue_empty_while_competing(Duration::from_micros(40_300)));
        assert!(!watch.queue_empty_while_competing(Duration::from_millis(48)));
    }

    /// Three losses with the queue empty, a floor apart, within two seconds say the path has
    /// random loss; fewer, or older, do not.
    #[test]
    fn random_loss_is_three_losses_with_the_queue_empty() {
        let mut watch = QueueWatch::new(at(0));
        let mut t = 0;
        samples(&mut watch, &mut t, 0);
        watch.on_loss(at(t));
        watch.on_loss(at(t + 10)); // within a floor of the last: the same event
        samples(&mut watch, &mut t, 0);
        watch.on_loss(at(t));
        assert!(!watch.random_loss_lately(at(t)));
        // A loss with a full queue does not count.
        samples(&mut watch, &mut t, 30);
        watch.on_loss(at(t));
        assert!(!watch.random_loss_lately(at(t)));
        samples(&mut watch, &mut t, 0);
        watch.on_loss(at(t));
        assert!(watch.random_loss_lately(at(t)));
        assert!(!watch.random_loss_lately(at(t + 3000)));
    }

    #[test]
    fn the_first_cruise_phases_after_a_probe_are_not_judged() {
        let judged: Vec<bool> = (0..8).map(clear_of_own_probe).collect();
        assert_eq!(judged, [false, false, false, false, true, true, true, true]);
    }

    #[test]
    fn the_floor_rotates_only_while_not_competing() {
        let mut watch = QueueWatch::new(at(0));
        watch.on_rtt(at(0), Duration::from_millis(40), false);
        // Frozen: a minute of higher samples leaves the floor alone.
        for s in 1..=70 {
            watch.on_rtt(at(s * 1000), Duration::from_millis(60), true);
        }
        assert_eq!(watch.floor(), Some(Duration::from_millis(40)));
        // Not frozen: after two buckets the old floor is forgotten.
        for s in 71..=140 {
            watch.on_rtt(at(s * 1000), Duration::from_millis(60), false);
        }
        assert_eq!(watch.floor(), Some(Duration::from_millis(60)));
    }

    #[test]
    fn a_window_that_each_ack_empties_still_grows() {
        let srtt = Duration::from_micros(50);
        let mut c = Competition::after_loss(at(0), 4.0, SeqNumber::new(100), 4.0, 1000.0);
        assert!((c.cwnd() - 4.0).abs() < 1e-9);
        // Every millisecond an ACK covers the whole window and leaves nothing in flight.
        for ms in 1..=100 {
            let newly = c.cwnd().floor();
            c.on_ack(at(ms), newly, 0.0, srtt);
        }
        assert!(c.cwnd() >= 16.0, "cwnd {}", c.cwnd());
        // A flow using little of its window (two packets of sixteen or more) does not grow.
        let before = c.cwnd();
        for ms in 101..=200 {
            c.on_ack(at(ms), 2.0, 0.0, srtt);
        }
        assert!((c.cwnd() - before).abs() < 1e-9);
    }

    #[test]
    fn a_competition_without_a_loss_starts_uncut_on_the_plateau() {
        let srtt = Duration::from_millis(50);
        let mut plateau = Competition::without_loss(at(0), 100.0, SeqNumber::new(100), 4.0, 1e3);
        let cut = Competition::after_loss(at(0), 100.0, SeqNumber::new(100), 4.0, 1e3);
        assert!((plateau.cwnd() - 100.0).abs() < 1e-9);
        assert!((cut.cwnd() - 70.0).abs() < 1e-9);
        // It grows from there with full windows (by the Reno-friendly rule at first: the
        // cubic term adds only C·t³ packets, 0.4 after a second).
        for ms in (10..=1000).step_by(10) {
            plateau.on_ack(at(ms), 20.0, plateau.cwnd(), srtt);
        }
        assert!(plateau.cwnd() > 100.0, "{}", plateau.cwnd());
        let before = plateau.cwnd();
        // Its first loss is a congestion event like any other.
        plateau.on_loss(at(1_010), 1, SeqNumber::new(150), SeqNumber::new(400));
        assert!((plateau.cwnd() - before * BETA).abs() < 1e-9);
    }

    #[test]
    fn competition_cuts_once_per_round_trip() {
        let mut c = Competition::after_loss(at(0), 100.0, SeqNumber::new(100), 4.0, 1000.0);
        assert!((c.cwnd() - 70.0).abs() < 1e-9);
        // Losses before the ACK passes what was in flight at entry are the same event.
        c.on_loss(at(10), 3, SeqNumber::new(50), SeqNumber::new(150));
        assert!((c.cwnd() - 70.0).abs() < 1e-9);
        c.on_loss(at(50), 3, SeqNumber::new(120), SeqNumber::new(170));
        assert!((c.cwnd() - 49.0).abs() < 1e-9);
        c.on_loss(at(60), 3, SeqNumber::new(130), SeqNumber::new(175));
        assert!((c.cwnd() - 49.0).abs() < 1e-9);
        // A trial after ten seconds; a resume restarts the clock, and one that a loss ended
        // is a congestion event.
        assert!(!c.trial_due(at(9_000)));
        assert!(c.trial_due(at(10_000)));
        let mut drained = c.clone();
        c.resume(at(10_100), true, SeqNumber::new(180), SeqNumber::new(300));
        assert!((c.cwnd() - 49.0 * BETA).abs() < 1e-9);
        assert!(!c.trial_due(at(19_000)));
        // One that the drain's verdict ended goes on with the window it had.
        drained.resume(at(10_100), false, SeqNumber::new(180), SeqNumber::new(300));
        assert!((drained.cwnd() - 49.0).abs() < 1e-9);
        assert!(!drained.trial_due(at(19_000)));
    }

    /// Cycles traced beside a growing `cubic` window (100 Mbit/s × 40 ms): the estimate
    /// falls a fifth over four cycles while the queue rises, and the first estimate of them
    /// is what the model had. A flat queue, a queue too short, or a cleared trend says
    /// nothing.
    #[test]
    fn a_trend_sees_an_estimate_that_falls_as_the_queue_rises() {
        let floor = Duration::from_millis(40);
        let ms = Duration::from_millis;
        let growing = [
            (3_154.0, 19_207),
            (2_950.0, 20_988),
            (2_859.0, 22_455),
            (2_656.0, 23_760),
            (2_566.0, 25_925),
            (2_370.0, 27_404),
            (2_254.0, 29_103),
        ];
        let mut trend = Trend::default();
        for (i, (bw, queue)) in growing.into_iter().enumerate() {
            trend.push(bw, Duration::from_micros(queue));
            let seen = trend.yielding(floor);
            // 2,566 is 0.814 of 3,154, 2,370 0.803 of 2,950, 2,254 0.788 of 2,859.
            if i < 6 {
                assert_eq!(seen, None, "cycle {i}");
            } else {
                assert_eq!(seen, Some(2_859.0), "cycle {i}");
            }
        }
        trend.clear();
        trend.push(2_000.0, ms(30));
        assert_eq!(trend.yielding(floor), None);
        // Nor, though the estimate falls as much, does a flat queue (12-14 ms), one that
        // rises to no more than a quarter of the floor (10 ms), or one that dips on its way
        // up, as among model flows whose probes come and go.
        for queues in [[12, 14, 13, 12, 14], [2, 4, 6, 8, 10], [14, 22, 16, 20, 24]] {
            let mut trend = Trend::default();
            for (i, queue) in queues.into_iter().enumerate() {
                trend.push(4_000.0 - 300.0 * i as f64, ms(queue));
            }
            assert_eq!(trend.yielding(floor), None, "{queues:?}");
        }
    }
}
