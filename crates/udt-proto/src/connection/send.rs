//! The sending side: which data packet goes next, and when.
//!
//! Order (4.11 §6.2): retransmissions from the sender loss list first (they ignore the window),
//! then new data while the packets in flight stay within min(flow window, congestion window).
//! Packets leave one `send_period` apart (kept by the [`Pacer`](crate::pacer::Pacer) even when
//! the runtime wakes late), except that every new packet whose sequence number is a multiple
//! of 16 is followed at once by the next one: the back-to-back pair the receiver times to
//! estimate link capacity.

use std::time::Duration;

use super::{Connection, State};
use crate::congestion::SentInfo;
use crate::seq::SeqNumber;
use crate::time::Instant;
use crate::wire::{Boundary, ControlBody, DataRepr, Packet};

/// What [`Connection::poll_data`] emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DataOut {
    /// No data packet was due.
    Nothing,
    /// A whole data packet.
    Copied,
    /// The header of packet `seq`; its payload stays in the send buffer.
    Lent(SeqNumber),
}

impl Connection {
    /// Emit the next data packet into `buf` if one is due. With `lend`, only its header goes
    /// into `buf` and the answer names the packet whose payload the caller is to send from
    /// the send buffer ([`Connection::lend_payload`]).
    pub(super) fn poll_data(&mut self, now: Instant, buf: &mut Vec<u8>, lend: bool) -> DataOut {
        if !matches!(self.state, State::Connected | State::Closing)
            || self.awaiting_peer_proof()
            || !self.snd.pacer.may_send(now, self.earliest_send())
        {
            return DataOut::Nothing;
        }
        if let Some(seq) = self.next_retransmission(now) {
            return self.emit_data(now, seq, true, buf, lend);
        }
        if self.window_open() && self.snd.buffer.unsent().is_some() {
            let seq = self.snd.curr_seq.next();
            let out = self.emit_data(now, seq, false, buf, lend);
            self.snd.buffer.mark_sent();
            self.snd.curr_seq = seq;
            return out;
        }
        // Due, but nothing to send: lateness owed so far is forgiven.
        self.snd.pacer.on_idle(now);
        DataOut::Nothing
    }

    /// What [`Connection::drive`] would change in a connection that nothing reached since its
    /// last drive and whose deadline has not come: a sender whose pacing slot has come with
    /// nothing to send forgives its lateness, as [`Self::poll_data`] does; nothing else. The
    /// simulator calls this in place of `drive` for such connections, which at most steps are
    /// most of them.
    #[cfg(test)]
    pub(crate) fn drive_idle(&mut self, now: Instant) {
        if !matches!(self.state, State::Connected | State::Closing)
            || self.awaiting_peer_proof()
            || !self.snd.pacer.may_send(now, self.earliest_send())
        {
            return;
        }
        // Had there been anything to send, the deadline would have come.
        debug_assert!(
            self.snd.loss.is_empty(),
            "an idle sender with losses to resend"
        );
        debug_assert!(
            !(self.window_open() && self.snd.buffer.unsent().is_some()),
            "an idle sender with new data it may send"
        );
        self.snd.pacer.on_idle(now);
    }

    /// When the next data packet may go, if there is one to send.
    pub(super) fn next_send_time(&self) -> Option<Instant> {
        if !matches!(self.state, State::Connected | State::Closing) || self.awaiting_peer_proof() {
            return None;
        }
        let has_new = self.snd.buffer.unsent().is_some() && self.window_open();
        (has_new || !self.snd.loss.is_empty()).then(|| self.earliest_send())
    }

    /// The pacing slot, or the end of the start-up hold if later.
    fn earliest_send(&self) -> Instant {
        let slot = self.snd.pacer.earliest();
        match self.snd.hold_until {
            Some(hold) => hold.max(slot),
            None => slot,
        }
    }

    /// Pop loss-list entries until one is still worth resending. Entries already acknowledged
    /// are skipped; an entry whose message outlived its TTL turns into a drop request.
    fn next_retransmission(&mut self, now: Instant) -> Option<SeqNumber> {
        while let Some(seq) = self.snd.loss.pop_first() {
            if seq < self.snd.last_data_ack {
                continue;
            }
            if let Some(dropped) = self.snd.buffer.expired(seq, now) {
                self.drop_expired_message(dropped);
                continue;
            }
            if self.snd.buffer.packet(seq).is_some() {
                return Some(seq);
            }
        }
        None
    }

    /// UDT4 §6.6: tell the receiver to give up on a message whose TTL ran out, and skip what is
    /// left of it here. We send the exact range [first, last] (4.11 handles it correctly).
    fn drop_expired_message(&mut self, dropped: crate::send_buffer::DroppedMessage) {
        self.snd.loss.remove_through(dropped.last);
        if let Some((_, skipped_last)) = self.snd.buffer.drop_message(&dropped) {
            // Unsent packets of the message consumed their sequence numbers unsent.
            self.snd.curr_seq = skipped_last;
        }
        self.queue_control(ControlBody::DropRequest {
            msg: dropped.msg,
            first: dropped.first,
            last: dropped.last,
        });
        self.stats.messages_dropped_send += 1;
    }

    /// Whether one more new packet fits in min(flow window, congestion window).
    pub(super) fn window_open(&self) -> bool {
        let window = self.snd.flow_window.min(self.cwnd as u32);
        // Packets in flight once the next one is sent (4.11 `seqlen(SndLastAck, SndCurrSeqNo+1)`).
        let after = self.snd.last_ack.offset_to(self.snd.curr_seq.next()) + 1;
        i64::from(after.max(1)) <= i64::from(window)
    }

    fn emit_data(
        &mut self,
        now: Instant,
        seq: SeqNumber,
        retransmit: bool,
        buf: &mut Vec<u8>,
        lend: bool,
    ) -> DataOut {
        let timestamp = self.data_timestamp(now);
        let Some((meta, payload)) = self.snd.buffer.packet(seq) else {
            return DataOut::Nothing;
        };
        let len = payload.len();
        let repr = DataRepr {
            seq,
            boundary: Boundary::new(meta.first, meta.last),
            in_order: meta.in_order,
            msg: meta.msg,
            timestamp,
            dst: self.peer_id,
            payload: if lend { &[] } else { payload },
        };
        Packet::Data(repr).emit(buf);
        // Unsent packets still counts this one (it is marked sent after the emit). A packet
        // paced by UDT_MAXBW rather than by the controller is limited by the application
        // too: its delivery samples measure the cap, not the path.
        let app_limited = (self.snd.loss.is_empty()
            && self.snd.buffer.unsent_pkts() <= u32::from(!retransmit))
            || self.rate_capped;
        self.cc.on_packet_sent(
            now,
            &SentInfo {
                seq,
                len,
                retransmit,
                app_limited,
            },
        );
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += len as u64;
        if retransmit {
            self.stats.retransmitted += 1;
        }
        self.schedule_next(now, seq, retransmit);
        if lend {
            DataOut::Lent(seq)
        } else {
            DataOut::Copied
        }
    }

    /// The payload of packet `seq`, lent from the send buffer: what follows the header that
    /// [`Connection::poll_transmit_lending`] emitted for it. It stays where it is, unchanged,
    /// until [`Connection::lent_sent`], whatever else the connection is handed meanwhile
    /// (only dropping the connection frees it).
    pub fn lend_payload(&mut self, seq: SeqNumber) -> Option<&[u8]> {
        self.snd.buffer.lend(seq)
    }

    /// Everything lent so far ([`Connection::lend_payload`]) has been sent: the memory of
    /// acknowledged packets may be reused again.
    pub fn lent_sent(&mut self) {
        self.snd.buffer.lent_sent();
    }

    /// 64 KiB chunks of acknowledged data that the send buffer holds only because payloads
    /// were lent and the runtime has not reported them sent yet: a runtime that reports
    /// after each flush keeps this near zero (a diagnostic for its tests).
    pub fn lent_chunks_held(&self) -> usize {
        self.snd.buffer.quarantined_chunks()
    }

    /// Set when the next packet may leave. The first packet of a probe pair lets its partner
    /// go at once; unlike 4.11, the partner then waits two periods, so the pair does not
    /// push the average rate 1/16 above what the controller asked for (4.11 sends 17 packets
    /// per 16 periods, which on a path paced just below capacity overfills the queue).
    /// Trains may be as long as loss-free time earned only while the rate cap sets the
    /// period (see `crate::pacer`).
    fn schedule_next(&mut self, now: Instant, seq: SeqNumber, retransmit: bool) {
        let slots = if !retransmit && seq.value() & 0xF == 0 {
            self.snd.probe_partner_due = true;
            0
        } else if std::mem::take(&mut self.snd.probe_partner_due) {
            2
        } else {
            1
        };
        let rtt = self.train_rtt();
        self.snd
            .pacer
            .on_sent(now, self.send_period, slots, rtt, self.rate_capped);
    }

    /// The RTT that sizes pacing trains: trains longer than
    /// [`TRAIN_MIN_PKTS`](crate::pacer::TRAIN_MIN_PKTS) are for a
    /// runtime that sends each as one GSO segment to a peer that announced GSO (our own), so
    /// without that the pacer sees a zero RTT and keeps its shortest trains. A 4.11 peer, and
    /// a simulated one, get the same 4-packet trains as before, and so does any peer while the
    /// controller asks for short trains.
    fn train_rtt(&self) -> Duration {
        if self.gso_peer() && !self.cc.short_trains() {
            self.rtt.rtt()
        } else {
            Duration::ZERO
        }
    }
}
