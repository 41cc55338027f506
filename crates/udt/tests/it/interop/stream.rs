//! Streams against libudt, both roles and both data directions, SHA-256 checked; graceful
//! close (the sender's `close()` lingers until everything is acknowledged, the receiver sees a
//! clean end of stream); rendezvous both ways.

use udt::{UdtListener, UdtStream};

use super::*;
use crate::PATIENCE;

/// Smaller transfers (server-to-client, rendezvous): these directions cross 4.11's start-up
/// race, where libudt may crawl for seconds (interop/README.md).
const SMALL: u64 = 4 << 20;

#[test]
fn our_client_streams_to_libudt_server() {
    let total = stream_bytes();
    let (mut srv, addr) = server(&["--recv", "--bytes", &total.to_string()]);
    let mut c = UdtStream::connect(addr).expect("connect to libudt");
    c.set_write_timeout(Some(PATIENCE)).unwrap();
    let (sha, took) = send_pattern(&mut c, total).expect("send");
    // We announced our capabilities (a 0x7FFF control packet); libudt ignored it and
    // announced nothing, so no GSO trains went to it.
    assert_eq!(
        c.peer_capabilities(),
        None,
        "libudt cannot announce anything"
    );
    c.close().expect("graceful close against libudt");
    let r = srv.result(RESULT_WAIT);
    println!(
        "ours -> libudt: {total} B in {took:.2?} ({:.0} Mbit/s); libudt: {}",
        mbps(total, took),
        r.0
    );
    assert_ok(&r);
    assert_eq!(r.int("bytes"), Some(total as i64));
    assert_eq!(
        r.bool("peer_closed"),
        Some(true),
        "libudt did not see our close"
    );
    assert_eq!(r.str("sha256"), Some(sha.as_str()), "SHA-256 differs");
}

#[test]
fn libudt_client_streams_to_our_listener() {
    let total = stream_bytes();
    let l = UdtListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let mut cli = client(&["--connect", &addr, "--send", "--bytes", &total.to_string()]);
    let (mut s, _) = l.accept().expect("accept libudt");
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    let (got, sha, took) = recv_pattern(&mut s).expect("receive");
    assert_eq!(
        s.peer_capabilities(),
        None,
        "libudt cannot announce anything"
    );
    let r = cli.result(RESULT_WAIT);
    println!(
        "libudt -> ours: {got} B in {took:.2?} ({:.0} Mbit/s); libudt: {}",
        mbps(got, took),
        r.0
    );
    assert_eq!(got, total, "end of stream came early");
    assert_ok(&r);
    assert_eq!(r.str("sha256"), Some(sha.as_str()), "SHA-256 differs");
    assert_eq!(sha, pattern_sha256(total));
}

#[test]
fn our_listener_streams_to_libudt_client() {
    let l = UdtListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let mut cli = client(&["--connect", &addr, "--recv", "--bytes", &SMALL.to_string()]);
    let (mut s, _) = l.accept().expect("accept libudt");
    s.set_write_timeout(Some(PATIENCE)).unwrap();
    let (sha, took) = send_pattern(&mut s, SMALL).expect("send");
    s.close().expect("graceful close against libudt");
    let r = cli.result(RESULT_WAIT);
    println!(
        "ours (server) -> libudt: {SMALL} B in {took:.2?}; libudt: {}",
        r.0
    );
    assert_ok(&r);
    assert_eq!(
        r.bool("peer_closed"),
        Some(true),
        "libudt did not see our close"
    );
    assert_eq!(r.str("sha256"), Some(sha.as_str()));
}

#[test]
fn libudt_server_streams_to_our_client() {
    let (mut srv, addr) = server(&["--send", "--bytes", &SMALL.to_string()]);
    let mut c = UdtStream::connect(addr).expect("connect to libudt");
    c.set_read_timeout(Some(PATIENCE)).unwrap();
    let (got, sha, took) = recv_pattern(&mut c).expect("receive");
    let r = srv.result(RESULT_WAIT);
    println!(
        "libudt (server) -> ours: {got} B in {took:.2?}; libudt: {}",
        r.0
    );
    assert_eq!(got, SMALL, "end of stream came early");
    assert_ok(&r);
    assert_eq!(r.str("sha256"), Some(sha.as_str()));
    c.close().expect("close after the peer's close");
}

/// Rendezvous: we bind `ours`, libudt binds `theirs`, each connects to the other.
fn rendezvous_pair(send: bool) -> (UdtStream, PeerProcess) {
    let ours = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let theirs = free_port();
    let dir = if send { "--recv" } else { "--send" };
    let cli = client(&[
        "--rendezvous",
        &theirs.to_string(),
        "--connect",
        &ours.to_string(),
        dir,
        "--bytes",
        &SMALL.to_string(),
    ]);
    let s = UdtStream::rendezvous(ours, ([127, 0, 0, 1], theirs).into())
        .expect("rendezvous with libudt");
    (s, cli)
}

#[test]
fn rendezvous_we_send_to_libudt() {
    let (mut s, mut cli) = rendezvous_pair(true);
    s.set_write_timeout(Some(PATIENCE)).unwrap();
    let (sha, took) = send_pattern(&mut s, SMALL).expect("send");
    s.close().expect("close");
    let r = cli.result(RESULT_WAIT);
    println!(
        "rendezvous ours -> libudt: {SMALL} B in {took:.2?}; libudt: {}",
        r.0
    );
    assert_ok(&r);
    assert_eq!(r.bool("peer_closed"), Some(true));
    assert_eq!(r.str("sha256"), Some(sha.as_str()));
}

#[test]
fn rendezvous_libudt_sends_to_us() {
    let (mut s, mut cli) = rendezvous_pair(false);
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    let (got, sha, took) = recv_pattern(&mut s).expect("receive");
    let r = cli.result(RESULT_WAIT);
    println!(
        "rendezvous libudt -> ours: {got} B in {took:.2?}; libudt: {}",
        r.0
    );
    assert_eq!(got, SMALL);
    assert_ok(&r);
    assert_eq!(r.str("sha256"), Some(sha.as_str()));
}
