//! One UDT connection as a sans-IO state machine.
//!
//! # Using a `Connection`
//! Method groups, by who calls them:
//! - **Inputs**: [`Connection::handle_datagram`] for every datagram the endpoint routes here,
//!   [`Connection::handle_timeout`] when the deadline from `poll_timeout` has passed,
//!   [`Connection::handle_unreachable`] when the network reports the peer's port closed (an
//!   ICMP port unreachable: a hint that ends the connection only if the peer then stays
//!   silent, see `timer.rs`).
//! - **Outputs**, drained in this order after any input or application call:
//!   1. [`Connection::poll_transmit`] until it returns `None` (control packets first, then
//!      data at the pace the congestion controller allows),
//!   2. [`Connection::poll_event`] until `None`,
//!   3. [`Connection::poll_timeout`]: when to call `handle_timeout` next.
//! - **Application**: [`Connection::send`], [`Connection::send_msg`], [`Connection::recv`],
//!   [`Connection::recv_msg`], [`Connection::close`], [`Connection::stats`].
//!
//! The submodules split the work by direction: `send` picks the next data packet,
//! `recv` handles arriving data and generates ACKs and NAKs, `control` handles arriving
//! control packets, `timers` runs the deadlines.

mod autotune;
mod control;
mod extension;
mod protected;
mod recv;
mod send;
mod state;
mod timer;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Bytes, BytesMut};

pub use protected::{ProtectionError, ProtectionStats};
pub use state::{ConnectionError, Event, RecvError, SendError, State};

use crate::ack_history::AckHistory;
use crate::config::{self, ConnectionConfig, Mode};
use crate::congestion::{Controller, ControllerInit, SYN};
use crate::estimate::{ArrivalSpeed, CountedSpeed, LinkCapacity, PeerRates, RttEstimator};
use crate::handshake::{Connector, Negotiated};
use crate::loss_list::{ReceiverLossList, SenderLossList};
use crate::pacer::Pacer;
use crate::recv_buffer::{self, RecvBuffer};
use crate::send_buffer::{SendBuffer, SendBufferError};
use crate::seq::{AckNumber, SeqNumber, SocketId};
use crate::stats::{ConnectionStats, PathStats};
use crate::time::Instant;
use crate::timers::{Timer, TimerTable};
use crate::wire::{AckRepr, ControlBody, ControlRepr, HandshakeRepr, Packet, Timestamp};
use send::DataOut;

/// How long a server or rendezvous side holds its first data after connecting, unless the
/// peer speaks first (4.11's start-up race, quirk 28). 4.11 registers a new socket within
/// its ~10 ms receive loop when idle; on a loaded machine we saw 15 ms not suffice.
const STARTUP_HOLD: Duration = Duration::from_millis(50);

/// Where a datagram goes and how long it is; its bytes were appended to the caller's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit {
    /// The peer's address.
    pub destination: SocketAddr,
    /// Bytes appended.
    pub size: usize,
}

/// How this side came to the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// We called `connect` on a listener.
    Caller,
    /// A listener accepted us.
    Server,
    /// Both sides connected to each other.
    Rendezvous,
}

/// One UDT connection. See the module documentation for the call order.
#[derive(Debug)]
pub struct Connection {
    config: ConnectionConfig,
    role: Role,
    local_id: SocketId,
    peer_id: SocketId,
    remote: SocketAddr,
    state: State,
    /// Creation time: data timestamps count from here (4.11: from socket open).
    epoch: Instant,
    connector: Option<Connector>,
    /// Our own ISN and the negotiated MSS/window, for re-responses to stray handshakes.
    send_isn: SeqNumber,
    mss: u32,
    payload_size: usize,
    error: Option<ConnectionError>,
    peer_closed: bool,

    snd: SendState,
    rcv: RecvState,
    /// The round trip as this end lives it: its timers' (see `Connection::on_ack2`).
    rtt: RttEstimator,
    /// The network's round trip, which our ACKs report (see `Connection::on_ack2`).
    path_rtt: RttEstimator,
    cc: Box<dyn Controller>,
    /// Controller outputs, refreshed after every hook (4.11 `CCUpdate`).
    send_period: Duration,
    /// Whether UDT_MAXBW, not the controller, set `send_period`: such packets are
    /// application-limited, and their trains may be as long as they earned (`crate::pacer`).
    rate_capped: bool,
    cwnd: f64,

    timers: TimerTable,
    exp_count: u32,
    last_response: Instant,
    /// An ICMP port unreachable came in: broken at this time unless the peer speaks first.
    unreachable_deadline: Option<Instant>,

    /// Control packets to send, with the header timestamp each carries (see
    /// [`Connection::report_stamp`]).
    control_out: VecDeque<(ControlBody, Timestamp)>,
    events: VecDeque<Event>,
    stats: ConnectionStats,
    /// The capability exchange (`extension.rs`).
    ext: extension::ExtensionState,
    /// Packet protection once connected, if a session key is configured (`protected.rs`).
    protection: Option<Box<crate::protect::Protection>>,
    /// When protection started (the peer's proof deadline counts from here).
    protected_since: Instant,
    /// The two directions' ISNs, which key the protection (set on connecting).
    protection_isns: (SeqNumber, SeqNumber),
    /// Where [`Self::handle_datagram`] opens protected packets (kept to avoid an allocation
    /// per packet).
    open_buf: Vec<u8>,
}

/// Sender-side state (4.11 names in the comments).
#[derive(Debug)]
struct SendState {
    buffer: SendBuffer,
    loss: SenderLossList,
    /// Highest ACK received, light or numbered: the window base (SndLastAck).
    last_ack: SeqNumber,
    /// Highest ACK applied to the send buffer (SndLastDataAck).
    last_data_ack: SeqNumber,
    /// Largest sequence number sent (SndCurrSeqNo).
    curr_seq: SeqNumber,
    /// Peer's advertised free buffer, packets (FlowWindow).
    flow_window: u32,
    /// Smoothed receiver reports (A and B).
    peer_rates: PeerRates,
    /// When the next data packet may leave.
    pacer: Pacer,
    /// The last packet sent opened a probe pair: the next one is its partner.
    probe_partner_due: bool,
    /// No data before this time unless the peer is heard from first (see `hold_first_data`).
    hold_until: Option<Instant>,
    /// When the current busy period started, for `send_duration` stats.
    busy_since: Option<Instant>,
    /// A write found no room since the writer was last woken for room (see
    /// `Connection::writer_worth_waking`).
    room_wanted: bool,
}

/// Receiver-side state.
#[derive(Debug)]
struct RecvState {
    buffer: RecvBuffer,
    loss: ReceiverLossList,
    /// Last ACK number sent: data before it is readable (RcvLastAck).
    last_ack: SeqNumber,
    /// Highest ACK confirmed by an ACK2 (RcvLastAckAck).
    last_ack2: SeqNumber,
    /// Largest sequence number received (RcvCurrSeqNo).
    largest: SeqNumber,
    /// The front the last ACK reported to a peer that reads fronts (see `front_news`).
    reported_front: SeqNumber,
    /// Last ACK sequence number used.
    ack_number: AckNumber,
    /// Free buffer advertised in the last numbered ACK, packets.
    advertised_pkts: u32,
    /// Where the window the last numbered ACK advertised ends: its ACK point plus the free
    /// buffer; the sender sends nothing from there on until it hears of more.
    advertised_end: SeqNumber,
    /// The application freed enough buffer since a small advertisement that the sender
    /// must hear of it now (a window update), not after its next timeout.
    window_update_due: bool,
    history: AckHistory,
    /// When the last 24-byte ACK went out.
    last_full_ack: Option<Instant>,
    /// When the last numbered (16- or 24-byte) ACK went out: prompt ACKs keep a gap from it.
    last_numbered_ack: Option<Instant>,
    /// The arrival that found the ACK timer due, from a GSO peer: the ACK waits for the drive
    /// after the datagrams handed over with it (see `Connection::ack_timer`).
    ack_deferred: Option<Instant>,
    /// When the periodic NAK next looks at every range (see `Connection::nak_timer`).
    nak_round: Option<Instant>,
    /// How often the periodic NAK reported again the range the ACK waits for (its
    /// retransmission was lost too): buffer autotuning's fourth span.
    lost_repairs: autotune::LostRepairs,
    /// Data packets since the last full-ACK attempt, and the light-ACK multiplier.
    pkts_since_ack: u32,
    light_ack_count: u32,
    /// To a GSO peer, the prompt-ACK count a sender's short flights call for (see
    /// `Connection::note_short_flights`); `None` while its flights are long enough.
    short_flight_pkts: Option<u32>,
    arrival: ArrivalSpeed,
    capacity: LinkCapacity,
    /// When the last data packet arrived, by the kernel's stamp when the runtime has it
    /// (buffer autotuning's idle rule, the stamp on our reports).
    last_data_at: Option<Instant>,
    /// When the first data packet arrived (prompt ACKs to a GSO peer space out once the flow
    /// has settled: see `Connection::gso_max_prompt_ack_pkts`).
    first_data_at: Option<Instant>,
    /// When acknowledged data was first left readable without waking the reader (`None`
    /// once it was woken): see `Connection::reader_worth_waking`.
    unannounced_since: Option<Instant>,
    /// Bytes the application had read at the last autotuning check.
    read_mark: u64,
    /// The arrival speed of the last full ACK, packets per second (0: none yet).
    reported_speed_pkts: u32,
    /// Packets counted between full ACKs: holds the prompt-ACK gap's speed to what arrived.
    counted: CountedSpeed,
}

impl Connection {
    /// A caller or rendezvous side, starting its handshake. `isn` comes from the endpoint's
    /// random source.
    pub(crate) fn connect(
        now: Instant,
        config: ConnectionConfig,
        local_id: SocketId,
        remote: SocketAddr,
        isn: SeqNumber,
    ) -> Self {
        let rendezvous = config.rendezvous;
        let request = Connector::request(
            config.mode.socket_type(),
            isn,
            config.mss,
            config.advertised_window(),
            local_id,
            remote.ip(),
            rendezvous,
        );
        let timeout = config.effective_connect_timeout();
        let role = if rendezvous {
            Role::Rendezvous
        } else {
            Role::Caller
        };
        let mut conn = Self::new(now, config, role, local_id, remote, isn);
        let mut connector = Connector::new(now, request, rendezvous, timeout);
        if connector.take_resend(now) {
            let first = *connector.current_request().1;
            conn.queue_control(ControlBody::Handshake(first));
        }
        conn.timers.set(Timer::Handshake, connector.next_timeout());
        conn.connector = Some(connector);
        conn
    }

    /// A server side accepted by a listener: connected at once, answering `request`.
    pub(crate) fn accept(
        now: Instant,
        config: ConnectionConfig,
        local_id: SocketId,
        remote: SocketAddr,
        request: &HandshakeRepr,
    ) -> Self {
        let mut conn = Self::new(now, config, Role::Server, local_id, remote, request.isn);
        let negotiated = Negotiated {
            peer_id: request.socket_id,
            mss: request.mss.min(conn.config.mss),
            peer_window: request.flow_window,
            send_isn: request.isn,
            recv_isn: request.isn,
            rtt: None,
        };
        conn.establish(now, negotiated);
        conn.queue_server_response(request, conn.config.advertised_window());
        // After the response, so that the caller is connected when the proof arrives.
        conn.prove_key();
        conn
    }

    fn new(
        now: Instant,
        config: ConnectionConfig,
        role: Role,
        local_id: SocketId,
        remote: SocketAddr,
        isn: SeqNumber,
    ) -> Self {
        let payload_size = config.payload_size();
        let mode = match config.mode {
            Mode::Stream => recv_buffer::Mode::Stream,
            Mode::Message => recv_buffer::Mode::Message,
        };
        let cc = config.controller.build();
        let mut snd_buffer = SendBuffer::new(payload_size, config.send_buffer_pkts);
        snd_buffer.set_base(isn);
        Self {
            role,
            local_id,
            peer_id: SocketId::NONE,
            remote,
            state: State::Connecting,
            epoch: now,
            connector: None,
            send_isn: isn,
            mss: config.mss,
            payload_size,
            error: None,
            peer_closed: false,
            snd: SendState {
                buffer: snd_buffer,
                loss: SenderLossList::new(config.flow_control_pkts.saturating_mul(2)),
                last_ack: isn,
                last_data_ack: isn,
                curr_seq: isn.prev(),
                flow_window: 16,
                peer_rates: PeerRates::new(),
                pacer: Pacer::new(now),
                probe_partner_due: false,
                hold_until: None,
                busy_since: None,
                room_wanted: false,
            },
            rcv: RecvState {
                buffer: RecvBuffer::new(mode, config.recv_buffer_pkts, isn),
                loss: ReceiverLossList::new(config.advertised_window().saturating_mul(2)),
                last_ack: isn,
                last_ack2: isn,
                largest: isn.prev(),
                reported_front: isn,
                ack_number: AckNumber::new(0),
                advertised_pkts: config.recv_buffer_pkts,
                advertised_end: isn + config.recv_buffer_pkts,
                window_update_due: false,
                history: AckHistory::default(),
                last_full_ack: None,
                last_numbered_ack: None,
                ack_deferred: None,
                nak_round: None,
                lost_repairs: autotune::LostRepairs::default(),
                pkts_since_ack: 0,
                short_flight_pkts: None,
                light_ack_count: 1,
                arrival: ArrivalSpeed::new(),
                capacity: LinkCapacity::new(),
                last_data_at: None,
                first_data_at: None,
                unannounced_since: None,
                read_mark: 0,
                reported_speed_pkts: 0,
                counted: CountedSpeed::default(),
            },
            rtt: RttEstimator::new(),
            path_rtt: RttEstimator::new(),
            cc,
            send_period: Duration::from_micros(1),
            rate_capped: false,
            cwnd: 16.0,
            timers: TimerTable::default(),
            exp_count: 1,
            last_response: now,
            unreachable_deadline: None,
            control_out: VecDeque::new(),
            events: VecDeque::new(),
            stats: ConnectionStats::default(),
            ext: extension::ExtensionState::default(),
            protection: None,
            protected_since: now,
            protection_isns: (isn, isn),
            open_buf: Vec::new(),
            config,
        }
    }

    /// A round-trip sample that is both the network's and ours (the handshake's, a peer's
    /// report): both estimators take it.
    fn note_rtt(&mut self, sample: Duration) {
        self.rtt.update(sample);
        self.path_rtt.update(sample);
    }

    /// Switch to CONNECTED with the negotiated parameters.
    fn establish(&mut self, now: Instant, n: Negotiated) {
        self.peer_id = n.peer_id;
        // A zero round trip (a simulated peer answering in the same instant) measures nothing.
        if let Some(rtt) = n.rtt.filter(|rtt| !rtt.is_zero()) {
            self.note_rtt(rtt);
        }
        self.mss = n.mss;
        self.payload_size = config::payload_size(n.mss, self.config.reserves_protection());
        self.protect_on_connect(now, n.send_isn, n.recv_isn);
        self.send_isn = n.send_isn;
        self.snd.buffer = SendBuffer::new(self.payload_size, self.config.send_buffer_pkts);
        self.snd.buffer.set_base(n.send_isn);
        self.snd.last_ack = n.send_isn;
        self.snd.last_data_ack = n.send_isn;
        self.snd.curr_seq = n.send_isn.prev();
        self.snd.flow_window = n.peer_window.max(2);
        self.snd.loss = SenderLossList::new(n.peer_window.max(16).saturating_mul(2));
        self.snd.pacer = Pacer::new(now);
        let mode = match self.config.mode {
            Mode::Stream => recv_buffer::Mode::Stream,
            Mode::Message => recv_buffer::Mode::Message,
        };
        self.rcv.buffer = RecvBuffer::new(mode, self.config.recv_buffer_pkts, n.recv_isn);
        self.rcv.last_ack = n.recv_isn;
        self.rcv.last_ack2 = n.recv_isn;
        self.rcv.largest = n.recv_isn.prev();
        self.cc.init(
            now,
            &ControllerInit {
                mss: self.mss,
                max_window_pkts: n.peer_window,
                isn: n.send_isn,
                rtt: self.rtt.rtt(),
                recv_rate_pkts: self.snd.peer_rates.recv_rate_pkts,
                bandwidth_pkts: self.snd.peer_rates.bandwidth_pkts,
                seed: u64::from(self.local_id.0) << 32 | u64::from(n.send_isn.value()),
            },
        );
        self.tell_cc_of_sparse_acks();
        self.refresh_cc();
        self.state = State::Connected;
        self.connector = None;
        self.timers.stop(Timer::Handshake);
        self.timers.set(Timer::Ack, now + self.ack_period());
        self.last_response = now;
        self.exp_count = 1;
        self.arm_exp();
        self.push_event(Event::Connected);
        self.hold_first_data(now);
    }

    // ----- inputs -----

    /// Process one datagram from `remote` that the endpoint routed to this connection. With
    /// protection on, it is authenticated and decrypted before anything else looks at it (in
    /// a copy: [`Self::handle_datagram_mut`] spares it).
    pub fn handle_datagram(&mut self, now: Instant, remote: SocketAddr, data: &[u8]) {
        if !self.is_peer(remote) {
            return;
        }
        if self.protection.is_none() {
            if self.unprotected_allowed(data) {
                self.handle_authentic(now, data, None);
            }
            return;
        }
        let mut buf = std::mem::take(&mut self.open_buf);
        buf.clear();
        buf.extend_from_slice(data);
        if let Some(len) = self.open_datagram(now, &mut buf) {
            // `buf` is reused: the payload is copied from there.
            self.handle_authentic(now, &buf[..len], None);
        }
        self.open_buf = buf;
    }

    /// [`Self::handle_datagram`] for a datagram in a buffer the caller lets this change (the
    /// runtime's receive slot): a protected packet is opened where it lies, which spares a
    /// copy. Its bytes are unspecified afterwards; a data packet's payload is copied into the
    /// receive buffer.
    pub fn handle_datagram_mut(&mut self, now: Instant, remote: SocketAddr, data: &mut [u8]) {
        if let Some(len) = self.admit(now, remote, data) {
            self.handle_authentic(now, &data[..len], None);
        }
    }

    /// [`Self::handle_datagram_mut`] for a datagram the runtime hands over for keeps (cut
    /// from a GRO train read whole, sharing its allocation): a data packet's payload stays
    /// there, opened in place if protected, and the receive buffer keeps it as a slice
    /// instead of a copy. The runtime should lend only buffers mostly filled, since a held
    /// packet keeps its whole allocation alive.
    pub fn handle_datagram_lent(&mut self, now: Instant, remote: SocketAddr, mut data: BytesMut) {
        if let Some(len) = self.admit(now, remote, &mut data) {
            data.truncate(len);
            let data = data.freeze();
            self.handle_authentic(now, &data, Some(&data));
        }
    }

    /// The checks every datagram passes before it is parsed: its source, then protection
    /// (opened in place when on). The length of the packet now at the front of `data`, or
    /// `None` if it is dropped (counted).
    fn admit(&mut self, now: Instant, remote: SocketAddr, data: &mut [u8]) -> Option<usize> {
        if !self.is_peer(remote) {
            return None;
        }
        if self.protection.is_none() {
            return self.unprotected_allowed(data).then_some(data.len());
        }
        self.open_datagram(now, data)
    }

    /// Whether `remote` is the peer; another source is counted and ignored.
    fn is_peer(&mut self, remote: SocketAddr) -> bool {
        let ours = remote == self.remote;
        if !ours {
            self.stats.wrong_source += 1;
        }
        ours
    }

    /// Before protection starts, whether `data` may be handled (with a session key
    /// configured, only handshakes); a refused one is counted as plaintext.
    fn unprotected_allowed(&mut self, data: &[u8]) -> bool {
        let allowed = self.allowed_before_protection(data);
        if !allowed {
            self.stats.protection.plaintext += 1;
        }
        allowed
    }

    /// A datagram from the peer that is plaintext by design or has authenticated.
    /// `owner`, if any, holds `data` (see [`Self::handle_datagram_lent`]).
    fn handle_authentic(&mut self, now: Instant, data: &[u8], owner: Option<&Bytes>) {
        let packet = match Packet::parse(data) {
            Ok(p) => p,
            Err(e) => {
                self.stats.malformed.record(e);
                return;
            }
        };
        if self.state == State::Closed {
            return;
        }
        // Any packet from the peer proves it alive (EXP reset, 4.11 §4.5), whatever an ICMP
        // said.
        self.exp_count = 1;
        self.last_response = now;
        self.unreachable_deadline = None;
        let was_connected = self.state != State::Connecting;
        match packet {
            Packet::Data(d) => self.handle_data(now, &d, owner),
            Packet::Control(c) => self.handle_control(now, c),
        }
        if was_connected {
            // The peer is certainly listening for our data now.
            self.snd.hold_until = None;
        }
        self.arm_exp();
    }

    /// UDT4 quirk 28: a 4.11 socket that has just connected registers for incoming packets
    /// only at its receive loop's next turn (≤ ~10 ms), dropping data that arrives first; a
    /// dropped first packet costs a NAK or timeout that ends slow start at 16 packets/s. So
    /// a side that became connected by *sending* the last handshake (server, rendezvous)
    /// holds its first data until the peer is heard from or `STARTUP_HOLD` has passed. A
    /// caller announces itself with a keep-alive so an udt server need not wait.
    fn hold_first_data(&mut self, now: Instant) {
        match self.role {
            Role::Server => self.snd.hold_until = Some(now + STARTUP_HOLD),
            Role::Rendezvous => {
                self.snd.hold_until = Some(now + STARTUP_HOLD);
                self.prove_key();
            }
            Role::Caller => {
                self.queue_control(ControlBody::KeepAlive);
            }
        }
    }

    /// Run every timer that is due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.state == State::Closed {
            return;
        }
        if self.state == State::Connecting {
            self.handshake_timer(now);
            return;
        }
        self.give_up_on_unproved_peer(now);
        if self.timers.is_due(Timer::Ack, now) {
            self.ack_timer(now);
        }
        if self.timers.is_due(Timer::Nak, now) {
            self.nak_timer(now);
        }
        if self.timers.is_due(Timer::Exp, now) {
            self.exp_timer(now);
        }
        if self.timers.is_due(Timer::Linger, now) {
            // Give up on the unsent data, but still tell the peer (4.11 does the same).
            self.queue_shutdown();
            self.finish_close(Some(ConnectionError::LingerTimeout));
        }
    }

    // ----- outputs -----

    /// Append the next datagram to send to `buf`, if any is due at `now` (sealed, if
    /// protection is on).
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        self.poll_transmit_lending(now, buf, false)
            .map(|(transmit, _)| transmit)
    }

    /// [`Connection::poll_transmit`], except that with `lend`, on a connection without
    /// packet protection, a data packet's payload is not copied: only its header is appended
    /// to `buf` (and counted in the [`Transmit`]), and the answer names the packet whose
    /// payload ([`Connection::lend_payload`]) completes the datagram. A runtime that sends
    /// from two places at once (`sendmsg` with an `iovec` each) saves a copy of every byte.
    pub fn poll_transmit_lending(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        lend: bool,
    ) -> Option<(Transmit, Option<SeqNumber>)> {
        let lend = lend && self.protection.is_none();
        loop {
            let start = buf.len();
            let mut lent = None;
            let handshake = if let Some((body, stamp)) = self.control_out.pop_front() {
                let handshake = matches!(body, ControlBody::Handshake(_));
                if let ControlBody::Ack(AckRepr {
                    number,
                    details: Some(_),
                    ..
                }) = &body
                {
                    self.rcv.history.mark_sent(*number, now);
                }
                self.emit_control(body, stamp, buf);
                handshake
            } else if let Some(body) = self.poll_announcement() {
                self.emit_control(body, Timestamp(0), buf);
                false
            } else {
                match self.poll_data(now, buf, lend) {
                    DataOut::Nothing => return None,
                    DataOut::Copied => {}
                    DataOut::Lent(seq) => lent = Some(seq),
                }
                false
            };
            // A packet that cannot be sealed (its direction's counters are used up) is not
            // sent; the next one is tried.
            if self.seal_transmit(buf, start, handshake) {
                let transmit = Transmit {
                    destination: self.remote,
                    size: buf.len() - start,
                };
                return Some((transmit, lent));
            }
        }
    }

    /// When `handle_timeout` (or `poll_transmit`, for paced data) must next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let timers = self.timers.next();
        let send = self.next_send_time();
        match (timers, send) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next application-visible event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Queue an event unless the same one already waits. An event says "look again", not
    /// "this happened once": a reader woken by one `Readable` reads everything there is. So
    /// the queue holds each kind at most once (at most four entries) however long nobody
    /// drains it, where one entry per ACK used to pile up.
    pub(crate) fn push_event(&mut self, event: Event) {
        if !self.events.contains(&event) {
            self.events.push_back(event);
        }
    }

    /// Lengths of the internal output queues (control packets, events): for the tests that
    /// hold every queue bounded over long transfers.
    #[cfg(any(test, fuzzing))]
    pub(crate) fn queue_lens(&self) -> (usize, usize) {
        (self.control_out.len(), self.events.len())
    }

    // ----- application -----

    /// Queue stream data; returns how many bytes fit in the send buffer.
    pub fn send(&mut self, now: Instant, data: &[u8]) -> Result<usize, SendError> {
        self.queue_stream(now, data.is_empty(), |buffer| {
            buffer.write_stream(data, now)
        })
    }

    /// [`Self::send`] without copying `data` into the send buffer: the packets are sent from
    /// `data` itself, which the buffer holds until they are acknowledged (see
    /// `SendBuffer::write_stream_shared`). For a writer that has its data in a [`Bytes`]
    /// already; returns how many bytes fit.
    pub fn send_shared(&mut self, now: Instant, data: Bytes) -> Result<usize, SendError> {
        self.queue_stream(now, data.is_empty(), |buffer| {
            buffer.write_stream_shared(data, now)
        })
    }

    /// What [`Self::send`] and [`Self::send_shared`] share: `write` queues into the send
    /// buffer and says how many bytes it took (0: full).
    fn queue_stream(
        &mut self,
        now: Instant,
        empty: bool,
        write: impl FnOnce(&mut SendBuffer) -> usize,
    ) -> Result<usize, SendError> {
        self.check_sendable(Mode::Stream)?;
        if empty {
            return Ok(0);
        }
        self.note_send_start(now);
        match write(&mut self.snd.buffer) {
            0 => Err(self.no_room()),
            n => Ok(n),
        }
    }

    /// A write found no room: the writer waits, and wants waking when an ACK frees enough
    /// (see `Connection::writer_worth_waking`).
    fn no_room(&mut self) -> SendError {
        self.snd.room_wanted = true;
        SendError::WouldBlock
    }

    /// Queue one message. `ttl` None means "never expire"; `in_order` asks the receiver to
    /// deliver it only after every earlier message.
    pub fn send_msg(
        &mut self,
        now: Instant,
        msg: &[u8],
        ttl: Option<Duration>,
        in_order: bool,
    ) -> Result<(), SendError> {
        self.check_sendable(Mode::Message)?;
        self.note_send_start(now);
        match self.snd.buffer.write_message(msg, ttl, in_order, now) {
            Ok(_) => Ok(()),
            Err(SendBufferError::TooLarge) => Err(SendError::MessageTooLarge {
                len: msg.len(),
                max: self.snd.buffer.capacity_pkts() as usize * self.payload_size,
            }),
            Err(_) => Err(self.no_room()),
        }
    }

    /// Read acknowledged stream data. `Ok(0)` means end of stream (the peer closed and all
    /// its data was read).
    pub fn recv(&mut self, buf: &mut [u8]) -> Result<usize, RecvError> {
        if self.config.mode != Mode::Stream {
            return Err(RecvError::WrongMode);
        }
        let n = self.rcv.buffer.read(buf);
        if n > 0 {
            self.stats.bytes_delivered += n as u64;
            self.note_buffer_freed();
            return Ok(n);
        }
        self.recv_empty_result()
    }

    /// [`Self::recv`] without the copy: moves up to `max` acknowledged bytes into `out` as
    /// [`Bytes`] (slices of the buffers the packets arrived in, when the runtime lent them).
    /// `Ok(0)` means end of stream.
    pub fn recv_chunks(&mut self, out: &mut Vec<Bytes>, max: usize) -> Result<usize, RecvError> {
        if self.config.mode != Mode::Stream {
            return Err(RecvError::WrongMode);
        }
        let n = self.rcv.buffer.read_chunks(out, max);
        if n > 0 {
            self.stats.bytes_delivered += n as u64;
            self.note_buffer_freed();
            return Ok(n);
        }
        self.recv_empty_result()
    }

    /// Read one whole message into `buf`; returns (bytes copied, message length). A message
    /// longer than `buf` is truncated and its rest discarded, as in UDT4.
    pub fn recv_msg(&mut self, buf: &mut [u8]) -> Result<(usize, usize), RecvError> {
        if self.config.mode != Mode::Message {
            return Err(RecvError::WrongMode);
        }
        if let Some((copied, len)) = self.rcv.buffer.read_message(buf) {
            self.stats.bytes_delivered += copied as u64;
            self.note_buffer_freed();
            return Ok((copied, len));
        }
        match self.recv_empty_result() {
            Ok(_) => Err(RecvError::Closed(ConnectionError::PeerClosed)),
            Err(e) => Err(e),
        }
    }

    fn recv_empty_result(&self) -> Result<usize, RecvError> {
        match (self.state, self.error) {
            (State::Closed, Some(ConnectionError::PeerClosed)) => Ok(0),
            _ if self.peer_closed => Ok(0),
            (State::Closed, Some(e)) => Err(RecvError::Closed(e)),
            (State::Closed, None) => Err(RecvError::Closed(ConnectionError::LocallyClosed)),
            _ => Err(RecvError::WouldBlock),
        }
    }

    /// Close: stop accepting data, let unsent data drain (up to the linger time), then tell
    /// the peer. A connection that never connected ends at once.
    pub fn close(&mut self, now: Instant) {
        match self.state {
            State::Connecting => self.finish_close(Some(ConnectionError::LocallyClosed)),
            State::Connected => {
                self.state = State::Closing;
                self.cc.close();
                match self.config.linger {
                    Some(linger) if !self.snd.buffer.is_empty() => {
                        self.timers.set(Timer::Linger, now + linger);
                    }
                    _ => self.shutdown_now(),
                }
            }
            State::Closing | State::Closed => {}
        }
    }

    /// UDT_MAXBW while connected: cap the sending rate at `bytes_per_sec` (`None` or 0:
    /// unlimited). Takes effect with the next packet.
    pub fn set_max_bandwidth(&mut self, bytes_per_sec: Option<u64>) {
        self.config.max_bandwidth(bytes_per_sec);
        if matches!(self.state, State::Connected | State::Closing) {
            self.refresh_cc();
        }
    }

    /// UDT_LINGER while open: how long a later `close` lets unsent data drain (`None`: close
    /// at once and discard it). A `close` already under way keeps its deadline, as in 4.11.
    pub fn set_linger(&mut self, linger: Option<Duration>) {
        self.config.linger(linger);
    }

    // ----- queries -----

    /// The connection state.
    pub fn state(&self) -> State {
        self.state
    }

    /// Why the connection ended, once it has.
    pub fn error(&self) -> Option<ConnectionError> {
        self.error
    }

    /// Our socket id.
    pub fn local_id(&self) -> SocketId {
        self.local_id
    }

    /// The peer's socket id (0 until the handshake completes).
    pub fn peer_id(&self) -> SocketId {
        self.peer_id
    }

    /// The peer's address.
    pub fn remote(&self) -> SocketAddr {
        self.remote
    }

    /// How this side joined the connection.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The smoothed round-trip time (4.11's RTT estimate, 100 ms before the first sample).
    pub fn smoothed_rtt(&self) -> Duration {
        self.rtt.rtt()
    }

    /// Stream bytes ready for `recv`.
    pub fn readable_bytes(&self) -> usize {
        self.rcv.buffer.readable_bytes()
    }

    /// Whether a whole message is ready for `recv_msg`.
    pub fn has_message(&self) -> bool {
        self.rcv.buffer.has_message()
    }

    /// Free send-buffer bytes.
    pub fn send_buffer_free(&self) -> usize {
        self.snd.buffer.free_bytes()
    }

    /// UDT_SNDDATA: packets in the send buffer, sent or not, awaiting acknowledgement.
    pub fn send_buffer_pkts(&self) -> u32 {
        self.snd.buffer.unacked_pkts() + self.snd.buffer.unsent_pkts()
    }

    /// UDT_RCVDATA: readable data in packets of the negotiated payload size (rounded up).
    pub fn readable_pkts(&self) -> u32 {
        let pkts = self
            .rcv
            .buffer
            .readable_bytes()
            .div_ceil(self.payload_size.max(1));
        u32::try_from(pkts).unwrap_or(u32::MAX)
    }

    /// The configuration this connection runs with (MAXBW and LINGER as last set).
    pub fn config(&self) -> &ConnectionConfig {
        &self.config
    }

    /// Whether everything written has been acknowledged.
    pub fn is_send_idle(&self) -> bool {
        self.snd.buffer.is_empty()
    }

    /// Whether the connection has ended and has nothing left to send: the endpoint may
    /// forget it.
    pub fn is_drained(&self) -> bool {
        self.state == State::Closed && self.control_out.is_empty()
    }

    /// Cumulative counters.
    /// `send_duration` covers finished busy periods (ended when all data was acknowledged).
    pub fn stats(&self) -> ConnectionStats {
        self.stats
    }

    /// Instantaneous path and window state.
    pub fn path_stats(&self) -> PathStats {
        PathStats {
            rtt: self.rtt.rtt(),
            rtt_var: self.rtt.rtt_var(),
            send_period: self.send_period,
            flow_window_pkts: self.snd.flow_window,
            congestion_window_pkts: self.cwnd as u32,
            flight_pkts: self.flight_pkts(),
            bandwidth_pkts: self.snd.peer_rates.bandwidth_pkts,
            recv_rate_pkts: self.snd.peer_rates.recv_rate_pkts,
            local_recv_rate_pkts: self.rcv.arrival.speed_pkts(),
            local_bandwidth_pkts: self.rcv.capacity.capacity_pkts(),
            send_buffer_free_bytes: self.snd.buffer.free_bytes(),
            send_buffer_capacity_pkts: self.snd.buffer.capacity_pkts(),
            recv_buffer_free_pkts: self.rcv.buffer.available_pkts(),
            recv_buffer_capacity_pkts: self.rcv.buffer.capacity_pkts(),
            mss: self.mss,
        }
    }

    // ----- shared helpers -----

    fn check_sendable(&self, mode: Mode) -> Result<(), SendError> {
        if self.config.mode != mode {
            return Err(SendError::WrongMode);
        }
        match self.state {
            State::Connecting => Err(SendError::NotConnected),
            State::Connected => Ok(()),
            State::Closing => Err(SendError::Closed(ConnectionError::LocallyClosed)),
            State::Closed => Err(SendError::Closed(
                self.error.unwrap_or(ConnectionError::LocallyClosed),
            )),
        }
    }

    /// 4.11: writing into an empty send buffer restarts the EXP clock, so a long idle period
    /// does not count against the peer.
    fn note_send_start(&mut self, now: Instant) {
        if self.snd.buffer.is_empty() {
            self.last_response = now;
            self.exp_count = 1;
            self.snd.busy_since = Some(now);
            self.arm_exp();
        }
    }

    /// Copy the controller's outputs, flooring the period at what UDT_MAXBW allows.
    fn refresh_cc(&mut self) {
        let period = self.cc.send_period();
        let cap = self
            .config
            .max_bandwidth
            .map(|max_bw| max_bandwidth_period(self.mss, max_bw));
        self.rate_capped = cap.is_some_and(|cap| cap > period);
        self.send_period = cap.map_or(period, |cap| cap.max(period));
        let cwnd = self.cc.window_pkts();
        self.cwnd = if cwnd.is_finite() {
            cwnd.max(1.0)
        } else {
            16.0
        };
        while let Some((ext_type, body)) = self.cc.poll_custom_message() {
            self.queue_control(ControlBody::UserDefined {
                ext_type,
                info: 0,
                body,
            });
        }
    }

    /// The receiver's ACK timer period: UDT's [`SYN`], or to a sender that asked for spaced
    /// ACKs, once data has flowed for [`sparse_acks::SETTLE`](crate::congestion::sparse_acks::SETTLE)
    /// and [`Self::reads_may_wait`] (a `model` sender's start-up times delivery by our
    /// ACKs), the time
    /// [`sparse_acks::PERIOD_PKTS`](crate::congestion::sparse_acks::PERIOD_PKTS) take at
    /// the higher of the arrival speed and that count, taken
    /// [`sparse_acks::RECEIVER_SPEED_MARGIN`](crate::congestion::sparse_acks::RECEIVER_SPEED_MARGIN)
    /// faster, up to two SYNs ([`crate::congestion::sparse_acks`]). A controller may ask
    /// for ACKs more often than SYN (4.11 `setACKTimer`), and gets that; asking for SYN or
    /// more leaves the rule (4.11's native controller asks for SYN, the default it always
    /// had).
    pub fn ack_period(&self) -> Duration {
        match self.cc.ack_period() {
            Some(p) if p < SYN => p,
            _ => self
                .spacing_speed()
                .map_or(SYN, crate::congestion::sparse_acks::period_at),
        }
    }

    /// Whether [`Self::ack_period`] is longer than [`SYN`]: the same rule, without working
    /// out the period (the receive path asks for every packet of a flow whose prompt ACKs
    /// are shorter than the period's packets). The speed first: a flow too fast for spaced
    /// ACKs is told so without the other checks.
    pub(super) fn acks_spaced(&self) -> bool {
        crate::congestion::sparse_acks::spaces_at(self.spacing_speed_as_read())
            && self.spacing_applies()
            && self.cc.ack_period().is_none_or(|p| p >= SYN)
    }

    /// The speed, in packets a second, that spaced ACKs are reckoned from, or `None` where
    /// this receiver keeps UDT's timing.
    fn spacing_speed(&self) -> Option<f64> {
        self.spacing_applies().then(|| self.spacing_speed_as_read())
    }

    /// The higher of the speed last reported and the counted one, taken
    /// [`sparse_acks::RECEIVER_SPEED_MARGIN`](crate::congestion::sparse_acks::RECEIVER_SPEED_MARGIN)
    /// faster.
    fn spacing_speed_as_read(&self) -> f64 {
        let speed = self.prompt_ack_speed().max(self.rcv.counted.speed_pkts());
        f64::from(speed) * crate::congestion::sparse_acks::RECEIVER_SPEED_MARGIN
    }

    /// Whether this receiver spaces its ACKs at all: its sender asked, and data has flowed
    /// long enough.
    fn spacing_applies(&self) -> bool {
        self.spaces_acks() && self.spacing_settled()
    }

    fn flight_pkts(&self) -> u32 {
        let unacked = self.snd.last_ack.offset_to(self.snd.curr_seq.next());
        u32::try_from(unacked).unwrap_or(0)
    }

    fn data_timestamp(&self, now: Instant) -> Timestamp {
        // 32-bit wrap after ~71.6 minutes, as in 4.11.
        Timestamp((now - self.epoch).as_micros() as u32)
    }

    /// Queue a control packet whose header timestamp is 0, as 4.11 sends every one.
    fn queue_control(&mut self, body: ControlBody) {
        self.control_out.push_back((body, Timestamp(0)));
    }

    /// Queue a numbered ACK or a NAK, stamped with [`Connection::report_stamp`].
    fn queue_report(&mut self, body: ControlBody) {
        let stamp = self.report_stamp();
        self.control_out.push_back((body, stamp));
    }

    /// The header timestamp of an ACK or NAK: when the newest data packet it reports on
    /// arrived, in microseconds of this side's clock (never 0, which means "none"). A
    /// sender that reads it measures the receiver's delivery spans with it instead of the
    /// spacing at which the reports reach it: a receiver that reads a train late (its I/O
    /// thread held the socket up to 4 ms) or a return path that bunches reports made those
    /// spans short, and the model's delivery-rate samples high (alone at 1 Gbit/s × 20 ms in
    /// the lab its estimate rose to 1.5-8.7% above the link, then built a queue it took for a
    /// competitor's). 4.11 sends 0 here and never reads it.
    fn report_stamp(&self) -> Timestamp {
        self.rcv.last_data_at.map_or(Timestamp(0), |at| {
            Timestamp(self.data_timestamp(at).0.max(1))
        })
    }

    fn emit_control(&mut self, body: ControlBody, timestamp: Timestamp, buf: &mut Vec<u8>) {
        let dst = match (&body, self.state) {
            (ControlBody::Handshake(_), State::Connecting) => self
                .connector
                .as_ref()
                .map_or(SocketId::NONE, |c| c.current_request().0),
            _ => self.peer_id,
        };
        let repr = ControlRepr {
            timestamp,
            dst,
            body,
        };
        Packet::Control(repr).emit(buf);
    }

    /// End the connection (if not already) with `error` as the reason.
    fn finish_close(&mut self, error: Option<ConnectionError>) {
        if self.state == State::Closed {
            return;
        }
        let reason = error.unwrap_or(ConnectionError::LocallyClosed);
        self.state = State::Closed;
        self.error = Some(reason);
        self.timers.stop_all();
        self.push_event(Event::Closed(reason));
    }

    /// Tell the peer we are done, and end.
    fn shutdown_now(&mut self) {
        if !self.peer_closed {
            self.queue_shutdown();
        }
        self.finish_close(Some(ConnectionError::LocallyClosed));
    }

    /// The Shutdown, twice. Nothing repeats it: once it is sent the connection is forgotten,
    /// so if it is lost the peer, which may be reading to the end of the stream, waits until
    /// it declares us lost (or, our port closed, gives up on an ICMP hint), and reports an
    /// error for a transfer that completed. Two copies back to back make that a loss of
    /// both (10^-4 at 1% random loss). 4.11 sends one; a second to a closed 4.11 socket is
    /// dropped as addressed to nobody.
    fn queue_shutdown(&mut self) {
        self.queue_control(ControlBody::Shutdown);
        self.queue_control(ControlBody::Shutdown);
    }

    /// Mark broken by a fatal protocol violation (no Shutdown is sent, as in 4.11).
    fn broken(&mut self, why: &'static str) {
        self.stats.malformed.other += 1;
        self.finish_close(Some(ConnectionError::ProtocolViolation(why)));
    }
}

/// The shortest period UDT_MAXBW (`bytes_per_sec`) allows between packets of `mss` bytes, to
/// the nanosecond as 4.11's floating-point period is. Rounded up to whole microseconds, a
/// cap of 960 Mbit/s (12.5 µs) paced at 13 µs: 4% under what was asked.
fn max_bandwidth_period(mss: u32, bytes_per_sec: u64) -> Duration {
    let nanos = (u64::from(mss) * 1_000_000_000).div_ceil(bytes_per_sec.max(1));
    Duration::from_nanos(nanos)
}

#[cfg(test)]
mod max_bandwidth_tests {
    use super::*;

    #[test]
    fn the_maxbw_period_is_not_rounded_to_microseconds() {
        // 960 Mbit/s = 120,000,000 B/s; 1500-byte packets: 12.5 µs.
        let period = max_bandwidth_period(1500, 120_000_000);
        assert_eq!(period, Duration::from_nanos(12_500));
        // Exact rates stay exact; a zero rate does not divide by zero.
        assert_eq!(
            max_bandwidth_period(1500, 125_000_000),
            Duration::from_micros(12)
        );
        assert_eq!(
            max_bandwidth_period(1500, 0),
            Duration::from_micros(1_500_000_000)
        );
    }
}
