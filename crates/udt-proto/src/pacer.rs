//! When the next data packet may leave: the controller's sending period, kept on average even
//! when the runtime wakes late.
//!
//! A runtime is descheduled now and then (a millisecond or more on a busy machine). Resetting
//! the schedule after each stall loses what the stall cost, and the connection runs slower
//! than its controller asked (measured: 3-7% slow at 500 Mbit/s-1 Gbit/s on a loaded 2-core
//! machine). Catching up all at once instead sends a burst that overflows queues. So the
//! pacer keeps two clocks:
//! - the *schedule* advances one period per packet and may fall up to [`MAX_DEBT`] behind
//!   `now` (lateness the connection still owes);
//! - the *catch-up* clock advances half a period per packet, so owed packets go out at most
//!   at twice the rate, with an immediate burst of at most [`BURST`].
//!
//! A packet may leave when both clocks allow. On schedule, the catch-up clock trails behind and
//! only the schedule matters. When there is nothing to send at a due time, the debt is
//! forgiven: an idle connection earns no burst.
//!
//! **Trains.** A packet that leaves on time opens a train: the slots that fall within the
//! next [`TRAIN`] of the schedule, or the next [`TRAIN_GSO_MIN_PKTS`] slots if that is
//! longer (at most [`TRAIN_MAX_PKTS`], and at most a quarter of the RTT's worth unless that
//! is under [`TRAIN_MIN_PKTS`]) may go with it, and the next wake-up
//! is when the slot after the train comes due. The average rate is the controller's; what
//! changes is the grain: each packet 260 µs apart at 45 Mbit/s, or 60 µs apart at
//! 200 Mbit/s, cost a wake-up and a send at the sender and a wake-up and a receive at the
//! receiver, where a train is one wake-up, one `sendmmsg` (one GSO send) and one GRO batch.
//! Kernel TCP paces the same way (TSO autosizing: about 1 ms of data per burst). The RTT bound
//! is for short paths: on a 100 µs path with a BDP-sized queue, 16-packet trains overflowed
//! the queue and held the model controller at 37% of 1 Gbit/s in the simulator. Trains
//! longer than [`TRAIN_MIN_PKTS`] go only where the runtime sends them as one GSO segment
//! (the connection passes a zero RTT otherwise, and while the controller asks for short
//! trains: at a queue that other flows keep full, a long train's tail is dropped).
//!
//! **Earned trains.** The quarter RTT protects a queue of about a BDP, but on a path whose
//! RTT is far below the train (a LAN, a veth pair: 24 µs against the 4.3 ms of 16 packets
//! at 45 Mbit/s) it held every rate-paced flow to 4-packet trains, a wake-up and a send per
//! 4 packets at each end, whatever queue the path really has. So a train may also be as
//! long as trains have shown the path takes: one packet more for every [`EARN_STEP`]
//! without a loss, up to [`TRAIN_MAX_PKTS`] within [`MAX_EARNED_SPAN`] of the schedule
//! (19 packets at 45 Mbit/s, 64 from about 150 Mbit/s on), halved at each loss (never below
//! [`TRAIN_MIN_PKTS`]). A queue shorter than the train drops its tail, which halves the
//! trains again, and each halving that came before the trains reached the top doubles the
//! time a packet more takes (up to [`MAX_EARN_BACKOFF`] doublings), so that a short queue
//! sees such a loss every few seconds rather than every few ACK periods (growing every
//! 10 ms, 45 Mbit/s through an 8-packet queue lost 1.4% in the simulator). A loss-free
//! path keeps long trains; a lossy one keeps short ones.
//!
//! Only while the application's rate cap (UDT_MAXBW), not the controller, sets the period:
//! trains sent below the path's rate reach the receiver as bursts, its ACKs then fall
//! inside trains, and `model`'s delivery samples, which count up to the newest train
//! an ACK passed but span the whole gap, read up to half the rate. Under the cap those
//! samples are application-limited and can only raise the estimate; paced by the
//! controller, they pulled a capped flow's estimate below the cap (to 0.54 of it in the
//! simulator; 127 Mbit/s against 167 at 180 Mbit/s on a veth pair), in the phases (a 0.75
//! gain) where the controller's period was the longer one.

use std::time::Duration;

use crate::time::Instant;

/// How far behind its schedule a sender may fall and still make up for it.
pub(crate) const MAX_DEBT: Duration = Duration::from_millis(5);
/// The longest span of sending a late runtime may compress into one instant, per clock.
pub(crate) const BURST: Duration = Duration::from_micros(500);
/// Owed packets leave at most this many times faster than the period.
const CATCH_UP_SPEED: u32 = 2;
/// The longest stretch of the schedule a train may carry (kernel TCP's pacing grain)…
pub(crate) const TRAIN: Duration = Duration::from_millis(1);
/// …at most this fraction of the smoothed RTT, unless that is under [`TRAIN_MIN_PKTS`]…
const TRAIN_RTT_DIVISOR: u32 = 4;
/// …always this many packets, however short the path…
pub(crate) const TRAIN_MIN_PKTS: u32 = 4;
/// …and, where the RTT allows, at least this many even when they span more than [`TRAIN`]:
/// below ~190 Mbit/s a millisecond is under 16 packets, and each train costs a wake-up and a
/// context switch at both ends whatever its length (at 45 Mbit/s, 1 ms trains were 4
/// packets and a thousand wake-ups a second at each end; BENCHMARKS.md, "CPU per byte at
/// paced rates")…
pub(crate) const TRAIN_GSO_MIN_PKTS: u32 = 16;
/// …and never more than one GSO send carries (64 segments).
pub(crate) const TRAIN_MAX_PKTS: u32 = 64;
/// Loss-free time that earns trains one packet more than the quarter RTT allows, at first:
/// one ACK period.
const EARN_STEP: Duration = Duration::from_millis(10);
/// At most this many doublings of [`EARN_STEP`] (0.64 s a packet).
const MAX_EARN_BACKOFF: u32 = 6;
/// The longest stretch of the schedule an earned train may carry: 19 packets at 45 Mbit/s,
/// a whole GSO send (64) from about 150 Mbit/s on, fewer at low rates, where wake-ups cost
/// less and a train bunches more.
const MAX_EARNED_SPAN: Duration = Duration::from_millis(5);

/// The pacing state of one connection.
#[derive(Debug, Clone)]
pub(crate) struct Pacer {
    schedule: Instant,
    catch_up: Instant,
    /// Slots up to this time belong to the train under way.
    train_end: Instant,
    earned: EarnedTrains,
}

/// How long a train the path has been shown to take (see the module docs).
#[derive(Debug, Clone)]
struct EarnedTrains {
    /// The length, in packets, at the last loss…
    at_loss: u32,
    /// …and that loss's time: every step since adds a packet…
    last_loss: Instant,
    /// …a step being [`EARN_STEP`] doubled this many times.
    backoff: u32,
    /// When a loss last halved the length.
    halved: Instant,
}

impl EarnedTrains {
    fn new(now: Instant) -> Self {
        Self {
            at_loss: TRAIN_MIN_PKTS,
            last_loss: now,
            backoff: 0,
            halved: now.saturating_sub(EARN_STEP),
        }
    }

    /// The length loss-free time has earned by `now`.
    fn at(&self, now: Instant) -> u32 {
        let step = EARN_STEP * (1 << self.backoff);
        let since = now.saturating_duration_since(self.last_loss);
        let steps = u32::try_from(since.as_nanos() / step.as_nanos()).unwrap_or(u32::MAX);
        self.at_loss.saturating_add(steps).min(TRAIN_MAX_PKTS)
    }

    /// Halves the length for a loss at `now`, of trains `period` apart: the length in use,
    /// which [`MAX_EARNED_SPAN`] may hold below the earned count. Losses within
    /// [`EARN_STEP`] of the last halving only restart the clock: one train's tail and the
    /// random losses of one ACK period are one reason to shorten, not several.
    fn on_loss(&mut self, now: Instant, period: Duration) {
        let top = span_pkts(period);
        let earned = self.at(now).min(top);
        if now >= self.halved + EARN_STEP {
            self.backoff = if earned >= TRAIN_GSO_MIN_PKTS.min(top) {
                0
            } else {
                (self.backoff + 1).min(MAX_EARN_BACKOFF)
            };
            self.at_loss = (earned / 2).max(TRAIN_MIN_PKTS);
            self.halved = now;
        } else {
            self.at_loss = earned;
        }
        self.last_loss = now;
    }
}

impl Pacer {
    /// A pacer whose first packet may leave at `now`.
    pub(crate) fn new(now: Instant) -> Self {
        Self {
            schedule: now,
            catch_up: now,
            train_end: now,
            earned: EarnedTrains::new(now),
        }
    }

    /// The path lost packets (a loss report or a timeout) at `now`, packets leaving `period`
    /// apart: shorten the earned trains, since the loss may be a train's tail dropped at a
    /// short queue.
    pub(crate) fn on_loss(&mut self, now: Instant, period: Duration) {
        self.earned.on_loss(now, period);
    }

    /// The earliest time the next packet may leave.
    pub(crate) fn earliest(&self) -> Instant {
        self.schedule.max(self.catch_up)
    }

    /// Whether a packet whose slot is `due` may leave at `now`: it is due, or its slot falls
    /// within the train under way.
    pub(crate) fn may_send(&self, now: Instant, due: Instant) -> bool {
        due <= now || due <= self.train_end
    }

    /// A packet left at `now`, using `slots` periods of the schedule (0 for the first of a
    /// probe pair, whose partner follows at once; 2 for that partner), on a path whose
    /// smoothed RTT is `rtt` (zero for a peer that takes only short trains), `earn`: whether
    /// the train may be as long as it has earned (see the module docs). A packet that left
    /// on time opens a train.
    pub(crate) fn on_sent(
        &mut self,
        now: Instant,
        period: Duration,
        slots: u32,
        rtt: Duration,
        earn: bool,
    ) {
        if self.earliest() <= now {
            let earned = if rtt.is_zero() || !earn {
                TRAIN_MIN_PKTS
            } else {
                self.earned.at(now)
            };
            self.train_end = now + train_span(period, rtt, earned);
        }
        if slots == 0 {
            return;
        }
        // Called for every packet: the step is multiplied out once.
        let step = period * slots;
        let schedule = self.schedule.max(now.saturating_sub(MAX_DEBT));
        self.schedule = schedule + step;
        let catch_up = self.catch_up.max(now.saturating_sub(BURST));
        self.catch_up = catch_up + step / CATCH_UP_SPEED;
    }

    /// Nothing could be sent at `now` although the pacer allowed it: forgive the debt.
    pub(crate) fn on_idle(&mut self, now: Instant) {
        self.schedule = self.schedule.max(now);
        self.catch_up = self.catch_up.max(now);
    }
}

/// How much of the schedule after a packet that left on time may go with it: about 1 ms of
/// data ([`TRAIN`]) or [`TRAIN_GSO_MIN_PKTS`] packets, whichever is longer (at most
/// [`TRAIN_MAX_PKTS`]), but no more than a quarter of the RTT, so
/// that on a short path (whose queue may hold only a BDP or so) a train stays a fraction of
/// what is in flight and of a probe phase, unless `earned` packets (what loss-free trains
/// have shown the path takes) are longer, and always [`TRAIN_MIN_PKTS`] if they fit in 1 ms.
fn train_span(period: Duration, rtt: Duration, earned: u32) -> Duration {
    let earned = if earned > TRAIN_MIN_PKTS {
        (period * (earned - 1)).min(MAX_EARNED_SPAN)
    } else {
        Duration::ZERO
    };
    let quarter = rtt / TRAIN_RTT_DIVISOR;
    let path = quarter.max(period * (TRAIN_MIN_PKTS - 1));
    let train = TRAIN.max((period * (TRAIN_GSO_MIN_PKTS - 1)).min(quarter));
    path.min(train)
        .max(earned)
        .min(period * (TRAIN_MAX_PKTS - 1))
}

/// Packets an earned train of `period` spacing carries at most ([`MAX_EARNED_SPAN`],
/// [`TRAIN_MAX_PKTS`]).
fn span_pkts(period: Duration) -> u32 {
    let slots = MAX_EARNED_SPAN.as_nanos() / period.as_nanos().max(1);
    u32::try_from(slots.saturating_add(1))
        .unwrap_or(u32::MAX)
        .min(TRAIN_MAX_PKTS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path long enough not to shorten trains.
    const LONG_RTT: Duration = Duration::from_millis(10);

    /// Drive a pacer like a runtime that wakes every `tick` and is sometimes stalled; returns
    /// the send times.
    fn run(period: Duration, tick: Duration, stall_every: u32, stall: Duration) -> Vec<Instant> {
        let mut pacer = Pacer::new(Instant::ZERO);
        let mut now = Instant::ZERO;
        let end = Instant::from_micros(1_000_000);
        let mut sent = Vec::new();
        let mut wake = 0u32;
        while now < end {
            while pacer.earliest() <= now {
                pacer.on_sent(now, period, 1, LONG_RTT, false);
                sent.push(now);
            }
            wake += 1;
            now += if stall_every > 0 && wake % stall_every == 0 {
                stall
            } else {
                tick
            };
        }
        sent
    }

    #[test]
    fn stalls_shorter_than_the_debt_limit_do_not_lower_the_rate() {
        // 1 Gbit/s of 1500-byte packets: one every 12 µs. Woken every 200 µs, stalled for
        // 3 ms every 50 wake-ups (30 times a second).
        let period = Duration::from_micros(12);
        let sent = run(
            period,
            Duration::from_micros(200),
            50,
            Duration::from_millis(3),
        );
        let expected = 1_000_000.0 / 12.0;
        let error = (sent.len() as f64 - expected) / expected;
        assert!(error.abs() < 0.01, "rate off by {:.2}%", error * 100.0);
    }

    #[test]
    fn catching_up_is_at_most_twice_the_rate_after_a_short_burst() {
        let period = Duration::from_micros(12);
        let sent = run(
            period,
            Duration::from_micros(200),
            50,
            Duration::from_millis(3),
        );
        // Any 1 ms window holds at most 2 × (1 ms / period) plus the two 500 µs bursts.
        let per_ms_limit = (2 * 1000 / 12 + 2 * 500 / 12 + 2) as usize;
        let mut start = 0;
        for (i, &t) in sent.iter().enumerate() {
            while t - sent[start] >= Duration::from_millis(1) {
                start += 1;
            }
            assert!(
                i - start < per_ms_limit,
                "{} packets within 1 ms",
                i - start + 1
            );
        }
    }

    /// Packets a fresh pacer lets go at one instant (one train).
    fn train_len(period: Duration, rtt: Duration) -> u32 {
        let mut pacer = Pacer::new(Instant::ZERO);
        let mut train = 0;
        while pacer.may_send(Instant::ZERO, pacer.earliest()) {
            pacer.on_sent(Instant::ZERO, period, 1, rtt, false);
            train += 1;
        }
        train
    }

    #[test]
    fn a_packet_on_time_opens_a_train() {
        // 45 Mbit/s of 1500-byte packets: one every 267 µs; a quarter of the 10 ms RTT holds
        // 10 slots (0, 267, ..., 2403 µs).
        let period = Duration::from_micros(267);
        let mut pacer = Pacer::new(Instant::ZERO);
        let now = Instant::ZERO;
        let mut train = 0;
        while pacer.may_send(now, pacer.earliest()) {
            pacer.on_sent(now, period, 1, LONG_RTT, false);
            train += 1;
        }
        assert_eq!(train, 10);
        // The next wake-up is the slot after the train, which opens the next one.
        let next = pacer.earliest();
        assert_eq!(next, Instant::ZERO + period * 10);
        assert!(!pacer.may_send(next.saturating_sub(Duration::from_micros(1)), next));
        assert!(pacer.may_send(next, next));
        // At 1 Mbit/s (12 ms a packet) the span holds no second slot.
        let mut slow = Pacer::new(Instant::ZERO);
        slow.on_sent(now, Duration::from_millis(12), 1, LONG_RTT, false);
        assert!(!slow.may_send(now, slow.earliest()));
    }

    #[test]
    fn slow_trains_carry_sixteen_packets_where_the_rtt_allows() {
        // 45 Mbit/s: 1 ms is 4 slots, but on a 20 ms path a train carries the GSO minimum
        // (its 16 slots span 4 ms, within the 5 ms quarter RTT)…
        let period = Duration::from_micros(267);
        assert_eq!(
            train_len(period, Duration::from_millis(20)),
            TRAIN_GSO_MIN_PKTS
        );
        // …an 8 ms path a quarter RTT (2 ms: 8 slots), a 100 µs path the minimum.
        assert_eq!(train_len(period, Duration::from_millis(8)), 8);
        assert_eq!(
            train_len(period, Duration::from_micros(100)),
            TRAIN_MIN_PKTS
        );
        // Without an RTT (a peer that takes no GSO trains), the minimum too.
        assert_eq!(train_len(period, Duration::ZERO), TRAIN_MIN_PKTS);
    }

    #[test]
    fn trains_carry_a_millisecond_or_a_quarter_rtt() {
        // 200 Mbit/s (60 µs a packet): 1 ms is 17 slots on a 10 ms path, but a 100 µs
        // path gets the minimum train.
        let period = Duration::from_micros(60);
        assert_eq!(train_len(period, LONG_RTT), 17);
        assert_eq!(train_len(period, Duration::from_millis(2)), 9);
        assert_eq!(
            train_len(period, Duration::from_micros(100)),
            TRAIN_MIN_PKTS
        );
        // 10 Gbit/s (1.2 µs a packet): one GSO send at most.
        assert_eq!(
            train_len(Duration::from_nanos(1_200), LONG_RTT),
            TRAIN_MAX_PKTS
        );
    }

    /// Packets a pacer lets go at `now` (one train), from a slot due then.
    fn train_at(pacer: &mut Pacer, now: Instant, period: Duration, rtt: Duration) -> u32 {
        pacer.on_idle(now);
        let mut train = 0;
        while pacer.may_send(now, pacer.earliest()) {
            pacer.on_sent(now, period, 1, rtt, true);
            train += 1;
        }
        train
    }

    #[test]
    fn loss_free_time_earns_longer_trains_and_a_loss_halves_them() {
        // 45 Mbit/s on a 100 µs path: the quarter RTT allows the minimum train.
        let (period, rtt) = (Duration::from_micros(267), Duration::from_micros(100));
        let at = |ms: u64| Instant::from_micros(ms * 1000);
        let mut pacer = Pacer::new(Instant::ZERO);
        assert_eq!(train_at(&mut pacer, at(0), period, rtt), TRAIN_MIN_PKTS);
        // One packet more per 10 ms without a loss, up to 5 ms of the schedule (19 slots).
        assert_eq!(train_at(&mut pacer, at(40), period, rtt), 8);
        assert_eq!(train_at(&mut pacer, at(200), period, rtt), 19);
        assert_eq!(train_at(&mut pacer, at(2_000), period, rtt), 19);
        // A loss halves them; more losses within 10 ms only restart the clock…
        pacer.on_loss(at(2_000), period);
        pacer.on_loss(at(2_005), period);
        assert_eq!(train_at(&mut pacer, at(2_006), period, rtt), 9);
        assert_eq!(train_at(&mut pacer, at(2_025), period, rtt), 11);
        // …and later ones halve again, never below the minimum.
        pacer.on_loss(at(2_025), period);
        assert_eq!(train_at(&mut pacer, at(2_030), period, rtt), 5);
        for ms in [2_040, 2_060, 2_080] {
            pacer.on_loss(at(ms), period);
        }
        assert_eq!(train_at(&mut pacer, at(2_080), period, rtt), TRAIN_MIN_PKTS);
        // Each halving below the top doubled the time a packet more takes: 160 ms now.
        assert_eq!(train_at(&mut pacer, at(2_400), period, rtt), 6);
        // At 1 Gbit/s (12 µs a packet) 600 ms earn a whole GSO send.
        let mut fast = Pacer::new(Instant::ZERO);
        let fast_period = Duration::from_micros(12);
        assert_eq!(train_at(&mut fast, at(0), fast_period, rtt), TRAIN_MIN_PKTS);
        assert_eq!(
            train_at(&mut fast, at(700), fast_period, rtt),
            TRAIN_MAX_PKTS
        );
        // A peer that takes no GSO trains (zero RTT) never earns them.
        let mut plain = Pacer::new(Instant::ZERO);
        assert_eq!(
            train_at(&mut plain, at(1_000), period, Duration::ZERO),
            TRAIN_MIN_PKTS
        );
    }

    #[test]
    fn idle_time_earns_no_burst() {
        let mut pacer = Pacer::new(Instant::ZERO);
        let period = Duration::from_micros(100);
        pacer.on_sent(Instant::ZERO, period, 1, LONG_RTT, false);
        let later = Instant::from_micros(1_000_000);
        pacer.on_idle(later);
        assert_eq!(pacer.earliest(), later);
        pacer.on_sent(later, period, 1, LONG_RTT, false);
        assert_eq!(pacer.earliest(), later + period);
    }

    #[test]
    fn without_stalls_packets_are_exactly_one_period_apart() {
        let period = Duration::from_micros(100);
        let sent = run(period, Duration::from_micros(1), 0, Duration::ZERO);
        assert!(sent.windows(2).all(|w| w[1] - w[0] == period));
    }

    #[test]
    fn probe_pair_partner_takes_two_slots() {
        let mut pacer = Pacer::new(Instant::ZERO);
        let period = Duration::from_micros(10);
        pacer.on_sent(Instant::ZERO, period, 0, LONG_RTT, false);
        assert_eq!(pacer.earliest(), Instant::ZERO);
        pacer.on_sent(Instant::ZERO, period, 2, LONG_RTT, false);
        assert_eq!(pacer.earliest(), Instant::from_micros(20));
    }
}
