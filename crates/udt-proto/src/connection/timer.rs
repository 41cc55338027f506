//! Timer-driven work: handshake resends and the connect deadline, and UDT's EXP timer
//! (retransmission timeout, keep-alive, and the broken-connection rule, 4.11 §4.5).

use std::time::Duration;

use super::{Connection, ConnectionError};
use crate::congestion::{TimeoutInfo, SYN};
use crate::time::Instant;
use crate::timers::Timer;
use crate::wire::ControlBody;

/// EXP never fires sooner than this multiple of its count (4.11: N · 300 ms).
const EXP_FLOOR: Duration = Duration::from_millis(300);
/// A connection is broken after this many silent EXP rounds…
const EXP_BROKEN_COUNT: u32 = 16;
/// …once the current round is longer than this.
const EXP_BROKEN_SILENCE: Duration = Duration::from_secs(5);

impl Connection {
    pub(super) fn handshake_timer(&mut self, now: Instant) {
        let Some(connector) = self.connector.as_mut() else {
            return;
        };
        if connector.timed_out(now) {
            self.finish_close(Some(ConnectionError::ConnectTimeout));
            return;
        }
        if connector.take_resend(now) {
            let request = *connector.current_request().1;
            self.control_out.push_back(ControlBody::Handshake(request));
        }
        self.timers.set(Timer::Handshake, connector.next_timeout());
    }

    /// The EXP interval: the controller's RTO if it sets one, else 4.11's
    /// max(N·(RTT + 4·RTTVar) + SYN, N·300 ms).
    fn exp_interval(&self) -> Duration {
        if let Some(rto) = self.cc.rto() {
            return rto;
        }
        let n = self.exp_count;
        (self.rtt.rto_base() * n + SYN).max(EXP_FLOOR * n)
    }

    pub(super) fn arm_exp(&mut self) {
        if matches!(self.state, super::State::Connected | super::State::Closing) {
            self.timers
                .set(Timer::Exp, self.last_response + self.exp_interval());
        }
    }

    pub(super) fn exp_timer(&mut self, now: Instant) {
        if now < self.last_response + self.exp_interval() {
            self.arm_exp();
            return;
        }
        self.stats.timeouts += 1;
        if self.exp_count > EXP_BROKEN_COUNT && now - self.last_response > EXP_BROKEN_SILENCE {
            self.finish_close(Some(ConnectionError::PeerLost));
            return;
        }
        if self.snd.buffer.is_empty() {
            self.control_out.push_back(ControlBody::KeepAlive);
            self.stats.keepalives_sent += 1;
        } else {
            self.retransmit_on_timeout(now);
        }
        self.exp_count += 1;
        self.last_response = now;
        self.arm_exp();
    }

    /// No feedback for a whole EXP interval: assume everything unacknowledged is lost (if no
    /// loss is already queued) and tell the controller.
    fn retransmit_on_timeout(&mut self, now: Instant) {
        let first = self.snd.last_ack;
        let last = self.snd.curr_seq;
        if first <= last && self.snd.loss.is_empty() {
            let added = self.snd.loss.insert(first, last);
            self.stats.send_loss += u64::from(added);
        }
        let info = TimeoutInfo {
            rtt: self.rtt.rtt(),
            recv_rate_pkts: self.snd.peer_rates.recv_rate_pkts,
            largest_sent: self.snd.curr_seq,
        };
        // As for NAKs: a timeout before the first ACK says nothing about congestion.
        if self.stats.acks_received > 0 {
            self.cc.on_timeout(now, &info);
            self.refresh_cc();
        }
    }
}
