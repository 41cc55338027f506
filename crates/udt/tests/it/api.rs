//! The rest of the blocking API: perfmon, files with offsets, IPv6, shutdown.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv6Addr, SocketAddr};
use std::thread;
use std::time::Duration;

use udt::{State, UdtListener, UdtStream};

use super::{fill_pattern, listener, pattern, recv_pattern, send_pattern, PATIENCE};

fn pair() -> (UdtStream, UdtStream) {
    let l = listener();
    let addr = l.local_addr().unwrap();
    let t = thread::spawn(move || l.accept().unwrap().0);
    let c = UdtStream::connect(addr).unwrap();
    let s = t.join().unwrap();
    c.set_read_timeout(Some(PATIENCE)).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    (c, s)
}

/// A temporary file path unique to this test process.
fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("udt-api-{}-{name}", std::process::id()))
}

#[test]
fn perfmon_reports_totals_intervals_and_instant_state() {
    let (mut c, mut s) = pair();
    let reader = thread::spawn(move || recv_pattern(&mut s).unwrap());
    send_pattern(&mut c, 4 << 20, 64 << 10).unwrap();
    let first = c.perfmon(true);
    assert!(first.total.packets_sent >= (4 << 20) / 1456);
    assert_eq!(first.interval.packets_sent, first.total.packets_sent);
    assert!(first.send_rate_mbps > 0.0);
    assert!(first.instant.rtt > Duration::ZERO);
    assert_eq!(first.instant.mss, 1500);
    assert!(first.instant.send_period > Duration::ZERO);
    assert!(first.instant.flow_window_pkts > 0);
    assert!(first.elapsed >= first.interval_duration);
    send_pattern_from(&mut c, 4 << 20, 1 << 20);
    let second = c.perfmon(false);
    assert!(second.interval.packets_sent > 0);
    assert!(second.interval.packets_sent < second.total.packets_sent);
    assert_eq!(
        second.total.packets_sent,
        first.total.packets_sent + second.interval.packets_sent
    );
    let third = c.perfmon(false);
    assert_eq!(
        third.interval.packets_sent, second.interval.packets_sent,
        "an unclearing call keeps the interval"
    );
    assert_eq!(third.total.malformed.total(), 0);
    println!("{second:#?}");
    c.close().unwrap();
    assert_eq!(reader.join().unwrap(), 5 << 20);
}

/// Continue the pattern stream at `offset` with `len` bytes and flush.
fn send_pattern_from(c: &mut UdtStream, offset: u64, len: usize) {
    let mut buf = vec![0u8; len];
    fill_pattern(offset, &mut buf);
    c.write_all(&buf).unwrap();
    c.flush().unwrap();
}

#[test]
fn files_move_with_offsets() {
    const LEN: u64 = 3_000_000;
    let src_path = temp_path("src");
    let dst_path = temp_path("dst");
    let mut data = vec![0u8; LEN as usize];
    fill_pattern(0, &mut data);
    std::fs::write(&src_path, &data).unwrap();
    let dst = File::create(&dst_path).unwrap();
    let (c, s) = pair();
    let receiver = thread::spawn(move || {
        // Two ranges into one file, the second first, at their own offsets.
        let b = s.recv_file(&dst, 1_000_000, 2_000_000).unwrap();
        let a = s.recv_file(&dst, 0, 1_000_000).unwrap();
        // The peer then closes: a further receive gets nothing.
        let rest = s.recv_file(&dst, LEN, 10).unwrap();
        (a, b, rest)
    });
    let src = File::open(&src_path).unwrap();
    assert_eq!(c.send_file(&src, 1_000_000, 2_000_000).unwrap(), 2_000_000);
    assert_eq!(c.send_file(&src, 0, 1_000_000).unwrap(), 1_000_000);
    let err = c.send_file(&src, LEN - 10, 20).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnexpectedEof, "{err}");
    c.close().unwrap();
    let (a, b, rest) = receiver.join().unwrap();
    assert_eq!((a, b), (1_000_000, 2_000_000));
    // The 10 bytes the short send_file did send arrive before the end of stream.
    assert_eq!(rest, 10);
    let got = std::fs::read(&dst_path).unwrap();
    assert_eq!(&got[..LEN as usize], &data[..]);
    assert!(got[LEN as usize..]
        .iter()
        .enumerate()
        .all(|(i, &b)| b == pattern(LEN - 10 + i as u64)));
    let _ = std::fs::remove_file(src_path);
    let _ = std::fs::remove_file(dst_path);
}

#[test]
fn ipv6_loopback_carries_a_stream() {
    let l = match UdtListener::bind(SocketAddr::from((Ipv6Addr::LOCALHOST, 0))) {
        Ok(l) => l,
        Err(e) => {
            println!("skipped: no IPv6 loopback here ({e})");
            return;
        }
    };
    let addr = l.local_addr().unwrap();
    assert!(addr.is_ipv6());
    let t = thread::spawn(move || {
        let (mut s, peer) = l.accept().unwrap();
        assert!(peer.is_ipv6(), "{peer}");
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        recv_pattern(&mut s).unwrap()
    });
    let mut c = UdtStream::connect(addr).unwrap();
    assert_eq!(c.peer_addr().unwrap(), addr);
    send_pattern(&mut c, 2 << 20, 64 << 10).unwrap();
    c.close().unwrap();
    assert_eq!(t.join().unwrap(), 2 << 20);
}

#[test]
fn shutdown_drains_then_the_peer_sees_end_of_stream() {
    let (c, s) = pair();
    (&c).write_all(&[5u8; 100_000]).unwrap();
    c.shutdown().unwrap();
    assert!(matches!(c.state(), State::Closing | State::Closed));
    let err = (&c).write(b"late").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotConnected, "{err}");
    let mut got = Vec::new();
    (&s).read_to_end(&mut got).unwrap();
    assert_eq!(
        got.len(),
        100_000,
        "queued data drained before the shutdown"
    );
    // Our side has nothing buffered: reading says the connection was closed here.
    let err = (&c).read(&mut [0u8; 4]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotConnected, "{err}");
}

#[test]
fn nonblocking_close_lingers_in_the_background() {
    let (c, s) = pair();
    c.set_max_bandwidth(Some(1_000_000));
    (&c).write_all(&[6u8; 300_000]).unwrap();
    c.set_send_blocking(false);
    let start = std::time::Instant::now();
    c.close().unwrap();
    assert!(
        start.elapsed() < Duration::from_millis(100),
        "{:?}",
        start.elapsed()
    );
    let mut got = Vec::new();
    (&s).read_to_end(&mut got).unwrap();
    assert_eq!(
        got.len(),
        300_000,
        "data still delivered after the handle went away"
    );
}
