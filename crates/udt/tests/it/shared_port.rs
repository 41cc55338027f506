//! UDT_REUSEADDR by its 4.11 meaning: sockets bound to one address share one multiplexer
//! (one UDP socket, one I/O thread); several connections from one port, to one remote or
//! many; refusals when UDT_REUSEADDR is off; and the port coming free once every socket on it
//! is closed.
//!
//! "One UDP socket" is checked where the kernel shows it: the UDP sockets bound to the port in
//! `/proc/net/udp{,6}`, and the I/O threads named after the port in `/proc/self/task`.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::thread;
use std::time::{Duration, Instant};

use udt::{Mode, SocketOptions, UdtListener, UdtMessageSocket, UdtStream};

use super::{listener, recv_pattern_upto, send_pattern, PATIENCE};

/// Kernel UDP sockets bound to local port `port` (IPv4 and IPv6 tables).
fn udp_sockets_on(port: u16) -> usize {
    let want = format!(":{port:04X}");
    ["/proc/net/udp", "/proc/net/udp6"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .flat_map(|t| {
            t.lines()
                .skip(1)
                .filter_map(|l| l.split_whitespace().nth(1).map(str::to_owned))
                .collect::<Vec<_>>()
        })
        .filter(|local| local.ends_with(&want))
        .count()
}

/// This process's multiplexer I/O threads for `port` (named `udt-io-<port>`).
fn io_threads_on(port: u16) -> usize {
    let want = format!("udt-io-{port}");
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| {
                    std::fs::read_to_string(e.path().join("comm"))
                        .is_ok_and(|c| c.trim_end() == want)
                })
                .count()
        })
        .unwrap_or(0)
}

/// Assert that one UDP socket and one I/O thread serve `port`. (A new thread names itself
/// once running, so a just-started one may take a moment to show.)
fn assert_one_multiplexer(port: u16) {
    assert_eq!(udp_sockets_on(port), 1, "UDP sockets bound to port {port}");
    let deadline = Instant::now() + Duration::from_secs(2);
    while io_threads_on(port) == 0 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(io_threads_on(port), 1, "I/O threads for port {port}");
}

/// A loopback UDP port that was free a moment ago.
fn free_addr() -> SocketAddr {
    let s = UdpSocket::bind("127.0.0.1:0").expect("bind");
    s.local_addr().expect("addr")
}

/// `len` pattern bytes from `from` to `to`, checked on arrival, in two threads.
fn transfer(from: &mut UdtStream, to: &mut UdtStream, len: u64) {
    to.set_read_timeout(Some(PATIENCE)).unwrap();
    from.set_write_timeout(Some(PATIENCE)).unwrap();
    thread::scope(|s| {
        let r = s.spawn(|| recv_pattern_upto(to, len).expect("receive"));
        send_pattern(from, len, 64 << 10).expect("send");
        assert_eq!(r.join().unwrap(), len);
    });
}

/// A listener's port also carries an outgoing connection (`connect_from` the listener's
/// address) while it accepts: one UDP socket, one I/O thread, data both ways on both.
#[test]
fn a_listening_port_also_carries_an_outgoing_connection() {
    let home = listener();
    let home_addr = home.local_addr().unwrap();
    let away = listener();
    let mut out = UdtStream::connect_from(
        home_addr,
        away.local_addr().unwrap(),
        SocketOptions::default(),
    )
    .expect("connect_from the listener's address");
    assert_eq!(out.local_addr().unwrap(), home_addr);
    let (mut out_peer, from) = away.accept().unwrap();
    assert_eq!(from, home_addr, "the peer sees the listener's port");
    // The listener still accepts on the shared port.
    let mut inc = UdtStream::connect(home_addr).unwrap();
    let (mut inc_peer, _) = home.accept().unwrap();
    assert_eq!(inc_peer.local_addr().unwrap(), home_addr);
    assert_one_multiplexer(home_addr.port());
    transfer(&mut out, &mut out_peer, 1 << 20);
    transfer(&mut out_peer, &mut out, 1 << 20);
    transfer(&mut inc, &mut inc_peer, 1 << 20);
    transfer(&mut inc_peer, &mut inc, 1 << 20);
    assert_one_multiplexer(home_addr.port());
}

/// Two connections from one local port to one listener, told apart by socket id, move data
/// at the same time. The first `connect_from` (port 0) registers its new ephemeral port, so
/// the second, bound to that address, joins it.
#[test]
fn two_connections_from_one_port_to_one_listener_move_data_concurrently() {
    const LEN: u64 = 2 << 20;
    let l = listener();
    let to = l.local_addr().unwrap();
    let mut c1 =
        UdtStream::connect_from("127.0.0.1:0".parse().unwrap(), to, SocketOptions::default())
            .unwrap();
    let local = c1.local_addr().unwrap();
    assert_ne!(local.port(), 0);
    let mut c2 = UdtStream::connect_from(local, to, SocketOptions::default()).unwrap();
    assert_eq!(c2.local_addr().unwrap(), local);
    assert_one_multiplexer(local.port());
    let (mut s1, p1) = l.accept().unwrap();
    let (mut s2, p2) = l.accept().unwrap();
    assert_eq!((p1, p2), (local, local), "both come from the shared port");
    thread::scope(|s| {
        let a = s.spawn(|| transfer(&mut c1, &mut s1, LEN));
        let b = s.spawn(|| transfer(&mut c2, &mut s2, LEN));
        a.join().unwrap();
        b.join().unwrap();
    });
    // Each reply reaches its own connection.
    s1.write_all(b"1").unwrap();
    s2.write_all(b"2").unwrap();
    let mut got = [0u8; 1];
    c2.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"2");
    c1.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"1");
}

/// Two rendezvous connections on one local port, to two different peers.
#[test]
fn two_rendezvous_on_one_port_to_two_peers() {
    let (here, a, b) = (free_addr(), free_addr(), free_addr());
    let (mut ours_a, mut ours_b, mut peer_a, mut peer_b) = thread::scope(|s| {
        let pa = s.spawn(move || UdtStream::rendezvous(a, here));
        let pb = s.spawn(move || UdtStream::rendezvous(b, here));
        let oa = s.spawn(move || UdtStream::rendezvous(here, a));
        let ob = s.spawn(move || UdtStream::rendezvous(here, b));
        let j = |h: thread::ScopedJoinHandle<'_, std::io::Result<UdtStream>>| {
            h.join().unwrap().expect("rendezvous")
        };
        (j(oa), j(ob), j(pa), j(pb))
    });
    assert_eq!(ours_a.local_addr().unwrap(), here);
    assert_eq!(ours_b.local_addr().unwrap(), here);
    assert_eq!(ours_a.peer_addr().unwrap(), a);
    assert_eq!(ours_b.peer_addr().unwrap(), b);
    assert_one_multiplexer(here.port());
    transfer(&mut ours_a, &mut peer_a, 1 << 20);
    transfer(&mut peer_b, &mut ours_b, 1 << 20);
    // A third rendezvous to a peer that already has one from this port is ambiguous.
    let err = UdtStream::rendezvous(here, a).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AddrInUse, "{err}");
    assert!(err.to_string().contains("already connecting to"), "{err}");
}

fn reuse_off() -> SocketOptions {
    let mut o = SocketOptions::default();
    o.set_reuse_addr(false);
    o
}

/// UDT_REUSEADDR off on either side, or another MSS: `AddrInUse`, saying why.
#[test]
fn a_port_is_not_shared_when_reuse_addr_is_off_or_the_mss_differs() {
    let target = listener().local_addr().unwrap();
    let held = UdtListener::bind_with("127.0.0.1:0", reuse_off()).unwrap();
    let addr = held.local_addr().unwrap();
    let err = UdtStream::connect_from(addr, target, SocketOptions::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AddrInUse, "{err}");
    assert!(
        err.to_string()
            .contains("UDT_REUSEADDR is off on the socket holding it"),
        "{err}"
    );

    let shared = listener();
    let addr = shared.local_addr().unwrap();
    let err = UdtStream::connect_from(addr, target, reuse_off()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AddrInUse, "{err}");
    assert!(
        err.to_string()
            .contains("UDT_REUSEADDR is off on the new socket"),
        "{err}"
    );
    let err = UdtMessageSocket::connect_from(addr, target, {
        let mut o = SocketOptions::new(Mode::Message);
        o.set_mss(1400).unwrap();
        o
    })
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AddrInUse, "{err}");
    assert!(err.to_string().contains("UDT_MSS"), "{err}");
    // The kernel port stays ours alone.
    assert!(UdpSocket::bind(addr).is_err());
}

/// One listener per port (4.11 refuses a second one), and rendezvous and listening exclude
/// each other on a shared port, with their errors.
#[test]
fn a_shared_port_has_one_listener_and_no_rendezvous_beside_it() {
    let l = listener();
    let addr = l.local_addr().unwrap();
    let err = UdtListener::bind(addr).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AddrInUse, "{err}");
    assert!(err.to_string().contains("already listening"), "{err}");
    let err = UdtStream::rendezvous(addr, free_addr()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.to_string().contains("rendezvous"), "{err}");

    let (here, peer) = (free_addr(), free_addr());
    let mut o = SocketOptions::default();
    o.set_recv_blocking(false); // return while the rendezvous is still connecting
    let _r = UdtStream::rendezvous_with(here, peer, o).unwrap();
    let err = UdtListener::bind(here).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.to_string().contains("rendezvous connection"), "{err}");
}

/// Once every socket on a port is closed, the port is free: a socket with UDT_REUSEADDR off
/// (which cannot share) binds it again, as does a plain UDP socket afterwards.
#[test]
fn a_port_is_free_again_after_every_socket_on_it_is_closed() {
    let home = listener();
    let addr = home.local_addr().unwrap();
    let away = listener();
    let mut out =
        UdtStream::connect_from(addr, away.local_addr().unwrap(), SocketOptions::default())
            .unwrap();
    let (mut peer, _) = away.accept().unwrap();
    transfer(&mut out, &mut peer, 256 << 10);
    out.close().expect("close");
    drop(home);

    let again = UdtListener::bind_with(addr, reuse_off()).expect("rebind after close");
    assert_eq!(again.local_addr().unwrap(), addr);
    assert_one_multiplexer(addr.port());
    let mut c = UdtStream::connect(addr).unwrap();
    let (mut s, _) = again.accept().unwrap();
    transfer(&mut c, &mut s, 64 << 10);
    c.close().unwrap();
    drop(s);
    drop(again);
    // The multiplexer is gone, its kernel socket with it (its I/O thread exits first).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match UdpSocket::bind(addr) {
            Ok(_) => break,
            Err(e) if Instant::now() > deadline => panic!("port still held: {e}"),
            Err(_) => thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// Message sockets share a message-mode listener's port the same way.
#[test]
fn a_message_socket_connects_from_a_message_listeners_port() {
    let message_listener =
        || UdtListener::bind_with("127.0.0.1:0", SocketOptions::new(Mode::Message)).unwrap();
    let (home, away) = (message_listener(), message_listener());
    let addr = home.local_addr().unwrap();
    let out = UdtMessageSocket::connect_from(
        addr,
        away.local_addr().unwrap(),
        SocketOptions::new(Mode::Message),
    )
    .unwrap();
    assert_eq!(out.local_addr().unwrap(), addr);
    let (peer, from) = away.accept_message().unwrap();
    assert_eq!(from, addr);
    out.send_msg(b"hello", None, true).unwrap();
    let mut buf = [0u8; 16];
    let n = peer.recv_msg(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"hello");
    assert_one_multiplexer(addr.port());
}

/// The async `connect_from` joins a listener's port too.
#[cfg(feature = "tokio")]
#[test]
fn tokio_connect_from_shares_a_listeners_port() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let home = udt::tokio::UdtListener::bind("127.0.0.1:0").await.unwrap();
            let away = udt::tokio::UdtListener::bind("127.0.0.1:0").await.unwrap();
            let addr = home.local_addr().unwrap();
            let connect = udt::tokio::UdtStream::connect_from(
                addr,
                away.local_addr().unwrap(),
                SocketOptions::default(),
            );
            let (out, accepted) = tokio::join!(connect, away.accept());
            let mut out = out.unwrap();
            let (mut peer, from) = accepted.unwrap();
            assert_eq!((out.local_addr().unwrap(), from), (addr, addr));
            out.write_all(b"ping").await.unwrap();
            let mut buf = [0u8; 4];
            peer.read_exact(&mut buf).await.unwrap();
            assert_eq!(&buf, b"ping");
            assert_one_multiplexer(addr.port());
        });
}

/// Rebinding a port the moment its last socket is gone races the old multiplexer's I/O
/// thread deciding to exit: the new listener either revives it (connections still draining)
/// or gets a new one, never a dying one (which would accept nothing).
#[test]
fn rebinding_a_port_at_once_always_gives_a_working_listener() {
    let addr = listener().local_addr().unwrap();
    for round in 0..30 {
        let l = UdtListener::bind(addr).unwrap_or_else(|e| panic!("round {round}: {e}"));
        let mut c = UdtStream::connect(addr).unwrap_or_else(|e| panic!("round {round}: {e}"));
        let (mut s, _) = l.accept().unwrap();
        transfer(&mut c, &mut s, 4 << 10);
        if round % 2 == 0 {
            // Everything closed: the old multiplexer retires while we rebind.
            c.close().unwrap();
            drop(s);
        }
        // Otherwise `s` is dropped below with the listener and drains in the background.
    }
}
