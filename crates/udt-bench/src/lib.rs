//! `udt-bench`: benchmarks of the sans-IO core, and the driver behind "simulated bytes per
//! CPU-second".
//!
//! The criterion benches live in `benches/` (codec, loss lists, buffers, the simulated
//! transfer). This library holds what they share: [`transfer`], a compact driver that runs
//! one bulk transfer between two `udt_proto` endpoints over two `udt_netsim` links in virtual
//! time through udt-proto's drive contract (`Endpoint::route`, `Connection::drive`: the same
//! calls the runtime makes), and [`thread_cpu_time`] to measure what it cost.
//!
//! Numbers from here are about this code on this machine; they are not protocol results (the
//! protocol's behaviour on a path is what udt-proto's scenario tests check).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use udt_netsim::{Link, LinkConfig, LossModel};
use udt_proto::{Connection, ConnectionConfig, Endpoint, Instant, Route, Sink, Transmit};

/// One simulated bulk transfer.
#[derive(Debug, Clone, Copy)]
pub struct TransferSpec {
    /// Payload bytes the client writes and the server must read.
    pub bytes: u64,
    /// Link rate each way, bit/s of datagram bytes.
    pub rate_bps: u64,
    /// Round-trip propagation delay (half on each link).
    pub rtt: Duration,
    /// Bernoulli loss on the data (client → server) link; the ACK path is lossless.
    pub loss: f64,
    /// Seeds the endpoints and links.
    pub seed: u64,
}

impl TransferSpec {
    /// The benchmark path: 1 Gbit/s, 10 ms RTT, `loss` on the data direction.
    pub fn gigabit(bytes: u64, loss: f64) -> Self {
        Self {
            bytes,
            rate_bps: 1_000_000_000,
            rtt: Duration::from_millis(10),
            loss,
            seed: 1,
        }
    }
}

/// What a transfer did, in virtual time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferReport {
    /// Payload bytes delivered to the server application.
    pub bytes: u64,
    /// Virtual time from `connect` to the last byte read.
    pub virtual_time: Duration,
    /// Datagrams carried by the two links.
    pub datagrams: u64,
    /// Data packets the client retransmitted.
    pub retransmitted: u64,
}

/// One side: an endpoint and its (single) connection.
struct Host {
    addr: SocketAddr,
    endpoint: Endpoint,
    conn: Option<Connection>,
}

impl Host {
    fn new(last_octet: u8, seed: u64) -> Self {
        Self {
            addr: SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, last_octet)), 9000),
            endpoint: Endpoint::new(seed),
            conn: None,
        }
    }

    /// Hand one arriving datagram to the endpoint and route it; stateless replies go to `out`.
    fn arrive(&mut self, now: Instant, from: SocketAddr, data: &[u8], out: &mut Link) {
        let mut sink = LinkSink::new(now, out);
        match self
            .endpoint
            .route(now, now, from, data, |_| true, &mut sink)
        {
            Route::Connection(_) => {
                if let Some(conn) = &mut self.conn {
                    conn.handle_datagram(now, from, data);
                }
            }
            Route::Accepted(conn) => self.conn = Some(*conn),
            Route::Done => {}
        }
    }

    /// Drive the connection and push everything it wants to send onto `out`.
    fn drive(&mut self, now: Instant, out: &mut Link) -> u64 {
        let Some(conn) = &mut self.conn else {
            return 0;
        };
        conn.drive(now, &mut LinkSink::new(now, out)).transmits as u64
    }
}

/// Puts each datagram a host emits onto its outgoing link.
struct LinkSink<'a> {
    now: Instant,
    buf: Vec<u8>,
    link: &'a mut Link,
}

impl<'a> LinkSink<'a> {
    fn new(now: Instant, link: &'a mut Link) -> Self {
        Self {
            now,
            buf: Vec::with_capacity(1500),
            link,
        }
    }
}

impl Sink for LinkSink<'_> {
    fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    fn commit(&mut self, transmit: Transmit) {
        debug_assert_eq!(transmit.size, self.buf.len());
        let datagram = std::mem::replace(&mut self.buf, Vec::with_capacity(1500));
        self.link.push(self.now.since_epoch(), (), datagram);
    }
}

/// Runs `spec` to completion and reports it. Panics if the transfer stalls for more than ten
/// virtual minutes (a protocol bug, not a benchmark result).
pub fn transfer(spec: &TransferSpec) -> TransferReport {
    let link = |loss: f64| {
        LinkConfig::new()
            .rate_bps(spec.rate_bps)
            .delay(spec.rtt / 2)
            .queue_bytes(LinkConfig::bdp_bytes(spec.rate_bps, spec.rtt).max(64 * 1500))
            .loss(LossModel::bernoulli(loss))
    };
    let mut forward = Link::new(link(spec.loss), spec.seed.wrapping_add(2));
    let mut reverse = Link::new(link(0.0), spec.seed.wrapping_add(3));
    let mut client = Host::new(1, spec.seed);
    let mut server = Host::new(2, spec.seed.wrapping_add(1));
    server.endpoint.listen(ConnectionConfig::default());
    let mut now = Instant::ZERO;
    // Cannot fail: the endpoint is fresh (no connection to `server.addr` yet) and the config
    // is not rendezvous.
    let conn = client
        .endpoint
        .connect(now, server.addr, ConnectionConfig::default())
        .expect("first connect on a fresh endpoint");
    client.conn = Some(conn);

    let chunk: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8).collect();
    let mut read_buf = vec![0u8; 1 << 20];
    let (mut written, mut read, mut datagrams) = (0u64, 0u64, 0u64);
    let limit = Instant::ZERO + Duration::from_secs(600);
    while read < spec.bytes {
        assert!(
            now < limit,
            "transfer stalled at {read} of {} bytes",
            spec.bytes
        );
        while let Some(((), data)) = forward.poll_deliver(now.since_epoch()) {
            server.arrive(now, client.addr, &data, &mut reverse);
        }
        while let Some(((), data)) = reverse.poll_deliver(now.since_epoch()) {
            client.arrive(now, server.addr, &data, &mut forward);
        }
        written += write_some(&mut client, now, &chunk, spec.bytes - written);
        read += read_all(&mut server, &mut read_buf);
        datagrams += client.drive(now, &mut forward) + server.drive(now, &mut reverse);
        now = next_time(now, &[&client, &server], &[&forward, &reverse]);
    }
    let retransmitted = client.conn.as_ref().map_or(0, |c| c.stats().retransmitted);
    TransferReport {
        bytes: read,
        virtual_time: now - Instant::ZERO,
        datagrams,
        retransmitted,
    }
}

/// The application side of the client: keep the send buffer full.
fn write_some(client: &mut Host, now: Instant, chunk: &[u8], left: u64) -> u64 {
    let Some(conn) = &mut client.conn else {
        return 0;
    };
    let mut written = 0u64;
    while written < left {
        let len = (left - written).min(chunk.len() as u64) as usize;
        match conn.send(now, &chunk[..len]) {
            Ok(n) if n > 0 => written += n as u64,
            _ => break,
        }
    }
    written
}

/// The application side of the server: read everything readable.
fn read_all(server: &mut Host, buf: &mut [u8]) -> u64 {
    let Some(conn) = &mut server.conn else {
        return 0;
    };
    let mut read = 0u64;
    while let Ok(n) = conn.recv(buf) {
        if n == 0 {
            break;
        }
        read += n as u64;
    }
    read
}

/// The next instant anything is due (at least 1 µs later, so a stale deadline cannot spin).
fn next_time(now: Instant, hosts: &[&Host], links: &[&Link]) -> Instant {
    let conns = hosts
        .iter()
        .filter_map(|h| h.conn.as_ref())
        .filter_map(Connection::poll_timeout);
    let links = links
        .iter()
        .filter_map(|l| l.next_deadline())
        .map(Instant::from_duration);
    let next = conns.chain(links).min();
    next.map_or(now + Duration::from_millis(1), |t| {
        t.max(now + Duration::from_micros(1))
    })
}

/// CPU time this thread has used so far (Linux `/proc/thread-self/schedstat`), or `None`
/// where that file does not exist.
pub fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_transfer_completes_with_and_without_loss() {
        for loss in [0.0, 0.01] {
            let report = transfer(&TransferSpec::gigabit(4 << 20, loss));
            assert_eq!(report.bytes, 4 << 20);
            assert!(report.virtual_time < Duration::from_secs(5), "{report:?}");
            assert_eq!(report.retransmitted > 0, loss > 0.0, "{report:?}");
        }
    }

    #[test]
    fn cpu_time_moves_forward() {
        if let Some(before) = thread_cpu_time() {
            let mut x = 0u64;
            for i in 0..1_000_000u64 {
                x = x.wrapping_add(std::hint::black_box(i));
            }
            std::hint::black_box(x);
            assert!(thread_cpu_time().is_some_and(|after| after >= before));
        }
    }
}
