//! Resident memory and CPU of many idle connections on one listening port.
//!
//! `cargo run --release -p udt --example idle_memory -- [connections] [idle seconds]`
//! (defaults 1000 and 10). The listener runs in this process; the clients run in a child
//! process (this same binary, `client` mode), so each side's resident memory is its own:
//! - server: VmRSS after accepting N connections minus VmRSS with just the listener, per
//!   connection: what an idle accepted connection costs a server;
//! - client: the same for N connected clients, each with its own port and I/O thread.
//!
//! Then both hold the connections idle and report the CPU time spent meanwhile (the issue's
//! bound: an idle connection costs < 1% of a core).

use std::io::{self, BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use udt::{UdtListener, UdtStream};

/// Resident set size of this process, in KiB (`VmRSS` of `/proc/self/status`).
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// User + system CPU seconds of this process.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Hold still for `secs` and report the CPU spent as a share of one core.
fn idle_cpu(who: &str, count: usize, secs: u64) {
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    thread::sleep(Duration::from_secs(secs));
    let share = (cpu_seconds() - cpu0) / start.elapsed().as_secs_f64();
    println!(
        "{who}: {count} idle connections for {secs} s: {:.2}% of a core ({:.4}% each)",
        share * 100.0,
        share * 100.0 / count as f64
    );
}

fn client(addr: SocketAddr, count: usize, secs: u64) -> io::Result<()> {
    let before = rss_kib();
    let streams = (0..count)
        .map(|_| UdtStream::connect(addr))
        .collect::<io::Result<Vec<_>>>()?;
    let after = rss_kib();
    println!(
        "client: {count} connections (one port and I/O thread each): VmRSS {before} -> {after} KiB, {:.1} KiB per connection",
        (after - before) as f64 / count as f64
    );
    println!("ready");
    io::stdout().flush()?;
    idle_cpu("client", count, secs);
    drop(streams);
    Ok(())
}

fn server(count: usize, secs: u64) -> io::Result<()> {
    let listener = UdtListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    // Let the I/O thread start and touch its stack and batch buffers.
    thread::sleep(Duration::from_millis(100));
    let before = rss_kib();
    let mut child = Command::new(std::env::current_exe()?)
        .args(["client", &addr.to_string(), &count.to_string()])
        .arg(secs.to_string())
        .stdout(Stdio::piped())
        .spawn()?;
    let streams = (0..count)
        .map(|_| listener.accept().map(|(s, _)| s))
        .collect::<io::Result<Vec<_>>>()?;
    let after = rss_kib();
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    for line in lines.by_ref() {
        let line = line?;
        if line == "ready" {
            break;
        }
        println!("{line}");
    }
    println!(
        "server: {count} accepted connections on one port: VmRSS {before} -> {after} KiB, {:.1} KiB per connection",
        (after - before) as f64 / count as f64
    );
    idle_cpu("server", count, secs);
    for line in lines {
        println!("{}", line?);
    }
    child.wait()?;
    drop(streams);
    Ok(())
}

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "client") {
        let addr = args[1].parse().expect("server address");
        let count = args[2].parse().expect("connection count");
        let secs = args[3].parse().expect("idle seconds");
        return client(addr, count, secs);
    }
    let count = args.first().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let secs = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    server(count, secs)
}
