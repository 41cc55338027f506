//! Data transfer over loopback: bulk stream, small stream, messages, rendezvous, close.

use std::io::{Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::thread;
use std::time::{Duration, Instant};

use udt::{ConnectionConfig, Mode, UdtListener, UdtMessageSocket, UdtStream};

use super::{fill_pattern, listener, recv_pattern, send_pattern, PATIENCE};

/// A listener whose thread accepts one stream and reads it to its end, checking the pattern;
/// the thread returns the byte count.
fn pattern_server() -> (SocketAddr, thread::JoinHandle<u64>) {
    let listener = listener();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        recv_pattern(&mut s).expect("receive")
    });
    (addr, server)
}

/// Chunked reads of every size (cutting packets, and past them) return the stream as plain
/// reads would; with GRO, packets of a train come as slices of one shared buffer (a copied
/// packet would come as a `Bytes` of its own).
#[test]
fn chunked_reads_deliver_the_stream_uncopied() {
    let listener = listener();
    let addr = listener.local_addr().unwrap();
    let len = 8u64 << 20;
    let client = thread::spawn(move || {
        let mut c = UdtStream::connect(addr).expect("connect");
        c.set_write_timeout(Some(PATIENCE)).unwrap();
        send_pattern(&mut c, len, 256 << 10).expect("send");
        c.close().expect("close");
    });
    let (s, _) = listener.accept().expect("accept");
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    // Chunks that share their buffer (with the runtime, or each other).
    let shared_in = |chunks: &[udt::Bytes]| chunks.iter().filter(|c| !c.is_unique()).count();
    let (mut chunks, mut got, mut shared) = (Vec::new(), 0u64, 0);
    for max in [1000usize, 1456, 1, 64 << 10, 3000].iter().cycle() {
        let before = chunks.len();
        let n = s.read_chunks(&mut chunks, *max).expect("read_chunks");
        if n == 0 {
            break;
        }
        assert!(n <= *max);
        let new: &[udt::Bytes] = &chunks[before..];
        assert_eq!(new.iter().map(|c| c.len()).sum::<usize>(), n);
        let mut expect = vec![0u8; n];
        fill_pattern(got, &mut expect);
        assert_eq!(new.concat(), expect, "at offset {got}");
        got += n as u64;
        if chunks.len() > 10_000 {
            shared += shared_in(&chunks);
            chunks.clear();
        }
    }
    shared += shared_in(&chunks);
    client.join().unwrap();
    assert_eq!(got, len);
    if s.socket_info().gro {
        assert!(shared > 0, "every packet was copied");
    }
}

/// Transfer `len` bytes client→server; returns the time from connect to "all acknowledged".
fn transfer(len: u64) -> Duration {
    let (addr, server) = pattern_server();
    let start = Instant::now();
    let mut c = UdtStream::connect(addr).expect("connect");
    c.set_write_timeout(Some(PATIENCE)).unwrap();
    send_pattern(&mut c, len, 64 << 10).expect("send");
    let elapsed = start.elapsed();
    let stats = c.stats();
    c.close().expect("close");
    assert_eq!(server.join().unwrap(), len);
    println!(
        "{len} bytes in {elapsed:?} ({:.2} Gbit/s), sent {} packets, {} retransmitted",
        len as f64 * 8.0 / elapsed.as_secs_f64() / 1e9,
        stats.packets_sent,
        stats.retransmitted
    );
    elapsed
}

#[test]
fn bulk_64_mib_arrives_intact() {
    transfer(64 << 20);
}

/// Two of our peers announce their capabilities to each other (so bulk data goes in GSO
/// trains where the kernel has GSO), and the socket reports what the kernel granted.
#[test]
fn our_peers_negotiate_offloads() {
    let listener = listener();
    let info = listener.socket_info();
    assert!(info.recv_buffer.granted > 0 && info.send_buffer.granted > 0);
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        let got = recv_pattern(&mut s).expect("receive");
        (got, s.peer_capabilities())
    });
    let mut c = UdtStream::connect(addr).expect("connect");
    c.set_write_timeout(Some(PATIENCE)).unwrap();
    send_pattern(&mut c, 8 << 20, 64 << 10).expect("send");
    let caps = c
        .peer_capabilities()
        .expect("the server announced its capabilities");
    assert_eq!(caps.contains(udt::Capabilities::GSO), info.gso);
    assert_eq!(caps.contains(udt::Capabilities::GRO), info.gro);
    c.close().expect("close");
    let (got, server_saw) = server.join().unwrap();
    assert_eq!(got, 8 << 20);
    assert!(server_saw.is_some(), "the client announced nothing");
}

#[test]
fn one_megabyte_completes() {
    // Timing is printed, not asserted (the target is < 20 ms).
    transfer(1 << 20);
}

#[test]
fn both_directions_on_one_connection() {
    let listener = listener();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (s, peer) = listener.accept().unwrap();
        assert_eq!(s.peer_addr().unwrap(), peer);
        let mut buf = [0u8; 5];
        (&s).read_exact(&mut buf).unwrap();
        (&s).write_all(&buf).unwrap();
        (&s).flush().unwrap();
        buf
    });
    let c = UdtStream::connect(addr).unwrap();
    assert_eq!(c.peer_addr().unwrap(), addr);
    (&c).write_all(b"hello").unwrap();
    let mut echo = [0u8; 5];
    (&c).read_exact(&mut echo).unwrap();
    assert_eq!(&echo, b"hello");
    assert_eq!(&server.join().unwrap(), b"hello");
}

#[test]
fn peer_close_is_end_of_stream() {
    let listener = listener();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.write_all(b"bye").unwrap();
        s.close().unwrap();
    });
    let mut c = UdtStream::connect(addr).unwrap();
    c.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut all = Vec::new();
    c.read_to_end(&mut all).unwrap();
    assert_eq!(all, b"bye");
    server.join().unwrap();
}

#[test]
fn messages_keep_their_boundaries() {
    let listener =
        UdtListener::bind_with("127.0.0.1:0", ConnectionConfig::new(Mode::Message)).unwrap();
    let addr = listener.local_addr().unwrap();
    let sizes: Vec<usize> = (0..200).map(|i| 1 + (i * 977) % 5000).collect();
    let expect = sizes.clone();
    let server = thread::spawn(move || {
        let (m, _) = listener.accept_message().unwrap();
        m.set_read_timeout(Some(PATIENCE)).unwrap();
        let mut buf = vec![0u8; 8192];
        for (i, &len) in expect.iter().enumerate() {
            let n = m.recv_msg(&mut buf).unwrap();
            assert_eq!(n, len, "message {i}");
            assert!(
                buf[..n].iter().all(|&b| b == i as u8),
                "message {i} content"
            );
        }
    });
    let m = UdtMessageSocket::connect(addr).unwrap();
    for (i, &len) in sizes.iter().enumerate() {
        m.send_msg(&vec![i as u8; len], None, true).unwrap();
    }
    m.flush().unwrap();
    server.join().unwrap();
    m.close().unwrap();
}

/// A port that is free right now (bind, read, release).
fn free_port() -> SocketAddr {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

#[test]
fn rendezvous_on_loopback() {
    let a = free_port();
    let b = free_port();
    let t = thread::spawn(move || {
        let mut s = UdtStream::rendezvous(b, a).expect("rendezvous b");
        let mut buf = [0u8; 4];
        s.read_exact(&mut buf).unwrap();
        buf
    });
    let mut s = UdtStream::rendezvous(a, b).expect("rendezvous a");
    s.write_all(b"ping").unwrap();
    s.flush().unwrap();
    assert_eq!(&t.join().unwrap(), b"ping");
}

/// Shared writes (`write_shared`: the send buffer keeps the writer's `Bytes`, uncopied) of
/// every size, short tails among them, arrive as the same byte stream; once everything is
/// acknowledged the connection holds none of the writer's buffers.
#[test]
fn shared_writes_arrive_intact_and_are_let_go() {
    let (addr, server) = pattern_server();
    let c = UdtStream::connect(addr).expect("connect");
    c.set_write_timeout(Some(PATIENCE)).unwrap();
    let sizes = [1usize, 1455, 1457, 16 << 10, 100_000, 1 << 20, 7, 300_001];
    let mut offset = 0u64;
    let mut written = Vec::new();
    for round in 0..8 {
        for &len in &sizes {
            let mut buf = vec![0u8; len + round];
            fill_pattern(offset, &mut buf);
            let data = udt::Bytes::from(buf);
            let mut at = 0;
            while at < data.len() {
                at += c.write_shared(&data.slice(at..)).expect("write_shared");
            }
            offset += data.len() as u64;
            written.push(data);
        }
    }
    (&c).flush().expect("flush");
    for data in written {
        assert!(
            data.try_into_mut().is_ok(),
            "the connection still holds a buffer after everything was acknowledged"
        );
    }
    c.close().expect("close");
    assert_eq!(server.join().unwrap(), offset);
}
