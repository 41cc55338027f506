//! Measuring the emulator from inside the namespaces: a UDP echo for the RTT ([`echo`]) and a
//! paced UDP blast for rate and loss. Used by the tests in `tests/` and by [`calibrate`](crate::calibrate).
//!
//! The probes run as threads of the calling process, with sockets opened inside the namespaces
//! ([`Namespace::run`](crate::Namespace::run)), so they need no external tools. Rates are wire
//! rates: an IPv4 UDP packet of `payload` bytes is `payload + 28` bytes on the link.

use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::Lab;

pub mod echo;

pub use echo::{echo_samples, EchoSample};

/// IPv4 (20) and UDP (8) header bytes around a datagram's payload.
pub const UDP_OVERHEAD: usize = 28;

/// A UDP blast from namespace b to namespace a.
#[derive(Debug, Clone, PartialEq)]
pub struct BlastSpec {
    /// Payload bytes per datagram (at least 8: the sequence number).
    pub payload: usize,
    /// Sending rate in bit/s on the wire (payload + 28 bytes per packet).
    pub send_rate_bps: u64,
    /// Datagrams to send.
    pub packets: u64,
    /// Arrivals in this first span are left out of the rate (the queue filling up).
    pub warmup: Duration,
}

impl BlastSpec {
    /// Bytes of one packet on the link.
    pub fn wire_bytes(&self) -> usize {
        self.payload.max(8) + UDP_OVERHEAD
    }

    /// A spec sending for about `duration` at `send_rate_bps`.
    pub fn for_duration(payload: usize, send_rate_bps: u64, duration: Duration) -> Self {
        let wire_bits = ((payload.max(8) + UDP_OVERHEAD) * 8) as f64;
        let packets = (send_rate_bps as f64 * duration.as_secs_f64() / wire_bits) as u64;
        Self {
            payload,
            send_rate_bps,
            packets,
            warmup: Duration::from_millis(300),
        }
    }
}

/// What a blast measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BlastReport {
    /// Datagrams the sender handed to the kernel.
    pub sent: u64,
    /// Datagrams the receiver got.
    pub received: u64,
    /// Receive rate on the wire (bit/s) after the warmup, from the first to the last arrival.
    pub wire_bps: f64,
    /// Rate the sender achieved on the wire (bit/s): below the link rate, the blast did not
    /// saturate the link and `wire_bps` says nothing about it.
    pub offered_bps: f64,
    /// Sender-side errors (`ENOBUFS` from a full device queue and the like).
    pub send_errors: u64,
}

/// Sends `spec.packets` datagrams from b to a, paced at `spec.send_rate_bps`, and counts what
/// arrives.
pub fn blast(lab: &Lab, spec: &BlastSpec) -> anyhow::Result<BlastReport> {
    let rx = lab.a().run(|| UdpSocket::bind((lab.a().addr(), 0)))??;
    let tx = lab.b().run(|| UdpSocket::bind((lab.b().addr(), 0)))??;
    force_buffers(&rx, 32 << 20);
    force_buffers(&tx, 4 << 20);
    tx.connect(rx.local_addr()?)?;
    rx.set_read_timeout(Some(Duration::from_millis(20)))?;
    let done = AtomicBool::new(false);
    let linger = lab.params().rtt + Duration::from_millis(300);
    std::thread::scope(|s| {
        let receiver = s.spawn(|| receive(&rx, spec, &done, linger));
        let start = Instant::now();
        let (sent, send_errors) = send_paced(&tx, spec);
        let send_secs = start.elapsed().as_secs_f64();
        done.store(true, Ordering::Relaxed);
        let mut report = receiver
            .join()
            .map_err(|_| anyhow::anyhow!("receiver panicked"))?;
        report.sent = sent;
        report.send_errors = send_errors;
        report.offered_bps = (sent as f64 * (spec.wire_bytes() * 8) as f64) / send_secs;
        Ok(report)
    })
}

/// The sender: batches of datagrams, sleeping whenever ahead of the pace.
fn send_paced(tx: &UdpSocket, spec: &BlastSpec) -> (u64, u64) {
    crate::forward::set_timer_slack_ns(1);
    let mut buf = vec![0u8; spec.payload.max(8)];
    let bits_per_packet = (spec.wire_bytes() * 8) as f64;
    let start = Instant::now();
    let (mut sent, mut errors) = (0u64, 0u64);
    while sent < spec.packets {
        let allowed =
            (start.elapsed().as_secs_f64() * spec.send_rate_bps as f64 / bits_per_packet) as u64;
        if sent >= allowed {
            std::thread::sleep(Duration::from_micros(50));
            continue;
        }
        // Never past the count asked for: a late wake-up may allow more than remain.
        for _ in 0..(allowed - sent).min(64).min(spec.packets - sent) {
            buf[..8].copy_from_slice(&sent.to_be_bytes());
            sent += 1;
            if tx.send(&buf).is_err() {
                errors += 1;
            }
        }
    }
    (sent, errors)
}

/// The receiver: counts datagrams and times the arrivals after the warmup.
fn receive(rx: &UdpSocket, spec: &BlastSpec, done: &AtomicBool, linger: Duration) -> BlastReport {
    let mut buf = vec![0u8; spec.payload.max(8) + 64];
    let mut received = 0u64;
    let mut first: Option<Instant> = None;
    let mut window: Option<(Instant, u64)> = None;
    let mut last = Instant::now();
    let mut idle_since = Instant::now();
    loop {
        match rx.recv(&mut buf) {
            Ok(_) => {
                let now = Instant::now();
                received += 1;
                last = now;
                idle_since = now;
                let t0 = *first.get_or_insert(now);
                if now.duration_since(t0) >= spec.warmup {
                    let w = window.get_or_insert((now, 0));
                    w.1 += 1;
                }
            }
            Err(_) => {
                if done.load(Ordering::Relaxed) && idle_since.elapsed() >= linger {
                    break;
                }
                if !done.load(Ordering::Relaxed) {
                    idle_since = Instant::now();
                }
            }
        }
    }
    let wire_bps = match window {
        Some((start, n)) if n > 1 && last > start => {
            ((n - 1) as f64 * (spec.wire_bytes() * 8) as f64)
                / last.duration_since(start).as_secs_f64()
        }
        _ => 0.0,
    };
    BlastReport {
        received,
        wire_bps,
        ..BlastReport::default()
    }
}

/// Sends `count` small datagrams from b to an echo in a, one every `gap`, and returns each
/// round-trip time through the emulator (lost ones are left out): [`EchoSample::rtt`], which
/// leaves out this host's wake-up delays (see [`echo`]).
pub fn echo_rtts(lab: &Lab, count: usize, gap: Duration) -> anyhow::Result<Vec<Duration>> {
    Ok(echo_samples(lab, count, gap)?
        .into_iter()
        .map(|s| s.rtt)
        .collect())
}

/// Sets both socket buffers to `bytes`, past `rmem_max`/`wmem_max` (read-only in a new
/// namespace): `SO_RCVBUFFORCE` needs `CAP_NET_ADMIN`, which the lab has.
pub fn force_buffers(socket: &UdpSocket, bytes: i32) {
    for opt in [libc::SO_RCVBUFFORCE, libc::SO_SNDBUFFORCE] {
        // SAFETY: setsockopt reads one c_int from a valid pointer of the given length.
        unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&bytes as *const i32).cast(),
                size_of::<i32>() as libc::socklen_t,
            );
        }
    }
}

/// The median of some durations (`ZERO` if there are none).
pub fn median(values: &[Duration]) -> Duration {
    let mut v = values.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or_default()
}
