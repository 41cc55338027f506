//! Fuzz body: handshakes with arbitrary field values, before any connection exists.
//!
//! The `connection` body starts from a completed handshake, so it never reaches the code that
//! turns a peer's handshake fields into a connection (MSS, window, ISN, ids). Here every
//! field comes from the input: requests to a listener (with the cookie the listener would
//! accept, or not), responses to a connecting caller, and rendezvous handshakes. Whatever is
//! accepted is then run for a while.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use super::input::Input;
use super::support::encode_handshake as encode;
use crate::config::ConnectionConfig;
use crate::connection::Connection;
use crate::endpoint::{DatagramEvent, Endpoint};
use crate::handshake::Connector;
use crate::seq::{SeqNumber, SocketId};
use crate::time::Instant;
use crate::wire::{ControlBody, ControlRepr, HandshakeRepr, Packet, ReqType, SocketType};

/// No panic on any sequence of arbitrary handshakes, every connection they create runs
/// without panicking, and each runs with an MSS in 76..=65535.
pub fn handshake(data: &[u8]) {
    let mut input = Input::new(data);
    let client = SocketAddr::from(([192, 0, 2, 7], 4000));
    let server = SocketAddr::from(([192, 0, 2, 8], 9000));
    let mut now = Instant::from_micros(1_000_000);
    let mut listener = Endpoint::new(input.u64());
    listener.listen(ConnectionConfig::default());
    let mut caller = Endpoint::new(input.u64());
    let mut rendezvous_config = ConnectionConfig::default();
    rendezvous_config.rendezvous(true);
    let mut conns: Vec<Connection> = Vec::new();
    // Cannot fail: `caller` is fresh, not listening, and the config is not rendezvous.
    let mut connecting = vec![caller
        .connect(now, server, ConnectionConfig::default())
        .expect("first connect")];
    if let Ok(c) = Endpoint::new(input.u64()).connect(now, server, rendezvous_config) {
        connecting.push(c);
    }
    let mut buf = Vec::new();
    for _ in 0..64 {
        if input.is_empty() {
            break;
        }
        let hs = arbitrary_handshake(&mut input);
        match input.u8() % 3 {
            0 => {
                // To the listener, with a valid cookie for this client half of the time.
                let mut hs = hs;
                if input.bool() {
                    buf.clear();
                    let probe = HandshakeRepr {
                        req_type: ReqType::REGULAR,
                        ..hs
                    };
                    listener.handle(now, client, &encode(probe, SocketId::NONE), &mut buf);
                    if let Ok(Packet::Control(ControlRepr {
                        body: ControlBody::Handshake(echo),
                        ..
                    })) = Packet::parse(&buf)
                    {
                        hs.cookie = echo.cookie;
                    }
                }
                buf.clear();
                match listener.handle(now, client, &encode(hs, SocketId::NONE), &mut buf) {
                    Some(DatagramEvent::NewConnection(incoming)) => {
                        conns.push(listener.accept(now, incoming, None));
                    }
                    Some(DatagramEvent::Connection(id)) => {
                        if let Some(c) = conns.iter_mut().find(|c| c.local_id() == id) {
                            c.handle_datagram(now, client, &encode(hs, id));
                        }
                    }
                    _ => {}
                }
            }
            _ => {
                // To a connecting caller or rendezvous side, addressed to its own id.
                let i = usize::from(input.u8()) % connecting.len();
                let id = connecting[i].local_id();
                connecting[i].handle_datagram(now, server, &encode(hs, id));
            }
        }
        now += Duration::from_micros(u64::from(input.u16()) * 50);
        for c in conns.iter_mut().chain(connecting.iter_mut()) {
            run(c, now);
        }
    }
    // Whatever was accepted runs with an MSS a datagram can carry.
    for c in conns.iter().chain(connecting.iter()) {
        let mss = c.path_stats().mss;
        assert!(
            (crate::config::MIN_MSS..=crate::config::MAX_MSS).contains(&mss),
            "mss {mss}"
        );
    }
}

fn arbitrary_handshake(input: &mut Input<'_>) -> HandshakeRepr {
    let template = Connector::request(
        SocketType::STREAM,
        SeqNumber::new(input.u32()),
        1500,
        8192,
        SocketId(input.u32()),
        IpAddr::from([192, 0, 2, 8]),
        false,
    );
    let mut hs = template;
    // Each field: keep the plausible value, or take arbitrary bits.
    if input.bool() {
        hs.version = input.u32();
    }
    if input.bool() {
        hs.socket_type = SocketType(input.u32() % 4);
    }
    if input.bool() {
        hs.mss = match input.u8() % 3 {
            0 => input.u32(),
            1 => input.u32() % 128,
            _ => 60_000 + input.u32() % 10_000,
        };
    }
    if input.bool() {
        hs.flow_window = input.u32();
    }
    hs.req_type = ReqType(match input.u8() % 6 {
        0 => 1,
        1 => -1,
        2 => 0,
        3 => -2,
        4 => 1002,
        _ => input.u32() as i32,
    });
    if input.bool() {
        hs.socket_id = SocketId(input.u32());
    }
    hs
}

/// Drain a connection's output and run its due timers (bounded, so a bug cannot hang the
/// fuzzer): write a little data once connected so the sending path runs too.
fn run(conn: &mut Connection, now: Instant) {
    if conn.poll_timeout().is_some_and(|t| t <= now) {
        conn.handle_timeout(now);
    }
    let _ = conn.send(now, &[7u8; 3000]);
    let mut buf = Vec::new();
    for _ in 0..256 {
        let start = buf.len();
        match conn.poll_transmit(now, &mut buf) {
            Some(t) => assert_eq!(t.size, buf.len() - start),
            None => break,
        }
    }
    while conn.poll_event().is_some() {}
}
