//! The `mux_input` body: what one UDP port of the runtime receives, fed through the real
//! demultiplexing path.
//!
//! The runtime's multiplexer (`crates/udt/src/mux.rs` + `driver.rs`) follows the drive
//! contract (`crate::drive`): every datagram goes to [`Endpoint::route`] (to the connection
//! it names, accepted or refused against the accept backlog, or answered statelessly), the
//! connection it reached is driven with [`Connection::drive`] (timer if due, transmits,
//! events), and a drained one is retired with [`Endpoint::forget`]. [`Host`] makes exactly
//! those calls, in virtual time, for three ports: a listening port `M` (the one the world can reach) and two genuine
//! clients `P1`, `P2` connected to it. Around them, a handful of stranger addresses send
//! arbitrary datagrams, forged handshakes (including conclusions carrying the cookie `M`
//! echoed to them, so strangers get connections accepted and fill the backlog), and
//! datagrams re-addressed to live socket ids; genuine traffic is delivered, dropped,
//! reordered and mutated in flight; the application accepts, writes, reads, closes and stops
//! listening; time advances in arbitrary steps.
//!
//! Arrival times are what the runtime gives: each datagram of a receive batch is stamped with
//! its kernel arrival time, which is *earlier* than the time the batch is processed at (up to
//! the runtime's 1 s `MAX_AGE`), and may precede what the connection already saw.
//!
//! Checked, besides "no panic":
//! - the endpoint routes only to connections it has, and its count matches the table;
//! - `route` appends bytes only as committed datagrams (of the reported size);
//! - every datagram a connection emits goes to its own peer; `poll_transmit` runs dry;
//! - a retired (forgotten) socket id no longer routes;
//! - the accept queue never exceeds the backlog;
//! - stream data read on a connection that no forged or mutated datagram reached is exactly
//!   the bytes its genuine peer wrote at those offsets, and never more than it wrote.

use std::collections::{BTreeMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use super::input::Input;
use super::support::{encode_handshake, hand_over, pattern, CheckedSink};
use crate::config::ConnectionConfig;
use crate::connection::{Connection, State};
use crate::drive::Route;
use crate::endpoint::Endpoint;
use crate::handshake::Connector;
use crate::seq::{SeqNumber, SocketId};
use crate::time::Instant;
use crate::wire::{ControlBody, ControlRepr, Packet, ReqType, SocketType, HEADER_LEN};

/// Upper bound on operations per input.
const MAX_OPS: usize = 300;
/// Datagrams one host's inbound queue holds before it drops (a bounded socket buffer).
const MAX_QUEUED: usize = 20_000;
/// Stranger addresses (the handful of sources besides the genuine peers).
const STRANGERS: usize = 4;
/// The listening host; the genuine clients are 1 and 2.
const LISTENER: usize = 0;
/// The runtime trusts kernel arrival stamps up to this age (driver.rs `MAX_AGE`).
const MAX_AGE_US: u64 = 1_000_000;

/// Runs the operations encoded in `data` against three ports and their strangers; panics on
/// a violated invariant.
pub fn mux_input(data: &[u8]) {
    let mut input = Input::new(data);
    let seed = u64::from(input.u16());
    let backlog = usize::from(input.u8() % 4) + 1;
    let mut world = World::new(seed, backlog);
    for _ in 0..MAX_OPS {
        if input.is_empty() {
            break;
        }
        world.step(&mut input);
        world.check();
    }
    world.settle(50);
    world.check();
}

/// A datagram on its way to a host.
struct Datagram {
    from: SocketAddr,
    bytes: Vec<u8>,
}

/// One connection in a host's table, with the application's view of its stream.
struct Conn {
    conn: Connection,
    written: u64,
    read: u64,
    /// A forged or mutated datagram reached it (or created it): its reads are unchecked.
    tainted: bool,
    /// Touched by the application since the last drive (the runtime's "pending" queue).
    dirty: bool,
}

/// One UDP port as the runtime runs it: endpoint, connection table, accept queue.
struct Host {
    addr: SocketAddr,
    endpoint: Endpoint,
    conns: BTreeMap<SocketId, Conn>,
    accept_queue: VecDeque<SocketId>,
    backlog: usize,
    /// Connections the application holds (accepted or connected).
    app: Vec<SocketId>,
    /// Socket ids retired from this host (must no longer route).
    retired: Vec<SocketId>,
    inbound: VecDeque<Datagram>,
}

impl Host {
    fn new(last_octet: u8, seed: u64, backlog: usize) -> Self {
        Self {
            addr: SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, last_octet)), 9000),
            endpoint: Endpoint::new(seed),
            conns: BTreeMap::new(),
            accept_queue: VecDeque::new(),
            backlog,
            app: Vec::new(),
            retired: Vec::new(),
            inbound: VecDeque::new(),
        }
    }

    /// The id of the `pick`-th live connection (for re-addressing forged datagrams).
    fn live_id(&self, pick: u8) -> Option<SocketId> {
        let n = self.conns.len().max(1);
        self.conns.keys().nth(usize::from(pick) % n).copied()
    }
}

/// Everything a drive or a reply sends, before the network routes it.
type Outbox = Vec<(SocketAddr, Vec<u8>)>;

/// The three hosts, the strangers' mailboxes, and the virtual clock.
struct World {
    now: Instant,
    hosts: [Host; 3],
    strangers: [SocketAddr; STRANGERS],
    /// The last datagram each stranger was sent (a cookie echo to answer, usually).
    stranger_mail: [Vec<u8>; STRANGERS],
    buf: Vec<u8>,
}

impl World {
    /// `M` listens; `P1` and `P2` connect to it over a perfect network and `M`'s application
    /// accepts both; then `M`'s backlog becomes `backlog`.
    fn new(seed: u64, backlog: usize) -> Self {
        let mut hosts = [
            Host::new(1, seed, 2),
            Host::new(2, seed ^ 0x5EED, 2),
            Host::new(3, seed ^ 0xF00D, 2),
        ];
        hosts[LISTENER].endpoint.listen(ConnectionConfig::default());
        let strangers = [5u8, 6, 7, 8]
            .map(|o| SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, o)), 4000 + u16::from(o)));
        let mut world = Self {
            now: Instant::from_micros(10_000_000),
            hosts,
            strangers,
            stranger_mail: Default::default(),
            buf: Vec::with_capacity(2048),
        };
        for client in 1..3 {
            world.connect(client);
        }
        world.settle(100);
        world.app_accept(LISTENER, 2);
        world.settle(20);
        for client in 1..3 {
            let h = &world.hosts[client];
            let connected = h.app.iter().any(|id| {
                h.conns
                    .get(id)
                    .is_some_and(|c| c.conn.state() == State::Connected)
            });
            assert!(connected, "handshake of host {client} on a perfect network");
        }
        assert_eq!(world.hosts[LISTENER].app.len(), 2, "listener accepted both");
        world.hosts[LISTENER].backlog = backlog;
        world
    }

    fn step(&mut self, input: &mut Input<'_>) {
        let host = usize::from(input.u8()) % 3;
        match input.u8() % 16 {
            0 | 1 => self.stranger_datagram(input),
            2 => self.stranger_handshake(input),
            3..=5 => self.deliver_batch(host, input),
            6 => {
                let count = usize::from(input.u8() % 16);
                let q = &mut self.hosts[host].inbound;
                q.drain(..count.min(q.len()));
            }
            7 => self.mutate_next(host, input),
            8 => {
                let q = &mut self.hosts[host].inbound;
                if let Some(d) = q.pop_front() {
                    let at = q.len().min(usize::from(input.u8()));
                    q.insert(at, d);
                }
            }
            9 => self.advance(Duration::from_micros(u64::from(input.u16()) * 32)),
            10 => self.app_accept(host, usize::from(input.u8() % 4)),
            11 => self.app_write(host, input.u8(), usize::from(input.u16() % 20_000)),
            12 => self.app_read_all(),
            13 => self.app_close(host, input.u8()),
            14 => self.settle(usize::from(input.u8() % 32)),
            _ => match input.u8() {
                0xC1 => self.stop_listening(),
                b if b < 0x40 => self.connect(1 + usize::from(b & 1)),
                _ => {}
            },
        }
        self.pump_all();
    }

    /// Arbitrary bytes to `M` (or, less often, a client port) from a stranger or a spoofed
    /// genuine address, optionally re-addressed to a live socket id or to 0.
    fn stranger_datagram(&mut self, input: &mut Input<'_>) {
        let flags = input.u8();
        let to = if flags & 0x30 == 0 {
            1 + usize::from(flags >> 7)
        } else {
            LISTENER
        };
        let len = usize::from(input.u16() % 1600);
        let mut bytes = input.bytes(len).to_vec();
        if bytes.len() >= HEADER_LEN {
            let dst = match flags % 4 {
                0 => self.hosts[to].live_id(input.u8()),
                1 => Some(SocketId::NONE),
                _ => None,
            };
            if let Some(dst) = dst {
                bytes[12..HEADER_LEN].copy_from_slice(&dst.0.to_be_bytes());
            }
        }
        let from = self.source(flags >> 2);
        let arrival = self.arrival(input);
        self.receive(to, from, &bytes, arrival, false);
    }

    /// A handshake to `M` from a stranger: a first request, or a conclusion that echoes the
    /// cookie `M` last sent that stranger (so it verifies), fields partly arbitrary.
    fn stranger_handshake(&mut self, input: &mut Input<'_>) {
        let who = usize::from(input.u8()) % STRANGERS;
        let mut hs = Connector::request(
            SocketType::STREAM,
            SeqNumber::new(input.u32()),
            1500,
            8192,
            SocketId(input.u32() % 8 + 1),
            self.hosts[LISTENER].addr.ip(),
            false,
        );
        if input.bool() {
            if let Ok(Packet::Control(ControlRepr {
                body: ControlBody::Handshake(echo),
                ..
            })) = Packet::parse(&self.stranger_mail[who])
            {
                hs.cookie = echo.cookie;
                hs.req_type = ReqType::RESPONSE;
            }
        }
        match input.u8() % 8 {
            0 => hs.mss = input.u32(),
            1 => hs.flow_window = input.u32(),
            2 => hs.socket_type = SocketType(input.u32() % 4),
            3 => hs.version = input.u32() % 6,
            _ => {}
        }
        let bytes = encode_handshake(hs, SocketId::NONE);
        let arrival = self.arrival(input);
        self.receive(LISTENER, self.strangers[who], &bytes, arrival, false);
    }

    /// Where a forged datagram claims to come from: mostly strangers, sometimes a genuine
    /// host's address (spoofed).
    fn source(&self, pick: u8) -> SocketAddr {
        match usize::from(pick) % (STRANGERS + 3) {
            i if i < STRANGERS => self.strangers[i],
            i => self.hosts[i - STRANGERS].addr,
        }
    }

    /// A kernel arrival stamp: up to `MAX_AGE` before now.
    fn arrival(&self, input: &mut Input<'_>) -> Instant {
        let age_us = match input.u8() % 4 {
            0 => u64::from(input.u32()) % (MAX_AGE_US + 1),
            _ => u64::from(input.u8()),
        };
        self.now.saturating_sub(Duration::from_micros(age_us))
    }

    /// One receive batch: up to `n` queued datagrams, stamped with increasing arrival times
    /// that all precede the processing time (`now`), as `recvmmsg` + kernel stamps give.
    fn deliver_batch(&mut self, host: usize, input: &mut Input<'_>) {
        let n = usize::from(input.u8() % 64) + 1;
        let mut arrival = self.arrival(input);
        let step = Duration::from_micros(u64::from(input.u8() % 16));
        for _ in 0..n {
            let Some(d) = self.hosts[host].inbound.pop_front() else {
                break;
            };
            self.receive(host, d.from, &d.bytes, arrival, true);
            arrival = (arrival + step).min(self.now);
        }
    }

    /// Deliver the next queued datagram with a few bytes changed (and maybe truncated).
    fn mutate_next(&mut self, host: usize, input: &mut Input<'_>) {
        let Some(mut d) = self.hosts[host].inbound.pop_front() else {
            return;
        };
        for _ in 0..input.u8() % 4 + 1 {
            let at = usize::from(input.u16()) % d.bytes.len().max(1);
            if let Some(b) = d.bytes.get_mut(at) {
                *b = input.u8();
            }
        }
        if input.bool() {
            d.bytes.truncate(usize::from(input.u16()));
        }
        let arrival = self.arrival(input);
        self.receive(host, d.from, &d.bytes, arrival, false);
    }

    /// `Output::route` of driver.rs: ask the endpoint, then act on its answer.
    fn receive(
        &mut self,
        host: usize,
        from: SocketAddr,
        bytes: &[u8],
        arrival: Instant,
        genuine: bool,
    ) {
        let now = self.now;
        let mut sink = CheckedSink::new(&mut self.buf, None);
        let h = &mut self.hosts[host];
        let room = h.accept_queue.len() < h.backlog;
        let route = h
            .endpoint
            .route(now, arrival, from, bytes, |_| room, &mut sink);
        assert!(
            sink.buf.is_empty(),
            "route appended bytes it did not commit"
        );
        for (to, _) in &sink.out {
            assert_eq!(*to, from, "a stateless reply goes back to the sender");
        }
        let mut out = sink.out;
        match route {
            Route::Connection(id) => {
                // Property (a panic is a finding): the endpoint routes only to connections
                // this host holds.
                let c = h
                    .conns
                    .get_mut(&id)
                    .expect("the endpoint routes only to its connections");
                c.tainted |= !genuine;
                hand_over(&mut c.conn, arrival, from, bytes);
                drive(h, id, now, &mut out, &mut self.buf);
            }
            Route::Accepted(conn) => {
                let id = conn.local_id();
                let c = Conn {
                    conn: *conn,
                    written: 0,
                    read: 0,
                    tainted: !genuine,
                    dirty: false,
                };
                assert!(
                    h.conns.insert(id, c).is_none(),
                    "socket id {id:?} reused while live"
                );
                drive(h, id, now, &mut out, &mut self.buf);
                h.accept_queue.push_back(id);
            }
            Route::Done => {}
        }
        self.route(host, out);
    }

    /// The network: datagrams to a host queue there; to a stranger, land in its mailbox.
    fn route(&mut self, from_host: usize, out: Outbox) {
        let from = self.hosts[from_host].addr;
        for (to, bytes) in out {
            if let Some(h) = self.hosts.iter_mut().find(|h| h.addr == to) {
                if h.inbound.len() < MAX_QUEUED {
                    h.inbound.push_back(Datagram { from, bytes });
                }
            } else if let Some(i) = self.strangers.iter().position(|&s| s == to) {
                self.stranger_mail[i] = bytes;
            }
        }
    }

    /// `serve_pending` + `run_timers` of driver.rs on every host.
    fn pump_all(&mut self) {
        let now = self.now;
        for host in 0..3 {
            let mut out = Outbox::new();
            let h = &mut self.hosts[host];
            let due: Vec<SocketId> = h
                .conns
                .iter()
                .filter(|(_, c)| c.dirty || c.conn.poll_timeout().is_some_and(|t| t <= now))
                .map(|(&id, _)| id)
                .collect();
            for id in due {
                drive(h, id, now, &mut out, &mut self.buf);
            }
            self.route(host, out);
        }
    }

    /// Advance the clock by `span`, serving every deadline on the way.
    fn advance(&mut self, span: Duration) {
        let target = self.now + span;
        for _ in 0..1_000 {
            match self.next_deadline() {
                Some(t) if t <= target => {
                    self.now = self.now.max(t);
                    self.pump_all();
                }
                _ => break,
            }
        }
        self.now = self.now.max(target);
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.hosts
            .iter()
            .flat_map(|h| h.conns.values())
            .filter_map(|c| c.conn.poll_timeout())
            .min()
    }

    /// A perfect network for up to `rounds` steps: deliver everything queued (each host's
    /// queue as one batch stamped `now`), then jump to the next deadline within 200 ms.
    fn settle(&mut self, rounds: usize) {
        for _ in 0..rounds {
            self.pump_all();
            let idle = self.hosts.iter().all(|h| h.inbound.is_empty());
            for host in 0..3 {
                while let Some(d) = self.hosts[host].inbound.pop_front() {
                    self.receive(host, d.from, &d.bytes, self.now, true);
                }
            }
            self.pump_all();
            self.app_read_all();
            if idle {
                match self.next_deadline() {
                    Some(t) if t <= self.now + Duration::from_millis(200) => {
                        self.now = self.now.max(t);
                    }
                    _ => return,
                }
            }
        }
    }

    /// Client `host` opens a connection to `M` (refused by its endpoint if one to `M` is
    /// still connecting).
    fn connect(&mut self, host: usize) {
        let to = self.hosts[LISTENER].addr;
        let h = &mut self.hosts[host];
        if let Ok(conn) = h
            .endpoint
            .connect(self.now, to, ConnectionConfig::default())
        {
            let id = conn.local_id();
            let c = Conn {
                conn,
                written: 0,
                read: 0,
                tainted: false,
                dirty: true,
            };
            assert!(
                h.conns.insert(id, c).is_none(),
                "socket id {id:?} reused while live"
            );
            h.app.push(id);
        }
    }

    fn app_accept(&mut self, host: usize, count: usize) {
        let h = &mut self.hosts[host];
        for _ in 0..count {
            match h.accept_queue.pop_front() {
                Some(id) => h.app.push(id),
                None => break,
            }
        }
    }

    /// The application writes `len` pattern bytes on its `pick`-th connection.
    fn app_write(&mut self, host: usize, pick: u8, len: usize) {
        let now = self.now;
        let h = &mut self.hosts[host];
        let Some(c) = pick_app(h, pick) else {
            return;
        };
        let data: Vec<u8> = (0..len as u64)
            .map(|i| pattern(host, c.written + i))
            .collect();
        if let Ok(n) = c.conn.send(now, &data) {
            assert!(n <= len);
            c.written += n as u64;
            c.dirty = true;
        }
    }

    /// The application reads everything readable on all its connections, checking it.
    fn app_read_all(&mut self) {
        for host in 0..3 {
            let app = self.hosts[host].app.clone();
            for id in app {
                self.read_checked(host, id);
            }
        }
    }

    /// Read what `id` has; unless tainted, it must be its genuine peer's pattern at the right
    /// offsets, and never more than that peer wrote.
    fn read_checked(&mut self, host: usize, id: SocketId) {
        let Some(c) = self.hosts[host].conns.get(&id) else {
            return;
        };
        let (remote, peer_id) = (c.conn.remote(), c.conn.peer_id());
        let writer = self.hosts.iter().position(|h| h.addr == remote);
        let peer_written = writer
            .and_then(|w| self.hosts[w].conns.get(&peer_id))
            .map(|p| p.written);
        let Some(c) = self.hosts[host].conns.get_mut(&id) else {
            return;
        };
        let mut buf = [0u8; 8192];
        while let Ok(n) = c.conn.recv(&mut buf) {
            if n == 0 {
                break;
            }
            if let (false, Some(w)) = (c.tainted, writer) {
                for (i, &b) in buf[..n].iter().enumerate() {
                    let at = c.read + i as u64;
                    assert_eq!(
                        b,
                        pattern(w, at),
                        "stream byte {at} from host {w} corrupted"
                    );
                }
            }
            c.read += n as u64;
            if let (false, Some(pw)) = (c.tainted, peer_written) {
                assert!(
                    c.read <= pw,
                    "read {} > the {pw} bytes the peer wrote",
                    c.read
                );
            }
        }
    }

    fn app_close(&mut self, host: usize, pick: u8) {
        let now = self.now;
        if let Some(c) = pick_app(&mut self.hosts[host], pick) {
            c.conn.close(now);
            c.dirty = true;
        }
    }

    /// `stop_listening` of mux.rs: refuse new requests, close what was never accepted.
    fn stop_listening(&mut self) {
        let now = self.now;
        let h = &mut self.hosts[LISTENER];
        h.endpoint.stop_listening();
        for id in h.accept_queue.drain(..) {
            if let Some(c) = h.conns.get_mut(&id) {
                c.conn.close(now);
                c.dirty = true;
            }
        }
    }

    /// The table-level invariants after a step.
    fn check(&mut self) {
        for h in &mut self.hosts {
            assert_eq!(
                h.endpoint.connection_count(),
                h.conns.len(),
                "endpoint / table"
            );
            assert!(
                h.accept_queue.len() <= h.backlog,
                "accept queue over the backlog"
            );
            let mut probe = [0u8; HEADER_LEN];
            for &id in &h.retired {
                if h.conns.contains_key(&id) {
                    continue;
                }
                probe[12..].copy_from_slice(&id.0.to_be_bytes());
                let ev = h.endpoint.handle(self.now, h.addr, &probe, &mut self.buf);
                assert!(ev.is_none(), "retired socket {id:?} still routes");
            }
            h.retired.clear();
            h.app.retain(|id| h.conns.contains_key(id));
        }
    }
}

/// `Output::drive` of driver.rs: `Connection::drive` (each datagram must go to the
/// connection's peer), then retire the connection once drained.
fn drive(h: &mut Host, id: SocketId, now: Instant, out: &mut Outbox, buf: &mut Vec<u8>) {
    let Some(c) = h.conns.get_mut(&id) else {
        return;
    };
    c.dirty = false;
    let mut sink = CheckedSink::new(buf, Some(c.conn.remote()));
    let driven = c.conn.drive(now, &mut sink);
    assert_eq!(
        driven.transmits,
        sink.out.len(),
        "Driven counts what it committed"
    );
    out.append(&mut sink.out);
    assert_eq!(c.conn.queue_lens().1, 0, "drive drains the events");
    if driven.drained {
        let conn = h.conns.remove(&id).map(|c| c.conn);
        if let Some(conn) = conn {
            h.endpoint.forget(&conn);
        }
        h.accept_queue.retain(|&q| q != id);
        h.retired.push(id);
    }
}

/// The application's `pick`-th connection on `h`.
fn pick_app(h: &mut Host, pick: u8) -> Option<&mut Conn> {
    let n = h.app.len();
    let id = *h.app.get(usize::from(pick) % n.max(1))?;
    h.conns.get_mut(&id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The harness itself: with no interference, writes arrive intact in both directions on
    /// both connections.
    #[test]
    fn perfect_network_transfers_on_both_connections() {
        let mut w = World::new(3, 2);
        for pick in 0..2 {
            w.app_write(LISTENER, pick, 10_000);
        }
        w.app_write(1, 0, 30_000);
        w.app_write(2, 0, 5_000);
        w.settle(300);
        let read = |w: &World, host: usize| -> u64 {
            w.hosts[host]
                .app
                .iter()
                .map(|id| w.hosts[host].conns[id].read)
                .sum()
        };
        assert_eq!(read(&w, LISTENER), 35_000);
        assert_eq!((read(&w, 1), read(&w, 2)), (10_000, 10_000));
        w.check();
    }

    /// A stranger that answers the listener's cookie gets a connection accepted, and the
    /// backlog bounds how many wait.
    #[test]
    fn strangers_with_cookies_fill_the_backlog() {
        let mut w = World::new(4, 1);
        for who in 0..STRANGERS as u8 {
            for conclude in [0u8, 1] {
                // who, isn, id, conclude?, no field change, arrival age 0.
                let op = [who, 0, 0, 0, 0, 0, 0, 0, 0, conclude, 7, 1, 0];
                w.stranger_handshake(&mut Input::new(&op));
                w.pump_all();
                w.check();
            }
        }
        let h = &w.hosts[LISTENER];
        assert_eq!(h.accept_queue.len(), 1, "one waits, the rest are rejected");
        assert!(h.endpoint.stats().rejected >= 1);
    }
}
