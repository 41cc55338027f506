//! Buffers that size themselves: UDT_SNDBUF, UDT_RCVBUF and UDT_FC left at their defaults
//! grow to what the path needs and go back to 4.11's sizes when the connection idles.
//!
//! 4.11's fixed 8192-packet buffers (12 MB) cap a window at about 480 Mbit/s on a 200 ms
//! path, and a lossy path needs more: while a hole is repaired the cumulative ACK stands
//! still and the sender keeps sending, so two bandwidth-delay products or more are
//! unacknowledged at once. Users should not have to know that. The rules follow Linux TCP's autotuning:
//!
//! * **Receiver** (at each full ACK, at most once per SYN): the buffer, and with it the flow
//!   window the ACKs advertise, grows to [`RECV_SPANS`] times the arrival speed times
//!   RTT + SYN ([`LOST_REPAIR_SPANS`] while repairs are often lost), the window that keeps
//!   a sender at that speed going through a repair whose retransmission is lost too, while
//!   the application keeps up: it read since the last full ACK and less than a quarter of
//!   the buffer waits to be read (a reader that falls behind gets no more memory to fall
//!   behind into). The handshake advertises the most it may grow to, so a controller's
//!   window cap ([`ControllerInit::max_window_pkts`]) does not pin the sender at 4.11's
//!   size; the ACKs say what is free now.
//! * **Sender** (at each ACK): the buffer grows to twice the window in use,
//!   min(flow window, congestion window), so the application can queue a window's worth
//!   beyond what is in flight.
//! * **Idle** (at each EXP check): an empty send buffer gives back the chunks it keeps for
//!   reuse; it, or an empty receive buffer that has had no data for [`IDLE`], returns to
//!   its configured size; the receiver then advertises
//!   the smaller window at once so its sender does not overrun it.
//!
//! Growth stops at [`ConnectionConfig::buffer_autotune_limit`]. Memory follows the data, not
//! the capacity (both buffers allocate as packets come and recycle what they free), so a
//! larger capacity costs nothing until it is used. A libudt peer sees only a larger window.
//!
//! [`ControllerInit::max_window_pkts`]: crate::congestion::ControllerInit::max_window_pkts
//! [`ConnectionConfig::buffer_autotune_limit`]: crate::config::ConnectionConfig::buffer_autotune_limit

use std::time::Duration;

use super::{Connection, Event};
use crate::congestion::SYN;
use crate::time::Instant;

/// How long a receive buffer must have been empty and without data before it shrinks.
pub(super) const IDLE: Duration = Duration::from_secs(1);

/// How many spans of RTT + SYN at the arrival speed a receive buffer grows to: one for the
/// data in flight, one for the data that arrives behind a hole while it is repaired, and one
/// for a hole whose retransmission is lost too, which holds the cumulative ACK for another
/// round trip. At 1% random loss that happens every few round trips; with two spans
/// `model` was held by its flow window at 1 Gbit/s × 100 ms: 74.2% of the link against
/// 91.8% with buffers tuned by hand, 89.5% with three (simulator, plain peers, medians of
/// three seeds; `default_buffers_hold_a_lossy_long_path`).
const RECV_SPANS: f64 = 3.0;

/// Spans while repairs are often lost ([`LostRepairs`]): a hole whose retransmission is
/// lost too holds the cumulative ACK, as the sender sees it, for about three round trips
/// (the loss reported, reported again after RTT + 2·RTTVar + SYN/2, the repair
/// acknowledged) plus the timers' slack, and three spans were just short. A `model` flow
/// between our peers at 1 Gbit/s × 200 ms with 1% loss ran into its flow window every
/// second or so: 824 Mbit/s with three spans, 921 with four (simulator, medians of three
/// seeds; `between_our_peers_buffers_hold_a_lossy_200_ms_path` in `tests/autotune.rs`).
/// Not for every flow: with four spans throughout, or from the first lost repair on, UDT's
/// CUBIC window beside the LEDBAT scavenger lost more to a full queue and tests in
/// `tests/cc_ledbat.rs` failed. Where losses are congestion, a repair is seldom lost too.
const LOST_REPAIR_SPANS: f64 = 4.0;

/// Lost repairs within one [`LOST_REPAIR_PERIOD`] that put [`LOST_REPAIR_SPANS`] in force
/// for the next period.
const LOST_REPAIRS_FREQUENT: u32 = 16;

/// The period over which lost repairs are counted, and for which frequent ones count.
const LOST_REPAIR_PERIOD: Duration = Duration::from_secs(5);

/// Counts lost repairs (the periodic NAK reporting again the range the ACK waits for) over
/// periods of [`LOST_REPAIR_PERIOD`].
#[derive(Debug, Default)]
pub(super) struct LostRepairs {
    period_start: Option<Instant>,
    in_period: u32,
    frequent_until: Option<Instant>,
}

impl LostRepairs {
    pub(super) fn note(&mut self, now: Instant) {
        match self.period_start {
            Some(t) if now - t < LOST_REPAIR_PERIOD => self.in_period += 1,
            _ => (self.period_start, self.in_period) = (Some(now), 1),
        }
        if self.in_period >= LOST_REPAIRS_FREQUENT {
            self.frequent_until = Some(now + LOST_REPAIR_PERIOD);
        }
    }

    fn frequent(&self, now: Instant) -> bool {
        self.frequent_until.is_some_and(|t| now < t)
    }
}

impl Connection {
    /// Sender side, after the controller's outputs were refreshed by an ACK.
    pub(super) fn autotune_send(&mut self) {
        let limit = self.config.send_limit_pkts();
        let capacity = self.snd.buffer.capacity_pkts();
        if capacity >= limit {
            return;
        }
        let window = self.snd.flow_window.min(self.cwnd as u32);
        let target = window.saturating_mul(2).min(limit);
        if target > capacity {
            self.snd.buffer.set_capacity_pkts(target);
            self.push_event(Event::Writable);
        }
    }

    /// Receiver side, just before a full ACK reports `speed_pkts` (the arrival speed, packets
    /// per second) and the free buffer. Only while data flows: the speed estimate outlives
    /// the transfer, and the window update after an idle shrink must not regrow the buffer.
    pub(super) fn autotune_recv(&mut self, now: Instant, speed_pkts: u32) {
        let limit = self.config.advertised_window();
        let capacity = self.rcv.buffer.capacity_pkts();
        let flowing = self.rcv.last_data_at.is_some_and(|t| now - t < IDLE);
        let delivered = self.stats.bytes_delivered;
        let reading = delivered > std::mem::replace(&mut self.rcv.read_mark, delivered);
        if capacity >= limit || speed_pkts == 0 || !flowing || !reading {
            return;
        }
        let waiting = capacity.saturating_sub(self.rcv.buffer.available_pkts() + 1);
        if waiting > capacity / 4 {
            return;
        }
        let horizon = (self.rtt.rtt() + SYN).as_secs_f64();
        let target = self.recv_spans(now) * f64::from(speed_pkts) * horizon;
        if target > f64::from(capacity) {
            // `as` saturates; the limit bounds it anyway.
            self.rcv
                .buffer
                .set_capacity_pkts((target as u32).min(limit));
        }
    }

    /// Spans of RTT + SYN the receive buffer grows to now: [`LOST_REPAIR_SPANS`] while
    /// repairs are lost often, else [`RECV_SPANS`].
    fn recv_spans(&self, now: Instant) -> f64 {
        if self.rcv.lost_repairs.frequent(now) {
            LOST_REPAIR_SPANS
        } else {
            RECV_SPANS
        }
    }

    /// At each EXP check: an idle side returns to its configured size.
    pub(super) fn relax_buffers(&mut self, now: Instant) {
        let send_base = self.config.send_buffer_pkts;
        if self.snd.buffer.is_empty() {
            self.snd.buffer.release_spare();
            if self.snd.buffer.capacity_pkts() > send_base {
                self.snd.buffer.set_capacity_pkts(send_base);
            }
        }
        let recv_base = self
            .config
            .recv_buffer_pkts
            .min(self.config.flow_limit_pkts());
        let quiet = self.rcv.last_data_at.is_none_or(|t| now - t >= IDLE);
        if quiet && self.rcv.buffer.is_empty() && self.rcv.buffer.capacity_pkts() > recv_base {
            self.rcv.buffer.set_capacity_pkts(recv_base);
            // Tell the sender now: its flow window still says what the larger buffer had free.
            self.schedule_window_update();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_repairs_are_frequent_for_a_period_after_sixteen_in_one() {
        let mut repairs = LostRepairs::default();
        let at = |ms: u64| Instant::from_micros(ms * 1_000);
        for i in 0..15 {
            repairs.note(at(100 * i));
        }
        assert!(!repairs.frequent(at(1_500)), "15 in a period");
        repairs.note(at(1_500));
        assert!(repairs.frequent(at(1_500)));
        assert!(repairs.frequent(at(6_499)));
        assert!(!repairs.frequent(at(6_500)), "a quiet period later");
        // Counting starts afresh in a new period: 15 after the first period's end are few.
        let mut repairs = LostRepairs::default();
        for i in 0..10 {
            repairs.note(at(100 * i));
        }
        for i in 0..15 {
            repairs.note(at(5_000 + 100 * i));
        }
        assert!(!repairs.frequent(at(6_400)));
    }
}
