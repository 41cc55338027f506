//! Loss lists at scale: 10,000 disjoint ranges (a lossy long fat pipe's worth), inserted,
//! popped, acknowledged away, and (receiver side) filled one retransmission at a time.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use udt_proto::loss_list::{ReceiverLossList, SenderLossList};
use udt_proto::{Instant, SeqNumber};

const RANGES: u32 = 10_000;
/// Each range is 3 numbers, then a gap of 7: 10 numbers per range.
const STRIDE: u32 = 10;
const RANGE_LEN: u32 = 3;
/// Start just before the 2^31 wrap so every operation crosses it.
const BASE: u32 = SeqNumber::MAX - 50_000;

fn range(i: u32) -> (SeqNumber, SeqNumber) {
    let first = SeqNumber::new(BASE) + i * STRIDE;
    (first, first + (RANGE_LEN - 1))
}

fn sender_full() -> SenderLossList {
    let mut list = SenderLossList::new(RANGES * STRIDE);
    for i in 0..RANGES {
        let (a, b) = range(i);
        list.insert(a, b);
    }
    list
}

fn receiver_full() -> ReceiverLossList {
    let mut list = ReceiverLossList::new(RANGES * STRIDE);
    for i in 0..RANGES {
        let (a, b) = range(i);
        list.insert(a, b);
    }
    list
}

fn sender(c: &mut Criterion) {
    let mut group = c.benchmark_group("loss_list/sender_10k_ranges");
    group.throughput(Throughput::Elements(u64::from(RANGES)));
    group.bench_function("insert_in_order", |b| b.iter(sender_full));
    group.bench_function("insert_reverse_order", |b| {
        b.iter(|| {
            let mut list = SenderLossList::new(RANGES * STRIDE);
            for i in (0..RANGES).rev() {
                let (a, b) = range(i);
                list.insert(a, b);
            }
            list
        });
    });
    group.throughput(Throughput::Elements(u64::from(RANGES * RANGE_LEN)));
    group.bench_function("pop_first_all", |b| {
        b.iter_batched(
            sender_full,
            |mut list| {
                while let Some(seq) = list.pop_first() {
                    black_box(seq);
                }
            },
            BatchSize::LargeInput,
        );
    });
    group.throughput(Throughput::Elements(u64::from(RANGES)));
    group.bench_function("remove_before_sweep", |b| {
        b.iter_batched(
            sender_full,
            |mut list| {
                for i in 1..=RANGES {
                    list.remove_before(range(i).0);
                }
                assert!(list.is_empty());
            },
            BatchSize::LargeInput,
        );
    });
    group.finish();
}

fn receiver(c: &mut Criterion) {
    let mut group = c.benchmark_group("loss_list/receiver_10k_ranges");
    group.throughput(Throughput::Elements(u64::from(RANGES * RANGE_LEN)));
    group.bench_function("remove_each_retransmission", |b| {
        b.iter_batched(
            receiver_full,
            |mut list| {
                for i in 0..RANGES {
                    let (a, _) = range(i);
                    for k in 0..RANGE_LEN {
                        list.remove(a + k);
                    }
                }
                assert!(list.is_empty());
            },
            BatchSize::LargeInput,
        );
    });
    group.throughput(Throughput::Elements(u64::from(RANGES)));
    group.bench_function("ranges_due_scan", |b| {
        b.iter_batched(
            receiver_full,
            |mut list| {
                let now = Instant::ZERO + Duration::from_secs(1);
                black_box(list.ranges_due(now, Duration::from_millis(10), usize::MAX))
            },
            BatchSize::LargeInput,
        );
    });
    group.finish();
}

criterion_group!(benches, sender, receiver);
criterion_main!(benches);
