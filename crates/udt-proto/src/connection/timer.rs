//! Timer-driven work: handshake resends and the connect deadline, and UDT's EXP timer
//! (retransmission timeout, keep-alive, and the broken-connection rule, 4.11 §4.5), plus the
//! ICMP port-unreachable hint that can end a connection sooner than that rule.
//!
//! # The unreachable hint (a deviation from 4.11)
//! 4.11 notices a dead peer only by EXP: 16 silent rounds and more than 5 s, about 46 s of
//! silence. When the peer's process dies, its kernel usually says so at once: our next
//! datagram draws an ICMP port unreachable. The runtime passes that on as
//! [`Connection::handle_unreachable`]. An ICMP message can be forged or stale (an old
//! message about a port the peer has since reopened), so it is only a hint:
//! - after a hint, the connection breaks with [`ConnectionError::PeerUnreachable`] if *nothing
//!   at all* arrives from the peer within the grace (the first hint starts it; later hints do
//!   not extend or restart it);
//! - any packet from the peer clears the hint: a peer that still talks is never cut off;
//! - the grace is max(`UNREACHABLE_GRACE`, 2 × the EXP interval of a connection that has just
//!   heard from its peer): 1 s on short paths. A live peer sends something at least every
//!   EXP interval even when idle (ACKs while data flows, keep-alives when not), so twice that
//!   interval (which includes RTT + 4·RTTVar) always hears from it, and a 1 s floor keeps a
//!   burst of scheduling delay on a loaded host from looking like silence.
//! - a *caller* still handshaking takes a hint the same way, and fails with
//!   [`ConnectionError::NoListener`] (io kind `ConnectionRefused`, as TCP's RST) if no answer
//!   comes within the grace: a connect to a port where nothing listens (a typo, a server not
//!   started) ends in ~1 s instead of the whole connect timeout. The grace is the same
//!   (1 s unless a controller's RTO says more: no RTT is measured yet) and spans four request
//!   resends (every 250 ms): a listener that starts within ~750 ms − one RTT of the hint
//!   still gets a request and answers in time, and any answer clears the hint. So a forged
//!   or stale ICMP cannot fail a connect whose listener answers, on any path with a round
//!   trip under 1 s. The connect timeout still ends the attempt if it comes sooner.
//! - a rendezvous side still handshaking ignores hints (its peer may simply not have bound
//!   its port yet; the connect timeout handles a dead address), and without hints 4.11's
//!   rules apply unchanged.

use std::time::Duration;

use super::{Connection, ConnectionError, Role, State};
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
/// Shortest silence after an ICMP port unreachable that breaks the connection (see the
/// module documentation for the full grace).
pub(crate) const UNREACHABLE_GRACE: Duration = Duration::from_secs(1);

impl Connection {
    pub(super) fn handshake_timer(&mut self, now: Instant) {
        let Some(connector) = self.connector.as_mut() else {
            return;
        };
        if self.unreachable_deadline.is_some_and(|u| u <= now) {
            self.finish_close(Some(ConnectionError::NoListener));
            return;
        }
        if connector.timed_out(now) {
            self.finish_close(Some(ConnectionError::ConnectTimeout));
            return;
        }
        if connector.take_resend(now) {
            let request = *connector.current_request().1;
            self.queue_control(ControlBody::Handshake(request));
        }
        self.arm_handshake();
    }

    /// Arm the handshake timer for the next resend or the connect deadline, or the
    /// unreachable hint's deadline when that is sooner.
    fn arm_handshake(&mut self) {
        if let Some(connector) = &self.connector {
            let next = connector.next_timeout();
            let at = self.unreachable_deadline.map_or(next, |u| u.min(next));
            self.timers.set(Timer::Handshake, at);
        }
    }

    /// The ICMP says the peer's port is closed (the runtime saw a port unreachable for
    /// [`Connection::remote`]). A hint only: the connection breaks with
    /// [`ConnectionError::PeerUnreachable`] (a caller still connecting fails with
    /// [`ConnectionError::NoListener`]) if nothing arrives from the peer during the grace
    /// that starts now; any packet from the peer cancels it (module documentation of
    /// `connection/timer.rs`). Ignored by a rendezvous side still handshaking and after the
    /// end.
    pub fn handle_unreachable(&mut self, now: Instant) {
        let applies = match self.state {
            State::Connected | State::Closing => true,
            State::Connecting => self.role == Role::Caller,
            State::Closed => false,
        };
        if !applies || self.unreachable_deadline.is_some() {
            return;
        }
        let deadline = now + self.unreachable_grace();
        tracing::debug!(peer = %self.remote, "ICMP port unreachable: peer must speak within the grace");
        self.unreachable_deadline = Some(deadline);
        if self.state == State::Connecting {
            self.arm_handshake();
        } else {
            self.arm_exp();
        }
    }

    /// How long the peer may stay silent after a port unreachable.
    fn unreachable_grace(&self) -> Duration {
        (self.exp_interval_for(1) * 2).max(UNREACHABLE_GRACE)
    }

    /// The EXP interval: the controller's RTO if it sets one, else 4.11's
    /// max(N·(RTT + 4·RTTVar) + SYN, N·300 ms).
    fn exp_interval(&self) -> Duration {
        self.exp_interval_for(self.exp_count)
    }

    fn exp_interval_for(&self, n: u32) -> Duration {
        if let Some(rto) = self.cc.rto() {
            return rto;
        }
        (self.rtt.rto_base() * n + SYN).max(EXP_FLOOR * n)
    }

    /// Arm the EXP timer, which also serves the unreachable hint's deadline when that is
    /// sooner.
    pub(super) fn arm_exp(&mut self) {
        if matches!(self.state, State::Connected | State::Closing) {
            let exp = self.last_response + self.exp_interval();
            let at = self.unreachable_deadline.map_or(exp, |u| u.min(exp));
            self.timers.set(Timer::Exp, at);
        }
    }

    pub(super) fn exp_timer(&mut self, now: Instant) {
        if self.unreachable_deadline.is_some_and(|u| u <= now) {
            self.finish_close(Some(ConnectionError::PeerUnreachable));
            return;
        }
        self.relax_buffers(now);
        if now < self.last_response + self.exp_interval() {
            self.arm_exp();
            return;
        }
        self.stats.timeouts += 1;
        if self.exp_count > EXP_BROKEN_COUNT && now - self.last_response > EXP_BROKEN_SILENCE {
            self.finish_close(Some(ConnectionError::PeerLost));
            return;
        }
        // A keep-alive also when data waits but none is in flight (the peer's window is shut
        // by a reader that does not read): 4.11 never advertises less than 2 packets, so its
        // sender always has a packet to resend; ours would fall silent and the reader would
        // declare it lost after ~46 s (and a port-unreachable hint after its grace).
        let resending = !self.snd.buffer.is_empty() && self.retransmit_on_timeout(now);
        if !resending {
            self.queue_control(ControlBody::KeepAlive);
            self.stats.keepalives_sent += 1;
        }
        self.exp_count += 1;
        self.last_response = now;
        self.arm_exp();
    }

    /// No feedback for a whole EXP interval: assume everything unacknowledged is lost (if no
    /// loss is already queued) and tell the controller. Returns whether anything is queued
    /// for resending (false: nothing is in flight).
    fn retransmit_on_timeout(&mut self, now: Instant) -> bool {
        let first = self.snd.last_ack;
        let last = self.snd.curr_seq;
        if first <= last && self.snd.loss.is_empty() {
            let added = self.snd.loss.insert(first, last);
            self.stats.send_loss += u64::from(added);
        }
        let resending = !self.snd.loss.is_empty();
        self.snd.pacer.on_loss(now, self.send_period);
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
        resending
    }
}
