//! Pacing accuracy on loopback: a fixed-rate controller at several rates, and what the
//! receiver's estimators make of the arrivals.
//!
//! `flock /tmp/udt-bench.lock cargo run --release -p udt --example pacing -- [-s seconds] [rate…]`
//! Rates are in Mbit/s (default 10 100 500 1000), or `native` for UDT4's own controller;
//! each runs for `seconds` (default 3). For each it prints:
//! - the send rate achieved in the steady state (packets sent, retransmissions included,
//!   times the MSS, over the last `seconds - 0.5` s, as `FixedRate` counts it) and its error
//!   against the target;
//! - the receiver's arrival-speed (`local_recv_rate_pkts`) and packet-pair link-capacity
//!   (`local_bandwidth_pkts`) estimates, in Mbit/s of MSS-sized packets;
//! - the CPU the whole process (sender, receiver, both I/O threads) used, as cores.
//!
//! `UDT_RX_TIMESTAMPS=0` turns kernel receive timestamps off, for comparison.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use udt::{ConnectionConfig, UdtListener, UdtStream};
use udt_proto::congestion::FixedRateFactory;

/// 4.11's default MSS: what the fixed-rate controller counts per packet.
const MSS: u64 = 1500;

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn mbits(pkts_per_sec: f64) -> f64 {
    pkts_per_sec * (MSS * 8) as f64 / 1e6
}

/// One run at `rate_mbit` (None: the native controller) for `secs`.
fn run(rate_mbit: Option<f64>, secs: f64) -> std::io::Result<()> {
    let mut config = ConnectionConfig::default();
    if let Some(rate) = rate_mbit {
        let bytes_per_sec = (rate * 1e6 / 8.0) as u64;
        config.controller(Arc::new(FixedRateFactory::new(bytes_per_sec)));
    }
    let listener = UdtListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let accepted = thread::spawn(move || listener.accept().map(|(s, _)| Arc::new(s)));
    let client = Arc::new(UdtStream::connect_with(addr, config)?);
    let server = accepted.join().expect("accept thread")?;
    let reader = {
        let server = Arc::clone(&server);
        thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 20];
            while matches!((&*server).read(&mut buf), Ok(n) if n > 0) {}
        })
    };
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (client, stop) = (Arc::clone(&client), Arc::clone(&stop));
        thread::spawn(move || {
            let chunk = vec![0x5au8; 256 << 10];
            while !stop.load(Relaxed) && (&*client).write_all(&chunk).is_ok() {}
        })
    };
    thread::sleep(Duration::from_millis(500));
    let (p0, t0, cpu0) = (client.stats().packets_sent, Instant::now(), cpu_seconds());
    thread::sleep(Duration::from_secs_f64(secs - 0.5));
    let (p1, elapsed, cpu) = (
        client.stats().packets_sent,
        t0.elapsed().as_secs_f64(),
        cpu_seconds() - cpu0,
    );
    let path = server.path_stats();
    let sent = client.stats();
    stop.store(true, Relaxed);
    writer.join().expect("writer");
    drop(client);
    reader.join().expect("reader");
    let achieved = mbits((p1 - p0) as f64 / elapsed);
    let target = rate_mbit.map_or(String::from("native"), |r| format!("{r:>6.0} Mbit/s"));
    let error = rate_mbit.map_or(String::new(), |r| {
        format!(" error {:+.2}%", (achieved / r - 1.0) * 100.0)
    });
    println!(
        "{target}: sent {achieved:8.2} Mbit/s{error}; receiver estimates: arrival {:8.1} Mbit/s, \
         link {:8.1} Mbit/s; retransmitted {}; CPU {:.2} cores",
        mbits(f64::from(path.local_recv_rate_pkts)),
        mbits(f64::from(path.local_bandwidth_pkts)),
        sent.retransmitted,
        cpu / elapsed,
    );
    Ok(())
}

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1).peekable();
    let mut secs = 3.0_f64;
    if args.next_if(|a| a == "-s").is_some() {
        secs = args
            .next()
            .and_then(|a| a.parse().ok())
            .expect("-s SECONDS");
    }
    let secs = secs.max(1.0);
    let rates: Vec<String> = args.collect();
    let rates = if rates.is_empty() {
        ["10", "100", "500", "1000"].map(String::from).to_vec()
    } else {
        rates
    };
    for rate in rates {
        if rate == "native" {
            run(None, secs)?;
        } else {
            run(
                Some(rate.parse().expect("a rate in Mbit/s or `native`")),
                secs,
            )?;
        }
    }
    std::io::stdout().flush()
}
