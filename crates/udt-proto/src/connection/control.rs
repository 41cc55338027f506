//! Arriving control packets: handshakes, ACK, ACK2, NAK, drop requests, shutdown and the rest
//! (4.11 §6.3).

use std::time::Duration;

use super::{Connection, ConnectionError, Event, Role, State};
use crate::congestion::{AckInfo, LossInfo};
use crate::handshake::{self, HandshakeFailure, Progress};
use crate::seq::{AckNumber, MsgNumber, SeqNumber};
use crate::time::Instant;
use crate::timers::Timer;
use crate::wire::{
    AckRates, AckRepr, ControlBody, ControlRepr, HandshakeRepr, NakRepr, ReqType, Timestamp,
};

/// A report's header timestamp as [`AckInfo::receiver_time`]: 0 (4.11's) is none.
fn receiver_time(stamp: Timestamp) -> Option<u32> {
    (stamp.0 != 0).then_some(stamp.0)
}

impl Connection {
    pub(super) fn handle_control(&mut self, now: Instant, c: ControlRepr) {
        if self.state == State::Connecting {
            match c.body {
                ControlBody::Handshake(hs) => self.on_handshake_connecting(now, &hs),
                ControlBody::KeepAlive => self.complete_rendezvous_on_traffic(now),
                _ => {}
            }
            return;
        }
        match c.body {
            ControlBody::Handshake(hs) => self.on_handshake_connected(&hs),
            ControlBody::KeepAlive => self.time_handshake_response(now),
            ControlBody::Ack(ack) => self.on_ack(now, &ack, c.timestamp),
            ControlBody::Nak(nak) => self.on_nak(now, &nak, c.timestamp),
            ControlBody::CongestionWarning => self.on_congestion_warning(),
            ControlBody::Shutdown => {
                self.peer_closed = true;
                self.finish_close(Some(ConnectionError::PeerClosed));
            }
            ControlBody::Ack2(number) => self.on_ack2(now, number),
            ControlBody::DropRequest { msg, first, last } => {
                self.on_drop_request(now, msg, first, last);
            }
            ControlBody::Error { code } => {
                self.finish_close(Some(ConnectionError::PeerError(code)));
            }
            ControlBody::UserDefined {
                ext_type,
                info,
                body,
            } => {
                if self.on_user_defined(ext_type, info, &body) {
                    return;
                }
                self.cc.on_custom_message(now, ext_type, &body);
                self.refresh_cc();
            }
        }
    }

    fn on_handshake_connecting(&mut self, now: Instant, hs: &HandshakeRepr) {
        let Some(connector) = self.connector.as_mut() else {
            return;
        };
        match connector.on_handshake(hs, now) {
            Progress::Ignored => {}
            Progress::Resend => {
                let request = *connector.current_request().1;
                let timeout = connector.next_timeout();
                self.queue_control(ControlBody::Handshake(request));
                self.timers.set(Timer::Handshake, timeout);
            }
            Progress::Connected(n, reply) => {
                if reply {
                    let mut request = *connector.current_request().1;
                    request.req_type = ReqType::RESPONSE;
                    self.peer_id = n.peer_id;
                    self.queue_control(ControlBody::Handshake(request));
                }
                self.establish(now, n);
            }
            Progress::Failed(f) => self.finish_close(Some(match f {
                HandshakeFailure::Rejected => ConnectionError::Refused,
                HandshakeFailure::IsnMismatch => ConnectionError::SecurityCheck,
            })),
        }
    }

    /// A server's first RTT sample: the keep-alive our callers send when the response
    /// arrives. The server's start-up hold began as the response went out and ends at the
    /// caller's first packet, so only that packet, within the hold, counts: a 4.11 caller
    /// sends data first (one way, no round trip) and its keep-alives come after a second of
    /// silence, and a caller that missed the response resends its request instead.
    fn time_handshake_response(&mut self, now: Instant) {
        let Some(hold_end) = self.snd.hold_until.filter(|_| self.role == Role::Server) else {
            return;
        };
        let sample = now + super::STARTUP_HOLD - hold_end;
        if now < hold_end && !sample.is_zero() {
            self.note_rtt(sample);
        }
    }

    fn complete_rendezvous_on_traffic(&mut self, now: Instant) {
        if let Some(n) = self
            .connector
            .as_ref()
            .and_then(|c| c.complete_on_traffic())
        {
            self.establish(now, n);
        }
    }

    /// A handshake on an established connection: the peer missed our response.
    fn on_handshake_connected(&mut self, hs: &HandshakeRepr) {
        match self.role {
            Role::Server => {
                // The client is still resending its request: repeat our response (4.11 §2.3
                // step 5: its window field is the raw UDT_FC value).
                if hs.req_type != ReqType::REGULAR && hs.isn == self.send_isn {
                    self.queue_server_response(hs, self.config.flow_control_pkts);
                }
            }
            Role::Caller => {
                if hs.req_type.0 > 0 {
                    self.queue_re_response(ReqType::RESPONSE);
                }
            }
            Role::Rendezvous => {
                if hs.req_type != ReqType::RENDEZVOUS_RESPONSE2 {
                    self.queue_re_response(ReqType::RENDEZVOUS_RESPONSE2);
                }
            }
        }
    }

    pub(super) fn queue_server_response(&mut self, request: &HandshakeRepr, window: u32) {
        let response =
            handshake::server_response(request, self.local_id, self.mss, window, self.remote.ip());
        self.queue_control(ControlBody::Handshake(response));
    }

    fn queue_re_response(&mut self, req_type: ReqType) {
        let hs = handshake::re_response(
            self.send_isn,
            self.mss,
            self.config.flow_limit_pkts(),
            req_type,
            self.local_id,
        );
        self.queue_control(ControlBody::Handshake(hs));
    }

    fn on_ack(&mut self, now: Instant, ack: &AckRepr, stamp: Timestamp) {
        let Some(details) = ack.details else {
            self.on_light_ack(ack.ack);
            return;
        };
        self.queue_control(ControlBody::Ack2(ack.number));
        self.stats.ack2s_sent += 1;
        // 4.11: acknowledging data never sent breaks the connection.
        if ack.ack > self.snd.curr_seq.next() {
            self.broken("ack beyond the largest sequence sent");
            return;
        }
        if ack.ack >= self.snd.last_ack {
            self.snd.flow_window = details.avail_buf_pkts;
            self.snd.last_ack = ack.ack;
        }
        let front = self.peer_front(ack.ack, details.rates);
        if ack.ack <= self.snd.last_data_ack {
            if let Some(front) = front {
                let info = self.ack_info(ack.ack, stamp);
                self.cc.on_front(now, front, &info);
                self.refresh_cc();
            }
            return;
        }
        self.release_acked(now, ack.ack);
        if details.rtt_us > 0 {
            self.note_rtt(Duration::from_micros(details.rtt_us.into()));
        }
        if let Some(rates) = details.rates {
            self.snd
                .peer_rates
                .update(rates.recv_rate_pkts, rates.bandwidth_pkts);
        }
        self.stats.acks_received += 1;
        let info = self.ack_info(ack.ack, stamp);
        self.cc.on_ack(now, &info);
        if let Some(front) = front {
            self.cc.on_front(now, front, &info);
        }
        self.refresh_cc();
        self.autotune_send();
    }

    /// What the controller hears of an ACK whose number is `ack` and header stamp `stamp`.
    fn ack_info(&self, ack: SeqNumber, stamp: Timestamp) -> AckInfo {
        AckInfo {
            ack,
            rtt: self.rtt.rtt(),
            recv_rate_pkts: self.snd.peer_rates.recv_rate_pkts,
            bandwidth_pkts: self.snd.peer_rates.bandwidth_pkts,
            largest_sent: self.snd.curr_seq,
            receiver_time: receiver_time(stamp),
        }
    }

    /// The receiver's front from a peer that reports it
    /// ([`Capabilities::ACK_FRONT`](crate::wire::Capabilities::ACK_FRONT)), if it tells more
    /// than the ACK number `ack` and no more than we sent: a front outside that is nonsense,
    /// and nonsense is evidence of nothing.
    fn peer_front(&self, ack: SeqNumber, rates: Option<AckRates>) -> Option<SeqNumber> {
        let front = rates?.front.filter(|_| self.front_reports())?;
        (front > ack && front <= self.snd.curr_seq.next()).then_some(front)
    }

    /// A light ACK only moves the window base; the flow window shrinks by what it covers.
    fn on_light_ack(&mut self, ack: SeqNumber) {
        if ack > self.snd.curr_seq.next() {
            self.stats.malformed.other += 1;
            return;
        }
        if ack >= self.snd.last_ack {
            let covered = u32::try_from(self.snd.last_ack.offset_to(ack)).unwrap_or(0);
            self.snd.flow_window = self.snd.flow_window.saturating_sub(covered);
            self.snd.last_ack = ack;
        }
    }

    /// Whether send-buffer space an ACK freed (the buffer had `free_before` packets free) is
    /// worth waking a writer for: the buffer emptied (a flush waits for that), or a third of
    /// it or more is free and either it just became so or a write found no room since the
    /// last such wake-up. Until a third is free, ACKs (every millisecond or two) do not each
    /// cost a writer's wake-up and lock handoff; two thirds still queued are more than a
    /// window (the buffer autotunes to twice the window), so the sender does not run dry
    /// meanwhile. Linux's TCP wakes writers on the same kind of rule
    /// (`sk_stream_write_space`). Once a third is free, a blocked writer (a message longer
    /// than that waits for its whole length) is woken at every ACK that frees more, but a
    /// flush waiting for the buffer to drain is not: woken at each ACK, the flush of a full
    /// 12 MB buffer behind a 45 Mbit/s link cost a hundred wake-ups a second for two seconds.
    /// A poller waits for OUT only while the buffer is full, so the third's crossing wakes it.
    fn writer_worth_waking(&self, free_before: u32) -> bool {
        let buffer = &self.snd.buffer;
        let third = (buffer.capacity_pkts() / 3).max(1);
        buffer.is_empty()
            || (buffer.free_pkts() >= third && (free_before < third || self.snd.room_wanted))
    }

    fn release_acked(&mut self, now: Instant, ack: SeqNumber) {
        let free_before = self.snd.buffer.free_pkts();
        let freed = self.snd.buffer.ack(ack);
        self.snd.last_data_ack = ack;
        self.snd.loss.remove_before(ack);
        if freed > 0 && self.writer_worth_waking(free_before) {
            self.snd.room_wanted = false;
            self.push_event(Event::Writable);
        }
        if self.snd.buffer.is_empty() {
            if let Some(since) = self.snd.busy_since.take() {
                self.stats.send_duration += now - since;
            }
            if self.state == State::Closing {
                self.shutdown_now();
            }
        }
    }

    /// A NAK: tell the controller (unless nothing was acknowledged yet: a loss before the
    /// first ACK is the peer's start-up race, not congestion, and 4.11's reaction to it, a
    /// rate of 16 packets/s, takes seconds to undo), then queue the retransmissions.
    fn on_nak(&mut self, now: Instant, nak: &NakRepr, stamp: Timestamp) {
        self.stats.naks_received += 1;
        let Some(first) = nak.ranges.first() else {
            return;
        };
        let info = LossInfo {
            first_lost: first.first,
            ranges: &nak.ranges,
            largest_sent: self.snd.curr_seq,
            rtt: self.rtt.rtt(),
            recv_rate_pkts: self.snd.peer_rates.recv_rate_pkts,
            bandwidth_pkts: self.snd.peer_rates.bandwidth_pkts,
            receiver_time: receiver_time(stamp),
        };
        if self.stats.acks_received > 0 {
            self.cc.on_loss(now, &info);
            self.refresh_cc();
        }
        let mut fresh = false;
        for r in &nak.ranges {
            // 4.11: a loss report beyond what was sent breaks the connection.
            if r.last > self.snd.curr_seq || r.first > r.last {
                self.broken("loss report beyond the largest sequence sent");
                return;
            }
            let first = r.first.max_seq(self.snd.last_ack);
            if first <= r.last {
                let added = self.snd.loss.insert(first, r.last);
                self.stats.send_loss += u64::from(added);
                fresh |= added > 0;
            }
        }
        if fresh {
            self.snd.pacer.on_loss(now, self.send_period);
        }
    }

    /// A congestion warning slows sending by 1/8 until the controller next speaks (4.11's
    /// effect is just as transient).
    fn on_congestion_warning(&mut self) {
        let us = self.send_period.as_secs_f64() * 1e6 * 1.125;
        self.send_period = Duration::from_micros(us.ceil() as u64);
    }

    /// An ACK2 closes two round trips: from the arrival that triggered the ACK, which
    /// times this end's own reactions (NAK and ACK repeats, the runtime's holds) with its
    /// read delays in, and from when the ACK left, the network's alone, which the ACKs
    /// report to the peer's controller. With one RTT from the trigger, a `model` flow whose
    /// receiver's reads were held read 3-4 ms on a 0.3 ms path and starved beside a faster
    /// one (two flows at 1 Gbit/s x 0 ms split 77:828 Mbit/s); with one from the send, the
    /// receiver's own timers tightened and a lone flow at 0 ms / 1% loss moved 4-10% less
    /// (BENCHMARKS.md, session 83).
    fn on_ack2(&mut self, now: Instant, number: AckNumber) {
        let Some(acked) = self.rcv.history.acknowledge(number) else {
            return;
        };
        let lived = now - acked.triggered;
        if !lived.is_zero() {
            self.rtt.update(lived);
        }
        let path = now - acked.sent;
        if !path.is_zero() {
            self.path_rtt.update(path);
        }
        if acked.ack > self.rcv.last_ack2 {
            self.rcv.last_ack2 = acked.ack;
        }
    }

    /// The sender gave up on a message: forget its packets and let the ACK move past them.
    fn on_drop_request(&mut self, now: Instant, msg: MsgNumber, first: SeqNumber, last: SeqNumber) {
        // Bound the range by the receive window: a hostile range must not make us skip (and
        // acknowledge) sequence numbers far beyond anything the peer could have sent.
        let window = i32::try_from(self.rcv.buffer.capacity_pkts()).unwrap_or(i32::MAX);
        if first > last
            || first.offset_to(last) >= window
            || self.rcv.last_ack.offset_to(last) >= window
        {
            self.stats.malformed.other += 1;
            return;
        }
        self.rcv.buffer.drop_message(msg, first, last);
        self.rcv.loss.remove_range(first, last);
        self.stats.packets_dropped_recv += u64::from(first.len_to(last));
        if first <= self.rcv.largest.next() && last > self.rcv.largest {
            self.rcv.largest = last;
        }
        // The ACK point may have moved with no data arriving (the message's missing packets,
        // or its unsent tail, are skipped). Nothing else would acknowledge it: the ACK timer
        // rests while nothing is pending, and the sender, its packets dropped, sends nothing
        // that arrives. A transfer whose last message expired then never finished.
        if self.ack_point() > self.rcv.last_ack {
            self.schedule_prompt_ack(now);
        }
    }
}
