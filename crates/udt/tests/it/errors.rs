//! Failures: refused and timed-out connects, a connect to a closed port, timeouts, a vanished
//! peer, a peer whose port closed.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use udt::{connection_error, ConnectionConfig, ConnectionError, Mode, UdtListener, UdtStream};

use super::listener;

/// A loopback UDP port where nothing listens (bound a moment ago, then closed): datagrams
/// sent there draw ICMP port unreachable.
pub(crate) fn closed_port() -> SocketAddr {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.local_addr().unwrap()
}

#[test]
fn connect_to_silent_port_times_out() {
    // A bound UDP socket that never answers: no ICMP, so only the connect timeout ends it.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut config = ConnectionConfig::default();
    config.connect_timeout(Duration::from_millis(300));
    let start = Instant::now();
    let err = UdtStream::connect_with(silent.local_addr().unwrap(), config).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
    assert_eq!(
        connection_error(&err),
        Some(ConnectionError::ConnectTimeout)
    );
    println!("connect timed out after {:?}", start.elapsed());
}

/// Nothing listens on the port: the kernel's ICMP port unreachable ends the connect after the
/// hint's grace (about 1 s), well before the connect timeout (10 s here, so the two cannot be
/// confused however loaded the host is).
#[test]
fn connect_to_closed_port_fails_with_no_listener() {
    let mut config = ConnectionConfig::default();
    config.connect_timeout(Duration::from_secs(10));
    let start = Instant::now();
    let err = UdtStream::connect_with(closed_port(), config).unwrap_err();
    let waited = start.elapsed();
    println!("connect failed after {waited:.2?}: {err}");
    assert_eq!(err.kind(), ErrorKind::ConnectionRefused, "{err}");
    assert_eq!(connection_error(&err), Some(ConnectionError::NoListener));
    assert_eq!(
        err.to_string(),
        "nothing listens on the peer's port (ICMP port unreachable)"
    );
    assert!(waited < Duration::from_secs(5), "{waited:?}");
}

#[test]
fn listener_refuses_wrong_socket_type() {
    let l = UdtListener::bind_with("127.0.0.1:0", ConnectionConfig::new(Mode::Message)).unwrap();
    let err = UdtStream::connect(l.local_addr().unwrap()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionRefused, "{err}");
    assert_eq!(connection_error(&err), Some(ConnectionError::Refused));
}

#[test]
fn wrong_accept_call_is_invalid_input() {
    let l = listener();
    assert_eq!(
        l.accept_message().unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
}

#[test]
fn read_timeout_expires() {
    let l = listener();
    let addr = l.local_addr().unwrap();
    let t = thread::spawn(move || l.accept().unwrap().0);
    let mut c = UdtStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let err = c.read(&mut [0u8; 16]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    assert!(c.set_read_timeout(Some(Duration::ZERO)).is_err());
    drop(t.join().unwrap());
}

#[test]
fn write_after_peer_close_fails() {
    let l = listener();
    let addr = l.local_addr().unwrap();
    let t = thread::spawn(move || l.accept().unwrap().0.close().unwrap());
    let mut c = UdtStream::connect(addr).unwrap();
    t.join().unwrap();
    c.set_read_timeout(Some(super::PATIENCE)).unwrap();
    assert_eq!(c.read(&mut [0u8; 4]).unwrap(), 0, "end of stream");
    let err = c.write(b"late").unwrap_err();
    assert_eq!(connection_error(&err), Some(ConnectionError::PeerClosed));
}

/// The peer's process dies (its multiplexer stops without a word): the survivor must report a
/// broken connection. 4.11's rule (16 silent EXP rounds and > 5 s) takes about 46 s.
#[test]
fn vanished_peer_breaks_the_connection() {
    let l = listener();
    let addr = l.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        l.abort_multiplexer();
        s
    });
    let mut c = UdtStream::connect(addr).unwrap();
    let _s = server.join().unwrap();
    c.write_all(&[7u8; 100_000]).unwrap();
    let start = Instant::now();
    c.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let err = c.read(&mut [0u8; 16]).unwrap_err();
    println!("broken after {:?}: {err}", start.elapsed());
    assert_eq!(err.kind(), ErrorKind::ConnectionReset, "{err}");
    assert_eq!(connection_error(&err), Some(ConnectionError::PeerLost));
}

/// A UDP relay in front of a server: the client talks to the relay's port as if it were the
/// server's. Closing the relay closes that port for real, which is what the client sees when
/// the server's process dies: its datagrams draw ICMP port unreachable.
struct Relay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: thread::JoinHandle<()>,
}

impl Relay {
    fn new(server: SocketAddr) -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(5)))
            .unwrap();
        let addr = socket.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = thread::spawn(move || {
            let mut client = None;
            let mut buf = vec![0u8; 65536];
            while !stopped.load(Ordering::SeqCst) {
                let Ok((n, from)) = socket.recv_from(&mut buf) else {
                    continue;
                };
                let to = if from == server {
                    client
                } else {
                    client = Some(from);
                    Some(server)
                };
                if let Some(to) = to {
                    let _ = socket.send_to(&buf[..n], to);
                }
            }
            // The socket closes here.
        });
        Self { addr, stop, thread }
    }

    fn close(self) {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().unwrap();
    }
}

/// The peer's port closes (its process died, say): the ICMP port unreachable that our next
/// datagram draws ends the connection after the hint's grace (1 s here), not after 4.11's
/// ~46 s of silence.
#[test]
fn closed_peer_port_breaks_the_connection_within_seconds() {
    let l = listener();
    let relay = Relay::new(l.local_addr().unwrap());
    let server = thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut buf = vec![0u8; 1 << 16];
        // Read until the connection ends one way or another; it must not hang.
        while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
    });
    let mut c = UdtStream::connect(relay.addr).unwrap();
    c.write_all(&[7u8; 1 << 20]).unwrap();
    c.flush().unwrap();
    relay.close();
    let closed = Instant::now();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let err = c.read(&mut [0u8; 16]).unwrap_err();
    let waited = closed.elapsed();
    println!("broken after {waited:.2?}: {err}");
    assert_eq!(err.kind(), ErrorKind::ConnectionReset, "{err}");
    assert_eq!(
        connection_error(&err),
        Some(ConnectionError::PeerUnreachable)
    );
    // About the grace (1 s; the port closes a moment before `close` returns, so a datagram
    // may draw the ICMP just before `closed` was read) and far below 4.11's 46 s (about
    // 1.3 s expected: a keep-alive after 300 ms draws the ICMP, then one second of silence).
    assert!(
        waited >= Duration::from_millis(500) && waited < Duration::from_secs(20),
        "{waited:?}"
    );
    server.join().unwrap();
}
