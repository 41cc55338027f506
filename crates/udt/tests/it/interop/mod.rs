//! Interoperability with libudt 4.11 through the real runtime: our `UdtStream` /
//! `UdtMessageSocket` / `UdtListener` against the C++ peers of `interop/` (built and spawned
//! by `udt_interop::peers`, a dev-dependency: one peer runner for both test suites).
//!
//! Data is `udt_interop::pattern`'s deterministic stream, which the C++ peers check byte by
//! byte; streams are also compared by SHA-256 (the peers print the digest of what they sent
//! or received, we compute ours with `sha2`).
//!
//! Sizes: the two bulk stream tests move 256 MiB each (measured in the debug test build: 3.9 s
//! ours to libudt, 10.7 s libudt to us); `UDT_INTEROP_SMALL=1` makes it 64 MiB. The
//! killed-peer tests wait out 4.11's ~46 s EXP rule, in parallel.

mod classic;
mod killed;
mod message;
mod protected;
mod relay;
mod shared_port;
mod stream;

use std::io::{self, Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use udt::UdtStream;
use udt_interop::pattern;
use udt_interop::peers::{Json, PeerProcess};

/// Bytes per bulk stream test: 256 MiB, or 64 MiB with `UDT_INTEROP_SMALL=1`.
fn stream_bytes() -> u64 {
    if std::env::var_os("UDT_INTEROP_SMALL").is_some() {
        64 << 20
    } else {
        256 << 20
    }
}

/// How long a peer may take to print its result after our side finished.
const RESULT_WAIT: Duration = Duration::from_secs(30);

/// Start `udt_server` with `args`; returns it with its listening address.
fn server(args: &[&str]) -> (PeerProcess, SocketAddr) {
    let mut p = PeerProcess::spawn("udt_server", &strings(args));
    let port = p
        .expect_event("listening", Duration::from_secs(10))
        .int("port")
        .expect("listening line has a port");
    let port = u16::try_from(port).expect("port fits u16");
    (p, SocketAddr::from(([127, 0, 0, 1], port)))
}

/// Start `udt_client` with `args`.
fn client(args: &[&str]) -> PeerProcess {
    PeerProcess::spawn("udt_client", &strings(args))
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// A loopback UDP port that was free a moment ago.
fn free_port() -> u16 {
    let s = UdpSocket::bind("127.0.0.1:0").expect("bind");
    s.local_addr().expect("addr").port()
}

/// Assert that a peer's result line says ok.
fn assert_ok(r: &Json) {
    assert_eq!(r.bool("ok"), Some(true), "peer result: {}", r.0);
}

/// Write `total` pattern bytes and wait until all are acknowledged; returns the SHA-256 (hex)
/// of what was written and the time it took.
fn send_pattern(s: &mut UdtStream, total: u64) -> io::Result<(String, Duration)> {
    let start = Instant::now();
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut sent = 0u64;
    while sent < total {
        let n = buf
            .len()
            .min(usize::try_from(total - sent).unwrap_or(usize::MAX));
        pattern::fill_stream(sent, &mut buf[..n]);
        sha.update(&buf[..n]);
        s.write_all(&buf[..n])?;
        sent += n as u64;
    }
    s.flush()?;
    Ok((format!("{:x}", sha.finalize()), start.elapsed()))
}

/// Read until end of stream, checking the pattern; returns (bytes, SHA-256 hex, time).
fn recv_pattern(s: &mut UdtStream) -> io::Result<(u64, String, Duration)> {
    let start = Instant::now();
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut got = 0u64;
    loop {
        let n = s.read(&mut buf)?;
        if n == 0 {
            break;
        }
        if let Some(at) = pattern::check_stream(got, &buf[..n]) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("stream byte {at} differs from the pattern"),
            ));
        }
        sha.update(&buf[..n]);
        got += n as u64;
    }
    Ok((got, format!("{:x}", sha.finalize()), start.elapsed()))
}

/// The SHA-256 (hex) of the first `total` pattern bytes, computed independently of any
/// transfer.
fn pattern_sha256(total: u64) -> String {
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0u64;
    while at < total {
        let n = buf
            .len()
            .min(usize::try_from(total - at).unwrap_or(usize::MAX));
        pattern::fill_stream(at, &mut buf[..n]);
        sha.update(&buf[..n]);
        at += n as u64;
    }
    format!("{:x}", sha.finalize())
}

/// Goodput in Mbit/s, for the printed summaries.
fn mbps(bytes: u64, t: Duration) -> f64 {
    bytes as f64 * 8.0 / t.as_secs_f64().max(1e-9) / 1e6
}
