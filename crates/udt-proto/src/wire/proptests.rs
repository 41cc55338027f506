//! Property tests: arbitrary `Repr` → emit → parse gives the same `Repr` for every packet
//! type, and the `fuzzing::wire_packet` property on random and mutated bytes.

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;
use crate::fuzzing;
use crate::seq::{AckNumber, MsgNumber, SeqNumber, SocketId};

fn seq() -> impl Strategy<Value = SeqNumber> {
    (0..=SeqNumber::MAX).prop_map(SeqNumber::new)
}

fn msg() -> impl Strategy<Value = MsgNumber> {
    (0..=MsgNumber::MAX).prop_map(MsgNumber::new)
}

fn boundary() -> impl Strategy<Value = Boundary> {
    (0u32..4).prop_map(Boundary::from_bits)
}

fn handshake() -> impl Strategy<Value = HandshakeRepr> {
    (
        (
            any::<u32>(),
            any::<u32>(),
            seq(),
            any::<u32>(),
            any::<u32>(),
        ),
        (any::<i32>(), any::<u32>(), any::<u32>(), any::<[u32; 4]>()),
    )
        .prop_map(
            |((version, ty, isn, mss, flow_window), (req, id, cookie, peer_ip))| HandshakeRepr {
                version,
                socket_type: SocketType(ty),
                isn,
                mss,
                flow_window,
                req_type: ReqType(req),
                socket_id: SocketId(id),
                cookie,
                peer_ip,
            },
        )
}

fn ack() -> impl Strategy<Value = AckRepr> {
    let rates = proptest::option::of(
        (any::<u32>(), any::<u32>(), proptest::option::of(seq())).prop_map(
            |(recv_rate_pkts, bandwidth_pkts, front)| AckRates {
                recv_rate_pkts,
                bandwidth_pkts,
                front,
            },
        ),
    );
    let details = proptest::option::of((any::<u32>(), any::<u32>(), any::<u32>(), rates).prop_map(
        |(rtt_us, rtt_var_us, avail_buf_pkts, rates)| AckDetails {
            rtt_us,
            rtt_var_us,
            avail_buf_pkts,
            rates,
        },
    ));
    (0..=AckNumber::MAX, seq(), details).prop_map(|(number, ack, details)| AckRepr {
        number: AckNumber::new(number),
        ack,
        details,
    })
}

fn seq_range() -> impl Strategy<Value = SeqRange> {
    // Ranges shorter than 2^30 - 1 are "forward" in 4.11's serial order.
    (seq(), prop_oneof![Just(0u32), 0u32..100, 0u32..0x3FFF_FFFE]).prop_map(|(first, len)| {
        SeqRange {
            first,
            last: first + len,
        }
    })
}

fn control_body() -> impl Strategy<Value = ControlBody> {
    prop_oneof![
        handshake().prop_map(ControlBody::Handshake),
        Just(ControlBody::KeepAlive),
        ack().prop_map(ControlBody::Ack),
        vec(seq_range(), 1..40).prop_map(|ranges| ControlBody::Nak(NakRepr { ranges })),
        Just(ControlBody::CongestionWarning),
        Just(ControlBody::Shutdown),
        (0..=AckNumber::MAX).prop_map(|n| ControlBody::Ack2(AckNumber::new(n))),
        (msg(), seq(), seq()).prop_map(|(msg, first, last)| ControlBody::DropRequest {
            msg,
            first,
            last
        }),
        any::<u32>().prop_map(|code| ControlBody::Error { code }),
        (any::<u16>(), any::<u32>(), vec(any::<u8>(), 0..64)).prop_map(|(ext_type, info, body)| {
            ControlBody::UserDefined {
                ext_type,
                info,
                body,
            }
        }),
    ]
}

fn control_repr() -> impl Strategy<Value = ControlRepr> {
    (any::<u32>(), any::<u32>(), control_body()).prop_map(|(ts, dst, body)| ControlRepr {
        timestamp: Timestamp(ts),
        dst: SocketId(dst),
        body,
    })
}

/// A valid datagram of any type, as bytes.
fn valid_datagram() -> impl Strategy<Value = Vec<u8>> {
    let data = (
        seq(),
        boundary(),
        any::<bool>(),
        msg(),
        any::<u32>(),
        any::<u32>(),
        vec(any::<u8>(), 0..40),
    )
        .prop_map(|(seq, boundary, in_order, msg, ts, dst, payload)| {
            let mut out = Vec::new();
            DataRepr {
                seq,
                boundary,
                in_order,
                msg,
                timestamp: Timestamp(ts),
                dst: SocketId(dst),
                payload: &payload,
            }
            .emit(&mut out);
            out
        });
    let control = control_repr().prop_map(|repr| {
        let mut out = Vec::new();
        repr.emit(&mut out);
        out
    });
    prop_oneof![data, control]
}

fn assert_round_trip(packet: &Packet<'_>) -> Result<(), TestCaseError> {
    let mut out = Vec::new();
    packet.emit(&mut out);
    prop_assert_eq!(out.len(), packet.buffer_len());
    prop_assert_eq!(&Packet::parse(&out)?, packet);
    Ok(())
}

proptest! {
    #[test]
    fn data_round_trip(
        seq in seq(),
        boundary in boundary(),
        in_order: bool,
        msg in msg(),
        ts: u32,
        dst: u32,
        payload in vec(any::<u8>(), 0..1500),
    ) {
        let repr = DataRepr {
            seq, boundary, in_order, msg, timestamp: Timestamp(ts), dst: SocketId(dst),
            payload: &payload,
        };
        assert_round_trip(&Packet::Data(repr))?;
    }

    #[test]
    fn handshake_round_trip(hs in handshake(), dst: u32) {
        let repr = ControlRepr {
            timestamp: Timestamp::ZERO,
            dst: SocketId(dst),
            body: ControlBody::Handshake(hs),
        };
        assert_round_trip(&Packet::Control(repr))?;
    }

    #[test]
    fn ack_round_trip(ack in ack()) {
        let body = ControlBody::Ack(ack);
        let repr = ControlRepr { timestamp: Timestamp::ZERO, dst: SocketId(1), body };
        assert_round_trip(&Packet::Control(repr))?;
    }

    #[test]
    fn nak_round_trip(ranges in vec(seq_range(), 1..100)) {
        let nak = NakRepr { ranges };
        let mut body = Vec::new();
        nak.emit(&mut body);
        prop_assert_eq!(body.len(), nak.buffer_len());
        prop_assert_eq!(&NakRepr::parse(&body)?, &nak);
        let iterated: Result<Vec<_>, _> = LossListIter::new(&body)?.collect();
        prop_assert_eq!(iterated?, nak.ranges);
    }

    #[test]
    fn every_control_type_round_trips(repr in control_repr()) {
        assert_round_trip(&Packet::Control(repr))?;
    }

    #[test]
    fn arbitrary_bytes_are_total(data in vec(any::<u8>(), 0..200)) {
        fuzzing::wire_packet(&data);
    }

    #[test]
    fn arbitrary_bytes_with_control_flag_are_total(
        ty in prop_oneof![0u8..10, Just(0x7F), any::<u8>()],
        rest in vec(any::<u8>(), 0..120),
    ) {
        // Bias towards known control types so body parsers see random bodies.
        let mut data = vec![0x80 | ty, 0, 0, 0];
        data.extend_from_slice(&rest);
        fuzzing::wire_packet(&data);
    }

    #[test]
    fn mutated_valid_packets_are_total(
        mut data in valid_datagram(),
        edits in vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
        truncate: bool,
    ) {
        fuzzing::wire_packet(&data);
        if !data.is_empty() {
            for (at, byte) in edits {
                let at = at.index(data.len());
                data[at] = byte;
            }
        }
        if truncate {
            data.truncate(cut.index(data.len() + 1));
        }
        fuzzing::wire_packet(&data);
    }
}
