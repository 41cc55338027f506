//! A peer killed mid-transfer (no Shutdown, nothing more on the wire), both ways, each
//! noticed in bounded time. A killed libudt process closes its port: our next datagram draws
//! an ICMP port unreachable, and our side ends with `PeerUnreachable` about a second later
//! (the hint's grace). One of ours that vanishes keeps its port open (`abort_multiplexer`
//! stops the I/O thread only), and libudt notices by 4.11's EXP rule (protocol notes: 16
//! silent rounds and more than 5 s), about 46 s of silence; so one test runs the four cases
//! side by side (a test thread each would hold the harness's few threads for minutes).

use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

use udt::{connection_error, ConnectionError, UdtListener, UdtStream};

use super::*;

/// Upper bound for noticing the loss by 4.11's rule (46 s expected).
const LOSS_LIMIT: Duration = Duration::from_secs(90);
/// Upper bound for noticing a closed port (about 1.3 s expected: the grace after the ICMP
/// that our next ACK, keep-alive or data packet draws), far below 4.11's 46 s.
const UNREACHABLE_LIMIT: Duration = Duration::from_secs(20);

fn assert_peer_unreachable(err: &io::Error, waited: Duration) {
    println!("broken after {waited:.1?}: {err}");
    assert_eq!(err.kind(), ErrorKind::ConnectionReset, "{err}");
    assert_eq!(
        connection_error(err),
        Some(ConnectionError::PeerUnreachable)
    );
    // The grace (1 s) starts with the ICMP; that can come a little before `waited` started
    // (the kill closes the port before `kill` returns), hence not quite 1 s.
    assert!(
        waited >= Duration::from_millis(500),
        "declared lost too early"
    );
    assert!(waited < UNREACHABLE_LIMIT, "noticed too late: {waited:?}");
}

fn killed_libudt_sender_breaks_our_reader() {
    let l = UdtListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let mut cli = client(&["--connect", &addr, "--send", "--seconds", "600"]);
    let (mut s, _) = l.accept().unwrap();
    s.set_read_timeout(Some(UNREACHABLE_LIMIT)).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut got = 0;
    while got < 8 << 20 {
        got += s.read(&mut buf).expect("read before the kill");
    }
    cli.kill();
    let killed = Instant::now();
    let err = loop {
        match s.read(&mut buf) {
            Ok(0) => panic!("a killed peer must not look like a clean close"),
            Ok(_) => continue, // what was already buffered
            Err(e) => break e,
        }
    };
    assert_peer_unreachable(&err, killed.elapsed());
}

fn killed_libudt_receiver_breaks_our_writer() {
    let (mut srv, addr) = server(&["--recv"]);
    let mut c = UdtStream::connect(addr).unwrap();
    c.set_write_timeout(Some(UNREACHABLE_LIMIT)).unwrap();
    let chunk = vec![0u8; 1 << 20];
    for _ in 0..8 {
        c.write_all(&chunk).unwrap();
    }
    srv.kill();
    let killed = Instant::now();
    let err = loop {
        if let Err(e) = c.write_all(&chunk).and_then(|()| c.flush()) {
            break e;
        }
    };
    assert_peer_unreachable(&err, killed.elapsed());
}

/// What libudt must print once it notices that our side vanished: a failed transfer ending in
/// 4.11's ECONNLOST (2001), after more than 5 s of silence (its EXP rule) and within the limit.
fn assert_libudt_saw_loss(peer: &mut PeerProcess, vanished: Instant) {
    let r = peer.result(LOSS_LIMIT);
    let waited = vanished.elapsed();
    println!("libudt gave up after {waited:.1?}: {}", r.0);
    assert!(
        r.str("end").is_some_and(|e| e.starts_with("2001")),
        "libudt must report a broken connection: {}",
        r.0
    );
    assert!(waited > Duration::from_secs(5), "declared lost too early");
}

fn vanished_writer_of_ours_breaks_libudt_reader() {
    let (mut srv, addr) = server(&["--recv", "--bench"]);
    let mut c = UdtStream::connect(addr).unwrap();
    let chunk = vec![0u8; 1 << 20];
    for _ in 0..8 {
        c.write_all(&chunk).unwrap();
    }
    c.flush().unwrap();
    c.abort_multiplexer();
    assert_libudt_saw_loss(&mut srv, Instant::now());
}

fn vanished_reader_of_ours_breaks_libudt_writer() {
    let l = UdtListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let mut cli = client(&["--connect", &addr, "--send", "--bench", "--seconds", "600"]);
    let (mut s, _) = l.accept().unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut got = 0;
    while got < 8 << 20 {
        got += s.read(&mut buf).expect("read before vanishing");
    }
    s.abort_multiplexer();
    assert_libudt_saw_loss(&mut cli, Instant::now());
}

#[test]
fn killed_peers_are_noticed_in_bounded_time() {
    let cases: [(&str, fn()); 4] = [
        (
            "libudt sender killed",
            killed_libudt_sender_breaks_our_reader,
        ),
        (
            "libudt receiver killed",
            killed_libudt_receiver_breaks_our_writer,
        ),
        (
            "our writer vanished",
            vanished_writer_of_ours_breaks_libudt_reader,
        ),
        (
            "our reader vanished",
            vanished_reader_of_ours_breaks_libudt_writer,
        ),
    ];
    let failed: Vec<&str> = std::thread::scope(|scope| {
        let running: Vec<_> = cases
            .iter()
            .map(|&(name, case)| (name, scope.spawn(case)))
            .collect();
        running
            .into_iter()
            .filter_map(|(name, t)| t.join().is_err().then_some(name))
            .collect()
    });
    assert!(failed.is_empty(), "failed: {failed:?}");
}
