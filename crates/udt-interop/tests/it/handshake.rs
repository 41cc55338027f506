//! The first handshake datagrams libudt sends and receives, printed (run with `--nocapture`)
//! and compared word by word with ours and with the golden vectors of
//! `udt-proto/src/wire/tests.rs`.
//!
//! Datagram word numbering below: header words 0..=3 (3 = destination socket id), body words
//! from 4: 4 version, 5 socket type, 6 ISN, 7 MSS, 8 flow window, 9 request type, 10 socket
//! id, 11 cookie, 12..=15 peer IP.

use std::net::SocketAddr;
use std::time::Duration;

use udt_proto::wire::Packet;
use udt_proto::Mode;

use crate::common::*;

const DST: usize = 3;
const ISN: usize = 6;
const SOCKET_ID: usize = 10;
const COOKIE: usize = 11;

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks(4)
        .map(|c| c.iter().fold(0u32, |w, &x| (w << 8) | u32::from(x)))
        .collect()
}

fn show(label: &str, dgrams: &[(SocketAddr, Vec<u8>)], n: usize) {
    for (i, (addr, d)) in dgrams.iter().take(n).enumerate() {
        // Data payloads are the test pattern: show the header and the first payload word only.
        let shown = if d.first().is_some_and(|b| b & 0x80 == 0) {
            &d[..d.len().min(20)]
        } else {
            &d[..]
        };
        let hex: Vec<String> = words(shown).iter().map(|w| format!("{w:08x}")).collect();
        let pretty =
            Packet::parse(d).map_or_else(|e| format!("unparsable: {e:?}"), |p| p.to_string());
        println!(
            "{label}[{i}] {addr} {} B: {}\n    {pretty}",
            d.len(),
            hex.join(" ")
        );
    }
}

/// Words of `a` and `b` that differ, except those in `ignore`; one line per difference.
fn diff(what: &str, a: &[u8], b: &[u8], ignore: &[usize]) -> Vec<String> {
    let (wa, wb) = (words(a), words(b));
    let mut out = Vec::new();
    if a.len() != b.len() {
        out.push(format!("{what}: length {} vs {}", a.len(), b.len()));
    }
    for (i, (x, y)) in wa.iter().zip(&wb).enumerate() {
        if x != y && !ignore.contains(&i) {
            out.push(format!("{what}: word {i} is {x:08x} vs {y:08x}"));
        }
    }
    out
}

/// Our client request must be the golden `HS_CLIENT_REQUEST` of wire/tests.rs with only the
/// ISN, socket id and peer IP (127.0.0.1 here, octets reversed) substituted.
fn golden_client_request(isn: u32, id: u32) -> Vec<u32> {
    vec![
        0x8000_0000,
        0,
        0,
        0, // handshake, info 0, timestamp 0, dst 0
        4,
        1,
        isn,
        1500,
        8192,
        1,
        id,
        0, // v4, STREAM, ISN, MSS, window, req 1, id, cookie 0
        0x0100_007F,
        0,
        0,
        0, // 127.0.0.1 reversed
    ]
}

/// 4.11's fixed buffers: with buffer autotuning on (our default), the one difference is
/// the window word, which then says how far our receive buffer may grow.
fn fixed_buffers() -> udt_proto::ConnectionConfig {
    let mut c = config(Mode::Stream);
    c.buffer_autotune_limit(None);
    c
}

#[test]
fn handshakes_match_libudt_word_for_word() {
    let mut problems = Vec::new();

    // A: libudt client -> our listener.
    let mut ours = driver(41);
    ours.capture_first(12);
    ours.listen(fixed_buffers());
    let mut cli = client(&[
        "--connect".into(),
        ours.local_addr().to_string(),
        "--send".into(),
        "--bytes".into(),
        "3000".into(),
    ]);
    let id = wait_accepted(&mut ours);
    let (got, _) = recv_stream(&mut ours, id, Duration::from_secs(30));
    assert_eq!(got, 3000);
    assert_eq!(cli.result(Duration::from_secs(10)).bool("ok"), Some(true));
    let a = ours.capture.clone();
    show("libudt client -> us", &a.received, 6);
    show("us -> libudt client", &a.sent, 6);

    // B: our client -> libudt listener.
    let (mut srv, addr) = server(&["--bytes", "3000"]);
    let mut d = driver(42);
    d.capture_first(12);
    let cid = d.connect(addr, fixed_buffers()).expect("connect");
    wait_connected(&mut d, cid);
    send_stream(&mut d, cid, 3000, Duration::from_secs(30));
    let b = d.capture.clone();
    show("us -> libudt server", &b.sent, 12);
    show("libudt server -> us", &b.received, 12);
    let r = srv.result(Duration::from_secs(10));
    assert_eq!(r.bool("ok"), Some(true), "{}", r.0);

    // Retransmitted requests (a loaded machine) and our answers to them repeat a handshake
    // word for word: compare the distinct ones, in order.
    let (a_in, a_out) = (handshakes(&a.received), handshakes(&a.sent));
    let (b_in, b_out) = (handshakes(&b.received), handshakes(&b.sent));
    assert!(
        a_in.len() >= 2 && a_out.len() >= 2 && b_in.len() >= 2 && b_out.len() >= 2,
        "too few distinct handshakes captured: {} {} {} {}",
        a_in.len(),
        a_out.len(),
        b_in.len(),
        b_out.len()
    );
    let (their_req, our_req) = (a_in[0], b_out[0]);
    let (their_req2, our_req2) = (a_in[1], b_out[1]);
    let (their_echo, our_echo) = (b_in[0], a_out[0]);
    let (their_resp, our_resp) = (b_in[1], a_out[1]);

    // 1. First requests: both equal the golden vector up to ISN and socket id.
    for (who, req) in [("libudt", their_req), ("ours", our_req)] {
        let w = words(req);
        let golden = golden_client_request(w[ISN], w[SOCKET_ID]);
        if w != golden {
            problems.push(format!(
                "{who} request differs from golden: {w:08x?} vs {golden:08x?}"
            ));
        }
    }
    problems.extend(diff(
        "request (ours vs libudt)",
        our_req,
        their_req,
        &[ISN, SOCKET_ID],
    ));
    // 2. Second requests (req -1 with the cookie): same, cookie aside.
    problems.extend(diff(
        "second request",
        our_req2,
        their_req2,
        &[ISN, SOCKET_ID, COOKIE],
    ));
    if words(their_req2)[9] != 0xFFFF_FFFF || words(our_req2)[9] != 0xFFFF_FFFF {
        problems.push("second request is not req type -1".into());
    }
    // 3. Cookie echoes: the request echoed, only dst and cookie changed.
    problems.extend(diff(
        "libudt echo vs our request",
        their_echo,
        our_req,
        &[DST, COOKIE],
    ));
    problems.extend(diff(
        "our echo vs libudt request",
        our_echo,
        their_req,
        &[DST, COOKIE],
    ));
    // 4. Final responses: same shape; ISN must be the client's; ids, dst and cookie differ.
    problems.extend(diff(
        "response (ours vs libudt)",
        our_resp,
        their_resp,
        &[DST, ISN, SOCKET_ID, COOKIE],
    ));
    if words(their_resp)[ISN] != words(our_req)[ISN] {
        problems.push("libudt response does not echo our ISN".into());
    }
    if words(our_resp)[ISN] != words(their_req)[ISN] {
        problems.push("our response does not echo libudt's ISN".into());
    }
    for p in &problems {
        println!("DIFFERENCE: {p}");
    }
    assert!(problems.is_empty(), "handshake differences: {problems:#?}");
}

/// The distinct handshake packets (64-byte control packets of type 0) among `packets`, in
/// order of first appearance.
fn handshakes<A>(packets: &[(A, Vec<u8>)]) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = Vec::new();
    for (_, p) in packets {
        let is_handshake = p.len() == 64 && p[0] == 0x80 && p[1] == 0x00;
        if is_handshake && !out.contains(&p.as_slice()) {
            out.push(p);
        }
    }
    out
}
