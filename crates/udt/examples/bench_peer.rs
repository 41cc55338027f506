//! One end of a loopback benchmark, as its own process so that sender and receiver CPU are
//! measured apart (getrusage of the process). Used by `scripts/bench-loopback.sh`; prints
//! JSON lines shaped like the C++ peers' in `interop/`.
//!
//! ```text
//! bench_peer udt|tcp recv [--port P]                      # {"event":"listening","port":P}
//! bench_peer udt|tcp send --connect HOST:PORT --seconds S  # memory to memory for S seconds
//!   (udt: --key HEX on both ends protects every packet with that 64-hex-digit session key;
//!   recv --bind ADDR listens on ADDR instead of 127.0.0.1)
//! bench_peer udt small [--bytes N] [--reps R]              # N-byte transfer time, both ends here
//! ```
//! The sender's time runs from its first write until everything is acknowledged (`flush`
//! for UDT; for TCP, until the receiver's 1-byte reply after end of stream).

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use udt::{SessionKey, SocketOptions, UdtListener, UdtStream};

/// Kernel socket buffer size asked for TCP (the kernel may cap it at net.core.*mem_max).
const TCP_BUFFER: usize = 8 << 20;
const CHUNK: usize = 1 << 20;

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let proto = args.first().map(String::as_str).unwrap_or("");
    let role = args.get(1).map(String::as_str).unwrap_or("");
    let port: u16 = arg("--port").and_then(|p| p.parse().ok()).unwrap_or(0);
    let seconds: f64 = arg("--seconds")
        .and_then(|s| s.parse().ok())
        .unwrap_or(20.0);
    let connect = || -> io::Result<SocketAddr> {
        arg("--connect")
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "need --connect"))
    };
    let mut options = SocketOptions::default();
    if let Some(hex) = arg("--key") {
        let key = SessionKey::from_hex(&hex)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        options.set_session_key(Some(key));
    }
    match (proto, role) {
        ("udt", "recv") => udt_recv(&arg("--bind").unwrap_or("127.0.0.1".into()), port, options),
        ("udt", "send") => udt_send(connect()?, seconds, options),
        ("udt", "small") => udt_small(
            arg("--bytes")
                .and_then(|s| s.parse().ok())
                .unwrap_or(1 << 20),
            arg("--reps").and_then(|s| s.parse().ok()).unwrap_or(20),
        ),
        ("tcp", "recv") => tcp_recv(port),
        ("tcp", "send") => tcp_send(connect()?, seconds),
        _ => {
            eprintln!("usage: bench_peer udt|tcp recv|send|small [options] (see the source)");
            std::process::exit(2);
        }
    }
}

fn cpu() -> (f64, f64) {
    // SAFETY: getrusage only writes the struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(usage.ru_utime), tv(usage.ru_stime))
}

fn result(role: &str, bytes: u64, elapsed: Duration) {
    let (user, sys) = cpu();
    let secs = elapsed.as_secs_f64();
    println!(
        "{{\"event\":\"result\",\"role\":\"{role}\",\"ok\":true,\"bytes\":{bytes},\
         \"seconds\":{secs:.6},\"mbps\":{:.1},\"cpu_user\":{user:.3},\"cpu_sys\":{sys:.3}}}",
        bytes as f64 * 8.0 / secs.max(1e-9) / 1e6
    );
}

fn listening(port: u16) {
    println!("{{\"event\":\"listening\",\"port\":{port}}}");
    let _ = io::stdout().flush();
}

/// Read to end of stream; returns (bytes, time from first byte).
fn drain(mut r: impl Read) -> io::Result<(u64, Duration)> {
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0u64;
    let mut start = None;
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            let took = start.map_or(Duration::ZERO, |s: Instant| s.elapsed());
            return Ok((total, took));
        }
        start.get_or_insert_with(Instant::now);
        total += n as u64;
    }
}

/// Write a constant buffer for `seconds`; returns bytes written.
fn blast(mut w: impl Write, seconds: f64) -> io::Result<u64> {
    let chunk = vec![0x5au8; CHUNK];
    let start = Instant::now();
    let mut sent = 0u64;
    while start.elapsed().as_secs_f64() < seconds {
        w.write_all(&chunk)?;
        sent += CHUNK as u64;
    }
    Ok(sent)
}

fn udt_recv(bind: &str, port: u16, options: SocketOptions) -> io::Result<()> {
    let l = UdtListener::bind_with((bind, port), options)?;
    listening(l.local_addr()?.port());
    let (s, _) = l.accept()?;
    let (bytes, took) = drain(&s)?;
    result("udt-recv", bytes, took);
    Ok(())
}

fn udt_send(addr: SocketAddr, seconds: f64, options: SocketOptions) -> io::Result<()> {
    let mut s = UdtStream::connect_with(addr, options)?;
    let start = Instant::now();
    let sent = blast(&s, seconds)?;
    s.flush()?;
    let took = start.elapsed();
    result("udt-send", sent, took);
    eprintln!("{:?}", s.stats());
    s.close()
}

/// Transfer `bytes` over one fresh connection `reps` times (both ends in this process);
/// prints the median time from first write to all acknowledged, and the same for connect.
fn udt_small(bytes: usize, reps: usize) -> io::Result<()> {
    let l = UdtListener::bind("127.0.0.1:0")?;
    let addr = l.local_addr()?;
    let server = thread::spawn(move || -> io::Result<()> {
        for _ in 0..reps {
            let (s, _) = l.accept()?;
            drain(&s)?;
        }
        Ok(())
    });
    let data = vec![0x5au8; bytes];
    let (mut transfer, mut connect) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let t0 = Instant::now();
        let mut s = UdtStream::connect(addr)?;
        let t1 = Instant::now();
        s.write_all(&data)?;
        s.flush()?;
        transfer.push(t1.elapsed());
        connect.push(t1 - t0);
        s.close()?;
    }
    server.join().expect("server thread")?;
    transfer.sort();
    connect.sort();
    println!(
        "{{\"event\":\"small\",\"bytes\":{bytes},\"reps\":{reps},\"median_ms\":{:.3},\
         \"min_ms\":{:.3},\"max_ms\":{:.3},\"connect_median_ms\":{:.3}}}",
        transfer[reps / 2].as_secs_f64() * 1e3,
        transfer[0].as_secs_f64() * 1e3,
        transfer[reps - 1].as_secs_f64() * 1e3,
        connect[reps / 2].as_secs_f64() * 1e3
    );
    Ok(())
}

fn tcp_tune(s: &TcpStream) -> io::Result<()> {
    let sock = socket2::SockRef::from(s);
    sock.set_send_buffer_size(TCP_BUFFER)?;
    sock.set_recv_buffer_size(TCP_BUFFER)?;
    s.set_nodelay(true)
}

fn tcp_recv(port: u16) -> io::Result<()> {
    let l = TcpListener::bind(("127.0.0.1", port))?;
    listening(l.local_addr()?.port());
    let (mut s, _) = l.accept()?;
    tcp_tune(&s)?;
    let (bytes, took) = drain(&s)?;
    s.write_all(b"k")?; // tells the sender everything arrived
    result("tcp-recv", bytes, took);
    Ok(())
}

fn tcp_send(addr: SocketAddr, seconds: f64) -> io::Result<()> {
    let mut s = TcpStream::connect(addr)?;
    tcp_tune(&s)?;
    let start = Instant::now();
    let sent = blast(&s, seconds)?;
    s.shutdown(std::net::Shutdown::Write)?;
    let mut ack = [0u8; 1];
    s.read_exact(&mut ack)?;
    result("tcp-send", sent, start.elapsed());
    Ok(())
}
