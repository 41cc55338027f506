//! Stream mode both ways: our caller → libudt listener, libudt caller → our listener.

use std::time::Duration;

use udt_proto::Mode;

use crate::common::*;

/// Our client sends `stream_bytes()` to a libudt server, which checks every byte and must see
/// our close as a graceful end (recv error 2001 after all data, not a timeout).
#[test]
fn our_client_streams_to_libudt_server() {
    let total = stream_bytes();
    let (mut srv, addr) = server(&["--bytes", &total.to_string(), "--timeout-ms", "120000"]);
    let mut d = driver(1);
    let id = d.connect(addr, config(Mode::Stream)).expect("connect");
    wait_connected(&mut d, id);
    let secs = send_stream(&mut d, id, total, Duration::from_secs(300));
    let r = srv.result(Duration::from_secs(60));
    println!(
        "ours -> libudt: {total} B in {secs:.3} s ({:.0} Mbit/s); server: {}",
        mbps(total, secs),
        r.0
    );
    println!("our stats: {:?}", d.conn(id).stats());
    assert_eq!(r.bool("ok"), Some(true), "{}", r.0);
    assert_eq!(r.int("bytes"), Some(total as i64));
    assert_eq!(
        r.bool("peer_closed"),
        Some(true),
        "server did not see our close: {}",
        r.0
    );
}

/// A libudt client sends `stream_bytes()` to our listener; we check every byte and must see
/// its close as end of stream.
#[test]
fn libudt_client_streams_to_our_server() {
    let total = stream_bytes();
    let mut d = driver(2);
    d.listen(config(Mode::Stream));
    let addr = d.local_addr();
    let mut cli = client(&[
        "--connect".into(),
        addr.to_string(),
        "--send".into(),
        "--bytes".into(),
        total.to_string(),
    ]);
    let id = wait_accepted(&mut d);
    let (got, secs) = recv_stream(&mut d, id, Duration::from_secs(300));
    let r = cli.result(Duration::from_secs(60));
    println!(
        "libudt -> ours: {got} B in {secs:.3} s ({:.0} Mbit/s); client: {}",
        mbps(got, secs),
        r.0
    );
    println!("our stats: {:?}", d.conn(id).stats());
    assert_eq!(got, total);
    assert_eq!(r.bool("ok"), Some(true), "{}", r.0);
    assert_eq!(
        d.conn(id).error(),
        Some(udt_proto::ConnectionError::PeerClosed)
    );
}

/// Our listener sends to a libudt client (the server side sending, the other direction).
#[test]
fn our_server_streams_to_libudt_client() {
    let total = 4u64 << 20;
    let mut d = driver(3);
    d.listen(config(Mode::Stream));
    let addr = d.local_addr();
    let mut cli = client(&[
        "--connect".into(),
        addr.to_string(),
        "--recv".into(),
        "--bytes".into(),
        total.to_string(),
        "--timeout-ms".into(),
        "60000".into(),
    ]);
    let id = wait_accepted(&mut d);
    let secs = send_stream(&mut d, id, total, Duration::from_secs(120));
    let r = cli.result(Duration::from_secs(60));
    println!(
        "ours (server) -> libudt client: {total} B in {secs:.3} s; client: {}",
        r.0
    );
    println!("our stats: {:?}", d.conn(id).stats());
    println!("our path: {:?}", d.conn(id).path_stats());
    assert_eq!(r.bool("ok"), Some(true), "{}", r.0);
    assert_eq!(r.bool("peer_closed"), Some(true), "{}", r.0);
}
