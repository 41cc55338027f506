//! "Simulated bytes per CPU-second" of the core: a 1 Gbit/s, 10 ms RTT bulk transfer between
//! two udt-proto endpoints over udt-netsim links in virtual time, with and without 1 % loss
//! on the data path (see `udt_bench::transfer`).
//!
//! Criterion reports the wall time per transfer (throughput = simulated payload bytes per
//! wall second; the driver is single-threaded, so on an idle machine that is CPU time).
//! After it, the bench prints the CPU-time figure itself: simulated GiB per CPU-second,
//! measured with the thread's CPU clock over one more transfer per case.

use std::time::Duration;

use criterion::{criterion_group, Criterion, Throughput};
use udt_bench::{thread_cpu_time, transfer, TransferSpec};

/// Payload per transfer: 256 MiB (about 2.2 s of virtual time at 1 Gbit/s).
const BYTES: u64 = 256 << 20;

fn cases() -> [(&'static str, TransferSpec); 2] {
    [
        ("1gbps_10ms_lossless", TransferSpec::gigabit(BYTES, 0.0)),
        ("1gbps_10ms_loss1pct", TransferSpec::gigabit(BYTES, 0.01)),
    ]
}

fn core_sim(c: &mut Criterion) {
    let mut group = c.benchmark_group("core_sim_256MiB");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(BYTES));
    for (name, spec) in cases() {
        group.bench_function(name, |b| b.iter(|| transfer(&spec)));
    }
    group.finish();
}

/// Prints simulated GiB per CPU-second for each case (one measured transfer each).
fn cpu_report() {
    println!("\nsimulated transfer rate (256 MiB, 1 Gbit/s, 10 ms RTT):");
    for (name, spec) in cases() {
        let (Some(before), wall) = (thread_cpu_time(), std::time::Instant::now()) else {
            println!("  {name}: no per-thread CPU clock on this system");
            continue;
        };
        let report = transfer(&spec);
        let cpu = thread_cpu_time().map_or(Duration::ZERO, |after| after - before);
        let wall = wall.elapsed();
        let gib = report.bytes as f64 / f64::from(1u32 << 30);
        println!(
            "  {name}: {gib:.2} GiB in {:.2} s virtual, {:.3} s CPU ({:.3} s wall): \
             {:.2} simulated GiB per CPU-second, {:.1}x real time, {} datagrams, {} retransmitted",
            report.virtual_time.as_secs_f64(),
            cpu.as_secs_f64(),
            wall.as_secs_f64(),
            gib / cpu.as_secs_f64().max(1e-9),
            report.virtual_time.as_secs_f64() / cpu.as_secs_f64().max(1e-9),
            report.datagrams,
            report.retransmitted,
        );
    }
}

criterion_group!(benches, core_sim);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // Only under `cargo bench` (which passes `--bench`): `cargo test --benches` runs each
    // bench once as a smoke test and should not pay for the extra transfers.
    if std::env::args().any(|a| a == "--bench") {
        cpu_report();
    }
}
