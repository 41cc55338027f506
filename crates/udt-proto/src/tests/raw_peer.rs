//! One side driven by hand: the test plays the peer byte by byte, the way libudt 4.11 would,
//! and checks what our side puts on the wire and how it reacts.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::watched::{Watched, Watcher};
use crate::config::ConnectionConfig;
use crate::congestion::{Controller, ControllerFactory, Native};
use crate::connection::{Connection, ConnectionError, State};
use crate::endpoint::{DatagramEvent, Endpoint};
use crate::seq::{AckNumber, SeqNumber, SocketId};
use crate::time::Instant;
use crate::wire::{
    AckDetails, AckRates, AckRepr, Capabilities, CapabilityAnnouncement, ControlBody, ControlRepr,
    DataRepr, HandshakeRepr, NakRepr, Packet, ReqType, SeqRange, SocketType, Timestamp,
};

const PEER_ID: SocketId = SocketId(0x0BAD_F00D);

fn us() -> SocketAddr {
    "192.0.2.1:9000".parse().unwrap()
}

fn peer() -> SocketAddr {
    "192.0.2.10:9000".parse().unwrap()
}

/// Our connection plus the clock; the test is the peer.
struct Raw {
    now: Instant,
    conn: Connection,
}

impl Raw {
    /// Our side connects as a client; returns it after the 4-message handshake with `isn`.
    fn client() -> (Self, SeqNumber) {
        Self::client_with(ConnectionConfig::default())
    }

    /// [`Self::client`] with `config`.
    fn client_with(config: ConnectionConfig) -> (Self, SeqNumber) {
        let mut ep = Endpoint::new(1);
        let now = Instant::from_micros(1_000);
        let conn = ep.connect(now, peer(), config).unwrap();
        let mut raw = Self { now, conn };
        let first = raw.handshakes().remove(0);
        let mut echo = first;
        echo.cookie = 0x1234_5678;
        raw.feed_control(ControlBody::Handshake(echo));
        let second = raw.handshakes().remove(0);
        assert_eq!(second.req_type, ReqType::RESPONSE);
        assert_eq!(second.cookie, 0x1234_5678);
        let mut response = second;
        response.socket_id = PEER_ID;
        raw.feed_control(ControlBody::Handshake(response));
        assert_eq!(raw.conn.state(), State::Connected);
        (raw, second.isn)
    }

    fn advance(&mut self, d: Duration) {
        self.now += d;
        self.conn.handle_timeout(self.now);
    }

    fn feed(&mut self, packet: Packet<'_>) {
        let mut bytes = Vec::new();
        packet.emit(&mut bytes);
        self.conn.handle_datagram(self.now, peer(), &bytes);
    }

    fn feed_control(&mut self, body: ControlBody) {
        let dst = self.conn.local_id();
        self.feed(Packet::Control(ControlRepr {
            timestamp: Timestamp(0),
            dst,
            body,
        }));
    }

    /// Everything our side sends now, as raw datagrams: a due timeout first, as
    /// `Connection::drive` runs one after the datagrams handed over (an ACK a GSO peer's
    /// data found due waits for it).
    fn drain(&mut self) -> Vec<Vec<u8>> {
        if self.conn.poll_timeout().is_some_and(|t| t <= self.now) {
            self.conn.handle_timeout(self.now);
        }
        let mut out = Vec::new();
        loop {
            let mut buf = Vec::new();
            match self.conn.poll_transmit(self.now, &mut buf) {
                Some(t) => {
                    assert_eq!(t.destination, peer());
                    out.push(buf);
                }
                None => return out,
            }
        }
    }

    fn controls(&mut self) -> Vec<ControlBody> {
        self.drain()
            .iter()
            .filter_map(|d| match Packet::parse(d) {
                Ok(Packet::Control(c)) => Some(c.body),
                _ => None,
            })
            .collect()
    }

    fn handshakes(&mut self) -> Vec<HandshakeRepr> {
        self.controls()
            .into_iter()
            .filter_map(|b| match b {
                ControlBody::Handshake(h) => Some(h),
                _ => None,
            })
            .collect()
    }

    /// Data packets our side sends within the next millisecond (pacing spaces them).
    fn data_seqs(&mut self) -> Vec<SeqNumber> {
        self.advance(Duration::from_millis(1));
        self.drain()
            .iter()
            .filter_map(|d| match Packet::parse(d) {
                Ok(Packet::Data(d)) => Some(d.seq),
                _ => None,
            })
            .collect()
    }
}

fn full_ack(number: u32, ack: SeqNumber) -> ControlBody {
    numbered_ack(number, ack, None)
}

/// A numbered ACK `number` for `ack` with 4.11's first RTT figures, 8,190 packets free and
/// `rates`.
fn numbered_ack(number: u32, ack: SeqNumber, rates: Option<AckRates>) -> ControlBody {
    ControlBody::Ack(AckRepr {
        number: AckNumber::new(number),
        ack,
        details: Some(AckDetails {
            rtt_us: 100_000,
            rtt_var_us: 50_000,
            avail_buf_pkts: 8190,
            rates,
        }),
    })
}

/// With 4.11's fixed buffers (autotuning off), our request is 4.11's to the byte; with
/// autotuning on, only the flow window differs (the most the receive buffer may grow to).
#[test]
fn first_request_is_byte_for_byte_a_4_11_request() {
    let mut ep = Endpoint::new(9);
    ep.set_next_isn(SeqNumber::new(0x2A3B_4C5D));
    let mut fixed = ConnectionConfig::default();
    fixed.buffer_autotune_limit(None);
    let mut conn = ep.connect(Instant::ZERO, peer(), fixed).unwrap();
    let mut buf = Vec::new();
    conn.poll_transmit(Instant::ZERO, &mut buf).unwrap();
    let id = conn.local_id().0.to_be_bytes();
    #[rustfmt::skip]
    let expected: Vec<u8> = [
        &[0x80, 0, 0, 0][..],  // control, type 0 (handshake)
        &[0, 0, 0, 0],         // additional info
        &[0, 0, 0, 0],         // timestamp: 0 for control packets
        &[0, 0, 0, 0],         // destination socket 0: a connection request
        &[0, 0, 0, 4],         // version 4
        &[0, 0, 0, 1],         // socket type 1 = STREAM (4.11 value)
        &[0x2A, 0x3B, 0x4C, 0x5D], // ISN
        &[0, 0, 0x05, 0xDC],   // MSS 1500
        &[0, 0, 0x20, 0],      // flow window 8192
        &[0, 0, 0, 1],         // request type 1 (regular, first step)
        &id,                   // our socket id
        &[0, 0, 0, 0],         // cookie 0
        &[0x0A, 0x02, 0, 0xC0], // 192.0.2.10, octets reversed as 4.11 on x86
        &[0; 12],
    ]
    .concat();
    assert_eq!(buf, expected);

    let mut conn = ep
        .connect(Instant::ZERO, peer(), ConnectionConfig::default())
        .unwrap();
    let mut tuned = Vec::new();
    conn.poll_transmit(Instant::ZERO, &mut tuned).unwrap();
    let window = u32::from_be_bytes(tuned[32..36].try_into().unwrap());
    let limit = (crate::config::DEFAULT_AUTOTUNE_LIMIT_BYTES / 1456) as u32;
    assert_eq!(window, limit);
    let differing: Vec<usize> = (0..buf.len()).filter(|&i| buf[i] != tuned[i]).collect();
    // The window, the ISN (a new connection draws the next one) and the socket id.
    assert!(
        differing
            .iter()
            .all(|&i| (32..36).contains(&i) || (24..28).contains(&i) || (40..44).contains(&i)),
        "{differing:?}"
    );
}

#[test]
fn every_numbered_ack_gets_an_ack2_and_light_acks_none() {
    let (mut raw, isn) = Raw::client();
    raw.conn.send(raw.now, &[5u8; 1456 * 3]).unwrap();
    assert_eq!(raw.data_seqs(), vec![isn, isn + 1u32, isn + 2u32]);
    raw.feed_control(full_ack(1, isn + 2u32));
    raw.feed_control(full_ack(2, isn + 3u32));
    raw.feed_control(ControlBody::Ack(AckRepr {
        number: AckNumber::LIGHT,
        ack: isn + 3u32,
        details: None,
    }));
    let ack2s: Vec<_> = raw
        .controls()
        .into_iter()
        .filter_map(|b| match b {
            ControlBody::Ack2(n) => Some(n.value()),
            _ => None,
        })
        .collect();
    assert_eq!(ack2s, vec![1, 2]);
    assert!(raw.conn.is_send_idle());
}

#[test]
fn ack_beyond_what_was_sent_breaks_the_connection() {
    let (mut raw, isn) = Raw::client();
    raw.conn.send(raw.now, &[1u8; 100]).unwrap();
    raw.drain();
    raw.feed_control(full_ack(1, isn + 5u32));
    assert_eq!(raw.conn.state(), State::Closed);
    assert!(matches!(
        raw.conn.error(),
        Some(ConnectionError::ProtocolViolation(_))
    ));
}

#[test]
fn nak_beyond_what_was_sent_breaks_the_connection() {
    let (mut raw, isn) = Raw::client();
    raw.conn.send(raw.now, &[1u8; 100]).unwrap();
    raw.drain();
    raw.feed_control(ControlBody::Nak(NakRepr {
        ranges: vec![SeqRange::single(isn + 1u32)],
    }));
    assert!(matches!(
        raw.conn.error(),
        Some(ConnectionError::ProtocolViolation(_))
    ));
}

#[test]
fn nak_triggers_retransmission_of_exactly_the_reported_packets() {
    let (mut raw, isn) = Raw::client();
    raw.conn.send(raw.now, &[1u8; 1456 * 10]).unwrap();
    assert_eq!(raw.data_seqs().len(), 10);
    raw.feed_control(ControlBody::Nak(NakRepr {
        ranges: vec![
            SeqRange::single(isn + 2u32),
            SeqRange {
                first: isn + 5u32,
                last: isn + 7u32,
            },
        ],
    }));
    // Collect for 250 ms (before the EXP timer).
    let mut resent = Vec::new();
    for _ in 0..250 {
        resent.extend(raw.data_seqs());
    }
    assert_eq!(resent, vec![isn + 2u32, isn + 5u32, isn + 6u32, isn + 7u32]);
}

#[test]
fn exp_retransmits_unacknowledged_data_with_growing_intervals() {
    let (mut raw, isn) = Raw::client();
    raw.conn.send(raw.now, &[1u8; 1456 * 2]).unwrap();
    assert_eq!(raw.data_seqs().len(), 2);
    let start = raw.now;
    let mut resent_at = Vec::new();
    for _ in 0..2500 {
        // The first packet of each timeout round.
        if raw.data_seqs().first() == Some(&isn) {
            resent_at.push((raw.now - start).as_millis());
        }
        if resent_at.len() == 3 {
            break;
        }
    }
    // 4.11 (observed): intervals of N·(RTT + 4·RTTVar) + SYN with the initial RTT terms,
    // ≈ 0.31, 0.61, 0.91 s; so at ≈ 0.31, 0.92, 1.83 s after the send.
    let gaps: Vec<u128> = resent_at
        .iter()
        .scan(0, |prev, &t| {
            let g = t - *prev;
            *prev = t;
            Some(g)
        })
        .collect();
    assert_eq!(gaps.len(), 3, "{resent_at:?}");
    for (n, g) in gaps.iter().enumerate() {
        let want = 310 * (n as u128 + 1) - 10 * n as u128;
        assert!(
            g.abs_diff(want) <= 2,
            "gap {n}: {g} ms, want ≈ {want}: {gaps:?}"
        );
    }
}

#[test]
fn idle_connection_sends_keepalive_after_about_310ms() {
    let (mut raw, _) = Raw::client();
    raw.drain();
    let start = raw.now;
    loop {
        raw.advance(Duration::from_millis(1));
        let c = raw.controls();
        if c.contains(&ControlBody::KeepAlive) {
            break;
        }
        assert!(raw.now - start < Duration::from_secs(1), "no keep-alive");
    }
    let took = (raw.now - start).as_millis();
    assert!((305..=315).contains(&took), "keep-alive after {took} ms");
}

impl Raw {
    /// Feed data packet `seq` with `len` payload bytes.
    fn feed_data(&mut self, seq: SeqNumber, len: usize) {
        let payload = [9u8; 1456];
        let dst = self.conn.local_id();
        self.feed(Packet::Data(DataRepr {
            seq,
            boundary: crate::wire::Boundary::Middle,
            in_order: false,
            msg: crate::seq::MsgNumber::new(1),
            timestamp: Timestamp(0),
            dst,
            payload: &payload[..len],
        }));
    }

    /// The ACKs our side sends now.
    fn acks(&mut self) -> Vec<AckRepr> {
        self.controls()
            .into_iter()
            .filter_map(|b| match b {
                ControlBody::Ack(a) => Some(a),
                _ => None,
            })
            .collect()
    }
}

#[test]
fn receiver_naks_a_gap_at_once_and_acks_when_the_gap_fills() {
    let (mut raw, isn) = Raw::client();
    raw.drain();
    raw.feed_data(isn, 1456);
    raw.feed_data(isn + 3u32, 1456);
    let controls = raw.controls();
    let naks: Vec<_> = controls
        .iter()
        .filter_map(|b| match b {
            ControlBody::Nak(n) => Some(n.ranges.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        naks,
        vec![vec![SeqRange {
            first: isn + 1u32,
            last: isn + 2u32
        }]]
    );
    // The first packet was acknowledged at once (prompt ACK), and the ACK stops at the hole.
    let acks: Vec<_> = controls
        .iter()
        .filter_map(|b| match b {
            ControlBody::Ack(a) => Some(a.ack),
            _ => None,
        })
        .collect();
    assert_eq!(acks, vec![isn + 1u32], "ACK stops at the first hole");
    // The hole fills and a short packet (a write's tail) arrives within the prompt-ACK gap:
    // no ACK yet (4.11 would ACK the short packet at once)…
    raw.feed_data(isn + 1u32, 1456);
    raw.feed_data(isn + 2u32, 1456);
    raw.feed_data(isn + 4u32, 10);
    assert!(raw.acks().is_empty());
    // …but at the gap's end (RTT / 64 with the initial 100 ms RTT), long before SYN.
    raw.advance(Duration::from_micros(1_563));
    let acks = raw.acks();
    assert_eq!(acks.len(), 1);
    assert_eq!(acks[0].ack, isn + 5u32);
    assert!(acks[0].details.is_some(), "a numbered ACK");
}

/// Deviation (report stamps): our ACKs and NAKs carry, in the header timestamp, when the
/// newest data packet arrived (4.11 leaves it 0 on every control packet and never reads
/// it), so a sender can time delivery on the receiver's clock; light ACKs and keep-alives
/// stay 0, as 4.11's.
#[test]
fn reports_carry_the_newest_arrival_time() {
    let (mut raw, isn) = Raw::client();
    raw.drain();
    let stamped = |raw: &mut Raw| -> Vec<(u32, ControlBody)> {
        raw.drain()
            .iter()
            .filter_map(|d| match Packet::parse(d) {
                Ok(Packet::Control(c)) => Some((c.timestamp.0, c.body)),
                _ => None,
            })
            .collect()
    };
    // (Not at the connection's first instant, whose stamp 0 would read as none: it is sent
    // as 1.)
    raw.now += Duration::from_millis(5);
    raw.feed_data(isn, 1456);
    let first = stamped(&mut raw);
    let ack = first
        .iter()
        .find_map(|(t, b)| matches!(b, ControlBody::Ack(a) if a.details.is_some()).then_some(*t))
        .expect("a prompt numbered ACK");
    assert_ne!(ack, 0);
    // 700 µs later a packet arrives past a hole: the NAK carries its arrival.
    raw.now += Duration::from_micros(700);
    raw.feed_data(isn + 3u32, 1456);
    let nak = stamped(&mut raw)
        .iter()
        .find_map(|(t, b)| matches!(b, ControlBody::Nak(_)).then_some(*t))
        .expect("a NAK");
    assert_eq!(nak.wrapping_sub(ack), 700);
    // Nothing arrives after it: a report made later still carries that arrival.
    raw.feed_data(isn + 1u32, 1456);
    raw.now += Duration::from_micros(300);
    raw.feed_data(isn + 2u32, 1456);
    raw.advance(Duration::from_millis(20));
    let later = stamped(&mut raw);
    let numbered: Vec<_> = later
        .iter()
        .filter(|(_, b)| matches!(b, ControlBody::Ack(a) if a.details.is_some()))
        .map(|(t, _)| *t)
        .collect();
    assert!(!numbered.is_empty(), "{later:?}");
    assert!(
        numbered.iter().all(|t| t.wrapping_sub(nak) == 300),
        "{numbered:?}"
    );
    assert!(later
        .iter()
        .filter(|(_, b)| matches!(b, ControlBody::KeepAlive)
            || matches!(b, ControlBody::Ack(a) if a.details.is_none()))
        .all(|(t, _)| *t == 0));
}

/// A runtime may hold a connection's reads (and so its ACKs) only once data has flowed for
/// 16 smoothed RTTs, at most 3 s (the initial 100 ms RTT gives 1.6 s here): a `model`
/// sender's start-up times delivery by the ACKs' spacing. A sender, which receives no data,
/// may be held from the start.
#[test]
fn reads_may_wait_once_data_has_flowed_for_a_while() {
    let (mut raw, isn) = Raw::client();
    assert!(raw.conn.reads_may_wait(), "no data yet");
    for i in 0..16u32 {
        raw.feed_data(isn + i, 1456);
        assert!(!raw.conn.reads_may_wait(), "{} ms of data", i * 100);
        raw.now += Duration::from_millis(100);
        raw.drain();
    }
    raw.feed_data(isn + 16u32, 1456);
    assert!(raw.conn.reads_may_wait(), "1.6 s of data");
}

/// Deviation (periodic NAK): the first hole, the one the ACK waits for, is reported again
/// without back-off, within 300 ms (a sender's EXP floor) of its last report, so a sender
/// stalled behind a lost retransmission hears from a receiver that has nothing else to say
/// (its ACK confirmed, no new data) before its EXP resends everything unacknowledged; the
/// range back-off alone left 310 ms, then 620 ms, of silence.
#[test]
fn a_silent_receiver_reports_its_first_loss_before_a_senders_exp() {
    let (mut raw, isn) = Raw::client();
    raw.drain();
    raw.feed_data(isn, 1456);
    raw.feed_data(isn + 3u32, 1456);
    let start = raw.now;
    let mut reports = vec![Duration::ZERO];
    let mut other_naks = false;
    let controls = raw.controls();
    assert!(naks_covering(&controls, isn + 1u32));
    confirm_acks(&mut raw, &controls);
    while raw.now - start < Duration::from_secs(3) {
        raw.advance(Duration::from_millis(1));
        let controls = raw.controls();
        confirm_acks(&mut raw, &controls);
        if naks_covering(&controls, isn + 1u32) {
            reports.push(raw.now - start);
        } else if controls.iter().any(|c| matches!(c, ControlBody::Nak(_))) {
            other_naks = true;
        }
    }
    assert!(!other_naks, "only the hole is reported");
    let gaps: Vec<Duration> = reports.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.len() >= 10, "reports at {reports:?}");
    assert!(
        gaps.iter()
            .all(|g| *g < Duration::from_millis(300) && *g >= Duration::from_millis(20)),
        "reports at {reports:?}"
    );
}

/// Answer every numbered ACK in `controls` with its ACK2, as a live sender does.
fn confirm_acks(raw: &mut Raw, controls: &[ControlBody]) {
    for c in controls {
        if let ControlBody::Ack(a) = c {
            if a.number != AckNumber::LIGHT {
                raw.feed_control(ControlBody::Ack2(a.number));
            }
        }
    }
}

/// Whether `controls` hold a NAK that reports `seq`.
fn naks_covering(controls: &[ControlBody], seq: SeqNumber) -> bool {
    controls.iter().any(|c| match c {
        ControlBody::Nak(n) => n.ranges.iter().any(|r| r.first <= seq && seq <= r.last),
        _ => false,
    })
}

/// Deviation from 4.11 (prompt ACKs): new data is acknowledged at once if no numbered ACK
/// went out for 1 ms (the floor of the gap; RTT / 64 is below it here), else when the gap ends.
#[test]
fn prompt_acks_come_at_once_then_at_most_once_per_gap() {
    let (mut raw, isn) = Raw::client();
    raw.drain();
    raw.feed_data(isn, 1456);
    assert_eq!(
        raw.acks().iter().map(|a| a.ack).collect::<Vec<_>>(),
        [isn + 1u32]
    );
    raw.advance(Duration::from_micros(100));
    raw.feed_data(isn + 1u32, 1456);
    assert!(raw.acks().is_empty(), "within the gap");
    // The initial RTT (100 ms) makes the gap RTT / 64 = 1.5625 ms.
    raw.advance(Duration::from_micros(1_400));
    assert!(raw.acks().is_empty(), "still within the gap");
    raw.advance(Duration::from_micros(100));
    assert_eq!(
        raw.acks().iter().map(|a| a.ack).collect::<Vec<_>>(),
        [isn + 2u32]
    );
    // Long after: the next packet is acknowledged on arrival again.
    raw.advance(Duration::from_millis(5));
    raw.feed_data(isn + 2u32, 1456);
    let acks = raw.acks();
    assert_eq!(acks.iter().map(|a| a.ack).collect::<Vec<_>>(), [isn + 3u32]);
    // 16-byte ACK (the 24-byte one with rates went out less than SYN ago).
    assert!(acks[0].details.is_some_and(|d| d.rates.is_none()));
}

/// To a peer that sends GSO trains (both sides announced GSO), a prompt ACK with less than
/// a quarter of its gap left goes out at once: such a peer's trains come about a gap apart,
/// so waiting out the last of the gap cost the receiver a wake-up of its own per train. A
/// plain 4.11 peer waits out the gap (`prompt_acks_come_at_once_then_at_most_once_per_gap`).
#[test]
fn to_a_gso_peer_a_prompt_ack_due_within_a_quarter_gap_goes_at_once() {
    let (mut raw, isn) = gso_client();
    // The first train is acknowledged at once; the gap is then RTT / 64 = 1.5625 ms (the
    // initial 100 ms RTT). From a GSO peer a prompt ACK waits for 32 packets (or a write's
    // end), so each train comes in one go. The next one comes 1.2 ms after the ACK: 0.36 ms,
    // less than a quarter of the gap, is left.
    let train = |raw: &mut Raw, from: u32| {
        for i in from..from + 32 {
            raw.feed_data(isn + i, 1456);
        }
    };
    train(&mut raw, 0);
    assert_eq!(
        raw.acks().iter().map(|a| a.ack).collect::<Vec<_>>(),
        [isn + 32u32]
    );
    raw.advance(Duration::from_micros(1_200));
    // 31 packets are not enough for a prompt ACK; the 32nd is.
    for i in 32..63u32 {
        raw.feed_data(isn + i, 1456);
    }
    assert!(raw.acks().is_empty(), "31 packets since the ACK");
    raw.feed_data(isn + 63u32, 1456);
    assert_eq!(
        raw.acks().iter().map(|a| a.ack).collect::<Vec<_>>(),
        [isn + 64u32],
        "the train is acknowledged on arrival"
    );
    // A train half a gap after that ACK waits for the gap's end.
    raw.advance(Duration::from_micros(780));
    train(&mut raw, 64);
    assert!(raw.acks().is_empty(), "half the gap is left");
    raw.advance(Duration::from_micros(790));
    assert_eq!(
        raw.acks().iter().map(|a| a.ack).collect::<Vec<_>>(),
        [isn + 96u32]
    );
}

/// A client whose peer sends GSO trains (both sides announced GSO), its output drained.
fn gso_client() -> (Raw, SeqNumber) {
    gso_client_with(ConnectionConfig::default())
}

/// [`gso_client`] with `config`.
fn gso_client_with(config: ConnectionConfig) -> (Raw, SeqNumber) {
    announced_client(config, Capabilities::GSO)
}

/// A client with `config` that announces GSO, whose peer announced `theirs`, its output
/// drained.
fn announced_client(config: ConnectionConfig, theirs: Capabilities) -> (Raw, SeqNumber) {
    let (mut raw, isn) = Raw::client_with(config);
    raw.conn.set_local_extensions(Capabilities::GSO);
    let ours = raw.controls();
    assert!(
        ours.iter()
            .any(|b| matches!(b, ControlBody::UserDefined { .. })),
        "our announcement: {ours:?}"
    );
    let announcement = CapabilityAnnouncement {
        capabilities: theirs,
        heard: true,
    };
    raw.feed_control(announcement.to_control_body());
    assert_eq!(
        raw.conn.common_extensions(),
        Capabilities::GSO.intersection(theirs)
    );
    raw.drain();
    (raw, isn)
}

/// The front an ACK reports, if any.
fn front_of(ack: &AckRepr) -> Option<SeqNumber> {
    ack.details.and_then(|d| d.rates).and_then(|r| r.front)
}

/// Deviation (fronts, between udt peers): to a peer that announced `ACK_FRONT`, every
/// numbered ACK carries the receiver's front, and the ACK timer sends one when data arrived
/// behind a hole since the last report, though the hole holds the ACK number (without that
/// a model sender's start-up at 1 Gbit/s x 100 ms with 1% loss grew 1.5 times a round
/// instead of twice). A peer that did not announce it gets 4.11's ACKs.
#[test]
fn to_a_peer_that_reads_fronts_acks_report_what_arrived_behind_a_hole() {
    for reads in [true, false] {
        let theirs = if reads {
            Capabilities::GSO.union(Capabilities::ACK_FRONT)
        } else {
            Capabilities::GSO
        };
        let (mut raw, isn) = announced_client(ConnectionConfig::default(), theirs);
        let feed = |raw: &mut Raw, seqs: &mut dyn Iterator<Item = u32>| {
            for i in seqs {
                raw.feed_data(isn + i, 1456);
            }
        };
        feed(&mut raw, &mut (0..100).filter(|&i| i != 10));
        let acks = acks_over_a_period(&mut raw);
        let last = acks.last().expect("acknowledged up to the hole");
        assert_eq!(last.ack, isn + 10u32);
        if reads {
            assert_eq!(front_of(last), Some(isn + 100u32));
        } else {
            assert!(acks.iter().all(|a| front_of(a).is_none()), "{acks:?}");
        }
        // More behind the hole: the ACK number cannot move, the front can.
        feed(&mut raw, &mut (100..150));
        let acks = acks_over_a_period(&mut raw);
        let reported: Vec<_> = acks.iter().map(|a| (a.ack, front_of(a))).collect();
        if reads {
            assert_eq!(reported, [(isn + 10u32, Some(isn + 150u32))]);
        } else {
            assert!(reported.is_empty(), "4.11's ACKs: {reported:?}");
        }
        // Nothing new arrived: nothing to report.
        let quiet = acks_over_a_period(&mut raw);
        assert!(quiet.is_empty(), "{quiet:?}");
    }
}

/// Records the fronts its controller hears.
#[derive(Debug)]
struct HearsFronts {
    fronts: Arc<Mutex<Vec<SeqNumber>>>,
}

impl Watcher for HearsFronts {
    fn front(&mut self, front: SeqNumber) {
        self.fronts.lock().unwrap().push(front);
    }
    fn name(&self) -> &'static str {
        "hears-fronts"
    }
}

#[derive(Debug, Default)]
struct HearsFrontsFactory {
    fronts: Arc<Mutex<Vec<SeqNumber>>>,
}

impl ControllerFactory for HearsFrontsFactory {
    fn build(&self) -> Box<dyn Controller> {
        Box::new(Watched {
            inner: Box::new(Native::default()),
            watcher: HearsFronts {
                fronts: self.fronts.clone(),
            },
        })
    }
    fn name(&self) -> &'static str {
        "hears-fronts"
    }
}

/// A full ACK numbered `number` for `ack` that reports `front`.
fn ack_with_front(number: u32, ack: SeqNumber, front: SeqNumber) -> ControlBody {
    let rates = AckRates {
        recv_rate_pkts: 0,
        bandwidth_pkts: 0,
        front: Some(front),
    };
    numbered_ack(number, ack, Some(rates))
}

/// The controller hears a front from a peer that announced `ACK_FRONT`, with an ACK that
/// moves the send buffer or alone, when it lies beyond the ACK number and within what was
/// sent; a front outside that, or from a peer that did not announce it, is ignored (and
/// breaks nothing).
#[test]
fn a_peers_front_reaches_the_controller_only_when_it_can_be_true() {
    for reads in [true, false] {
        let factory = Arc::new(HearsFrontsFactory::default());
        let mut config = ConnectionConfig::default();
        config.controller(factory.clone());
        let theirs = if reads {
            Capabilities::ACK_FRONT
        } else {
            Capabilities::NONE
        };
        let (mut raw, isn) = announced_client(config, theirs);
        raw.conn.send(raw.now, &[5u8; 1456 * 3]).unwrap();
        assert_eq!(raw.data_seqs(), vec![isn, isn + 1u32, isn + 2u32]);
        raw.feed_control(ack_with_front(1, isn + 1u32, isn + 2u32));
        raw.feed_control(ack_with_front(2, isn + 1u32, isn + 3u32));
        // Beyond what was sent, then not beyond the ACK number.
        raw.feed_control(ack_with_front(3, isn + 1u32, isn + 4u32));
        raw.feed_control(ack_with_front(4, isn + 2u32, isn + 2u32));
        let heard = factory.fronts.lock().unwrap().clone();
        if reads {
            assert_eq!(heard, [isn + 2u32, isn + 3u32]);
        } else {
            assert!(heard.is_empty(), "{heard:?}");
        }
        assert_eq!(raw.conn.state(), State::Connected);
    }
}

/// Everything our side sends over the next ACK period, ACKs confirmed as a peer would; the
/// ACKs.
fn acks_over_a_period(raw: &mut Raw) -> Vec<AckRepr> {
    let mut acks = raw.acks();
    raw.advance(Duration::from_millis(11));
    acks.extend(raw.acks());
    let bodies: Vec<_> = acks.iter().cloned().map(ControlBody::Ack).collect();
    confirm_acks(raw, &bodies);
    acks
}

/// The application reads all it can.
fn read_all(raw: &mut Raw) {
    let mut buf = vec![0u8; 1 << 20];
    while raw.conn.recv(&mut buf).is_ok_and(|n| n > 0) {}
}

/// A filled hole moves the ACK point a long way, and the ACK that says so counts all it
/// acknowledges as unread (the application reads it a moment later): its window ends short
/// of what the buffer takes. While the next hole holds the ACK point nothing new is
/// acknowledged, so to a GSO peer the ACK timer sends the larger window once the sender
/// has less than half the buffer left of the short one (a `model` flow at 1 Gbit/s ×
/// 200 ms with 1% loss ran into that edge about once a second and sent only
/// retransmissions for 100-150 ms). A 4.11 peer gets 4.11's ACKs.
#[test]
fn to_a_gso_peer_the_ack_timer_moves_an_edge_a_filled_hole_left_short() {
    const CAPACITY: u32 = 1000;
    let mut config = ConnectionConfig::default();
    config.recv_buffer_pkts(CAPACITY).unwrap();
    for gso in [true, false] {
        let (mut raw, isn) = if gso {
            gso_client_with(config.clone())
        } else {
            Raw::client_with(config.clone())
        };
        raw.drain();
        let feed = |raw: &mut Raw, seqs: &mut dyn Iterator<Item = u32>| {
            for i in seqs {
                raw.feed_data(isn + i, 1456);
            }
        };
        // 400 packets with a hole at 100; then the hole and 150 more with a hole at 450.
        feed(&mut raw, &mut (0..400).filter(|&i| i != 100));
        acks_over_a_period(&mut raw);
        read_all(&mut raw);
        feed(
            &mut raw,
            &mut (100..=100).chain((400..550).filter(|&i| i != 450)),
        );
        let acks = acks_over_a_period(&mut raw);
        let last = acks.last().expect("the filled hole is acknowledged");
        assert_eq!(last.ack, isn + 450u32);
        let short = last.details.expect("a numbered ACK").avail_buf_pkts;
        assert!(short < CAPACITY - 300, "{short} free of {CAPACITY}");
        read_all(&mut raw);
        let quiet = acks_over_a_period(&mut raw);
        assert!(
            quiet.is_empty(),
            "nothing new yet: {quiet:?} (short {short})"
        );
        // The sender has more than half the buffer left (549 packets), then goes on to 350
        // short of the edge: less than half, but more than the eighth at which a read
        // would have sent the window (`note_buffer_freed`), had there been one.
        let edge = 450 + short;
        feed(&mut raw, &mut (550..edge - 350));
        let acks = acks_over_a_period(&mut raw);
        let windows: Vec<_> = acks
            .iter()
            .map(|a| (a.ack, a.details.map(|d| d.avail_buf_pkts)))
            .collect();
        if gso {
            assert_eq!(windows, [(isn + 450u32, Some(CAPACITY - 1))], "gso");
        } else {
            assert!(windows.is_empty(), "4.11's ACKs: {windows:?}");
        }
    }
}

/// A runtime hands over a read's datagrams (a GRO train shares one arrival stamp) and then
/// drives the connection. To a GSO peer, an ACK the first of them finds due goes out at
/// that drive and covers them all; 4.11's rule ACKs the first at once, and the rest waited
/// for another ACK (two ACKs, two ACK2s per train behind a 45 Mbit/s shaper).
#[test]
fn to_a_gso_peer_an_ack_due_at_a_trains_first_datagram_covers_the_train() {
    let train = |raw: &mut Raw, isn: SeqNumber, from: u32, to: u32| {
        for i in from..to {
            raw.feed_data(isn + i, 1456);
        }
    };
    for gso in [true, false] {
        let (mut raw, isn) = if gso { gso_client() } else { Raw::client() };
        raw.drain();
        train(&mut raw, isn, 0, 1);
        raw.drain();
        // The read comes after the ACK period: its first datagram finds the ACK timer due
        // (nothing drove the connection in between, as during a runtime's hold).
        raw.now += Duration::from_millis(12);
        train(&mut raw, isn, 1, 21);
        let acked: Vec<_> = raw.acks().iter().map(|a| a.ack).collect();
        if gso {
            assert_eq!(acked, [isn + 21u32], "one ACK for the read");
        } else {
            assert_eq!(acked, [isn + 2u32], "4.11's rule: the first datagram's ACK");
        }
    }
}

/// To a GSO peer, the ACK period after an ACK that a held read sent late counts from when
/// it left, not from the arrival that found it due: counted from the arrival, the next ACK
/// fell due a millisecond or two after this one, for the few packets that came meanwhile.
#[test]
fn to_a_gso_peer_the_ack_period_counts_from_a_late_acks_departure() {
    let (mut raw, isn) = gso_client();
    raw.feed_data(isn, 1456);
    raw.drain();
    // Datagrams that arrived 8 ms before the runtime read them (and drove the connection).
    let read = raw.now + Duration::from_millis(20);
    raw.now += Duration::from_millis(12);
    for i in 1..21u32 {
        raw.feed_data(isn + i, 1456);
    }
    raw.now = read;
    assert_eq!(
        raw.acks().iter().map(|a| a.ack).collect::<Vec<_>>(),
        [isn + 21u32]
    );
    // A few more 3 ms later: 5 ms after the late arrivals' period would have ended.
    raw.now += Duration::from_millis(3);
    for i in 21..25u32 {
        raw.feed_data(isn + i, 1456);
    }
    assert!(
        raw.acks().is_empty(),
        "within the period since the ACK left"
    );
    raw.advance(Duration::from_millis(7));
    assert_eq!(
        raw.acks().iter().map(|a| a.ack).collect::<Vec<_>>(),
        [isn + 25u32]
    );
}

/// A drop request for packets never received (an expired message's lost or unsent tail)
/// moves the ACK point with no data arriving, and is acknowledged although the ACK timer
/// rests. It used not to be: the sender kept its last packet unacknowledged and a message
/// transfer with a TTL never finished (`expired_messages_are_dropped_on_both_sides`, 2 of
/// 40 seeds).
#[test]
fn a_drop_request_for_packets_never_received_is_acknowledged() {
    let (mut raw, isn) = Raw::client();
    raw.drain();
    raw.feed_data(isn, 1456);
    let acks = raw.acks();
    assert_eq!(acks.iter().map(|a| a.ack).collect::<Vec<_>>(), [isn + 1u32]);
    // The ACK is confirmed: nothing is pending, so the ACK timer rests.
    raw.feed_control(ControlBody::Ack2(acks[0].number));
    raw.advance(Duration::from_millis(50));
    assert!(raw.acks().is_empty());
    raw.feed_control(ControlBody::DropRequest {
        msg: crate::seq::MsgNumber::new(2),
        first: isn + 1u32,
        last: isn + 3u32,
    });
    let mut acked = Vec::new();
    for _ in 0..20 {
        raw.advance(Duration::from_millis(1));
        acked.extend(raw.acks().iter().map(|a| a.ack));
    }
    assert_eq!(acked, [isn + 4u32]);
}

#[test]
fn light_ack_every_64_packets() {
    let (mut raw, isn) = Raw::client();
    raw.drain();
    let payload = [1u8; 1456];
    let dst = raw.conn.local_id();
    let mut lights = 0;
    // 130 full packets within one ACK period: light ACKs at 64 and 128.
    for i in 0..130u32 {
        raw.feed(Packet::Data(DataRepr {
            seq: isn + i,
            boundary: crate::wire::Boundary::Middle,
            in_order: false,
            msg: crate::seq::MsgNumber::new(1),
            timestamp: Timestamp(0),
            dst,
            payload: &payload,
        }));
        for b in raw.controls() {
            if let ControlBody::Ack(AckRepr {
                details: None, ack, ..
            }) = b
            {
                lights += 1;
                assert_eq!(ack, isn + (i + 1));
            }
        }
    }
    assert_eq!(lights, 2);
}

/// Our listener at `us()` accepts a 4.11-style client at `peer()`: returns the endpoint, the
/// accepted connection and the client's final request (req −1 with the cookie), as bytes.
fn accepted_server(now: Instant) -> (Endpoint, Connection, Vec<u8>) {
    let mut ep = Endpoint::new(3);
    ep.listen(ConnectionConfig::default());
    let mut request = crate::handshake::Connector::request(
        SocketType::STREAM,
        SeqNumber::new(777),
        1400,
        4096,
        PEER_ID,
        us().ip(),
        false,
    );
    let mut bytes = Vec::new();
    let mut buf = Vec::new();
    let wrap = |hs: HandshakeRepr, out: &mut Vec<u8>| {
        out.clear();
        Packet::Control(ControlRepr {
            timestamp: Timestamp(0),
            dst: SocketId::NONE,
            body: ControlBody::Handshake(hs),
        })
        .emit(out);
    };
    wrap(request, &mut bytes);
    let Some(DatagramEvent::Response(_)) = ep.handle(now, peer(), &bytes, &mut buf) else {
        panic!("no cookie echo")
    };
    let Ok(Packet::Control(ControlRepr {
        body: ControlBody::Handshake(echo),
        ..
    })) = Packet::parse(&buf)
    else {
        panic!()
    };
    request.req_type = ReqType::RESPONSE;
    request.cookie = echo.cookie;
    wrap(request, &mut bytes);
    let Some(DatagramEvent::NewConnection(inc)) = ep.handle(now, peer(), &bytes, &mut buf) else {
        panic!("not accepted")
    };
    let conn = ep.accept(now, inc, None);
    (ep, conn, bytes)
}

fn first_handshake(out: &[u8]) -> (SocketId, HandshakeRepr) {
    let Ok(Packet::Control(c)) = Packet::parse(out) else {
        panic!("not a control packet")
    };
    let ControlBody::Handshake(h) = c.body else {
        panic!("not a handshake")
    };
    (c.dst, h)
}

#[test]
fn server_repeats_its_response_to_a_repeated_request() {
    let now = Instant::from_micros(5);
    let (mut ep, mut conn, request) = accepted_server(now);
    let mut out = Vec::new();
    conn.poll_transmit(now, &mut out).unwrap();
    let (dst, resp) = first_handshake(&out);
    assert_eq!(dst, PEER_ID);
    assert_eq!(resp.req_type, ReqType::RESPONSE);
    assert_eq!(
        resp.isn,
        SeqNumber::new(777),
        "server echoes the client's ISN"
    );
    assert_eq!(resp.mss, 1400, "min of both MSS");
    assert_eq!(resp.socket_id, conn.local_id());
    // The client missed it and asks again: routed to the same connection, same answer.
    let mut buf = Vec::new();
    let Some(DatagramEvent::Connection(id)) = ep.handle(now, peer(), &request, &mut buf) else {
        panic!("repeat not routed to the connection")
    };
    assert_eq!(id, conn.local_id());
    conn.handle_datagram(now, peer(), &request);
    out.clear();
    conn.poll_transmit(now, &mut out).unwrap();
    let (_, again) = first_handshake(&out);
    assert_eq!((again.isn, again.socket_id), (resp.isn, resp.socket_id));
}

/// Quirk 28: a just-connected 4.11 client drops data that races its registration, so the
/// server waits until the client speaks, or 50 ms.
#[test]
fn server_holds_first_data_until_the_client_is_heard_or_50ms() {
    let now = Instant::from_micros(5);
    let (_ep, conn, _) = accepted_server(now);
    let mut raw = Raw { now, conn };
    raw.drain();
    raw.conn.send(raw.now, &[3u8; 100]).unwrap();
    assert!(raw.data_seqs().is_empty(), "data sent during the hold");
    raw.feed_control(ControlBody::KeepAlive);
    assert_eq!(
        raw.data_seqs().len(),
        1,
        "the client spoke: data goes at once"
    );

    let (_ep, conn, _) = accepted_server(now);
    let mut quiet = Raw { now, conn };
    quiet.drain();
    quiet.conn.send(quiet.now, &[3u8; 100]).unwrap();
    let mut first_at = None;
    for _ in 0..60 {
        if !quiet.data_seqs().is_empty() {
            first_at = Some(quiet.now - now);
            break;
        }
    }
    let first_at = first_at.expect("data never sent");
    assert!(
        first_at >= Duration::from_millis(50) && first_at <= Duration::from_millis(51),
        "first data after {first_at:?}"
    );
}

#[test]
fn caller_announces_itself_after_connecting() {
    let mut ep = Endpoint::new(1);
    let now = Instant::from_micros(1_000);
    let conn = ep
        .connect(now, peer(), ConnectionConfig::default())
        .unwrap();
    let mut raw = Raw { now, conn };
    let mut hs = raw.handshakes().remove(0);
    hs.cookie = 1;
    raw.feed_control(ControlBody::Handshake(hs));
    let mut response = raw.handshakes().remove(0);
    response.socket_id = PEER_ID;
    raw.feed_control(ControlBody::Handshake(response));
    assert_eq!(raw.controls(), vec![ControlBody::KeepAlive]);
}

/// Hostile handshakes: an MSS too small for the headers must not reach size arithmetic.
#[test]
fn tiny_or_huge_mss_in_a_handshake_is_refused() {
    for mss in [0u32, 43, 75, 65_536, u32::MAX] {
        // As a client: a response carrying it is ignored.
        let mut ep = Endpoint::new(1);
        let now = Instant::from_micros(1_000);
        let conn = ep
            .connect(now, peer(), ConnectionConfig::default())
            .unwrap();
        let mut raw = Raw { now, conn };
        let mut hs = raw.handshakes().remove(0);
        hs.cookie = 1;
        raw.feed_control(ControlBody::Handshake(hs));
        let mut response = raw.handshakes().remove(0);
        response.socket_id = PEER_ID;
        response.mss = mss;
        raw.feed_control(ControlBody::Handshake(response));
        assert_eq!(raw.conn.state(), State::Connecting, "mss {mss}");

        // As a listener: a request carrying it is rejected with 1002.
        let mut ep = Endpoint::new(3);
        ep.listen(ConnectionConfig::default());
        let mut request = crate::handshake::Connector::request(
            SocketType::STREAM,
            SeqNumber::new(1),
            mss,
            64,
            PEER_ID,
            us().ip(),
            false,
        );
        let mut buf = Vec::new();
        let mut bytes = Vec::new();
        Packet::Control(ControlRepr {
            timestamp: Timestamp(0),
            dst: SocketId::NONE,
            body: ControlBody::Handshake(request),
        })
        .emit(&mut bytes);
        ep.handle(now, peer(), &bytes, &mut buf);
        let (_, echo) = first_handshake(&buf);
        request.req_type = ReqType::RESPONSE;
        request.cookie = echo.cookie;
        bytes.clear();
        buf.clear();
        Packet::Control(ControlRepr {
            timestamp: Timestamp(0),
            dst: SocketId::NONE,
            body: ControlBody::Handshake(request),
        })
        .emit(&mut bytes);
        let Some(DatagramEvent::Response(_)) = ep.handle(now, peer(), &bytes, &mut buf) else {
            panic!("mss {mss}: not refused");
        };
        assert_eq!(first_handshake(&buf).1.req_type, ReqType::REJECTED);
        assert_eq!(ep.connection_count(), 0);
    }
}
