//! The receiving side: arriving data, and the ACKs and NAKs it causes (4.11 §4.2, §4.4, §6.4).
//!
//! Data is accepted into the receive buffer if it falls in the window; a gap is put in the
//! receiver loss list and reported at once with a NAK. A full ACK goes out every SYN, a light
//! ACK every 64 packets in between. Data becomes readable when a full ACK covers it, as in 4.11.
//!
//! Deviation (prompt ACKs): when the ACK point has moved past the last ACK sent, a numbered
//! ACK goes out at once if none went out for a gap of max(1 ms, RTT / 64, the time
//! [`PROMPT_ACK_PKTS`] packets take at the arrival speed) (capped at the controller's ACK
//! period), else when that gap ends. The packet floor keeps a slow flow from paying an ACK,
//! an ACK2 and an application wake-up (each a system call or two at both ends) for every
//! three or four packets at 45 Mbit/s: a cost per unit of time, not per byte, which made the
//! receiver of a healthy 45 Mbit/s flow cost 15 CPU-s/GiB. 4.11 waits for the next SYN tick (or
//! ACKs at once after a short packet, however many arrive), so a short transfer learns of its
//! delivery only every 10 ms and its slow start grows once per 10 ms however short the path.
//! The gap bounds numbered ACKs (and their ACK2s) to 1,000 a second at any data rate and
//! write size, and keeps the 1024-entry ACK history spanning 16 RTTs so every ACK2 still
//! finds its ACK. A 4.11 sender takes these like any numbered ACK. Between two of our
//! connections (GSO trains) the gap counts 32 to 64 packets instead (half of what the peer
//! has in flight, `Connection::prompt_ack_pkts`), and the prompt ACK also waits for that
//! many packets since the last ACK or a write's end ([`Connection::prompt_ack_wanted`]).

use std::time::Duration;

use bytes::Bytes;

use super::{Connection, Event, State};
use crate::congestion::{sparse_acks, ReceivedInfo, SYN};
use crate::recv_buffer::Insert;
use crate::send_buffer::PacketMeta;
use crate::seq::{AckNumber, SeqNumber};
use crate::time::Instant;
use crate::timers::Timer;
use crate::wire::{AckDetails, AckRates, AckRepr, ControlBody, DataRepr, NakRepr, SeqRange};

/// The most readable bytes a stream reader is left to gather in the middle of a write
/// (see `reader_worth_waking`): 2 ms at 1 Gbit/s. 1 MiB cut a `udt perf` reader's wake-ups
/// at 1 Gbit/s from ~300 to ~115 a second (3-4 ms of CPU a second), but `udt cp`'s
/// receiver, which copies what it reads, spent 0.99-1.18x the CPU per GiB at 4 Gbit/s in
/// eight paired comparisons, seven of them above 1 (BENCHMARKS.md, session 90).
const READ_WAKE_MAX_BYTES: usize = 256 << 10;
/// The longest a stream reader is left unwoken with data readable in the middle of a write
/// (see `reader_worth_waking`): about what [`READ_WAKE_MAX_BYTES`] take at 45 Mbit/s.
const READ_WAKE_AGE: Duration = Duration::from_millis(50);
/// Light ACK cadence in packets (4.11).
const LIGHT_ACK_PKTS: u32 = 64;
/// Prompt numbered ACKs are at least this far apart: at most 1,000 ACKs (and ACK2s) a second.
const MIN_ACK_GAP: Duration = Duration::from_millis(1);
/// …and at least this many packets' arrival time apart, once the arrival speed is known to
/// be at least [`PROMPT_ACK_MIN_SPEED`] (below it, or before the first estimate, 4.11's
/// initial 1 pkt/s reading would push every prompt ACK out to the ACK period).
const PROMPT_ACK_PKTS: u32 = 16;
/// [`PROMPT_ACK_PKTS`] for a peer that sends GSO trains. A window-limited sender sends what
/// each ACK frees as one train, so the ACK cadence is the train length, and each train costs
/// a wake-up at both ends (and an ACK2): at 45 Mbit/s on a shaped veth path, 32 instead of 16
/// cut the I/O threads' wake-ups by 40% and their CPU by 15%, at the same goodput
/// (BENCHMARKS.md, "Fewer ACKs between our peers"). Only for such peers: 4.11 and the
/// simulator's peers keep 16 (its fairness results move with any ACK timing).
const GSO_PROMPT_ACK_PKTS: u32 = 32;
/// The most packets a prompt ACK to a GSO peer waits for, where half of what the peer has in
/// flight allows it (see `Connection::prompt_ack_pkts`). 64 full packets are one GSO train.
const GSO_MAX_PROMPT_ACK_PKTS: u32 = 64;
/// The same once data has flowed for [`GSO_ACK_SETTLE`]. Behind `tbf` at 1 Gbit/s a `model`
/// flow has 700-800 packets in flight, and 128 instead of 64 cut the receiver's ACKs by
/// over a quarter, the wake-ups of both ends as much, and both ends' CPU per GiB by 3-7%
/// (medians of five pairs of 8-10 s flows; BENCHMARKS.md, "Per thread at 1 Gbit/s and
/// 200 Mbit/s").
const GSO_SETTLED_MAX_PROMPT_ACK_PKTS: u32 = 128;
/// How long data flows before prompt ACKs space out to [`GSO_SETTLED_MAX_PROMPT_ACK_PKTS`].
/// From the first packet, the sparser ACKs made a lone `model` flow at 1 Gbit/s × 10 ms read
/// its own start-up queue as a competitor's after the drain and run as a CUBIC flow from a
/// window below the path's BDP (855 against 951 Mbit/s); start-up and that verdict are over
/// well within this on such paths.
const GSO_ACK_SETTLE: Duration = Duration::from_secs(3);
/// How many round trips of data a receiver's reads are not held for (see
/// `Connection::reads_may_wait`): a start-up from 10 packets to a 1 Gbit/s × 20 ms path's
/// BDP takes about ten. Unheld for 3 s instead, a 45 Mbit/s flow behind `tbf` cost 9-15%
/// more CPU over 10 s, and for 32 RTTs 9% (its ACK2s wait in the shaper's queue, so the
/// receiver's RTT reads 20-35 ms there).
const HOLD_SETTLE_RTTS: u32 = 16;
const PROMPT_ACK_MIN_SPEED: u32 = 1_600;
/// …and at least RTT / this apart, so the 1024 ACK numbers in flight cover 16 RTTs.
const ACK_GAP_RTT_DIVISOR: u32 = 64;

/// Packets per light ACK: 4.11's [`LIGHT_ACK_PKTS`], or to a peer that sends GSO trains twice
/// its prompt-ACK count (`gso_prompt`, see `Connection::prompt_ack_pkts`). Its prompt ACKs
/// come every 32-128 packets, and a light ACK at 64 packets mostly went out just before the
/// numbered ACK it anticipated: behind a 200 Mbit/s `tbf`, 43% of a receiver's ACKs were light
/// ones, each waking the sender to move its window a few packets. At twice the prompt count,
/// a light ACK still moves the window where numbered ACKs are held back by their 1 ms floor
/// (at 10 Gbit/s that is some 850 packets).
fn light_ack_pkts(gso_prompt: Option<u32>) -> u32 {
    gso_prompt.map_or(LIGHT_ACK_PKTS, |pkts| LIGHT_ACK_PKTS.max(2 * pkts))
}

impl Connection {
    pub(super) fn handle_data(&mut self, now: Instant, d: &DataRepr<'_>, owner: Option<&Bytes>) {
        if self.state == State::Connecting {
            // Rendezvous: traffic from the peer after its handshake completes the connection.
            let Some(n) = self
                .connector
                .as_ref()
                .and_then(|c| c.complete_on_traffic())
            else {
                return;
            };
            self.establish(now, n);
        }
        self.stats.packets_received += 1;
        self.cc.on_packet_received(
            now,
            &ReceivedInfo {
                seq: d.seq,
                len: d.payload.len(),
            },
        );
        self.rcv
            .arrival
            .on_arrival(now, d.payload.len() >= self.payload_size);
        self.rcv.capacity.on_arrival(d.seq, now);
        self.rcv.last_data_at = Some(now);
        self.rcv.first_data_at.get_or_insert(now);
        self.rcv.pkts_since_ack += 1;
        self.ensure_ack_timer(now);
        if self.accept_data(d, owner) {
            self.track_sequence(now, d);
        }
        let write_end = d.boundary.is_last() || d.payload.len() < self.payload_size;
        self.after_arrival(now, write_end);
    }

    /// Put the payload in the receive buffer (as a slice of `owner` when it lies there);
    /// false if it was a duplicate or out of window.
    fn accept_data(&mut self, d: &DataRepr<'_>, owner: Option<&Bytes>) -> bool {
        let meta = PacketMeta {
            msg: d.msg,
            first: d.boundary.is_first(),
            last: d.boundary.is_last(),
            in_order: d.in_order,
        };
        match self.rcv.buffer.insert_shared(d.seq, meta, d.payload, owner) {
            Insert::Accepted => {
                self.stats.bytes_received += d.payload.len() as u64;
                // 4.11 ACKs a short packet (a write's tail) at once, so small writes at a
                // high rate draw one ACK (and ACK2) per packet. Prompt ACKs (module docs)
                // cover the tail within one gap instead, at a bounded ACK rate.
                if self.config.mode == crate::config::Mode::Message && self.has_message() {
                    self.push_event(Event::Readable);
                }
                true
            }
            Insert::Duplicate => {
                self.stats.duplicates += 1;
                false
            }
            Insert::OutOfWindow => {
                self.stats.out_of_window += 1;
                false
            }
        }
    }

    /// Record a gap (and NAK it at once), or fill one.
    fn track_sequence(&mut self, now: Instant, d: &DataRepr<'_>) {
        let expected = self.rcv.largest.next();
        if d.seq > expected {
            let last = d.seq.prev();
            let added = self.rcv.loss.insert_reported(expected, last, now);
            self.stats.recv_loss += u64::from(added);
            self.send_nak(vec![SeqRange {
                first: expected,
                last,
            }]);
            if self.config.periodic_nak && self.timers.get(Timer::Nak).is_none() {
                self.arm_nak(now);
            }
        }
        if d.seq > self.rcv.largest {
            self.rcv.largest = d.seq;
        } else {
            self.rcv.loss.remove(d.seq);
        }
    }

    /// The timer checks 4.11 runs after every data packet: full ACK if due, else light ACK.
    /// Before them, new contiguous data brings the ACK timer forward (prompt ACK).
    /// `write_end`: the packet ends a write (or is short, a write's tail).
    fn after_arrival(&mut self, now: Instant, write_end: bool) {
        // Both the prompt-ACK and the light-ACK rule for a GSO peer count in this; once per
        // packet.
        let gso_prompt = self.gso_peer().then(|| self.prompt_ack_pkts());
        if self.ack_point() > self.rcv.last_ack {
            if gso_prompt.is_some() && self.flow_window_spent() {
                self.timers.set(Timer::Ack, now);
            } else if self.prompt_ack_wanted(write_end, gso_prompt) {
                self.schedule_prompt_ack(now);
            }
        }
        if self.timers.is_due(Timer::Ack, now) {
            if gso_prompt.is_some() {
                self.rcv.ack_deferred.get_or_insert(now);
            } else {
                self.ack_timer(now);
            }
        } else if self
            .cc
            .ack_interval_pkts()
            .is_some_and(|n| n > 0 && self.rcv.pkts_since_ack >= n)
        {
            self.full_ack_attempt(now);
        } else if self.rcv.pkts_since_ack >= light_ack_pkts(gso_prompt) * self.rcv.light_ack_count {
            self.send_light_ack();
            self.rcv.light_ack_count += 1;
        }
    }

    /// Whether the sender has sent all the last numbered ACK let it: it sends nothing more
    /// until an ACK moves the window, so a GSO peer's data is then ACKed at once, whatever
    /// the gap or the count. A 32-packet receive buffer on a loopback was ACKed once per
    /// 1 ms gap, 32 packets a millisecond, when each window took a few microseconds to
    /// cross. Other peers keep the rule (see [`Self::note_buffer_freed`]).
    fn flow_window_spent(&self) -> bool {
        self.flow_window_left() == 0
    }

    /// To a GSO peer, whether the last advertisement's right edge has fallen an eighth of the
    /// buffer behind what the buffer takes now, while the sender has less than half of the
    /// buffer left to send. An ACK counts as unread the data it acknowledges, which the
    /// application reads a moment later; when a filled hole moves the ACK point a long way,
    /// that advertisement is short by all of it, and while the next hole holds the ACK point
    /// no ACK says otherwise (nothing new to acknowledge). A `model` flow at 1 Gbit/s ×
    /// 200 ms with 1% loss (simulator) then ran into that edge about once a second and sent
    /// nothing but retransmissions for 100-150 ms. The check runs at the ACK timer, so a
    /// flow whose holes come and go gets at most one extra ACK per ACK period.
    fn advertised_edge_stale(&self) -> bool {
        if !self.gso_peer() {
            return false;
        }
        let capacity = self.rcv.buffer.capacity_pkts();
        let edge = self.ack_point() + self.rcv.buffer.available_pkts();
        let gain = self.rcv.advertised_end.offset_to(edge);
        self.flow_window_left() < capacity / 2 && i64::from(gain) >= i64::from(capacity / 8)
    }

    /// Packets the sender may still send of the last numbered ACK's advertisement.
    fn flow_window_left(&self) -> u32 {
        let left = self.rcv.largest.next().offset_to(self.rcv.advertised_end);
        u32::try_from(left).unwrap_or(0)
    }

    /// The ACK timer fired: attempt a full ACK and re-arm (or rest when nothing is pending).
    ///
    /// From a GSO peer, an arrival that finds the timer due only notes itself
    /// (`RecvState::ack_deferred`), and the ACK goes out at the drive that follows the
    /// datagrams handed over with it. A runtime hands over a GRO train (up to 64 datagrams,
    /// one arrival stamp) or a whole read at once: ACKed at its first datagram, the rest
    /// waited for another ACK. The ACK's round trip still counts from that arrival
    /// (`send_numbered_ack`), but the next period from when it leaves: counted from an
    /// arrival that a held read took 8 ms to reach, the next ACK fell due a millisecond or
    /// two after this one. Behind a 45 Mbit/s shaper that was two numbered ACKs (two ACK2s,
    /// a wake-up at each end) per 10 ms cycle where one covered the same data.
    pub(super) fn ack_timer(&mut self, now: Instant) {
        self.note_short_flights(self.ack_trigger(now));
        if self.advertised_edge_stale() {
            self.rcv.window_update_due = true;
        }
        self.full_ack_attempt(now);
        self.rcv.ack_deferred = None;
        if self.ack_settled() {
            // Idle connections do not wake every 10 ms; the next data packet re-arms.
            self.timers.stop(Timer::Ack);
        } else {
            self.timers.set(Timer::Ack, now + self.ack_period());
        }
    }

    /// The arrival an ACK sent `now` answers: the one that found it due, if the ACK waited
    /// for the drive after it (see [`Self::ack_timer`]).
    fn ack_trigger(&self, now: Instant) -> Instant {
        self.rcv.ack_deferred.map_or(now, |at| at.min(now))
    }

    /// To a GSO peer, at each ACK timer: are its flights shorter than the prompt-ACK count?
    /// A sender held to fewer packets in flight (a small congestion or flow window) sends
    /// them, then waits for an ACK that waited for more, and only the ACK timer ended each
    /// wait: a 24-packet window on a 0.2 ms path moved 2,400 packets a second instead of
    /// 24,000. So when the ACK timer finds fewer packets than the count, the last of them
    /// half an ACK period old (the sender stopped; a paced flow's packets keep coming), the
    /// count drops to half of them, and rises with half of what later ACKs find, back to the
    /// usual count once that is reached (a window that shrinks below twice the count stalls
    /// once more).
    fn note_short_flights(&mut self, now: Instant) {
        if !self.gso_peer() {
            return;
        }
        let found = self.rcv.pkts_since_ack;
        let waited = self
            .rcv
            .last_numbered_ack
            .is_none_or(|t| now - t >= self.ack_period());
        let stopped = self
            .rcv
            .last_data_at
            .is_some_and(|t| now.saturating_duration_since(t) >= self.ack_period() / 2);
        if waited && stopped && found > 0 && found < self.prompt_ack_pkts() {
            self.rcv.short_flight_pkts = Some((found / 2).max(1));
        } else if let Some(short) = self.rcv.short_flight_pkts {
            let half = found / 2;
            self.rcv.short_flight_pkts = (half < GSO_PROMPT_ACK_PKTS).then(|| half.max(short));
        }
    }

    /// Data the peer has not heard of is here: ACK it now if the last numbered ACK is a gap
    /// old, else at the end of the gap (unless the ACK timer is due sooner anyway).
    ///
    /// To a peer that sends GSO trains, also now if less than a quarter of the gap is left:
    /// its trains come about a gap apart, so the 16th packet since the last ACK often
    /// arrived just before the gap was over, and the ACK then cost the receiver a wake-up of
    /// its own (a third of a 45 Mbit/s receiver's). Other peers keep the rule (the
    /// simulator's fairness results move with any change to the ACK timing).
    pub(super) fn schedule_prompt_ack(&mut self, now: Instant) {
        // Already due: nothing to bring forward. A train's packets after the one that made
        // the ACK due all come here until it leaves at the end of their batch.
        if self.timers.is_due(Timer::Ack, now) {
            return;
        }
        let gap = self.prompt_ack_gap();
        let mut due = self.rcv.last_numbered_ack.map_or(now, |t| t + gap);
        if self.gso_peer() && due <= now + gap / 4 {
            due = now;
        }
        if self.timers.get(Timer::Ack).is_none_or(|t| t > due) {
            self.timers.set(Timer::Ack, due);
        }
    }

    /// Whether new contiguous data calls for a prompt ACK. From a peer that sends GSO trains,
    /// only once [`Self::prompt_ack_pkts`] packets came since the last ACK, or at a write's end
    /// (the writer paused there: holding its tail back would only add latency); otherwise
    /// the ACK timer's period covers it. A token bucket releases such a train a packet at a
    /// time at the shaped rate, and the prompt ACK used to go out for the train's first
    /// packet (its gap had long passed) and again a gap later for the rest: two ACKs, two
    /// ACK2s and the wake-ups of both ends per train at 45 Mbit/s. Other peers keep the rule
    /// of the module docs (the simulator's fairness results move with any ACK timing).
    /// `gso_prompt`: [`Self::prompt_ack_pkts`] for a GSO peer, `None` for others.
    fn prompt_ack_wanted(&self, write_end: bool, gso_prompt: Option<u32>) -> bool {
        write_end || gso_prompt.is_none_or(|pkts| self.rcv.pkts_since_ack >= pkts)
    }

    /// Packets per prompt ACK: [`PROMPT_ACK_PKTS`], or from a peer that sends GSO trains
    /// half of what it has in flight, from [`GSO_PROMPT_ACK_PKTS`] up to
    /// [`Self::gso_max_prompt_ack_pkts`]. By Little's law a flow has its arrival speed times
    /// the RTT in flight, so an ACK per half of that never leaves the sender waiting for the
    /// ACK timer, and each ACK (a wake-up at both ends, and an ACK2) frees a longer train.
    /// Fewer where the sender's flights are shorter than that floor (a small window on a
    /// short path: see [`Self::note_short_flights`]).
    fn prompt_ack_pkts(&self) -> u32 {
        self.prompt_ack_pkts_at(self.prompt_ack_speed())
    }

    /// [`Self::prompt_ack_pkts`] at `speed` packets a second ([`Self::prompt_ack_speed`]).
    fn prompt_ack_pkts_at(&self, speed: u32) -> u32 {
        if !self.gso_peer() {
            return PROMPT_ACK_PKTS;
        }
        // In integers: once per packet, and a float division was a percent of a 1 Gbit/s
        // receiver.
        let rtt_nanos = u64::try_from(self.rtt.rtt().as_nanos()).unwrap_or(u64::MAX);
        let half_in_flight = u64::from(speed).saturating_mul(rtt_nanos) / 2_000_000_000;
        let mut pkts = u32::try_from(half_in_flight)
            .unwrap_or(u32::MAX)
            .clamp(GSO_PROMPT_ACK_PKTS, self.gso_max_prompt_ack_pkts());
        // Spaced ACKs: the sender's window covers a whole period's packets. Once per packet,
        // so whether the period is longer than SYN (a controller call and the speed's
        // arithmetic) is only asked when the count is below it: settled fast flows count
        // 128 already.
        if pkts < sparse_acks::PERIOD_PKTS && self.acks_spaced() {
            pkts = sparse_acks::PERIOD_PKTS;
        }
        self.rcv
            .short_flight_pkts
            .map_or(pkts, |short| pkts.min(short))
    }

    /// Whether a runtime may leave this connection's arrivals unread for a while to save
    /// wake-ups (the threaded runtime's hold: up to a quarter of the RTT and 4 ms): not
    /// until data has flowed for 16 smoothed RTTs (`HOLD_SETTLE_RTTS`), at most 3 s
    /// (`GSO_ACK_SETTLE`), timed by the latest arrival. The ACKs that fall due during a hold
    /// leave together at its end, and a `model` sender's start-up times delivery by the
    /// spacing at which ACKs reach it (after start-up it uses the stamps on them): alone at
    /// 1 Gbit/s × 20 ms, held ACKs read its estimate 1.5-8.7% over the link, and the queue
    /// that built while it waited for the verdict on its drain was taken for a competitor's
    /// (BENCHMARKS.md, session 39).
    pub fn reads_may_wait(&self) -> bool {
        let settle = (self.rtt.rtt() * HOLD_SETTLE_RTTS).min(GSO_ACK_SETTLE);
        self.data_span().is_none_or(|span| span >= settle)
    }

    /// Whether data has flowed long enough for spaced ACKs (see [`Self::ack_period`]).
    pub(super) fn spacing_settled(&self) -> bool {
        self.reads_may_wait()
            && self
                .data_span()
                .is_some_and(|span| span >= sparse_acks::SETTLE)
    }

    /// How long data has flowed: from the first arrival to the latest (`None` before any).
    fn data_span(&self) -> Option<Duration> {
        let (first, last) = self.rcv.first_data_at.zip(self.rcv.last_data_at)?;
        Some(last - first)
    }

    /// [`GSO_MAX_PROMPT_ACK_PKTS`], or [`GSO_SETTLED_MAX_PROMPT_ACK_PKTS`] once data has
    /// flowed for [`GSO_ACK_SETTLE`] (timed by the latest arrival: prompt ACKs are decided
    /// on arrivals).
    fn gso_max_prompt_ack_pkts(&self) -> u32 {
        if self.data_span().is_some_and(|span| span >= GSO_ACK_SETTLE) {
            GSO_SETTLED_MAX_PROMPT_ACK_PKTS
        } else {
            GSO_MAX_PROMPT_ACK_PKTS
        }
    }

    /// The arrival speed that sizes prompt ACKs: the one last reported, from a GSO peer held
    /// to the counted speed (see [`Self::prompt_ack_gap`]).
    pub(super) fn prompt_ack_speed(&self) -> u32 {
        let reported = self.rcv.reported_speed_pkts;
        if self.gso_peer() {
            self.rcv.counted.cap(reported)
        } else {
            reported
        }
    }

    /// The least time between prompt ACKs: max(1 ms, RTT / 64, 16 packets (32-128 from a GSO
    /// peer) at the arrival speed last reported), but never more than the ACK period, so
    /// prompt ACKs are never later than 4.11's.
    ///
    /// From a peer that sends long GSO trains, the speed is held to the packets counted
    /// between full ACKs while the flow is steady ([`CountedSpeed::cap`](crate::estimate::CountedSpeed::cap)): one train that a
    /// token bucket passed at wire speed read as 4-17 times the flow and halved the gap.
    /// Only there: 4.11 and simulated peers send 4-packet trains, which do not fool the
    /// arrival speed, and the simulator's fairness results move with any change to the ACK
    /// timing (holding every flow's speed to its count failed `cc_fair` and `cc_model`).
    fn prompt_ack_gap(&self) -> Duration {
        let speed = self.prompt_ack_speed();
        let pkts = match speed {
            speed if speed >= PROMPT_ACK_MIN_SPEED => {
                Duration::from_secs(1) * self.prompt_ack_pkts_at(speed) / speed
            }
            _ => Duration::ZERO,
        };
        (self.rtt.rtt() / ACK_GAP_RTT_DIVISOR)
            .max(pkts)
            .clamp(MIN_ACK_GAP, self.ack_period().max(MIN_ACK_GAP))
    }

    fn ensure_ack_timer(&mut self, now: Instant) {
        if self.timers.get(Timer::Ack).is_none() {
            self.timers.set(Timer::Ack, now + self.ack_period());
        }
    }

    /// Nothing left to acknowledge: everything received is ACKed and the ACK confirmed.
    fn ack_settled(&self) -> bool {
        self.rcv.loss.is_empty()
            && self.rcv.last_ack == self.rcv.largest.next()
            && self.rcv.last_ack2 == self.rcv.last_ack
    }

    /// Whether newly acknowledged data is worth waking the reader for. Messages: one is
    /// whole. Stream: the data includes the end of a write (`write_end`: the writer paused
    /// there, so holding it back would only add latency), or at least [`Self::read_wake_bytes`]
    /// are readable, or data has waited unannounced for [`READ_WAKE_AGE`]. A long write then
    /// wakes its reader a few times per buffer rather than at every ACK, and a slow one
    /// still every few tens of milliseconds: by bytes alone, a 2 Mbit/s stream reached its
    /// reader in lumps a second apart. The reader is never left waiting on data that will
    /// not grow: every write ends, and below the threshold more than 7/8 of the buffer is
    /// free, so the flow window does not stop the sender.
    fn reader_worth_waking(&self, now: Instant, write_end: bool) -> bool {
        match self.config.mode {
            crate::config::Mode::Message => self.has_message(),
            crate::config::Mode::Stream => {
                write_end
                    || self.rcv.buffer.readable_bytes() >= self.read_wake_bytes()
                    || (self.rcv.buffer.readable_bytes() > 0
                        && self
                            .rcv
                            .unannounced_since
                            .is_some_and(|since| now - since >= READ_WAKE_AGE))
            }
        }
    }

    /// Wake the reader if what was acknowledged since its last wake-up is worth it. Also
    /// on every full-ACK attempt, not only when the ACK point moves: a hole can hold it for
    /// a few round trips while data before the hole waits unannounced.
    fn announce_readable(&mut self, now: Instant, write_end: bool) {
        if self.rcv.unannounced_since.is_some() && self.reader_worth_waking(now, write_end) {
            self.rcv.unannounced_since = None;
            self.push_event(Event::Readable);
        }
    }

    /// Readable bytes that wake a stream reader in the middle of a write: an eighth of the
    /// buffer, at most [`READ_WAKE_MAX_BYTES`].
    fn read_wake_bytes(&self) -> usize {
        let capacity = self.rcv.buffer.capacity_pkts() as usize * self.payload_size;
        (capacity / 8).clamp(1, READ_WAKE_MAX_BYTES)
    }

    /// The first sequence number not yet received (everything before it has arrived).
    pub(super) fn ack_point(&self) -> SeqNumber {
        self.rcv.loss.first().unwrap_or(self.rcv.largest.next())
    }

    /// 4.11 §4.2: send a numbered ACK unless the peer already has this information.
    fn full_ack_attempt(&mut self, now: Instant) {
        self.rcv.pkts_since_ack = 0;
        self.rcv.light_ack_count = 1;
        self.announce_readable(now, false);
        let ack = self.ack_point();
        // News the ACK number cannot show: a window update, or a front moved behind a hole.
        let news = std::mem::take(&mut self.rcv.window_update_due) || self.front_news(ack);
        if ack == self.rcv.last_ack2 && !news {
            return;
        }
        if ack > self.rcv.last_ack {
            self.rcv.last_ack = ack;
            let write_end = self.rcv.buffer.set_ack_point(ack);
            self.rcv.unannounced_since.get_or_insert(now);
            self.announce_readable(now, write_end);
        } else if ack == self.rcv.last_ack {
            // Repeat an unconfirmed ACK only once per RTT + 4·RTTVar.
            let recent = self
                .rcv
                .last_full_ack
                .is_some_and(|t| now - t < self.rtt.rto_base());
            if recent && !news {
                return;
            }
        } else {
            return;
        }
        self.send_numbered_ack(now, ack);
    }

    /// Whether an ACK should go out for the front alone: the peer reads fronts
    /// ([`Capabilities::ACK_FRONT`](crate::wire::Capabilities::ACK_FRONT)) and data arrived
    /// behind a hole since the last report, which the ACK number cannot show. While a
    /// repair is under way (a round trip, or three when it is lost too) this keeps the
    /// sender's delivery samples current: without it a model flow's start-up at 1 Gbit/s x
    /// 100 ms with 1% loss grew about 1.5 times a round instead of twice (simulator).
    fn front_news(&self, ack: SeqNumber) -> bool {
        let front = self.rcv.largest.next();
        self.front_reports() && front > ack && front > self.rcv.reported_front
    }

    fn send_numbered_ack(&mut self, now: Instant, ack: SeqNumber) {
        self.rcv.ack_number = self.rcv.ack_number.next();
        let fresh = match self.rcv.last_full_ack {
            Some(t) if now - t <= SYN => None,
            _ => {
                self.rcv.last_full_ack = Some(now);
                let speed = self.rcv.arrival.speed_pkts();
                self.rcv.reported_speed_pkts = speed;
                let received = self.stats.packets_received;
                self.rcv.counted.close_period(now, received);
                self.autotune_recv(now, speed);
                Some((speed, self.rcv.capacity.capacity_pkts()))
            }
        };
        let front = self.front_reports().then(|| {
            self.rcv.reported_front = self.rcv.largest.next();
            self.rcv.reported_front
        });
        // A front needs the rate words before it; zeros there read as "unknown" (4.11 and
        // our sender leave their estimates alone).
        let rates = (fresh.is_some() || front.is_some()).then(|| {
            let (recv_rate_pkts, bandwidth_pkts) = fresh.unwrap_or((0, 0));
            AckRates {
                recv_rate_pkts,
                bandwidth_pkts,
                front,
            }
        });
        // UDT4: 4.11 never advertises fewer than 2 packets, to avoid a deadlock when the
        // application frees space (it sends no window update). Those 2 packets are then
        // dropped as out of window, and the gap they leave reads as loss to the sender. We
        // advertise the truth and send a window update when space frees up
        // (`note_buffer_freed`), so there is no deadlock and no false loss.
        let avail = self.rcv.buffer.available_pkts();
        self.rcv.advertised_pkts = avail;
        self.rcv.advertised_end = ack + avail;
        let details = AckDetails {
            rtt_us: self.path_rtt.rtt_us(),
            rtt_var_us: self.path_rtt.rtt_var_us(),
            avail_buf_pkts: avail,
            rates,
        };
        self.queue_report(ControlBody::Ack(AckRepr {
            number: self.rcv.ack_number,
            ack,
            details: Some(details),
        }));
        let triggered = self.ack_trigger(now);
        self.rcv.ack_deferred = None;
        self.rcv.history.record(self.rcv.ack_number, ack, triggered);
        self.rcv.last_numbered_ack = Some(now);
        self.stats.acks_sent += 1;
    }

    fn send_light_ack(&mut self) {
        let ack = self.ack_point();
        if ack == self.rcv.last_ack2 {
            return;
        }
        self.queue_control(ControlBody::Ack(AckRepr {
            number: AckNumber::LIGHT,
            ack,
            details: None,
        }));
        self.stats.light_acks_sent += 1;
    }

    fn send_nak(&mut self, ranges: Vec<SeqRange>) {
        self.queue_report(ControlBody::Nak(NakRepr { ranges }));
        self.stats.naks_sent += 1;
    }

    /// After the application read data: if the last advertisement was small (under half the
    /// buffer) and the free space has since at least doubled, send a numbered ACK at once so
    /// a sender stopped by the flow window resumes now. 4.11 waits for the sender's EXP
    /// timeout (≥ 300 ms) here; a 4.11 sender accepts the extra ACK (same ACK number, larger
    /// window).
    ///
    /// To a GSO peer, also once it has sent all but an eighth of the buffer of the last
    /// advertisement, and the free space is at least twice what it may still send: judged by
    /// the advertisement alone, a 32-packet buffer on a loopback advertised 16 free when the
    /// first 16 packets were ACKed, the sender sent those 16, the application read them, and
    /// nobody told the sender until the 10 ms ACK timer: 32 Mbit/s. Other peers keep the
    /// rule: in the simulator, flows that ignore loss ran thousands of packets past a loss
    /// hole into an 8192-packet buffer, and the extra ACKs moved the fairness results.
    pub(super) fn note_buffer_freed(&mut self) {
        let capacity = self.rcv.buffer.capacity_pkts();
        let advertised = self.rcv.advertised_pkts;
        let (left, nearly_stopped) = if self.gso_peer() {
            let left = self.flow_window_left();
            (left, advertised < capacity / 2 || left < capacity / 8)
        } else {
            (advertised, advertised < capacity / 2)
        };
        if nearly_stopped && self.rcv.buffer.available_pkts() >= left * 2 + 16 {
            self.schedule_window_update();
        }
    }

    /// Send a numbered ACK with the free buffer at once (the next `handle_timeout`), even if
    /// it acknowledges nothing new.
    pub(super) fn schedule_window_update(&mut self) {
        self.rcv.window_update_due = true;
        self.timers.set(Timer::Ack, Instant::ZERO);
    }

    /// Periodic NAK (draft-gg-udt-03; 4.11 has it disabled): report again the losses whose
    /// retransmission has not arrived within a NAK interval, each range less often the more
    /// it was reported (k intervals after its k-th report).
    ///
    /// Deviation: the first range, the one the ACK waits for, is repeated without back-off,
    /// [`Self::head_repeat`] after its last report, between the rounds over every range
    /// (which keep the draft's cadence: moving them moved the simulator's fairness results).
    /// A sender whose retransmission of that range was lost fills its window behind the
    /// hole and stops; the receiver then has nothing new to ACK and no new gap to NAK, and
    /// the sender's EXP timer (max(RTT + 4·RTTVar + SYN, 300 ms) of silence) ran out before
    /// the back-off's second or third interval and resent everything unacknowledged, most of
    /// it already here: 12,000-26,000 packets in four of eighteen 15 s flows on the lab's
    /// 1 Gbit/s × 100 ms link with 1% loss (BENCHMARKS.md, "Retransmission storms after a
    /// lost retransmission").
    pub(super) fn nak_timer(&mut self, now: Instant) {
        if self.rcv.loss.is_empty() {
            self.timers.stop(Timer::Nak);
            self.rcv.nak_round = None;
            return;
        }
        let interval = self.nak_interval();
        // Each range takes at most two words; keep the NAK inside one packet.
        let max_ranges = (self.payload_size / 8).max(1);
        let range = |(first, last)| SeqRange { first, last };
        let reported = self.rcv.loss.first_reported().is_some();
        let head = self.rcv.loss.first_due(now, self.head_repeat());
        if reported && head.is_some() {
            self.rcv.lost_repairs.note(now);
        }
        let mut ranges: Vec<SeqRange> = head.into_iter().map(range).collect();
        if self.rcv.nak_round.is_none_or(|at| at <= now) {
            let room = max_ranges - ranges.len();
            let due = self.rcv.loss.ranges_due(now, interval, room);
            ranges.extend(due.into_iter().map(range));
            self.rcv.nak_round = Some(now + interval);
        }
        if !ranges.is_empty() {
            self.send_nak(ranges);
        }
        self.arm_nak(now);
    }

    /// The next periodic NAK check: the next round over every range (a NAK interval after
    /// the last), or sooner when the first range is due again (see [`Self::nak_timer`]).
    fn arm_nak(&mut self, now: Instant) {
        let interval = self.nak_interval();
        let round = *self.rcv.nak_round.get_or_insert(now + interval);
        let head = self
            .rcv
            .loss
            .first_reported()
            .map_or(round, |t| (t + self.head_repeat()).max(now));
        self.timers.set(Timer::Nak, head.min(round));
    }

    /// How long after its last report the first range is reported again: RTT + 2·RTTVar +
    /// SYN/2. Long enough for the retransmission the last report asked for to arrive (about
    /// an RTT), and shorter than the sender's EXP timeout (at least RTT + 4·RTTVar + SYN).
    fn head_repeat(&self) -> Duration {
        self.rtt.rtt() + self.rtt.rtt_var() * 2 + SYN / 2
    }

    fn nak_interval(&self) -> Duration {
        self.rtt.rto_base().max(SYN) + SYN
    }
}
