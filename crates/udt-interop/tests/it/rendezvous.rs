//! Rendezvous between our endpoint and libudt, data both ways.

use std::time::Duration;

use udt_proto::Mode;

use crate::common::*;

fn rendezvous_config() -> udt_proto::ConnectionConfig {
    let mut c = config(Mode::Stream);
    c.rendezvous(true);
    c
}

/// The captured handshakes, one line each (`--nocapture` shows them).
fn print_handshakes(d: &udt_interop::driver::Driver) {
    for (dir, list) in [("rx", &d.capture.received), ("tx", &d.capture.sent)] {
        for (addr, bytes) in list.iter().filter(|(_, b)| b.len() == 64) {
            let p = udt_proto::wire::Packet::parse(bytes).map(|p| p.to_string());
            println!("rendezvous {dir} {addr}: {p:?}");
        }
    }
}

#[test]
fn rendezvous_we_send() {
    let total = 2u64 << 20;
    let mut d = driver(21);
    d.capture_first(8);
    let theirs = free_port();
    let mut cli = client(&[
        "--rendezvous".into(),
        theirs.to_string(),
        "--connect".into(),
        d.local_addr().to_string(),
        "--recv".into(),
        "--bytes".into(),
        total.to_string(),
        "--timeout-ms".into(),
        "60000".into(),
    ]);
    let id = d
        .connect(([127, 0, 0, 1], theirs).into(), rendezvous_config())
        .expect("connect");
    wait_connected(&mut d, id);
    // Keep turning (libudt may still need our -2 re-response): no blocking wait on the
    // child's "connected" line here, its result line says it all.
    send_stream(&mut d, id, total, Duration::from_secs(60));
    print_handshakes(&d);
    let r = cli.result(Duration::from_secs(30));
    println!("rendezvous ours -> libudt: {}", r.0);
    assert_eq!(r.bool("ok"), Some(true), "{}", r.0);
    assert_eq!(r.bool("peer_closed"), Some(true), "{}", r.0);
}

#[test]
fn rendezvous_libudt_sends() {
    let total = 2u64 << 20;
    let mut d = driver(22);
    d.capture_first(8);
    let theirs = free_port();
    let id = d
        .connect(([127, 0, 0, 1], theirs).into(), rendezvous_config())
        .expect("connect");
    let mut cli = client(&[
        "--rendezvous".into(),
        theirs.to_string(),
        "--connect".into(),
        d.local_addr().to_string(),
        "--send".into(),
        "--bytes".into(),
        total.to_string(),
    ]);
    wait_connected(&mut d, id);
    print_handshakes(&d);
    let (got, _) = recv_stream(&mut d, id, Duration::from_secs(60));
    let r = cli.result(Duration::from_secs(30));
    println!("rendezvous libudt -> ours: {got} B; client: {}", r.0);
    assert_eq!(got, total);
    assert_eq!(r.bool("ok"), Some(true), "{}", r.0);
}
