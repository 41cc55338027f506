//! Golden byte vectors for every packet type (from udt-protocol.md §1.10 and the 4.11
//! loopback observations of §13), each checked four ways, plus malformed-input edge cases.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::*;
use crate::fuzzing;
use crate::seq::{AckNumber, MsgNumber, SeqNumber, SocketId};
use crate::time::Instant;

/// Bytes from hex words; spaces are ignored so a word may be split for readability.
fn hex(words: &[&str]) -> Vec<u8> {
    let digits: Vec<u8> = words
        .concat()
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    assert!(digits.len() % 2 == 0, "odd number of hex digits");
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

/// The four checks: deconstruct (parse gives the fields), construct (emit gives the bytes),
/// parse-emit and emit-parse round trips, plus the demux helpers and the fuzz property.
fn check(bytes: &[u8], expected: &Packet<'_>) {
    let parsed = Packet::parse(bytes).expect("golden vector must parse");
    assert_eq!(&parsed, expected, "deconstruct");

    let mut emitted = Vec::new();
    expected.emit(&mut emitted);
    assert_eq!(emitted, bytes, "construct");
    assert_eq!(expected.buffer_len(), bytes.len(), "buffer_len");

    let mut reemitted = Vec::new();
    parsed.emit(&mut reemitted);
    assert_eq!(reemitted, bytes, "parse then emit");
    assert_eq!(
        Packet::parse(&emitted).as_ref(),
        Ok(expected),
        "emit then parse"
    );

    assert_eq!(peek_dst_socket(bytes), Some(expected.dst_socket()));
    assert_eq!(
        is_control(bytes),
        Some(matches!(expected, Packet::Control(_)))
    );
    fuzzing::wire_packet(bytes);
}

fn control(dst: u32, body: ControlBody) -> Packet<'static> {
    Packet::Control(ControlRepr {
        timestamp: Timestamp::ZERO,
        dst: SocketId(dst),
        body,
    })
}

fn parse_err(words: &[&str]) -> Error {
    Packet::parse(&hex(words)).expect_err("must be rejected")
}

// ---- handshake -------------------------------------------------------------------------

const HS_CLIENT_REQUEST: &[&str] = &[
    "80000000", // control | type 0 handshake | ext 0
    "00000000", // additional info: 0
    "00000000", // timestamp: 0 (4.11 control)
    "00000000", // dst socket: 0 (connection request)
    "00000004", // version 4
    "00000001", // socket type 1 = STREAM (4.11 value)
    "2A3B4C5D", // ISN
    "000005DC", // MSS 1500
    "00002000", // flow window 8192
    "00000001", // req type 1 (regular)
    "0BADF00D", // sender's socket id
    "00000000", // cookie: 0 in the first request
    "0A0200C0", // peer IP 192.0.2.10, octets reversed (§1.8)
    "00000000", // peer IP word 9
    "00000000", // peer IP word 10
    "00000000", // peer IP word 11
];

fn client_request() -> HandshakeRepr {
    HandshakeRepr {
        version: 4,
        socket_type: SocketType::STREAM,
        isn: SeqNumber::new(0x2A3B_4C5D),
        mss: 1500,
        flow_window: 8192,
        req_type: ReqType::REGULAR,
        socket_id: SocketId(0x0BAD_F00D),
        cookie: 0,
        peer_ip: peer_ip_words(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10))),
    }
}

#[test]
fn handshake_client_request_1_10() {
    let packet = control(0, ControlBody::Handshake(client_request()));
    check(&hex(HS_CLIENT_REQUEST), &packet);
    assert_eq!(hex(HS_CLIENT_REQUEST).len(), 64);
    assert_eq!(
        packet.to_string(),
        "hs req=1 v4 type=1 isn=708529245 mss=1500 win=8192 id=0xbadf00d cookie=0x0 \
         ip=192.0.2.10 dst=0x0"
    );
}

const HS_4_11_LOOPBACK_RESPONSE: &[&str] = &[
    "80000000", // control | type 0 handshake
    "00000000", // additional info
    "00000000", // timestamp 0
    "1FFFFF00", // dst: the client's socket id
    "00000004", // version 4
    "00000002", // socket type 2 = DGRAM (4.11 value)
    "7FFFFFFF", // ISN at the 31-bit maximum
    "00000578", // MSS 1400 = min(1400, 1500)
    "00002000", // flow window 8192
    "FFFFFFFF", // req type -1 (response)
    "3FFFFFF0", // new server socket id
    "C0FFEE01", // cookie, echoed
    "0100007F", // peer IP 127.0.0.1, octets reversed
    "00000000", // peer IP word 9
    "00000000", // peer IP word 10
    "00000000", // peer IP word 11
];

#[test]
fn handshake_response_negative_req_type_and_loopback_ip() {
    let repr = HandshakeRepr {
        version: 4,
        socket_type: SocketType::DGRAM,
        isn: SeqNumber::new(SeqNumber::MAX),
        mss: 1400,
        flow_window: 8192,
        req_type: ReqType::RESPONSE,
        socket_id: SocketId(0x3FFF_FFF0),
        cookie: 0xC0FF_EE01,
        peer_ip: [0x0100_007F, 0, 0, 0],
    };
    check(
        &hex(HS_4_11_LOOPBACK_RESPONSE),
        &control(0x1FFF_FF00, ControlBody::Handshake(repr)),
    );
    assert_eq!(repr.peer_addr(false), IpAddr::V4(Ipv4Addr::LOCALHOST));
}

const HS_IPV6_REJECTED: &[&str] = &[
    "80000000", // control | type 0 handshake
    "00000000", // additional info
    "00000000", // timestamp
    "00000000", // dst 0
    "00000005", // version 5 (kept: the connection code rejects it, not the parser)
    "00000001", // socket type STREAM
    "00000000", // ISN 0
    "000005DC", // MSS 1500
    "00002000", // flow window
    "000003EA", // req type 1002 (rejected)
    "00000001", // socket id
    "00000000", // cookie
    "B80D0120", // 2001:0db8: group reversed
    "00000000", // ::
    "00000000", // ::
    "01000000", // ::0001 group reversed
];

#[test]
fn handshake_ipv6_peer_and_unchecked_version() {
    let addr: IpAddr = "2001:db8::1".parse().unwrap();
    let repr = HandshakeRepr {
        version: 5,
        socket_type: SocketType::STREAM,
        isn: SeqNumber::new(0),
        mss: 1500,
        flow_window: 8192,
        req_type: ReqType::REJECTED,
        socket_id: SocketId(1),
        cookie: 0,
        peer_ip: peer_ip_words(addr),
    };
    check(
        &hex(HS_IPV6_REJECTED),
        &control(0, ControlBody::Handshake(repr)),
    );
    assert_eq!(repr.peer_addr(true), addr);
}

#[test]
fn handshake_body_must_be_48_bytes() {
    let full = hex(HS_CLIENT_REQUEST);
    assert_eq!(Packet::parse(&full[..63]), Err(Error::BadLength));
    let mut long = full.clone();
    long.push(0);
    assert_eq!(Packet::parse(&long), Err(Error::BadLength));
    for len in 16..64 {
        assert!(Packet::parse(&full[..len]).is_err(), "len {len}");
    }
}

#[test]
fn handshake_isn_top_bit_is_masked() {
    let mut bytes = hex(HS_CLIENT_REQUEST);
    bytes[24] |= 0x80; // ISN word
    let Ok(Packet::Control(ControlRepr {
        body: ControlBody::Handshake(hs),
        ..
    })) = Packet::parse(&bytes)
    else {
        panic!("must parse");
    };
    assert_eq!(hs.isn, SeqNumber::new(0x2A3B_4C5D));
}

#[test]
fn peer_ip_encoding_matches_4_11_on_little_endian() {
    let lo = peer_ip_words(IpAddr::V4(Ipv4Addr::LOCALHOST));
    assert_eq!(lo, [0x0100_007F, 0, 0, 0]);
    let v6 = Ipv6Addr::new(
        0x0102, 0x0304, 0x0506, 0x0708, 0x090A, 0x0B0C, 0x0D0E, 0x0F10,
    );
    let words = peer_ip_words(IpAddr::V6(v6));
    assert_eq!(words, [0x0403_0201, 0x0807_0605, 0x0C0B_0A09, 0x100F_0E0D]);
    assert_eq!(peer_ip_from_words(words, true), IpAddr::V6(v6));
    assert_eq!(
        peer_ip_from_words(lo, false),
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    );
}

// ---- body-less control packets ---------------------------------------------------------

const KEEP_ALIVE: &[&str] = &[
    "80010000", // control | type 1 keep-alive
    "00000000", // additional info
    "00000000", // timestamp
    "11223344", // dst socket
    "00000000", // 4.11's 4-byte zero pad
];

#[test]
fn keep_alive_20_bytes() {
    let packet = control(0x1122_3344, ControlBody::KeepAlive);
    check(&hex(KEEP_ALIVE), &packet);
    assert_eq!(packet.buffer_len(), 20);
    assert_eq!(packet.to_string(), "keepalive dst=0x11223344");
}

#[test]
fn body_less_packets_accept_16_bytes_and_ignore_extras() {
    let bare = hex(&KEEP_ALIVE[..4]);
    let expected = control(0x1122_3344, ControlBody::KeepAlive);
    assert_eq!(Packet::parse(&bare), Ok(expected.clone()));
    // Non-zero extended type, additional info and a longer body are all ignored, as in 4.11.
    let noisy = hex(&[
        "8001ABCD",
        "DEADBEEF",
        "00000000",
        "11223344",
        "01020304 0506",
    ]);
    assert_eq!(Packet::parse(&noisy), Ok(expected));
    fuzzing::wire_packet(&noisy);
}

const CONGESTION_WARNING: &[&str] = &[
    "80040000", // control | type 4 congestion warning
    "00000000", // additional info
    "00000000", // timestamp
    "00000042", // dst socket
    "00000000", // pad
];

#[test]
fn congestion_warning() {
    check(
        &hex(CONGESTION_WARNING),
        &control(0x42, ControlBody::CongestionWarning),
    );
}

const SHUTDOWN: &[&str] = &[
    "80050000", // control | type 5 shutdown
    "00000000", // additional info
    "00000000", // timestamp
    "0BADF00D", // dst socket
    "00000000", // pad
];

#[test]
fn shutdown() {
    check(&hex(SHUTDOWN), &control(0x0BAD_F00D, ControlBody::Shutdown));
}

const ACK2_7: &[&str] = &[
    "80060000", // control | type 6 ACK2
    "00000007", // additional info: ACK number 7
    "00000000", // timestamp
    "0BADF00D", // dst socket
    "00000000", // pad
];

#[test]
fn ack2_for_ack_7() {
    let packet = control(0x0BAD_F00D, ControlBody::Ack2(AckNumber::new(7)));
    check(&hex(ACK2_7), &packet);
    assert_eq!(packet.to_string(), "ack2 ack7 dst=0xbadf00d");
}

const ERROR_4000: &[&str] = &[
    "80080000", // control | type 8 error signal
    "00000FA0", // additional info: code 4000
    "00000000", // timestamp
    "0BADF00D", // dst socket
    "00000000", // pad
];

#[test]
fn error_signal() {
    check(
        &hex(ERROR_4000),
        &control(0x0BAD_F00D, ControlBody::Error { code: 4000 }),
    );
}

// ---- ACK -------------------------------------------------------------------------------

const ACK_LIGHT: &[&str] = &[
    "80020000", // control | type 2 ACK
    "00000000", // ACK number 0: light
    "00000000", // timestamp
    "0BADF00D", // dst socket
    "2A3B4C9D", // ack: first seq not received
];

#[test]
fn ack_light() {
    let ack = AckRepr {
        number: AckNumber::LIGHT,
        ack: SeqNumber::new(0x2A3B_4C9D),
        details: None,
    };
    let packet = control(0x0BAD_F00D, ControlBody::Ack(ack));
    check(&hex(ACK_LIGHT), &packet);
    assert!(ack.is_light());
    assert_eq!(packet.to_string(), "ack light #708529309 dst=0xbadf00d");
}

const ACK_MEDIUM: &[&str] = &[
    "80020000", // control | type 2 ACK
    "00000002", // ACK number 2
    "00000000", // timestamp
    "0BADF00D", // dst socket
    "2A3B4C9D", // ack
    "00002710", // RTT 10000 µs
    "000003E8", // RTT variance 1000 µs
    "00000002", // available buffer: 2 packets (4.11's minimum)
];

#[test]
fn ack_medium_16_bytes() {
    let ack = AckRepr {
        number: AckNumber::new(2),
        ack: SeqNumber::new(0x2A3B_4C9D),
        details: Some(AckDetails {
            rtt_us: 10_000,
            rtt_var_us: 1000,
            avail_buf_pkts: 2,
            rates: None,
        }),
    };
    check(
        &hex(ACK_MEDIUM),
        &control(0x0BAD_F00D, ControlBody::Ack(ack)),
    );
}

const ACK_FULL_FIRST: &[&str] = &[
    "80020000", // control | type 2 ACK
    "00000001", // ACK number 1 (first numbered ACK)
    "00000000", // timestamp
    "0BADF00D", // dst socket
    "2A3B4C5E", // ack = first data seq + 1
    "000186A0", // RTT 100000 µs (initial)
    "0000C350", // RTT variance 50000 µs (initial)
    "00001FFE", // available buffer 8190 packets
    "00000001", // arrival rate 1 packet/s
    "000003E8", // link capacity 1000 packets/s
];

#[test]
fn ack_full_like_4_11_first_ack() {
    let ack = AckRepr {
        number: AckNumber::new(1),
        ack: SeqNumber::new(0x2A3B_4C5E),
        details: Some(AckDetails {
            rtt_us: 100_000,
            rtt_var_us: 50_000,
            avail_buf_pkts: 8190,
            rates: Some(AckRates {
                recv_rate_pkts: 1,
                bandwidth_pkts: 1000,
                front: None,
            }),
        }),
    };
    let packet = control(0x0BAD_F00D, ControlBody::Ack(ack));
    check(&hex(ACK_FULL_FIRST), &packet);
    assert_eq!(
        packet.to_string(),
        "ack ack1 #708529246 rtt=100000us var=50000us buf=8190 rate=1 bw=1000 dst=0xbadf00d"
    );
}

#[test]
fn ack_rejects_body_lengths_4_11_would_misread() {
    let full = hex(ACK_FULL_FIRST);
    for body_len in [8, 12, 20, 5, 15, 17, 23] {
        assert_eq!(
            Packet::parse(&full[..16 + body_len]),
            Err(Error::BadLength),
            "{body_len}"
        );
    }
    for body_len in 0..4 {
        assert_eq!(Packet::parse(&full[..16 + body_len]), Err(Error::Truncated));
    }
    // 25-27 bytes: read as full, the extra ignored (4.11 does the same).
    let mut long = full.clone();
    long.extend_from_slice(&[0xAA; 3]);
    assert_eq!(Packet::parse(&long), Packet::parse(&full));
}

const ACK_WITH_FRONT: &[&str] = &[
    "80020000", // control | type 2 ACK
    "00000007", // ACK number 7
    "00000000", // timestamp
    "0BADF00D", // dst socket
    "00001000", // ack: 4096 is the first missing
    "00002710", // RTT 10000 µs
    "000003E8", // RTT variance 1000 µs
    "00004000", // available buffer 16384 packets
    "00000000", // arrival rate unknown (no fresh rates in this ACK)
    "00000000", // link capacity unknown
    "00001234", // front: everything before 4660 arrived or was reported lost
];

#[test]
fn ack_with_the_receivers_front_28_bytes() {
    let ack = AckRepr {
        number: AckNumber::new(7),
        ack: SeqNumber::new(4096),
        details: Some(AckDetails {
            rtt_us: 10_000,
            rtt_var_us: 1000,
            avail_buf_pkts: 16_384,
            rates: Some(AckRates {
                recv_rate_pkts: 0,
                bandwidth_pkts: 0,
                front: Some(SeqNumber::new(0x1234)),
            }),
        }),
    };
    let packet = control(0x0BAD_F00D, ControlBody::Ack(ack));
    check(&hex(ACK_WITH_FRONT), &packet);
    assert_eq!(
        packet.to_string(),
        "ack ack7 #4096 rtt=10000us var=1000us buf=16384 rate=0 bw=0 front=#4660 dst=0xbadf00d"
    );
    // Past word 6: ignored.
    let mut long = hex(ACK_WITH_FRONT);
    long.extend_from_slice(&[0xAA; 5]);
    assert_eq!(Packet::parse(&long), Packet::parse(&hex(ACK_WITH_FRONT)));
}

// ---- NAK -------------------------------------------------------------------------------

const NAK_10_15: &[&str] = &[
    "80030000", // control | type 3 NAK
    "00000000", // additional info
    "00000000", // timestamp
    "0BADF00D", // dst socket
    "8000000A", // range start 10
    "0000000F", // range end 15
];

fn nak(ranges: &[(u32, u32)]) -> ControlBody {
    ControlBody::Nak(NakRepr {
        ranges: ranges
            .iter()
            .map(|&(first, last)| SeqRange {
                first: SeqNumber::new(first),
                last: SeqNumber::new(last),
            })
            .collect(),
    })
}

#[test]
fn nak_range_10_15() {
    let packet = control(0x0BAD_F00D, nak(&[(10, 15)]));
    check(&hex(NAK_10_15), &packet);
    assert_eq!(packet.to_string(), "nak [10..15] dst=0xbadf00d");
}

const NAK_MIXED: &[&str] = &[
    "80030000", // control | type 3 NAK
    "00000000", // additional info
    "00000000", // timestamp
    "0BADF00D", // dst socket
    "00000005", // single 5
    "80000009", // range start 9
    "0000000C", // range end 12
    "00000011", // single 17
    "FFFFFFFE", // range start 0x7FFFFFFE (wraps)
    "00000001", // range end 1
];

#[test]
fn nak_singles_ranges_and_wrap() {
    let packet = control(
        0x0BAD_F00D,
        nak(&[(5, 5), (9, 12), (17, 17), (0x7FFF_FFFE, 1)]),
    );
    check(&hex(NAK_MIXED), &packet);
    assert_eq!(
        packet.to_string(),
        "nak [5, 9..12, 17, 2147483646..1] dst=0xbadf00d"
    );
}

const NAK_HEADER: [&str; 4] = ["80030000", "00000000", "00000000", "0BADF00D"];

fn nak_with(body: &[&'static str]) -> Vec<&'static str> {
    let mut words = NAK_HEADER.to_vec();
    words.extend_from_slice(body);
    words
}

#[test]
fn nak_rejects_malformed_lists() {
    // Ends with a range start.
    assert_eq!(
        parse_err(&nak_with(&["00000005", "8000000A"])),
        Error::BadLossList
    );
    // Reversed range.
    assert_eq!(
        parse_err(&nak_with(&["8000000F", "0000000A"])),
        Error::BadLossList
    );
    // Range end with the range bit set.
    assert_eq!(
        parse_err(&nak_with(&["8000000A", "8000000F"])),
        Error::BadLossList
    );
    // Empty body, and a body with no whole word.
    assert_eq!(parse_err(&nak_with(&[])), Error::BadLossList);
    assert_eq!(parse_err(&nak_with(&["0000"])), Error::BadLossList);
}

#[test]
fn nak_accepts_one_element_range_and_ignores_trailing_bytes() {
    let one = hex(&nak_with(&["8000000A", "0000000A"]));
    assert_eq!(
        Packet::parse(&one),
        Ok(control(0x0BAD_F00D, nak(&[(10, 10)])))
    );
    fuzzing::wire_packet(&one);
    let trailing = hex(&nak_with(&["00000005", "0000"]));
    assert_eq!(
        Packet::parse(&trailing),
        Ok(control(0x0BAD_F00D, nak(&[(5, 5)])))
    );
}

#[test]
fn loss_list_iter_stops_after_error() {
    let body = hex(&["8000000F", "0000000A", "00000005"]);
    let mut iter = LossListIter::new(&body).unwrap();
    assert_eq!(iter.next(), Some(Err(Error::BadLossList)));
    assert_eq!(iter.next(), None);
}

// ---- drop request, user-defined --------------------------------------------------------

const DROP_REQUEST: &[&str] = &[
    "80070000", // control | type 7 drop request
    "1FFFFFFF", // additional info: message number (29-bit max)
    "00000000", // timestamp
    "0BADF00D", // dst socket
    "7FFFFFFE", // first seq
    "00000003", // "last" seq (4.11: one past the message end), across the wrap
];

#[test]
fn drop_request() {
    let packet = control(
        0x0BAD_F00D,
        ControlBody::DropRequest {
            msg: MsgNumber::new(MsgNumber::MAX),
            first: SeqNumber::new(0x7FFF_FFFE),
            last: SeqNumber::new(3),
        },
    );
    check(&hex(DROP_REQUEST), &packet);
    assert_eq!(
        packet.to_string(),
        "drop msg536870911 #2147483646..#3 dst=0xbadf00d"
    );
    let short = hex(DROP_REQUEST);
    assert_eq!(Packet::parse(&short[..20]), Err(Error::Truncated));
}

const USER_DEFINED: &[&str] = &[
    "FFFF0102", // control | type 0x7FFF user-defined | ext type 0x0102
    "DEADBEEF", // additional info (user's)
    "00000000", // timestamp
    "0BADF00D", // dst socket
    "00000001", // body word (big-endian on the wire)
    "00000002", // body word
    "AB",       // trailing byte, not swapped by 4.11
];

#[test]
fn user_defined() {
    let packet = control(
        0x0BAD_F00D,
        ControlBody::UserDefined {
            ext_type: 0x0102,
            info: 0xDEAD_BEEF,
            body: hex(&["00000001", "00000002", "AB"]),
        },
    );
    check(&hex(USER_DEFINED), &packet);
    assert_eq!(
        packet.to_string(),
        "user ext=0x102 info=0xdeadbeef len=9 dst=0xbadf00d"
    );
}

#[test]
fn unknown_control_types_are_rejected() {
    let type_9 = ["80090000", "00000000", "00000000", "00000000", "00000000"];
    assert_eq!(parse_err(&type_9), Error::UnknownControlType(9));
    let type_7ffe = ["FFFE0000", "00000000", "00000000", "00000000"];
    assert_eq!(parse_err(&type_7ffe), Error::UnknownControlType(0x7FFE));
}

// ---- data ------------------------------------------------------------------------------

const DATA_SOLO: &[&str] = &[
    "2A3B4C5D",   // data | seq 0x2A3B4C5D
    "C0000001",   // FF=11 solo | O=0 | msg 1
    "00000514",   // timestamp 1300 µs
    "0BADF00D",   // dst socket
    "68656C6C6F", // payload "hello" (raw, not swapped)
];

#[test]
fn data_solo_message() {
    let bytes = hex(DATA_SOLO);
    let packet = Packet::Data(DataRepr {
        seq: SeqNumber::new(0x2A3B_4C5D),
        boundary: Boundary::Solo,
        in_order: false,
        msg: MsgNumber::new(1),
        timestamp: Timestamp(1300),
        dst: SocketId(0x0BAD_F00D),
        payload: b"hello",
    });
    check(&bytes, &packet);
    assert_eq!(bytes.len(), 21);
    assert_eq!(
        packet.to_string(),
        "data #708529245 ff=solo o=0 msg1 ts=1300 dst=0xbadf00d len=5"
    );
}

const DATA_FIRST_MAX: &[&str] = &[
    "7FFFFFFF", // data | seq 2^31 - 1
    "BFFFFFFF", // FF=10 first | O=1 | msg 0x1FFFFFFF
    "FFFFFFFF", // timestamp at its 32-bit maximum
    "FFFFFFFF", // dst socket
                // empty payload
];

const DATA_MIDDLE: &[&str] = &[
    "00000000", // data | seq 0
    "00000000", // FF=00 middle | O=0 | msg 0
    "00000000", // timestamp 0
    "00000001", // dst socket
    "00",       // one payload byte
];

const DATA_LAST_IN_ORDER: &[&str] = &[
    "00000010", // data | seq 16
    "60000002", // FF=01 last | O=1 | msg 2
    "00000064", // timestamp 100
    "00000001", // dst socket
    "0102",     // payload
];

#[test]
fn data_boundaries_and_max_values() {
    // (vector, seq, boundary, in_order, msg, timestamp, payload)
    type Case = (
        &'static [&'static str],
        u32,
        Boundary,
        bool,
        u32,
        u32,
        &'static [u8],
    );
    let cases: [Case; 3] = [
        (
            DATA_FIRST_MAX,
            SeqNumber::MAX,
            Boundary::First,
            true,
            MsgNumber::MAX,
            u32::MAX,
            &[],
        ),
        (DATA_MIDDLE, 0, Boundary::Middle, false, 0, 0, &[0]),
        (
            DATA_LAST_IN_ORDER,
            16,
            Boundary::Last,
            true,
            2,
            100,
            &[1, 2],
        ),
    ];
    for (words, seq, boundary, in_order, msg, ts, payload) in cases {
        let bytes = hex(words);
        let dst = peek_dst_socket(&bytes).unwrap();
        let repr = DataRepr {
            seq: SeqNumber::new(seq),
            boundary,
            in_order,
            msg: MsgNumber::new(msg),
            timestamp: Timestamp(ts),
            dst,
            payload,
        };
        check(&bytes, &Packet::Data(repr));
        assert_eq!(DataRepr::parse(&bytes), Ok(repr));
        let mut header_only = Vec::new();
        emit_data_header(
            repr.seq,
            boundary,
            in_order,
            repr.msg,
            repr.timestamp,
            dst,
            &mut header_only,
        );
        assert_eq!(header_only, bytes[..HEADER_LEN]);
        assert_eq!(repr.header().to_bytes(), bytes[..HEADER_LEN]);
        assert_eq!(repr.header().with_payload(payload), repr);
    }
}

// ---- all vectors -----------------------------------------------------------------------

const ALL: &[&[&str]] = &[
    HS_CLIENT_REQUEST,
    HS_4_11_LOOPBACK_RESPONSE,
    HS_IPV6_REJECTED,
    KEEP_ALIVE,
    CONGESTION_WARNING,
    SHUTDOWN,
    ACK2_7,
    ERROR_4000,
    ACK_LIGHT,
    ACK_MEDIUM,
    ACK_FULL_FIRST,
    NAK_10_15,
    NAK_MIXED,
    DROP_REQUEST,
    USER_DEFINED,
    DATA_SOLO,
    DATA_FIRST_MAX,
    DATA_MIDDLE,
    DATA_LAST_IN_ORDER,
];

#[test]
fn every_truncation_is_total() {
    for words in ALL {
        let bytes = hex(words);
        for len in 0..bytes.len() {
            let prefix = &bytes[..len];
            if len < HEADER_LEN {
                assert_eq!(Packet::parse(prefix), Err(Error::Truncated));
                assert_eq!(peek_dst_socket(prefix), None);
                assert_eq!(is_control(prefix), None);
            }
            fuzzing::wire_packet(prefix);
        }
    }
}

#[test]
fn error_reasons_are_stable() {
    let all = [
        Error::Truncated,
        Error::UnknownControlType(9),
        Error::BadLength,
        Error::BadLossList,
    ];
    for (index, error) in all.iter().enumerate() {
        assert_eq!(error.index(), index);
        assert_eq!(error.reason(), Error::REASONS[index]);
    }
    assert_eq!(
        Error::UnknownControlType(9).to_string(),
        "unknown control type 0x9"
    );
}

#[test]
fn timestamp_truncates_to_32_bits() {
    let opened = Instant::from_micros(1_000);
    let now = Instant::from_micros(1_000 + (1 << 32) + 5);
    assert_eq!(Timestamp::since(opened, now), Timestamp(5));
    assert_eq!(Timestamp::since(now, opened), Timestamp(0));
}

#[test]
fn boundary_new_inverts_first_and_last() {
    for b in [
        Boundary::Middle,
        Boundary::Last,
        Boundary::First,
        Boundary::Solo,
    ] {
        assert_eq!(Boundary::new(b.is_first(), b.is_last()), b);
    }
}
