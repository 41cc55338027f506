//! A simulated network of endpoints joined by `udt-netsim` links, driven in virtual time.
//!
//! Each node is one [`Endpoint`] (one UDP port) with its connections. A route from one node
//! to another is a list of links that a datagram crosses in turn (an access link, then a
//! shared bottleneck, say). The clock jumps straight to the next deadline of any link or
//! connection, so a 10-second 1 Gbit/s transfer takes well under a second of CPU.
//!
//! Every step drives every connection, as this simulator always has: its results (and every
//! bar tuned on them) rest on it. Driving a connection that nothing reached since its last
//! drive (no datagram, ICMP hint or application call through [`Sim::conn`]) and whose
//! deadline has not come changes one thing at most: a sender whose pacing slot has come but
//! that has nothing to send forgives its lateness (`Pacer::on_idle`). So such a connection
//! gets only that ([`Connection::drive_idle`]), which is the same step at a fraction of the
//! cost (the full drives took most of the simulator's time). Tests that look at a connection
//! without acting on it use [`Sim::peek`], so that it is not marked as reached.
//!
//! The threaded runtime drives a connection only when something reached it or its deadline
//! came, so it never forgives at those extra steps: a window-limited sender there pays its
//! lateness back as a burst when the window opens (BENCHMARKS.md, session 47). Making the
//! core forgive such waits instead cost `model` share beside kernel CUBIC in the lab (session
//! 48), so that difference stays.
//!
//! `UDT_LOG` (a tracing filter, as the `udt` command takes it: say
//! `udt_proto::congestion::ledbat=debug`) prints the core's events from a simulator test
//! (with `--nocapture`), each stamped with the virtual time of the simulation that raised it.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use udt_netsim::{Link, LinkConfig, LossModel, StallSchedule};

use crate::config::ConnectionConfig;
use crate::connection::Connection;
use crate::drive::{Route, VecSink};
use crate::endpoint::Endpoint;
use crate::seq::SocketId;
use crate::time::Instant;

thread_local! {
    /// The virtual time of the simulation running on this thread, for [`SimTime`].
    static SIM_NOW: Cell<Instant> = const { Cell::new(Instant::ZERO) };
}

/// Installs the `UDT_LOG` subscriber once per test binary (see the module docs).
fn init_trace() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(filter) = std::env::var("UDT_LOG") else {
            return;
        };
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_timer(SimTime)
            .with_test_writer()
            .try_init();
    });
}

/// Stamps trace lines with the virtual time instead of the wall clock.
struct SimTime;

impl tracing_subscriber::fmt::time::FormatTime for SimTime {
    fn format_time(&self, w: &mut tracing_subscriber::fmt::format::Writer<'_>) -> std::fmt::Result {
        let now = SIM_NOW.with(Cell::get);
        write!(w, "{:.4}s", now.since_epoch().as_secs_f64())
    }
}

/// A datagram's position on its route.
#[derive(Debug, Clone, Copy)]
struct Hop {
    src: usize,
    dst: usize,
    hop: usize,
}

/// One simulated host port.
pub(crate) struct Node {
    pub(crate) addr: SocketAddr,
    pub(crate) endpoint: Endpoint,
    pub(crate) conns: BTreeMap<SocketId, Connection>,
    /// Connections accepted by the listener, in order (the "accept queue").
    pub(crate) accepted: Vec<SocketId>,
    /// Connections that drained and were forgotten by the endpoint (kept in `conns` so
    /// tests can still read their state, but no longer driven).
    pub(crate) retired: BTreeSet<SocketId>,
    /// Drop everything arriving here (a vanished peer).
    pub(crate) dead: bool,
    /// A dead node's port is closed: each datagram arriving draws an ICMP port unreachable
    /// (a process that died, where `dead` alone is a host that vanished).
    pub(crate) port_closed: bool,
    /// When each connection not retired must next be driven in full.
    due: BTreeMap<SocketId, Due>,
    /// When the node's process is preempted (see [`Sim::stall_node`]).
    stalls: Option<StallSchedule>,
    /// The end of the stall the node is in: nothing is driven and arrivals wait in `inbox`.
    stalled_until: Option<Instant>,
    /// Datagrams (with their source node and arrival time) that arrived during a stall, in
    /// order.
    inbox: Vec<(usize, Vec<u8>, Instant)>,
    /// How many datagrams waited in `inbox`.
    pub(crate) held: u64,
    /// Connections whose drive found events (what wakes a runtime's waiting application),
    /// until a test takes them out.
    pub(crate) woken: BTreeSet<SocketId>,
}

/// A connection's next full drive: at once if something reached it, else at its deadline as
/// of its last drive (nothing can have moved that since).
#[derive(Debug, Clone, Copy, Default)]
struct Due {
    touched: bool,
    at: Option<Instant>,
}

impl Node {
    /// Something reached connection `id`: drive it in full at the next step.
    fn touch(&mut self, id: SocketId) {
        self.due.entry(id).or_default().touched = true;
    }
}

/// The simulated network.
pub(crate) struct Sim {
    pub(crate) now: Instant,
    pub(crate) nodes: Vec<Node>,
    links: Vec<Link<Hop>>,
    routes: HashMap<(usize, usize), Vec<usize>>,
    sink: VecSink,
    /// Datagrams handed to a node (for "no state per packet" checks and debugging).
    pub(crate) datagrams: u64,
    /// The connections of one node, for a pass of a step (kept to avoid an allocation per step).
    to_drive: Vec<SocketId>,
    /// When the application (the `run_until` closure) wants to run next, if it has a timer.
    pub(crate) app_wake: Option<Instant>,
    /// The longest control-packet and event queues any connection held when it was about to
    /// be driven (what piled up between two drives): the bounded-queue checks.
    pub(crate) max_queues: (usize, usize),
    /// An on-path attacker just before delivery: given the destination node and a datagram,
    /// returns what arrives instead (the datagram, changed, dropped, or with others added).
    pub(crate) interceptor: Option<Interceptor>,
}

/// See [`Sim::interceptor`].
pub(crate) type Interceptor = Box<dyn FnMut(usize, Vec<u8>) -> Vec<Vec<u8>>>;

/// Each end's process stops this often (a second) for up to this long (uniform), as
/// [`Sim::stall_node`] models a preempted host.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostStalls {
    pub(crate) rate: f64,
    pub(crate) max: Duration,
}

/// Host stalls with the lab's signature at 1 Gbit/s (sender, receiver and the forwarder's
/// two threads on two shared cores): a scavenger alone at a steady window read its queue
/// swing between 1 and 16 ms from one round trip to the next and its delivery rate between
/// 34,000 and 86,000 packets a second, kept 47-88% of the link, and kernel CUBIC beside it
/// kept 37-105% (BENCHMARKS.md, sessions 59 and 60). Through them the scavenger alone keeps
/// 54-70% (seeds 1-3) with the same churn, while `cubic` keeps 96-99% and `model` 91-92%
/// (`cc_ledbat`), and two `model` flows at 1 Gbit/s drift apart as in the lab
/// (`cc_model::two_flows_at_1gbit_on_stalled_hosts`).
pub(crate) const LAB_HOSTS: HostStalls = HostStalls {
    rate: 20.0,
    max: Duration::from_millis(15),
};

impl Sim {
    pub(crate) fn new() -> Self {
        init_trace();
        SIM_NOW.with(|t| t.set(Instant::ZERO));
        Self {
            now: Instant::ZERO,
            nodes: Vec::new(),
            links: Vec::new(),
            routes: HashMap::new(),
            sink: VecSink::default(),
            datagrams: 0,
            to_drive: Vec::new(),
            app_wake: None,
            max_queues: (0, 0),
            interceptor: None,
        }
    }

    /// Add a node at 10.0.0.<n>:9000 with an endpoint seeded by `seed`.
    pub(crate) fn add_node(&mut self, seed: u64) -> usize {
        let n = self.nodes.len();
        let ip = IpAddr::V4(Ipv4Addr::new(10, 0, (n / 250) as u8, (n % 250 + 1) as u8));
        self.nodes.push(Node {
            addr: SocketAddr::new(ip, 9000),
            endpoint: Endpoint::new(seed),
            conns: BTreeMap::new(),
            accepted: Vec::new(),
            retired: BTreeSet::new(),
            dead: false,
            port_closed: false,
            due: BTreeMap::new(),
            stalls: None,
            stalled_until: None,
            inbox: Vec::new(),
            held: 0,
            woken: BTreeSet::new(),
        });
        n
    }

    /// Preempts node `n`'s process now and then, as a shared machine does: `rate` stalls a
    /// second on average, each up to `max` long. While stalled it sends nothing, runs no
    /// timer and reads nothing: arrivals wait as in a socket buffer and are handled, in
    /// order, when the stall ends, and then the node's connections are driven. The tests'
    /// application calls go on meanwhile.
    pub(crate) fn stall_node(&mut self, n: usize, rate: f64, max: Duration, seed: u64) {
        self.nodes[n].stalls = Some(StallSchedule::new(rate, max, seed));
    }

    /// Stalls both ends of flow `flow` (nodes `a` and `b`) as `stalls` says, each from its
    /// own stream of `seed`'s.
    pub(crate) fn stall_hosts(
        &mut self,
        (a, b): (usize, usize),
        stalls: HostStalls,
        seed: u64,
        flow: u64,
    ) {
        let stream = seed * 1000 + 2 * flow;
        self.stall_node(a, stalls.rate, stalls.max, stream);
        self.stall_node(b, stalls.rate, stalls.max, stream + 1);
    }

    /// Add a link and return its index, for use in routes.
    pub(crate) fn add_link(&mut self, config: LinkConfig, seed: u64) -> usize {
        self.links.push(Link::new(config, seed));
        self.links.len() - 1
    }

    /// Datagrams from `src` to `dst` cross `links` in order (an empty route is instant).
    pub(crate) fn route(&mut self, src: usize, dst: usize, links: Vec<usize>) {
        self.routes.insert((src, dst), links);
    }

    /// Flow `i` of a dumbbell: its own client and server nodes, the client's datagrams
    /// crossing an access link and then the `shared` bottleneck, the server's a return link,
    /// the two access links adding up to `rtt`. Node and link seeds come from `seed` and `i`,
    /// so every experiment built this way draws the same randomness. Returns (client, server).
    pub(crate) fn add_dumbbell_flow(
        &mut self,
        shared: usize,
        rtt: Duration,
        seed: u64,
        i: u64,
    ) -> (usize, usize) {
        let client = self.add_node(seed + 10 + i * 2);
        let server = self.add_node(seed + 11 + i * 2);
        let access = self.add_link(LinkConfig::new().delay(rtt / 2), seed + 100 + i);
        let back = self.add_link(LinkConfig::new().delay(rtt / 2), seed + 200 + i);
        self.route(client, server, vec![access, shared]);
        self.route(server, client, vec![back]);
        (client, server)
    }

    pub(crate) fn listen(&mut self, node: usize, config: ConnectionConfig) {
        self.nodes[node].endpoint.listen(config);
    }

    /// Start a connection from `src` to `dst`'s address; returns its socket id at `src`.
    pub(crate) fn connect(&mut self, src: usize, dst: usize, config: ConnectionConfig) -> SocketId {
        let remote = self.nodes[dst].addr;
        let now = self.now;
        let conn = self.nodes[src]
            .endpoint
            .connect(now, remote, config)
            .expect("connect");
        let id = conn.local_id();
        self.nodes[src].conns.insert(id, conn);
        self.nodes[src].touch(id);
        id
    }

    /// A connection, to act on as its application: it is driven in full at the next step.
    pub(crate) fn conn(&mut self, node: usize, id: SocketId) -> &mut Connection {
        let node = &mut self.nodes[node];
        if !node.retired.contains(&id) {
            node.touch(id);
        }
        node.conns.get_mut(&id).expect("no such connection")
    }

    /// A connection, only to look at.
    pub(crate) fn peek(&self, node: usize, id: SocketId) -> &Connection {
        self.nodes[node].conns.get(&id).expect("no such connection")
    }

    /// Read everything a stream connection holds for its reader into `buf`, piece by piece;
    /// returns the bytes read. One with nothing to read is left alone (reading it would
    /// change nothing), so it is not marked as reached.
    pub(crate) fn read_all(&mut self, node: usize, id: SocketId, buf: &mut [u8]) -> u64 {
        if self.peek(node, id).readable_bytes() == 0 {
            return 0;
        }
        let conn = self.conn(node, id);
        let mut read = 0;
        while let Ok(n) = conn.recv(buf) {
            if n == 0 {
                break;
            }
            read += n as u64;
        }
        read
    }

    /// Run until `done` returns true or `limit` of virtual time passes; returns whether `done`
    /// was reached. `done` is called after every step and may act as the application.
    pub(crate) fn run_until(
        &mut self,
        limit: Duration,
        mut done: impl FnMut(&mut Self) -> bool,
    ) -> bool {
        let deadline = self.now + limit;
        loop {
            if done(self) {
                return true;
            }
            if self.now >= deadline {
                return false;
            }
            self.step(deadline);
        }
    }

    /// Run for a fixed span of virtual time.
    pub(crate) fn run_for(&mut self, span: Duration) {
        self.run_until(span, |_| false);
    }

    /// Do everything due now, then advance the clock to the next deadline (at most `limit`).
    fn step(&mut self, limit: Instant) {
        self.update_stalls();
        self.deliver_due();
        self.drive_connections();
        let next = self.next_deadline().unwrap_or(limit).min(limit);
        // Never stand still: a deadline in the past that produced nothing must not spin.
        self.now = if next > self.now {
            next
        } else {
            self.now + Duration::from_micros(1)
        };
        SIM_NOW.with(|t| t.set(self.now));
    }

    /// Which nodes are stalled now; a node whose stall has ended handles what waited.
    fn update_stalls(&mut self) {
        let now = self.now;
        for n in 0..self.nodes.len() {
            let node = &mut self.nodes[n];
            let Some(stalls) = &mut node.stalls else {
                continue;
            };
            let until = stalls
                .stalled_until(now.since_epoch())
                .map(Instant::from_duration);
            node.stalled_until = until;
            if until.is_none() && !node.inbox.is_empty() {
                for (src, data, arrival) in std::mem::take(&mut self.nodes[n].inbox) {
                    self.arrive_at(src, n, data, arrival);
                }
            }
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        let links = self
            .links
            .iter()
            .filter_map(|l| l.next_deadline())
            .map(Instant::from_duration)
            .min();
        // A stalled node's connections wait for its stall to end.
        let stalls = self.nodes.iter().filter_map(|n| n.stalled_until).min();
        // A connection reached since its last drive (after its turn in this step's pass, or
        // on a dead node) may have moved its deadline: ask it.
        let conns = self
            .nodes
            .iter()
            .filter(|n| n.stalled_until.is_none())
            .flat_map(|n| {
                n.due.iter().map(|(id, due)| match due.touched {
                    true => n.conns.get(id).and_then(Connection::poll_timeout),
                    false => due.at,
                })
            })
            .flatten()
            .min();
        let app = self.app_wake.filter(|&t| t > self.now);
        [links, conns, app, stalls].into_iter().flatten().min()
    }

    fn deliver_due(&mut self) {
        let now = self.now.since_epoch();
        for i in 0..self.links.len() {
            while let Some((hop, data)) = self.links[i].poll_deliver(now) {
                self.forward(hop, data);
            }
        }
    }

    /// Send a datagram on along its route, or hand it to its destination node.
    fn forward(&mut self, hop: Hop, data: Vec<u8>) {
        let next = self
            .routes
            .get(&(hop.src, hop.dst))
            .and_then(|r| r.get(hop.hop))
            .copied();
        match next {
            Some(link) => {
                let now = self.now.since_epoch();
                self.links[link].push(
                    now,
                    Hop {
                        hop: hop.hop + 1,
                        ..hop
                    },
                    data,
                );
            }
            None => match &mut self.interceptor {
                Some(intercept) => {
                    for datagram in intercept(hop.dst, data) {
                        self.arrive(hop.src, hop.dst, datagram);
                    }
                }
                None => self.arrive(hop.src, hop.dst, data),
            },
        }
    }

    fn send(&mut self, src: usize, dst_addr: SocketAddr, data: Vec<u8>) {
        let Some(dst) = self.nodes.iter().position(|n| n.addr == dst_addr) else {
            return;
        };
        self.forward(Hop { src, dst, hop: 0 }, data);
    }

    /// Datagrams reach their connections in turn as a lent buffer (as the runtime hands over
    /// GRO trains), as a mutable slot (the runtime's other datagrams) and by reference, so
    /// every simulation runs all three paths.
    fn arrive(&mut self, src: usize, dst: usize, data: Vec<u8>) {
        let now = self.now;
        self.arrive_at(src, dst, data, now);
    }

    /// A datagram from `src` reached node `dst` at `arrival` (now, or during a stall that
    /// has just ended: the runtime hands each datagram over with the kernel's arrival stamp,
    /// so the connection sees when it arrived, not when its thread got to it).
    fn arrive_at(&mut self, src: usize, dst: usize, mut data: Vec<u8>, arrival: Instant) {
        if self.nodes[dst].stalled_until.is_some() {
            self.nodes[dst].inbox.push((src, data, arrival));
            self.nodes[dst].held += 1;
            return;
        }
        if self.nodes[dst].dead {
            if self.nodes[dst].port_closed {
                self.port_unreachable(src, dst);
            }
            return;
        }
        self.datagrams += 1;
        let path = self.datagrams % 3;
        let from = self.nodes[src].addr;
        let now = self.now;
        let node = &mut self.nodes[dst];
        match node
            .endpoint
            .route(now, arrival, from, &data, |_| true, &mut self.sink)
        {
            Route::Connection(id) => {
                match node.conns.get_mut(&id) {
                    Some(conn) if path == 0 => {
                        // The datagram's own allocation, uncopied (the buffer is unique).
                        let data = BytesMut::from(Bytes::from(data));
                        conn.handle_datagram_lent(arrival, from, data);
                    }
                    Some(conn) if path == 1 => {
                        conn.handle_datagram_mut(arrival, from, &mut data);
                    }
                    Some(conn) => conn.handle_datagram(arrival, from, &data),
                    None => return self.send_sink(dst),
                }
                if !node.retired.contains(&id) {
                    node.touch(id);
                }
            }
            Route::Accepted(conn) => {
                let id = conn.local_id();
                node.conns.insert(id, *conn);
                node.accepted.push(id);
                node.touch(id);
            }
            Route::Done => {}
        }
        self.send_sink(dst);
    }

    /// Run due timers and drain every connection's output: drive each connection that
    /// something reached or whose deadline came, and give the others what a drive would
    /// change in them (see the module's doc). Whether a connection was reached is looked at
    /// when its turn comes, so one reached earlier in the same pass is driven, as before.
    fn drive_connections(&mut self) {
        let now = self.now;
        for n in 0..self.nodes.len() {
            if self.nodes[n].dead || self.nodes[n].stalled_until.is_some() {
                continue;
            }
            let mut ids = std::mem::take(&mut self.to_drive);
            ids.clear();
            ids.extend(self.nodes[n].due.keys().copied());
            for &id in &ids {
                let node = &mut self.nodes[n];
                let Some(due) = node.due.get(&id).copied() else {
                    continue;
                };
                if due.touched || due.at.is_some_and(|at| at <= now) {
                    self.drive_one(n, id, now);
                } else if let Some(conn) = node.conns.get_mut(&id) {
                    conn.drive_idle(now);
                    debug_assert_eq!(
                        conn.poll_timeout(),
                        due.at,
                        "an idle drive moved a deadline"
                    );
                }
            }
            self.to_drive = ids;
        }
    }

    /// `Connection::drive` one connection, send what it emitted, and retire it (forgotten
    /// by its endpoint) once drained, as a runtime does.
    fn drive_one(&mut self, n: usize, id: SocketId, now: Instant) {
        let node = &mut self.nodes[n];
        if node.retired.contains(&id) {
            return;
        }
        let Some(conn) = node.conns.get_mut(&id) else {
            return;
        };
        let (control, events) = conn.queue_lens();
        self.max_queues = (
            self.max_queues.0.max(control),
            self.max_queues.1.max(events),
        );
        let driven = conn.drive(now, &mut self.sink);
        if driven.events {
            node.woken.insert(id);
        }
        if driven.drained {
            node.endpoint.forget(conn);
            node.retired.insert(id);
            node.due.remove(&id);
        } else {
            let due = Due {
                touched: false,
                at: driven.timeout,
            };
            node.due.insert(id, due);
        }
        self.send_sink(n);
    }

    /// Send what node `n` committed to the sink.
    fn send_sink(&mut self, n: usize) {
        for (dst, data) in std::mem::take(&mut self.sink.datagrams) {
            self.send(n, dst, data);
        }
    }

    /// The counters of `link` (pushed, delivered, drops by cause).
    pub(crate) fn link_stats(&self, link: usize) -> udt_netsim::LinkStats {
        self.links[link].stats().clone()
    }

    /// Bytes waiting in `link`'s queue now (for queue-occupancy measurements).
    pub(crate) fn queued_bytes(&self, link: usize) -> usize {
        self.links[link].queued_bytes(self.now.since_epoch())
    }

    /// Node `n` drops off the network (stops answering and sending).
    pub(crate) fn kill(&mut self, n: usize) {
        self.nodes[n].dead = true;
    }

    /// Node `n`'s process dies: it stops answering and sending, and its kernel answers what
    /// arrives with ICMP port unreachable.
    pub(crate) fn kill_process(&mut self, n: usize) {
        self.nodes[n].dead = true;
        self.nodes[n].port_closed = true;
    }

    /// What a runtime does with an ICMP port unreachable about `dst`'s address arriving at
    /// `src` (at once: the ICMP's own travel time does not matter here): hint every
    /// connection to that address.
    fn port_unreachable(&mut self, src: usize, dst: usize) {
        let now = self.now;
        let addr = self.nodes[dst].addr;
        let node = &mut self.nodes[src];
        for (id, conn) in &mut node.conns {
            if conn.remote() == addr {
                conn.handle_unreachable(now);
                if let Some(due) = node.due.get_mut(id) {
                    due.touched = true;
                }
            }
        }
    }
}

/// Two nodes joined by one link each way: the common test topology.
pub(crate) struct Pair {
    pub(crate) sim: Sim,
    pub(crate) client: usize,
    pub(crate) server: usize,
}

impl Pair {
    /// Client node 0, server node 1 (listening with `server_config`), `forward` carries
    /// client→server traffic and `reverse` server→client.
    pub(crate) fn new(
        forward: LinkConfig,
        reverse: LinkConfig,
        server_config: ConnectionConfig,
        seed: u64,
    ) -> Self {
        let mut sim = Sim::new();
        let client = sim.add_node(seed);
        let server = sim.add_node(seed.wrapping_add(1));
        let f = sim.add_link(forward, seed.wrapping_add(2));
        let r = sim.add_link(reverse, seed.wrapping_add(3));
        sim.route(client, server, vec![f]);
        sim.route(server, client, vec![r]);
        sim.listen(server, server_config);
        Self {
            sim,
            client,
            server,
        }
    }

    /// Connect and run until both sides are connected; returns (client id, server id).
    pub(crate) fn connect(&mut self, config: ConnectionConfig) -> (SocketId, SocketId) {
        let c = self.sim.connect(self.client, self.server, config);
        let server = self.server;
        let client = self.client;
        let ok = self.sim.run_until(Duration::from_secs(10), |sim| {
            let connected =
                sim.nodes[client].conns[&c].state() == crate::connection::State::Connected;
            connected && !sim.nodes[server].accepted.is_empty()
        });
        assert!(ok, "handshake did not complete");
        (c, self.sim.nodes[server].accepted[0])
    }

    /// Two of our peers (GSO announced both ways, so the capabilities the connections add,
    /// such as receiver fronts, are on) over 1 Gbit/s × `rtt` with `loss` random loss each
    /// way and a one-BDP queue, connected with `config` on both sides; returns the pair and
    /// (client id, server id).
    pub(crate) fn lossy_gso_peers(
        rtt: Duration,
        loss: f64,
        config: ConnectionConfig,
        seed: u64,
    ) -> (Self, SocketId, SocketId) {
        let rate = 1_000_000_000;
        let link = || {
            LinkConfig::new()
                .rate_bps(rate)
                .delay(rtt / 2)
                .queue_bytes(LinkConfig::bdp_bytes(rate, rtt))
                .loss(LossModel::bernoulli(loss))
        };
        let mut pair = Self::new(link(), link(), config.clone(), seed);
        let (c, s) = pair.connect(config);
        for (node, id) in [(pair.client, c), (pair.server, s)] {
            pair.sim
                .conn(node, id)
                .set_local_extensions(crate::wire::Capabilities::GSO);
        }
        (pair, c, s)
    }
}
