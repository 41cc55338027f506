//! Sparse ACKs between our peers: a receiver may space its ACKs further apart than UDT's
//! SYN when its peer's sender sizes its windows for it.
//!
//! Every ACK costs both ends a wake-up (the receiver's timer, the sender's read), an ACK2,
//! and a round of system calls; at 45 Mbit/s UDT's 10 ms ACK timer is about half of what
//! both processes spend. An ACK per [`PERIOD_PKTS`] packets at the arrival speed, never
//! less often than UDT's 10 ms and never more than [`MAX_PERIOD`] apart, halves the ACKs
//! at 45 Mbit/s and leaves flows from about 110 Mbit/s on as they were.
//!
//! A window-limited sender stalls when its window does not cover the data between two ACKs,
//! so the receiver spaces its ACKs only for a sender that says its controller sizes its
//! windows for that (`Capabilities::SPARSE_ACK_SENDER`, from
//! [`Controller::sizes_for_sparse_acks`](super::Controller::sizes_for_sparse_acks)), and that
//! sender learns it from the receiver's announcement (`Capabilities::ACK_SPACING`). The
//! sender reckons the period from its estimate of the rate once its start-up is over, the
//! receiver from its arrival speed taken [`RECEIVER_SPEED_MARGIN`] faster once data has
//! flowed for [`SETTLE`], both with [`period_at`]: the receiver's period is then no longer
//! than the one the sender sized for. 4.11 peers, and older peers of ours, keep UDT's ACK
//! every SYN.

use std::time::Duration;

use super::SYN;

/// Packets an ACK period covers at the arrival speed when ACKs are spaced: two full GSO
/// trains.
pub const PERIOD_PKTS: u32 = 128;

/// How long data has flowed before a receiver spaces its ACKs: a `model` sender's start-up
/// times delivery by them, and a receiver's speed reads low while it ramps up. Spaced from
/// the sixteenth RTT of data on, a 200 Mbit/s flow in the simulator moved 9% less in its
/// first second.
pub const SETTLE: Duration = Duration::from_secs(1);

/// How much faster than it reads a receiver takes its flow to be when it reckons the period:
/// its speed may read lower than the sender's estimate (the highest delivery rate of the
/// last rounds), from which the sender reckons the period it sizes its windows for, and a
/// window sized for a shorter period than the receiver's stalls. Reckoned from the speed as
/// read, flows at 200 Mbit/s on the veth pair moved 182-186 Mbit/s against 190-192 at
/// UDT's timing. With the margin a receiver spaces its ACKs only below about 110 Mbit/s
/// (9,600 packets a second), the full two SYNs below about 55.
pub const RECEIVER_SPEED_MARGIN: f64 = 4.0 / 3.0;

/// The longest spaced ACK period: two SYNs. The NAK timer, the expiry timer and UDT's
/// control period keep their 10 ms; only ACKs (and so ACK2s) are spaced.
pub const MAX_PERIOD: Duration = Duration::from_millis(20);

/// The ACK period for a flow of `speed_pkts` packets a second: the time [`PERIOD_PKTS`]
/// take, between [`SYN`] and [`MAX_PERIOD`]; SYN for an unknown (zero or non-finite) speed.
pub fn period_at(speed_pkts: f64) -> Duration {
    if !(speed_pkts.is_finite() && speed_pkts > 0.0) {
        return SYN;
    }
    let secs = (f64::from(PERIOD_PKTS) / speed_pkts).min(MAX_PERIOD.as_secs_f64());
    Duration::from_secs_f64(secs).max(SYN)
}

/// Whether [`period_at`] is longer than [`SYN`] for a flow of `speed_pkts` packets a
/// second (slower than [`PERIOD_PKTS`] per SYN), without building the period.
pub fn spaces_at(speed_pkts: f64) -> bool {
    speed_pkts.is_finite()
        && speed_pkts > 0.0
        && f64::from(PERIOD_PKTS) / speed_pkts > SYN.as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_covers_two_trains_between_syn_and_two_syns() {
        // 45 Mbit/s of 1,456-byte payloads: ~3,860 packets a second, 33 ms for 128: capped.
        assert_eq!(period_at(3_860.0), MAX_PERIOD);
        // 100 Mbit/s: 8,580 a second, 14.9 ms.
        let p = period_at(8_580.0);
        assert!(
            p > Duration::from_millis(14) && p < Duration::from_millis(15),
            "{p:?}"
        );
        // From 12,800 a second (about 150 Mbit/s) on, UDT's own.
        assert_eq!(period_at(12_800.0), SYN);
        assert_eq!(period_at(100_000.0), SYN);
    }

    #[test]
    fn spaces_at_says_whether_the_period_is_longer_than_syn() {
        for speed in [
            0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            1.0,
            3_860.0,
            8_580.0,
            12_799.0,
            12_800.0,
            9_600.0 * RECEIVER_SPEED_MARGIN,
            12_801.0,
            100_000.0,
        ] {
            assert_eq!(spaces_at(speed), period_at(speed) > SYN, "{speed}");
        }
    }

    #[test]
    fn an_unknown_speed_keeps_syn() {
        for speed in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(period_at(speed), SYN, "{speed}");
        }
    }
}
