//! Round-trip samples from the sender's own send times, for controllers that read the queue
//! from the delay (LEDBAT's target, CUBIC's HyStart): a ring of marked packets turns
//! cumulative ACKs into samples, and [`AckHold`] takes off the time an ACK waited at a
//! receiver that stamps its ACKs (ours do; 4.11 does not).
//!
//! Why own send times: the RTT a UDT ACK carries is the receiver's ACK/ACK2 estimate,
//! smoothed at both ends, and lags a change in the queue by a round trip or more (see the
//! `ledbat` module doc). Fixed arrays only: nothing is allocated per packet or per sample,
//! and every call is O(1) amortised (a marker is pushed once and popped once).

use std::time::Duration;

use super::two_bucket::TwoBucketMin;
use crate::seq::SeqNumber;
use crate::time::Instant;

/// Outstanding markers: the densest spacing a user asks ([`Markers::new`], at most
/// [`MAX_MARKERS_PER_RTT`]) for four round trips of flight.
const MARKERS: usize = 256;
/// The most markers placed per round trip.
pub(super) const MAX_MARKERS_PER_RTT: u32 = 64;

/// One marked packet: when it left.
#[derive(Clone, Copy, Debug)]
struct Marker {
    seq: SeqNumber,
    sent_at: Instant,
}

/// Marked packets waiting for the cumulative ACK to pass them.
#[derive(Clone, Debug)]
pub(super) struct Markers {
    ring: [Marker; MARKERS],
    head: usize,
    len: usize,
    last_mark: Option<Instant>,
    per_rtt: u32,
}

impl Markers {
    /// Markers `per_rtt` to a round trip (1 to [`MAX_MARKERS_PER_RTT`]): each sample carries
    /// up to one spacing of error (the ACK's newest packet left up to a spacing after the
    /// newest marker it passed), so denser markers give a steadier filtered delay.
    pub(super) fn new(now: Instant, isn: SeqNumber, per_rtt: u32) -> Self {
        let blank = Marker {
            seq: isn,
            sent_at: now,
        };
        Self {
            ring: [blank; MARKERS],
            head: 0,
            len: 0,
            last_mark: None,
            per_rtt: per_rtt.clamp(1, MAX_MARKERS_PER_RTT),
        }
    }

    /// A new packet `seq` leaves at `now`: mark it if the ring has room and the last marker
    /// is at least one spacing (`rtt` over the markers per round trip) old.
    pub(super) fn on_sent(&mut self, now: Instant, seq: SeqNumber, rtt: Duration) {
        let spacing = rtt / self.per_rtt;
        if self.len == MARKERS || self.last_mark.is_some_and(|t| now - t < spacing) {
            return;
        }
        self.ring[(self.head + self.len) % MARKERS] = Marker { seq, sent_at: now };
        self.len += 1;
        self.last_mark = Some(now);
    }

    /// The cumulative ACK reached `ack` at `now`: pop the markers it passed and return the
    /// newest one's age, the delay sample (the packet that arrived last before the ACK).
    pub(super) fn on_ack(&mut self, now: Instant, ack: SeqNumber) -> Option<Duration> {
        let mut newest = None;
        while self.len > 0 && self.ring[self.head].seq < ack {
            newest = Some(self.ring[self.head].sent_at);
            self.head = (self.head + 1) % MARKERS;
            self.len -= 1;
        }
        newest.map(|sent| now.saturating_duration_since(sent))
    }
}

/// Length of one bucket of [`AckHold`]'s floor: the floor spans one to two of these, so a
/// receiver clock that drifts by 100 ppm moves it by at most 2 ms.
const HOLD_BUCKET: Duration = Duration::from_secs(10);
/// The most [`AckHold`] takes off a sample: the ACK timer's period and the receiver's read
/// hold (up to 4 ms) with room. A receiver clock that steps moves samples by no more.
const MAX_HOLD: Duration = Duration::from_millis(20);

/// How long an ACK waited at the receiver after the newest data packet it reports on
/// arrived, from the receiver stamps our peers put on their ACKs ([`AckInfo::receiver_time`]).
///
/// An ACK's lateness, its arrival on our clock minus the stamp on the receiver's, is the
/// clocks' offset plus the reverse path's delay plus the receiver's wait; its floor over
/// the last 10-20 s is the offset and the reverse path's base delay, so the lateness above
/// the floor is the wait (and any reverse-path queue). A receiver acknowledges a small
/// window only on its 10 ms ACK timer (a prompt ACK needs 16-64 packets), so without this
/// the samples of a slow start read up to 10 ms of queue that is not there.
///
/// [`AckInfo::receiver_time`]: super::AckInfo::receiver_time
#[derive(Clone, Debug)]
pub(super) struct AckHold {
    /// The first lateness seen (µs, wrapping): later ones are kept relative to it.
    anchor: Option<u32>,
    /// The lowest relative lateness over the last one to two [`HOLD_BUCKET`]s.
    floor: TwoBucketMin<i64>,
}

impl AckHold {
    pub(super) fn new(now: Instant) -> Self {
        Self {
            anchor: None,
            floor: TwoBucketMin::new(now),
        }
    }

    /// An ACK stamped `receiver_time` (µs of the receiver's clock) arrived at `now`: how
    /// long it waited, at most [`MAX_HOLD`].
    pub(super) fn on_ack(&mut self, now: Instant, receiver_time: u32) -> Duration {
        // The low 32 bits of our clock in µs, against the receiver's 32-bit stamp.
        let lateness = (now.as_micros() as u32).wrapping_sub(receiver_time);
        let anchor = *self.anchor.get_or_insert(lateness);
        let relative = i64::from(lateness.wrapping_sub(anchor) as i32);
        self.floor.push(now, relative, Some(HOLD_BUCKET));
        let floor = self.floor.min().unwrap_or(relative);
        let wait = u64::try_from(relative - floor).unwrap_or(0);
        Duration::from_micros(wait).min(MAX_HOLD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ACK arriving `lateness_ms` after its stamp, on a receiver clock `offset` µs off ours.
    fn late(hold: &mut AckHold, now: Instant, lateness_ms: u64, offset: u32) -> Duration {
        let stamp = (now.as_micros() as u32)
            .wrapping_sub((lateness_ms * 1000) as u32)
            .wrapping_add(offset);
        hold.on_ack(now, stamp)
    }

    /// Packets every 100 µs for 10 ms, a round trip of 64 ms, and an ACK for the first 25
    /// of them 60 ms after the first left: the sample is the age of the newest marker the
    /// ACK passed.
    fn sample_with(per_rtt: u32) -> Option<Duration> {
        let t0 = Instant::from_micros(1_000_000);
        let isn = SeqNumber::new(100);
        let mut markers = Markers::new(t0, isn, per_rtt);
        for i in 0..100u32 {
            let at = t0 + Duration::from_micros(100 * u64::from(i));
            markers.on_sent(at, isn + i, Duration::from_millis(64));
        }
        markers.on_ack(t0 + Duration::from_millis(60), isn + 25)
    }

    #[test]
    fn denser_markers_take_the_sample_nearer_the_newest_packet() {
        // 16 a round trip: one every 4 ms (packets 0, 40, 80); the newest passed is 0.
        assert_eq!(sample_with(16), Some(Duration::from_millis(60)));
        // 64: one every 1 ms (0, 10, 20, ...); the newest passed is 20, sent at 2 ms.
        assert_eq!(sample_with(64), Some(Duration::from_millis(58)));
        // Beyond the most the ring allows, the densest it allows.
        assert_eq!(sample_with(1_000), sample_with(MAX_MARKERS_PER_RTT));
    }

    #[test]
    fn an_acks_wait_is_its_lateness_above_the_floor() {
        let t0 = Instant::from_micros(5_000_000);
        for offset in [0, 3_000_000_000, u32::MAX] {
            let mut hold = AckHold::new(t0);
            let at = |ms: u64| t0 + Duration::from_millis(ms);
            assert_eq!(late(&mut hold, at(0), 30, offset), Duration::ZERO);
            assert_eq!(
                late(&mut hold, at(10), 37, offset),
                Duration::from_millis(7)
            );
            // A lower lateness is the new floor.
            assert_eq!(late(&mut hold, at(20), 25, offset), Duration::ZERO);
            assert_eq!(
                late(&mut hold, at(30), 30, offset),
                Duration::from_millis(5)
            );
            // Never more than MAX_HOLD (a receiver clock that stepped).
            assert_eq!(late(&mut hold, at(40), 5_025, offset), MAX_HOLD);
        }
    }

    #[test]
    fn the_floor_forgets_lateness_older_than_two_buckets() {
        let t0 = Instant::from_micros(5_000_000);
        let mut hold = AckHold::new(t0);
        assert_eq!(late(&mut hold, t0, 20, 7), Duration::ZERO);
        // The receiver's clock drifted: every ACK now looks 3 ms later.
        // The next bucket still holds the old floor; the one after forgets it.
        let next = t0 + HOLD_BUCKET;
        assert_eq!(late(&mut hold, next, 23, 7), Duration::from_millis(3));
        assert_eq!(late(&mut hold, next + HOLD_BUCKET, 23, 7), Duration::ZERO);
    }
}
