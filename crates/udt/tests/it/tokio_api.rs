//! The async API (`udt::tokio`, feature `tokio`) over real loopback sockets: echo, a large
//! checksummed transfer, many streams in one runtime, connect failures, and cancellation.

use std::io::ErrorKind;
use std::net::UdpSocket;
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::timeout;
use udt::tokio::{UdtListener, UdtMessageSocket, UdtStream};
use udt::{connection_error, ConnectionConfig, ConnectionError, Mode};

use super::{fill_pattern, pattern, PATIENCE};

async fn listener() -> UdtListener {
    UdtListener::bind("127.0.0.1:0")
        .await
        .expect("bind listener")
}

/// Run `f` on a fresh multi-threaded runtime, failing (not hanging) after `PATIENCE`.
fn run<F: std::future::Future<Output = ()>>(f: F) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            timeout(PATIENCE, f).await.expect("test timed out");
        });
}

#[test]
fn tokio_echo_over_loopback() {
    run(async {
        let l = listener().await;
        let addr = l.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (s, peer) = l.accept().await.unwrap();
            assert_eq!(peer, s.peer_addr().unwrap());
            // One task reads and writes through `&UdtStream`.
            let (mut r, mut w) = (&s, &s);
            let n = tokio::io::copy(&mut r, &mut w).await.unwrap();
            w.flush().await.unwrap();
            n
        });
        let mut c = UdtStream::connect(addr).await.unwrap();
        let msg: Vec<u8> = (0..300_000u64).map(pattern).collect();
        c.write_all(&msg).await.unwrap();
        c.flush().await.unwrap();
        let mut back = vec![0u8; msg.len()];
        c.read_exact(&mut back).await.unwrap();
        assert!(back == msg, "echo differs");
        let stats = c.stats();
        assert!(stats.bytes_sent >= msg.len() as u64, "{stats:?}");
        assert!(c.perfmon(true).total.bytes_delivered >= msg.len() as u64);
        c.shutdown().await.unwrap();
        assert_eq!(server.await.unwrap(), msg.len() as u64);
    });
}

#[test]
fn tokio_64_mib_with_checksum() {
    const LEN: u64 = 64 << 20;
    run(async {
        let l = listener().await;
        let addr = l.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut s, _) = l.accept().await.unwrap();
            let mut hash = Sha256::new();
            let mut buf = vec![0u8; 256 << 10];
            let mut got = 0u64;
            loop {
                let n = s.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                hash.update(&buf[..n]);
                got += n as u64;
            }
            (got, hash.finalize())
        });
        let mut c = UdtStream::connect(addr).await.unwrap();
        let mut hash = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut sent = 0u64;
        while sent < LEN {
            fill_pattern(sent, &mut buf);
            hash.update(&buf);
            c.write_all(&buf).await.unwrap();
            sent += buf.len() as u64;
        }
        // Flush returns once the peer acknowledged everything.
        c.flush().await.unwrap();
        c.shutdown().await.unwrap();
        let (got, digest) = server.await.unwrap();
        assert_eq!(got, LEN);
        assert_eq!(digest, hash.finalize());
    });
}

/// Many streams in one runtime with two worker threads: each client task sends 128 KiB, the
/// server task per connection checks it and answers one byte (the reply ends each exchange,
/// as in the blocking many-connections test).
#[test]
fn tokio_many_concurrent_streams() {
    const COUNT: usize = 64;
    const LEN: usize = 128 << 10;
    run(async {
        let l = listener().await;
        let addr = l.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let mut tasks = Vec::new();
            for _ in 0..COUNT {
                let (mut s, _) = l.accept().await.unwrap();
                tasks.push(tokio::spawn(async move {
                    let mut buf = vec![0u8; LEN];
                    s.read_exact(&mut buf).await.unwrap();
                    assert!(buf.iter().enumerate().all(|(i, &b)| b == pattern(i as u64)));
                    s.write_all(&[1]).await.unwrap();
                    s.flush().await.unwrap();
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
        });
        let clients: Vec<_> = (0..COUNT)
            .map(|_| {
                tokio::spawn(async move {
                    let mut config = ConnectionConfig::default();
                    config.connect_timeout(Duration::from_secs(30));
                    let mut c = UdtStream::connect_with(addr, config).await.unwrap();
                    let data: Vec<u8> = (0..LEN as u64).map(pattern).collect();
                    c.write_all(&data).await.unwrap();
                    let mut reply = [0u8; 1];
                    c.read_exact(&mut reply).await.unwrap();
                    assert_eq!(reply, [1]);
                })
            })
            .collect();
        for c in clients {
            c.await.unwrap();
        }
        server.await.unwrap();
    });
}

#[test]
fn tokio_connect_refused() {
    run(async {
        let l = UdtListener::bind_with("127.0.0.1:0", ConnectionConfig::new(Mode::Message))
            .await
            .unwrap();
        let err = UdtStream::connect(l.local_addr().unwrap())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ConnectionRefused, "{err}");
        assert_eq!(connection_error(&err), Some(ConnectionError::Refused));
        // The stream-mode accept of a message listener is a usage error, at once.
        assert_eq!(
            l.accept().await.unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
    });
}

#[test]
fn tokio_connect_times_out() {
    run(async {
        let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut config = ConnectionConfig::default();
        config.connect_timeout(Duration::from_millis(300));
        let err = UdtStream::connect_with(silent.local_addr().unwrap(), config)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
        assert_eq!(
            connection_error(&err),
            Some(ConnectionError::ConnectTimeout)
        );
    });
}

/// A closed port: the ICMP port unreachable ends the connect after about 1 s, not the 10 s
/// connect timeout.
#[test]
fn tokio_connect_to_closed_port_fails_with_no_listener() {
    run(async {
        let mut config = ConnectionConfig::default();
        config.connect_timeout(Duration::from_secs(10));
        let start = std::time::Instant::now();
        let err = UdtStream::connect_with(super::errors::closed_port(), config)
            .await
            .unwrap_err();
        let waited = start.elapsed();
        assert_eq!(err.kind(), ErrorKind::ConnectionRefused, "{err}");
        assert_eq!(connection_error(&err), Some(ConnectionError::NoListener));
        assert!(waited < Duration::from_secs(5), "{waited:?}");
    });
}

/// A read future dropped while pending (here: losing a `select!` to a timer, hundreds of
/// times while data streams in) consumes nothing: every byte arrives once, in order.
#[test]
fn tokio_dropped_read_future_loses_nothing() {
    const LEN: u64 = 4 << 20;
    run(async {
        let l = listener().await;
        let addr = l.local_addr().unwrap();
        let writer = tokio::spawn(async move {
            let (mut s, _) = l.accept().await.unwrap();
            // Nothing to read yet: the first reads are cancelled with nothing in flight.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let mut buf = vec![0u8; 64 << 10];
            let mut sent = 0u64;
            while sent < LEN {
                fill_pattern(sent, &mut buf);
                s.write_all(&buf).await.unwrap();
                sent += buf.len() as u64;
                tokio::task::yield_now().await;
            }
            s.shutdown().await.unwrap();
        });
        let mut c = UdtStream::connect(addr).await.unwrap();
        let mut buf = vec![0u8; 16 << 10];
        let (mut got, mut cancelled) = (0u64, 0u32);
        loop {
            tokio::select! {
                r = c.read(&mut buf) => {
                    let n = r.unwrap();
                    if n == 0 {
                        break;
                    }
                    for (k, &b) in buf[..n].iter().enumerate() {
                        assert_eq!(b, pattern(got + k as u64), "byte {}", got + k as u64);
                    }
                    got += n as u64;
                }
                () = tokio::time::sleep(Duration::from_micros(200)) => cancelled += 1,
            }
        }
        assert_eq!(got, LEN);
        assert!(cancelled > 0, "no read was ever cancelled");
        println!("{cancelled} read futures dropped while pending");
        writer.await.unwrap();
    });
}

#[test]
fn tokio_message_socket() {
    run(async {
        let l = UdtListener::bind_with("127.0.0.1:0", ConnectionConfig::new(Mode::Message))
            .await
            .unwrap();
        let addr = l.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (s, _) = l.accept_message().await.unwrap();
            let mut buf = [0u8; 64];
            for i in 0..10u8 {
                let n = s.recv_msg(&mut buf).await.unwrap();
                assert_eq!(&buf[..n], &[i; 20][..]);
            }
            s.send_msg(b"done", None, true).await.unwrap();
            s.flush().await.unwrap();
        });
        // Shared between tasks through an `Arc`: every method takes `&self`.
        let c = Arc::new(UdtMessageSocket::connect(addr).await.unwrap());
        let sender = Arc::clone(&c);
        tokio::spawn(async move {
            for i in 0..10u8 {
                sender.send_msg(&[i; 20], None, true).await.unwrap();
            }
        })
        .await
        .unwrap();
        let mut buf = [0u8; 16];
        let n = c.recv_msg(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"done");
        server.await.unwrap();
    });
}

/// An `accept` that finds nothing waits (woken, not polling) and can be cancelled.
#[test]
fn tokio_accept_waits_and_is_cancellable() {
    run(async {
        let l = listener().await;
        let r = timeout(Duration::from_millis(100), l.accept()).await;
        assert!(r.is_err(), "nothing to accept: still pending");
        let addr = l.local_addr().unwrap();
        let client = tokio::spawn(async move { UdtStream::connect(addr).await.unwrap() });
        let (s, _) = l.accept().await.unwrap();
        let c = client.await.unwrap();
        assert_eq!(
            s.peer_addr().unwrap().port(),
            c.local_addr().unwrap().port()
        );
    });
}

/// `write_shared` and `read_chunks` on the async stream: a megabyte and a short tail,
/// uncopied both ways, arrive intact.
#[test]
fn tokio_shared_writes_and_chunked_reads_arrive_intact() {
    run(async {
        let l = listener().await;
        let addr = l.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (s, _) = l.accept().await.unwrap();
            let mut chunks = Vec::new();
            while s.read_chunks(&mut chunks, 100_000).await.unwrap() > 0 {}
            chunks.concat()
        });
        let mut c = UdtStream::connect(addr).await.unwrap();
        let sent: Vec<u8> = (0..(1u64 << 20) + 999).map(pattern).collect();
        let data = udt::Bytes::from(sent.clone());
        let mut at = 0;
        while at < data.len() {
            at += c.write_shared(&data.slice(at..)).await.unwrap();
        }
        c.shutdown().await.unwrap();
        assert!(server.await.unwrap() == sent, "the stream differs");
    });
}
