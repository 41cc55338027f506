//! Packet protection on real sockets: a relay that tampers with the traffic (flips bits,
//! injects forged packets, replays old ones) cannot corrupt a protected stream, while the same
//! relay visibly corrupts an unprotected one; a wrong key ends the connection with
//! `AuthenticationFailed`.

use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use udt::{connection_error, ConnectionError, SessionKey, SocketOptions, UdtListener, UdtStream};

use super::{recv_pattern, send_pattern, PATIENCE};

/// A UDP relay between one client and a server that attacks every datagram it forwards:
/// every 97th has one bit flipped, every 89th is followed by a forged copy (random bytes
/// behind its header), and every 83rd by a replay of an earlier datagram.
struct TamperingRelay {
    addr: SocketAddr,
    tampered: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl TamperingRelay {
    fn start(server: SocketAddr) -> Self {
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        back.connect(server).unwrap();
        for s in [&front, &back] {
            s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        }
        let addr = front.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let tampered = Arc::new(AtomicU64::new(0));
        let client = Arc::new(Mutex::new(None::<SocketAddr>));
        let mut threads = Vec::new();
        for upstream in [true, false] {
            let (from, to) = if upstream {
                (front.try_clone().unwrap(), back.try_clone().unwrap())
            } else {
                (back.try_clone().unwrap(), front.try_clone().unwrap())
            };
            let (stop, tampered, client) = (stop.clone(), tampered.clone(), client.clone());
            threads.push(thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                let mut history: Vec<Vec<u8>> = Vec::new();
                let mut n = 0u64;
                let mut noise = 0x9E37_79B9_7F4A_7C15u64;
                while !stop.load(Ordering::SeqCst) {
                    let Ok((len, peer)) = from.recv_from(&mut buf) else {
                        continue;
                    };
                    let send = |d: &[u8]| {
                        if upstream {
                            let _ = to.send(d);
                        } else if let Some(c) = *client.lock().unwrap() {
                            let _ = to.send_to(d, c);
                        }
                    };
                    if upstream {
                        *client.lock().unwrap() = Some(peer);
                    }
                    n += 1;
                    noise ^= noise << 13;
                    noise ^= noise >> 7;
                    noise ^= noise << 17;
                    let datagram = buf[..len].to_vec();
                    // Leave the handshakes alone: this is about the protected connection.
                    let handshake = len >= 2 && datagram[0] == 0x80 && datagram[1] == 0;
                    if handshake || len < 20 {
                        send(&datagram);
                        continue;
                    }
                    if n % 97 == 0 {
                        let mut bad = datagram.clone();
                        let at = 16 + (noise as usize) % (len - 16);
                        bad[at] ^= 1 << (noise % 8);
                        send(&bad);
                        tampered.fetch_add(1, Ordering::Relaxed);
                    } else {
                        send(&datagram);
                    }
                    if n % 89 == 0 {
                        let mut forged = datagram.clone();
                        for (k, b) in forged[16..].iter_mut().enumerate() {
                            *b = (noise >> (k % 56)) as u8;
                        }
                        send(&forged);
                        tampered.fetch_add(1, Ordering::Relaxed);
                    }
                    if n % 83 == 0 && !history.is_empty() {
                        send(&history[(noise as usize) % history.len()]);
                        tampered.fetch_add(1, Ordering::Relaxed);
                    }
                    if history.len() < 256 && n % 7 == 0 {
                        history.push(datagram);
                    }
                }
            }));
        }
        Self {
            addr,
            tampered,
            stop,
            threads,
        }
    }
}

impl Drop for TamperingRelay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn options(key: Option<&SessionKey>) -> SocketOptions {
    let mut o = SocketOptions::default();
    o.set_session_key(key.cloned());
    o
}

fn key(fill: u8) -> SessionKey {
    SessionKey::from_bytes([fill; 32])
}

/// Send `len` pattern bytes through the tampering relay with `key` on both sides; returns
/// what the receiver's pattern check said, the relay's count of attacks, and the receiver's
/// protection counters.
fn through_relay(key: Option<&SessionKey>, len: u64) -> (std::io::Result<u64>, u64, u64) {
    let listener = UdtListener::bind_with("127.0.0.1:0", options(key)).unwrap();
    let relay = TamperingRelay::start(listener.local_addr().unwrap());
    let relay_addr = relay.addr;
    let opts = options(key);
    let sender = thread::spawn(move || {
        let mut c = UdtStream::connect_with(relay_addr, opts).unwrap();
        c.set_write_timeout(Some(PATIENCE)).unwrap();
        let _ = send_pattern(&mut c, len, 1 << 20);
        c
    });
    let (mut server, _) = listener.accept().unwrap();
    server.set_read_timeout(Some(PATIENCE)).unwrap();
    let got = super::recv_pattern_upto(&mut server, len);
    let refused = server.stats().protection.forged + server.stats().protection.replayed;
    drop(server);
    let _ = sender.join();
    (got, relay.tampered.load(Ordering::Relaxed), refused)
}

#[test]
fn a_tampering_relay_cannot_corrupt_a_protected_stream() {
    let (got, tampered, refused) = through_relay(Some(&key(1)), 32 << 20);
    assert_eq!(got.unwrap(), 32 << 20);
    assert!(tampered > 100, "the relay attacked {tampered} times");
    assert!(refused > 0, "the receiver refused {refused}");
}

/// The control experiment: without protection the same relay corrupts the stream (UDT4 has
/// no integrity check of its own), which the pattern check catches.
#[test]
fn the_same_relay_corrupts_an_unprotected_stream() {
    let (got, tampered, _) = through_relay(None, 32 << 20);
    assert!(tampered > 0);
    let err = got.expect_err("tampering went unnoticed");
    assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
}

#[test]
fn a_wrong_key_fails_with_authentication_failed() {
    let listener = UdtListener::bind_with("127.0.0.1:0", options(Some(&key(2)))).unwrap();
    let addr = listener.local_addr().unwrap();
    let accepter = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        let err = s.read(&mut [0u8; 16]).unwrap_err();
        (connection_error(&err), s.is_peer_authenticated())
    });
    let mut c = UdtStream::connect_with(addr, options(Some(&key(3)))).unwrap();
    c.set_read_timeout(Some(PATIENCE)).unwrap();
    let err = c.read(&mut [0u8; 16]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{err}");
    assert_eq!(
        connection_error(&err),
        Some(ConnectionError::AuthenticationFailed)
    );
    assert!(!c.is_peer_authenticated());
    let (server_error, proved) = accepter.join().unwrap();
    assert_eq!(server_error, Some(ConnectionError::AuthenticationFailed));
    assert!(!proved);
}

#[test]
fn a_protected_stream_round_trips_and_reports_its_peer_authenticated() {
    let k = key(4);
    let listener = UdtListener::bind_with("127.0.0.1:0", options(Some(&k))).unwrap();
    let addr = listener.local_addr().unwrap();
    let opts = options(Some(&k));
    let sender = thread::spawn(move || {
        let mut c = UdtStream::connect_with(addr, opts).unwrap();
        send_pattern(&mut c, 8 << 20, 100_000).unwrap();
        assert!(c.is_peer_authenticated());
    });
    let (mut s, _) = listener.accept().unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    assert_eq!(recv_pattern(&mut s).unwrap(), 8 << 20);
    assert!(s.is_peer_authenticated());
    sender.join().unwrap();
}

/// A key agreed over the connection itself: plaintext first (where a key exchange would
/// run), then both sides start protection and the rest of the stream is protected.
#[test]
fn protection_started_after_a_plaintext_exchange() {
    use std::io::Write;
    let mut later = SocketOptions::default();
    later.set_protect_later(true);
    let listener = UdtListener::bind_with("127.0.0.1:0", later.clone()).unwrap();
    let addr = listener.local_addr().unwrap();
    let k = key(5);
    let k2 = k.clone();
    let client = thread::spawn(move || {
        let mut c = UdtStream::connect_with(addr, later).unwrap();
        c.set_read_timeout(Some(PATIENCE)).unwrap();
        c.write_all(b"hello").unwrap();
        let mut reply = [0u8; 5];
        c.read_exact(&mut reply).unwrap();
        assert_eq!(&reply, b"olleh");
        c.start_protection(&k2).unwrap();
        send_pattern(&mut c, 8 << 20, 100_000).unwrap();
        assert!(c.is_peer_authenticated());
    });
    let (mut s, _) = listener.accept().unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut hello = [0u8; 5];
    s.read_exact(&mut hello).unwrap();
    s.write_all(b"olleh").unwrap();
    s.flush().unwrap();
    s.start_protection(&k).unwrap();
    assert_eq!(recv_pattern(&mut s).unwrap(), 8 << 20);
    assert!(s.is_peer_authenticated());
    client.join().unwrap();
}
