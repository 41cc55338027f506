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
//! **Trains.** A packet that leaves on time opens a train: the slots of the next
//! [`TRAIN_PKTS`] − 1 packets, if they fall within [`TRAIN`], may go with it, and the next
//! wake-up is when the slot after the train comes due. The average rate is the controller's;
//! what changes is the grain at low rates: at 45 Mbit/s (a packet every 260 µs) each packet
//! cost a wake-up and a send at the sender and a wake-up and a receive at the receiver, where
//! a train is one wake-up, one `sendmmsg` (one GSO send) and one GRO batch. Kernel TCP paces
//! the same way (TSO autosizing: about 1 ms of data per burst). From about 200 Mbit/s up, the
//! runtime's 200 µs minimum sleep batches more than a train anyway. Trains stay short: the
//! model controller samples delivery per send instant, and on a sub-millisecond path
//! 16-packet trains held it at 37% of 1 Gbit/s.

use std::time::Duration;

use crate::time::Instant;

/// How far behind its schedule a sender may fall and still make up for it.
pub(crate) const MAX_DEBT: Duration = Duration::from_millis(5);
/// The longest span of sending a late runtime may compress into one instant, per clock.
pub(crate) const BURST: Duration = Duration::from_micros(500);
/// Owed packets leave at most this many times faster than the period.
const CATCH_UP_SPEED: u32 = 2;
/// The longest stretch of the schedule a train may carry…
pub(crate) const TRAIN: Duration = Duration::from_millis(1);
/// …and the most packets in it (see the module doc).
pub(crate) const TRAIN_PKTS: u32 = 4;

/// The pacing state of one connection.
#[derive(Debug, Clone)]
pub(crate) struct Pacer {
    schedule: Instant,
    catch_up: Instant,
    /// Slots up to this time belong to the train under way.
    train_end: Instant,
}

impl Pacer {
    /// A pacer whose first packet may leave at `now`.
    pub(crate) fn new(now: Instant) -> Self {
        Self {
            schedule: now,
            catch_up: now,
            train_end: now,
        }
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
    /// probe pair, whose partner follows at once; 2 for that partner). A packet that left
    /// on time opens a train.
    pub(crate) fn on_sent(&mut self, now: Instant, period: Duration, slots: u32) {
        if self.earliest() <= now {
            self.train_end = now + TRAIN.min(period * (TRAIN_PKTS - 1));
        }
        if slots == 0 {
            return;
        }
        let schedule = self.schedule.max(now.saturating_sub(MAX_DEBT));
        self.schedule = schedule + period * slots;
        let catch_up = self.catch_up.max(now.saturating_sub(BURST));
        self.catch_up = catch_up + period * slots / CATCH_UP_SPEED;
    }

    /// Nothing could be sent at `now` although the pacer allowed it: forgive the debt.
    pub(crate) fn on_idle(&mut self, now: Instant) {
        self.schedule = self.schedule.max(now);
        self.catch_up = self.catch_up.max(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                pacer.on_sent(now, period, 1);
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

    #[test]
    fn a_packet_on_time_opens_a_short_train() {
        // 45 Mbit/s of 1500-byte packets: one every 267 µs; a train is 4 slots.
        let period = Duration::from_micros(267);
        let mut pacer = Pacer::new(Instant::ZERO);
        let now = Instant::ZERO;
        let mut train = 0;
        while pacer.may_send(now, pacer.earliest()) {
            pacer.on_sent(now, period, 1);
            train += 1;
        }
        assert_eq!(train, TRAIN_PKTS);
        // The next wake-up is the slot after the train, which opens the next one.
        let next = pacer.earliest();
        assert_eq!(next, Instant::ZERO + period * TRAIN_PKTS);
        assert!(!pacer.may_send(next.saturating_sub(Duration::from_micros(1)), next));
        assert!(pacer.may_send(next, next));
        // At 5 Mbit/s (2.4 ms a packet) the 1 ms span holds no second slot.
        let mut slow = Pacer::new(Instant::ZERO);
        slow.on_sent(now, Duration::from_micros(2400), 1);
        assert!(!slow.may_send(now, slow.earliest()));
    }

    #[test]
    fn idle_time_earns_no_burst() {
        let mut pacer = Pacer::new(Instant::ZERO);
        let period = Duration::from_micros(100);
        pacer.on_sent(Instant::ZERO, period, 1);
        let later = Instant::from_micros(1_000_000);
        pacer.on_idle(later);
        assert_eq!(pacer.earliest(), later);
        pacer.on_sent(later, period, 1);
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
        pacer.on_sent(Instant::ZERO, period, 0);
        assert_eq!(pacer.earliest(), Instant::ZERO);
        pacer.on_sent(Instant::ZERO, period, 2);
        assert_eq!(pacer.earliest(), Instant::from_micros(20));
    }
}
