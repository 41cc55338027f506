//! Memory-to-memory throughput of ours->ours over 127.0.0.1: goodput and CPU seconds per GiB.
//!
//! `cargo run --release -p udt --example loopback_bench -- [seconds]` (default 10). Both ends
//! run in this process, so the CPU figure (getrusage of the process: user + system) covers
//! sender and receiver together.
//!
//! `... -- idle [seconds]`: hold one connected, idle pair open and report the CPU it costs.

use std::io::{Read, Write};
use std::thread;
use std::time::{Duration, Instant};

use udt::{UdtListener, UdtStream};

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let idle = args.first().is_some_and(|a| a == "idle");
    let secs: u64 = args
        .get(usize::from(idle))
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    if idle {
        return idle_cost(secs);
    }
    let listener = UdtListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let server = thread::spawn(move || -> std::io::Result<u64> {
        let (mut s, _) = listener.accept()?;
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0u64;
        loop {
            let n = s.read(&mut buf)?;
            if n == 0 {
                return Ok(total);
            }
            total += n as u64;
        }
    });
    let mut client = UdtStream::connect(addr)?;
    let chunk = vec![0x5au8; 1 << 20];
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let mut sent = 0u64;
    while start.elapsed() < Duration::from_secs(secs) {
        client.write_all(&chunk)?;
        sent += chunk.len() as u64;
    }
    client.flush()?;
    let elapsed = start.elapsed();
    let cpu = cpu_seconds() - cpu0;
    let stats = client.stats();
    let path = client.path_stats();
    client.close()?;
    let received = server.join().expect("server thread")?;
    assert_eq!(received, sent);
    let gib = sent as f64 / (1u64 << 30) as f64;
    println!(
        "ours->ours loopback: {:.2} GiB in {:.2} s = {:.3} Gbit/s goodput, {:.2} CPU-s/GiB \
         (both ends, {:.2} CPU-s total)",
        gib,
        elapsed.as_secs_f64(),
        sent as f64 * 8.0 / elapsed.as_secs_f64() / 1e9,
        cpu / gib,
        cpu
    );
    println!(
        "packets sent {} retransmitted {} send_loss {} timeouts {}; final period {:?} cwnd {} rtt {:?}",
        stats.packets_sent,
        stats.retransmitted,
        stats.send_loss,
        stats.timeouts,
        path.send_period,
        path.congestion_window_pkts,
        path.rtt
    );
    Ok(())
}

/// CPU used by an open, idle connection (both ends and both I/O threads).
fn idle_cost(secs: u64) -> std::io::Result<()> {
    let listener = UdtListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let server = thread::spawn(move || listener.accept().map(|(s, _)| s));
    let mut client = UdtStream::connect(addr)?;
    let _server_side = server.join().expect("server thread")?;
    client.write_all(b"warm up")?;
    client.flush()?;
    thread::sleep(Duration::from_secs(1));
    let cpu0 = cpu_seconds();
    thread::sleep(Duration::from_secs(secs));
    let cpu = cpu_seconds() - cpu0;
    println!(
        "idle connection pair: {:.4} CPU-s in {secs} s = {:.3}% of a core (both ends), \
         keep-alives sent by the client: {}",
        cpu,
        cpu / secs as f64 * 100.0,
        client.stats().keepalives_sent
    );
    Ok(())
}
