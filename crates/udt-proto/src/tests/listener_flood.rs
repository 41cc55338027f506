//! A listener under a flood of bogus and replayed handshakes keeps no per-packet state and
//! still accepts a real client.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::sim::Pair;
use crate::config::ConnectionConfig;
use crate::connection::State;
use crate::endpoint::{DatagramEvent, Endpoint};
use crate::handshake::Connector;
use crate::seq::{SeqNumber, SocketId};
use crate::time::Instant;
use crate::wire::{ControlBody, ControlRepr, Packet, ReqType, SocketType, Timestamp};

fn handshake_bytes(req_type: ReqType, cookie: u32, id: u32, isn: u32) -> Vec<u8> {
    let mut hs = Connector::request(
        SocketType::STREAM,
        SeqNumber::new(isn),
        1500,
        8192,
        SocketId(id),
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        false,
    );
    hs.req_type = req_type;
    hs.cookie = cookie;
    let mut out = Vec::new();
    Packet::Control(ControlRepr {
        timestamp: Timestamp(0),
        dst: SocketId::NONE,
        body: ControlBody::Handshake(hs),
    })
    .emit(&mut out);
    out
}

#[test]
fn flood_of_100k_bogus_or_replayed_handshakes_creates_no_state() {
    let mut ep = Endpoint::new(77);
    ep.listen(ConnectionConfig::default());
    let mut rng = Pcg64Mcg::seed_from_u64(5);
    let mut buf = Vec::new();
    let now = Instant::from_micros(1_000_000);
    let mut new_connections = 0;
    for i in 0..100_000u32 {
        let from = SocketAddr::new(
            IpAddr::V4(Ipv4Addr::from(rng.next_u32())),
            (i % 60000) as u16 + 1,
        );
        let data = match i % 4 {
            // Random garbage of random length.
            0 => {
                let mut d = vec![0u8; (rng.next_u32() % 100) as usize];
                rng.fill_bytes(&mut d);
                d
            }
            // Fresh requests (answered statelessly with a cookie).
            1 => handshake_bytes(ReqType::REGULAR, 0, rng.next_u32(), rng.next_u32()),
            // Second-step requests with forged cookies.
            2 => handshake_bytes(ReqType::RESPONSE, rng.next_u32(), rng.next_u32(), 5),
            // A random packet type to socket 0.
            _ => {
                let mut d = handshake_bytes(ReqType::RESPONSE, 0, 1, 1);
                d[1] = (rng.next_u32() % 9) as u8;
                d
            }
        };
        buf.clear();
        if let Some(DatagramEvent::NewConnection(_)) = ep.handle(now, from, &data, &mut buf) {
            new_connections += 1;
        }
    }
    assert_eq!(new_connections, 0);
    assert_eq!(ep.connection_count(), 0);
    let stats = ep.stats();
    assert_eq!(stats.cookies_sent, 25_000);
    assert!(stats.bad_cookies >= 25_000, "{stats:?}");
}

#[test]
fn replayed_valid_request_maps_to_the_existing_connection() {
    let mut p = Pair::new(
        udt_netsim::LinkConfig::new().delay(Duration::from_millis(1)),
        udt_netsim::LinkConfig::new().delay(Duration::from_millis(1)),
        ConnectionConfig::default(),
        31,
    );
    let (c, s) = p.connect(ConnectionConfig::default());
    let client_addr = p.sim.nodes[p.client].addr;
    // Rebuild the client's final request (req −1 with a valid cookie) and replay it 10,000 times.
    let now = p.sim.now;
    let mut buf = Vec::new();
    let probe = handshake_bytes(ReqType::REGULAR, 0, c.0, 0);
    let server = &mut p.sim.nodes[p.server];
    let Some(DatagramEvent::Response(_)) =
        server.endpoint.handle(now, client_addr, &probe, &mut buf)
    else {
        panic!("no cookie echo");
    };
    let Ok(Packet::Control(ControlRepr {
        body: ControlBody::Handshake(echo),
        ..
    })) = Packet::parse(&buf)
    else {
        panic!("bad echo");
    };
    for _ in 0..10_000 {
        let replay = handshake_bytes(ReqType::RESPONSE, echo.cookie, c.0, 12345);
        buf.clear();
        match server.endpoint.handle(now, client_addr, &replay, &mut buf) {
            Some(DatagramEvent::Connection(id)) => assert_eq!(id, s),
            other => panic!("replay created {other:?}"),
        }
    }
    assert_eq!(server.endpoint.connection_count(), 1);
}

#[test]
fn real_client_is_accepted_after_a_flood() {
    let mut p = Pair::new(
        udt_netsim::LinkConfig::new().delay(Duration::from_millis(1)),
        udt_netsim::LinkConfig::new().delay(Duration::from_millis(1)),
        ConnectionConfig::default(),
        32,
    );
    let mut buf = Vec::new();
    let now = p.sim.now;
    for i in 0..20_000u32 {
        let from = SocketAddr::new(
            IpAddr::V4(Ipv4Addr::new(10, 9, (i >> 8) as u8, i as u8)),
            4000,
        );
        buf.clear();
        let data = handshake_bytes(ReqType::RESPONSE, i, i + 1, i);
        p.sim.nodes[p.server]
            .endpoint
            .handle(now, from, &data, &mut buf);
    }
    let (c, _s) = p.connect(ConnectionConfig::default());
    assert_eq!(p.sim.conn(p.client, c).state(), State::Connected);
    assert_eq!(p.sim.nodes[p.server].endpoint.connection_count(), 1);
}
