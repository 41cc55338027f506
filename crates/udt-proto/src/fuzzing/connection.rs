//! The `connection` body: a connected client/server pair in virtual time, fed arbitrary
//! datagrams between genuine traffic.
//!
//! Setup: two endpoints (the server listening with `ConnectionConfig::default()`), a client
//! connection, and a perfect zero-delay "network" of two queues, run until the handshake
//! completes (it must, on a perfect network). Then the input is a list of operations: inject
//! a datagram from the input (optionally re-addressed to a live socket id so it passes the
//! demultiplexer), deliver, drop, reorder or mutate genuine datagrams in flight, advance
//! time, jump to the next deadline, write, close, report the peer's port unreachable (an
//! ICMP hint), or let the network settle.
//!
//! Checked after every step, besides "no panic": `poll_transmit` ends (a bounded burst), and
//! while no forged or mutated datagram reached a connection, every byte the application
//! reads is exactly the byte the peer wrote at that stream offset (reliable, ordered, no
//! duplication).
//!
//! [`protected_connection`] runs the same operations on a pair with packet protection on
//! (the decryption path): there forged and mutated datagrams must never matter, so the
//! byte check runs always, whatever reached the connections.

use std::collections::{BTreeMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use super::input::Input;
use super::support::{hand_over, pattern, CheckedSink};
use crate::config::ConnectionConfig;
use crate::connection::{Connection, State};
use crate::drive::Route;
use crate::endpoint::Endpoint;
use crate::protect::SessionKey;
use crate::seq::SocketId;
use crate::time::Instant;
use crate::wire::HEADER_LEN;

/// Upper bound on operations per input.
const MAX_OPS: usize = 300;
/// Datagrams a direction holds before it drops (a bounded network queue).
const MAX_IN_FLIGHT: usize = 20_000;
/// Connections one side keeps; further verified requests are rejected.
const MAX_CONNS: usize = 4;

/// Runs the operations encoded in `data` against a connected pair; panics on a violated
/// invariant.
pub fn connection(data: &[u8]) {
    run(data, None);
}

/// As [`connection`], with both sides protected by one session key: no forged, mutated or
/// replayed datagram may change a byte the application reads.
pub fn protected_connection(data: &[u8]) {
    run(data, Some(SessionKey::from_bytes([0x42; 32])));
}

fn run(data: &[u8], key: Option<SessionKey>) {
    let mut input = Input::new(data);
    let mut world = World::new(u64::from(input.u16()), key);
    for _ in 0..MAX_OPS {
        if input.is_empty() {
            break;
        }
        world.step(&mut input);
    }
    world.settle(50);
}

/// One simulated host: an endpoint, its connections, and its outgoing queue.
struct Side {
    addr: SocketAddr,
    endpoint: Endpoint,
    conns: BTreeMap<SocketId, Connection>,
    /// The pair's connection on this side (`NONE` until the server accepts).
    main: SocketId,
    /// Datagrams on their way to the other side.
    out: VecDeque<Vec<u8>>,
    /// Stream bytes written to / read from the main connection.
    written: u64,
    read: u64,
    /// A forged or mutated datagram reached a connection here: data checks are off.
    tainted: bool,
}

impl Side {
    fn new(last_octet: u8, seed: u64) -> Self {
        Self {
            addr: SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, last_octet)), 9000),
            endpoint: Endpoint::new(seed),
            conns: BTreeMap::new(),
            main: SocketId::NONE,
            out: VecDeque::new(),
            written: 0,
            read: 0,
            tainted: false,
        }
    }
}

/// The pair and the virtual clock. Side 0 is the client, side 1 the server.
struct World {
    now: Instant,
    sides: [Side; 2],
    /// A third party's address, for datagrams from strangers.
    stranger: SocketAddr,
    buf: Vec<u8>,
    /// Both sides protect their packets: tampering must never taint what is read.
    protected: bool,
}

impl World {
    fn new(seed: u64, key: Option<SessionKey>) -> Self {
        let mut config = ConnectionConfig::default();
        config.session_key(key.clone());
        let mut client = Side::new(1, seed);
        let mut server = Side::new(2, seed ^ 0x5EED);
        server.endpoint.listen(config.clone());
        let now = Instant::from_micros(1_000_000);
        // Cannot fail: the client endpoint is fresh and the config is not rendezvous.
        let conn = client
            .endpoint
            .connect(now, server.addr, config)
            .expect("first connect on a fresh endpoint cannot fail");
        client.main = conn.local_id();
        client.conns.insert(client.main, conn);
        let mut world = Self {
            now,
            sides: [client, server],
            stranger: SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9)), 9000),
            buf: Vec::with_capacity(2048),
            protected: key.is_some(),
        };
        world.settle(100);
        let client_state = world.sides[0].conns[&world.sides[0].main].state();
        assert_eq!(
            client_state,
            State::Connected,
            "handshake on a perfect network"
        );
        assert_ne!(world.sides[1].main, SocketId::NONE, "server accepted");
        world
    }

    fn step(&mut self, input: &mut Input<'_>) {
        let side = usize::from(input.bool());
        match input.u8() % 12 {
            0 | 1 => self.inject(side, input),
            2 | 3 => {
                let count = input.u8();
                for _ in 0..count {
                    self.deliver_next(side);
                }
            }
            4 => {
                let count = usize::from(input.u8() % 16);
                let out = &mut self.sides[side].out;
                out.drain(..count.min(out.len()));
            }
            5 => self.mutate_next(side, input),
            6 => {
                if let Some(datagram) = self.sides[side].out.pop_front() {
                    let back = self.sides[side].out.len().min(usize::from(input.u8()));
                    self.sides[side].out.insert(back, datagram);
                }
            }
            7 => self.advance(Duration::from_micros(u64::from(input.u16()) * 32)),
            8 => self.jump_to_deadline(),
            9 => self.write(side, usize::from(input.u16() % 20_000)),
            10 => {
                let rounds = usize::from(input.u8() % 32);
                self.settle(rounds);
            }
            _ => match input.u8() {
                0xC1 => self.close(side),
                // An ICMP port unreachable, forged or stale: the peer still talks, so the
                // connection must survive it (the byte checks run on regardless).
                0xC2 => self.unreachable(side),
                _ => {}
            },
        }
        self.pump_all();
    }

    /// A datagram from the input to `side`'s endpoint, from the peer or a stranger,
    /// optionally re-addressed to a live socket id (or to 0, the listener).
    fn inject(&mut self, side: usize, input: &mut Input<'_>) {
        let flags = input.u8();
        let len = usize::from(input.u16() % 1600);
        let mut datagram = input.bytes(len).to_vec();
        if datagram.len() >= HEADER_LEN {
            let dst = match flags % 4 {
                0 => Some(self.sides[side].main),
                1 => Some(SocketId::NONE),
                _ => None,
            };
            if let Some(dst) = dst {
                datagram[12..HEADER_LEN].copy_from_slice(&dst.0.to_be_bytes());
            }
        }
        let from = if flags & 4 == 0 {
            self.sides[1 - side].addr
        } else {
            self.stranger
        };
        self.receive(side, from, &datagram, false);
    }

    /// Deliver the oldest genuine datagram travelling to `side`.
    fn deliver_next(&mut self, side: usize) {
        if let Some(datagram) = self.sides[1 - side].out.pop_front() {
            let from = self.sides[1 - side].addr;
            self.receive(side, from, &datagram, true);
        }
    }

    /// Deliver the oldest datagram travelling to `side` with a few bytes changed.
    fn mutate_next(&mut self, side: usize, input: &mut Input<'_>) {
        let Some(mut datagram) = self.sides[1 - side].out.pop_front() else {
            return;
        };
        let edits = input.u8() % 4 + 1;
        for _ in 0..edits {
            let at = usize::from(input.u16()) % datagram.len().max(1);
            if let Some(byte) = datagram.get_mut(at) {
                *byte = input.u8();
            }
        }
        if input.bool() {
            datagram.truncate(usize::from(input.u16()));
        }
        let from = self.sides[1 - side].addr;
        self.receive(side, from, &datagram, false);
    }

    /// What a runtime does with one arriving datagram: `Endpoint::route`, then act on it.
    fn receive(&mut self, side: usize, from: SocketAddr, datagram: &[u8], genuine: bool) {
        let now = self.now;
        let peer = self.sides[1 - side].addr;
        let genuine = genuine || self.protected;
        let me = &mut self.sides[side];
        let room = me.conns.len() < MAX_CONNS;
        let mut sink = CheckedSink::new(&mut self.buf, None);
        let route = me
            .endpoint
            .route(now, now, from, datagram, |_| room, &mut sink);
        assert!(
            sink.buf.is_empty(),
            "route appended bytes it did not commit"
        );
        for (to, reply) in sink.out {
            assert_eq!(to, from, "a stateless reply goes back to the sender");
            push_if_peer(me, peer, to, &reply);
        }
        match route {
            Route::Connection(id) => {
                if let Some(conn) = me.conns.get_mut(&id) {
                    me.tainted |= !genuine && id == me.main;
                    hand_over(conn, now, from, datagram);
                }
            }
            Route::Accepted(conn) => {
                let id = conn.local_id();
                if me.main == SocketId::NONE {
                    me.main = id;
                    me.tainted |= !genuine;
                }
                me.conns.insert(id, *conn);
            }
            Route::Done => {}
        }
    }

    /// Advance the clock by `span`, running every deadline on the way.
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

    fn jump_to_deadline(&mut self) {
        if let Some(t) = self.next_deadline() {
            self.now = self.now.max(t);
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.sides
            .iter()
            .flat_map(|s| s.conns.values())
            .filter_map(Connection::poll_timeout)
            .min()
    }

    /// Perfect network for up to `rounds` steps: deliver everything in flight, then jump to
    /// the next deadline (if within 200 ms).
    fn settle(&mut self, rounds: usize) {
        for _ in 0..rounds {
            self.pump_all();
            let idle = self.sides.iter().all(|s| s.out.is_empty());
            for side in 0..2 {
                while !self.sides[1 - side].out.is_empty() {
                    self.deliver_next(side);
                }
            }
            self.pump_all();
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

    /// The application writes `len` pattern bytes on `side`'s main connection.
    fn write(&mut self, side: usize, len: usize) {
        let now = self.now;
        let me = &mut self.sides[side];
        let Some(conn) = me.conns.get_mut(&me.main) else {
            return;
        };
        let data: Vec<u8> = (0..len as u64)
            .map(|i| pattern(side, me.written + i))
            .collect();
        if let Ok(n) = conn.send(now, &data) {
            assert!(n <= len);
            me.written += n as u64;
        }
    }

    fn close(&mut self, side: usize) {
        let now = self.now;
        let me = &mut self.sides[side];
        if let Some(conn) = me.conns.get_mut(&me.main) {
            conn.close(now);
        }
    }

    fn unreachable(&mut self, side: usize) {
        let now = self.now;
        let me = &mut self.sides[side];
        if let Some(conn) = me.conns.get_mut(&me.main) {
            conn.handle_unreachable(now);
        }
    }

    fn pump_all(&mut self) {
        for side in 0..2 {
            self.pump(side);
        }
    }

    /// Run due timers, drain every connection's output and events, and read what arrived.
    fn pump(&mut self, side: usize) {
        let now = self.now;
        let peer = self.sides[1 - side].addr;
        let peer_written = self.sides[1 - side].written;
        let me = &mut self.sides[side];
        let mut drained = Vec::new();
        for (&id, conn) in &mut me.conns {
            let mut sink = CheckedSink::new(&mut self.buf, Some(peer));
            let driven = conn.drive(now, &mut sink);
            for (_, datagram) in sink.out {
                if me.out.len() < MAX_IN_FLIGHT {
                    me.out.push_back(datagram);
                }
            }
            if driven.events && conn.error().is_some() {
                assert_eq!(
                    conn.state(),
                    State::Closed,
                    "an ending is reported once closed"
                );
            }
            if id == me.main {
                read_checked(conn, 1 - side, &mut me.read, me.tainted, peer_written);
            } else {
                let mut sink = [0u8; 4096];
                while matches!(conn.recv(&mut sink), Ok(n) if n > 0) {}
            }
            if driven.drained && conn.poll_timeout().is_none() {
                drained.push(id);
            }
        }
        for id in drained {
            if let Some(conn) = me.conns.remove(&id) {
                me.endpoint.forget(&conn);
            }
        }
    }
}

/// Queue a stateless reply if it goes to the peer (replies to strangers are lost).
fn push_if_peer(me: &mut Side, peer: SocketAddr, to: SocketAddr, datagram: &[u8]) {
    if to == peer && me.out.len() < MAX_IN_FLIGHT {
        me.out.push_back(datagram.to_vec());
    }
}

/// Everything `conn` wants to send now, queued towards the peer.
/// Read everything available; unless tainted, it must be the peer's pattern at the right
/// offsets, and never more than the peer wrote.
fn read_checked(
    conn: &mut Connection,
    writer: usize,
    read: &mut u64,
    tainted: bool,
    peer_written: u64,
) {
    let mut buf = [0u8; 8192];
    while let Ok(n) = conn.recv(&mut buf) {
        if n == 0 {
            break;
        }
        if !tainted {
            for (i, &byte) in buf[..n].iter().enumerate() {
                let offset = *read + i as u64;
                assert_eq!(
                    byte,
                    pattern(writer, offset),
                    "stream byte {offset} corrupted"
                );
            }
        }
        *read += n as u64;
        assert!(
            tainted || *read <= peer_written,
            "read more than the peer wrote"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The harness itself works: with no interference a write arrives intact, both ways,
    /// with and without protection.
    #[test]
    fn perfect_network_transfers_both_ways() {
        for key in [None, Some(SessionKey::from_bytes([1; 32]))] {
            let mut world = World::new(7, key);
            world.write(0, 15_000);
            world.write(1, 3_000);
            world.pump_all();
            world.settle(200);
            assert_eq!(world.sides[1].read, 15_000);
            assert_eq!(world.sides[0].read, 3_000);
            assert!(!world.sides[0].tainted && !world.sides[1].tainted);
        }
    }

    /// With protection, a mutated datagram in flight is refused and repaired like a loss,
    /// and the bytes read stay checked.
    #[test]
    fn protected_pair_shrugs_off_mutation() {
        let mut world = World::new(9, Some(SessionKey::from_bytes([2; 32])));
        world.write(0, 30_000);
        world.advance(Duration::from_millis(1));
        let ops = [3u8, 40, 200, 7, 1, 0, 0];
        world.mutate_next(1, &mut Input::new(&ops));
        world.settle(500);
        assert_eq!(world.sides[1].read, 30_000);
        assert!(!world.sides[1].tainted);
    }

    /// Drops in flight are repaired by the protocol.
    #[test]
    fn dropped_datagrams_are_recovered() {
        let mut world = World::new(8, None);
        world.write(0, 50_000);
        // Paced: the first packets leave over the next few microseconds.
        world.advance(Duration::from_millis(1));
        assert!(world.sides[0].out.len() >= 5, "too few packets in flight");
        world.sides[0].out.drain(..5);
        world.settle(500);
        assert_eq!(world.sides[1].read, 50_000);
    }
}
