//! Wire codec: parse and emit of the packets that dominate a transfer (a full data packet, a
//! full ACK) and of the heavy ones (a NAK with 100 ranges, a handshake).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use udt_proto::wire::{
    AckDetails, AckRates, AckRepr, Boundary, ControlBody, ControlRepr, DataRepr, HandshakeRepr,
    NakRepr, Packet, ReqType, SeqRange, SocketType, Timestamp,
};
use udt_proto::{AckNumber, MsgNumber, SeqNumber, SocketId};

fn control(body: ControlBody) -> Packet<'static> {
    Packet::Control(ControlRepr {
        timestamp: Timestamp::ZERO,
        dst: SocketId(0x0BAD_F00D),
        body,
    })
}

/// The four packets, by name.
fn packets(payload: &[u8]) -> Vec<(&'static str, Packet<'_>)> {
    let data = Packet::Data(DataRepr {
        seq: SeqNumber::new(0x2A3B_4C5D),
        boundary: Boundary::Solo,
        in_order: false,
        msg: MsgNumber::new(77),
        timestamp: Timestamp(123_456),
        dst: SocketId(0x0BAD_F00D),
        payload,
    });
    let ack = control(ControlBody::Ack(AckRepr {
        number: AckNumber::new(9),
        ack: SeqNumber::new(1_000_000),
        details: Some(AckDetails {
            rtt_us: 10_000,
            rtt_var_us: 2_500,
            avail_buf_pkts: 8_000,
            rates: Some(AckRates {
                recv_rate_pkts: 80_000,
                bandwidth_pkts: 85_000,
                front: None,
            }),
        }),
    }));
    let ranges = (0..100u32)
        .map(|i| {
            let first = SeqNumber::new(1_000 + i * 10);
            SeqRange {
                first,
                last: first + (i % 4),
            }
        })
        .collect();
    let nak = control(ControlBody::Nak(NakRepr { ranges }));
    let handshake = control(ControlBody::Handshake(HandshakeRepr {
        version: 4,
        socket_type: SocketType::STREAM,
        isn: SeqNumber::new(0x1234_5678),
        mss: 1500,
        flow_window: 8192,
        req_type: ReqType::REGULAR,
        socket_id: SocketId(0x0102_0304),
        cookie: 0xDEAD_BEEF,
        peer_ip: [0x0100_007F, 0, 0, 0],
    }));
    vec![
        ("data_1456", data),
        ("ack_full", ack),
        ("nak_100_ranges", nak),
        ("handshake", handshake),
    ]
}

fn codec(c: &mut Criterion) {
    let payload = vec![0xA5u8; 1456];
    for (name, packet) in packets(&payload) {
        let mut bytes = Vec::new();
        packet.emit(&mut bytes);
        let mut group = c.benchmark_group(format!("wire/{name}"));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function("parse", |b| {
            b.iter(|| Packet::parse(black_box(&bytes)).expect("valid packet"));
        });
        let mut out = Vec::with_capacity(bytes.len());
        group.bench_function("emit", |b| {
            b.iter(|| {
                out.clear();
                black_box(&packet).emit(&mut out);
                black_box(out.len())
            });
        });
        group.finish();
    }
}

criterion_group!(benches, codec);
criterion_main!(benches);
