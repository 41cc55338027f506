//! Send and receive buffers in steady state: 16 MiB of stream data written, sent and
//! acknowledged (send side); inserted in order, acknowledged and read (receive side).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use udt_proto::recv_buffer::{Mode, RecvBuffer};
use udt_proto::send_buffer::{PacketMeta, SendBuffer};
use udt_proto::{Instant, MsgNumber, SeqNumber};

const PAYLOAD: usize = 1456;
const WINDOW_PKTS: u32 = 8192;
const TOTAL_BYTES: usize = 16 << 20;
/// Acknowledge every this many packets (a light ACK's worth).
const ACK_EVERY: u32 = 64;

fn send_buffer(c: &mut Criterion) {
    let data = vec![0x5Au8; 1 << 20];
    let mut group = c.benchmark_group("send_buffer");
    group.throughput(Throughput::Bytes(TOTAL_BYTES as u64));
    group.bench_function("write_send_ack_16MiB", |b| {
        b.iter(|| {
            let mut buf = SendBuffer::new(PAYLOAD, WINDOW_PKTS);
            let now = Instant::ZERO;
            let mut written = 0;
            while written < TOTAL_BYTES {
                let len = (TOTAL_BYTES - written).min(data.len());
                written += buf.write_stream(&data[..len], now);
                let mut since_ack = 0;
                while let Some(seq) = buf.unsent() {
                    let (_, payload) = buf.packet(seq).expect("queued packet");
                    black_box(payload);
                    buf.mark_sent();
                    since_ack += 1;
                    if since_ack == ACK_EVERY {
                        buf.ack(seq.next());
                        since_ack = 0;
                    }
                }
                if let Some(last) = buf.unsent() {
                    buf.ack(last);
                }
                let base = buf.base() + buf.unacked_pkts();
                buf.ack(base);
            }
            buf
        });
    });
    group.finish();
}

/// `packets` copies of `payload` inserted in order into a fresh stream buffer, acknowledged
/// every [`ACK_EVERY`] and then handed to `drain`, which reads what is readable.
fn stream_through(payload: &[u8], packets: u32, mut drain: impl FnMut(&mut RecvBuffer)) {
    let isn = SeqNumber::new(SeqNumber::MAX - 1_000);
    let mut buf = RecvBuffer::new(Mode::Stream, WINDOW_PKTS, isn);
    let meta = PacketMeta::solo(MsgNumber::FIRST, false);
    let mut seq = isn;
    for i in 0..packets {
        buf.insert(seq, meta, payload);
        seq = seq.next();
        if (i + 1) % ACK_EVERY == 0 || i + 1 == packets {
            buf.set_ack_point(seq);
            drain(&mut buf);
        }
    }
    black_box(buf.readable_bytes());
}

fn recv_buffer(c: &mut Criterion) {
    let payload = vec![0xC3u8; PAYLOAD];
    let mut out = vec![0u8; 1 << 20];
    let packets = (TOTAL_BYTES / PAYLOAD) as u32;
    let mut group = c.benchmark_group("recv_buffer");
    group.throughput(Throughput::Bytes(u64::from(packets) * PAYLOAD as u64));
    group.bench_function("insert_ack_read_16MiB", |b| {
        b.iter(|| stream_through(&payload, packets, |buf| while buf.read(&mut out) > 0 {}));
    });
    // The same packets copied in (as a datagram the runtime does not lend is) and read out as
    // chunks (`read_chunks`, what `udt perf` reads with).
    group.bench_function("insert_ack_read_chunks_16MiB", |b| {
        let mut chunks = Vec::new();
        b.iter(|| {
            stream_through(&payload, packets, |buf| {
                while buf.read_chunks(&mut chunks, 1 << 20) > 0 {
                    black_box(&chunks);
                    chunks.clear();
                }
            })
        });
    });
    group.finish();
}

criterion_group!(benches, send_buffer, recv_buffer);
criterion_main!(benches);
