//! Failures: refused and timed-out connects, timeouts, a vanished peer.

use std::io::{ErrorKind, Read, Write};
use std::net::UdpSocket;
use std::thread;
use std::time::{Duration, Instant};

use udt::{connection_error, ConnectionConfig, ConnectionError, Mode, UdtListener, UdtStream};

use super::listener;

#[test]
fn connect_to_silent_port_times_out() {
    // A bound UDP socket that never answers (a closed port behaves the same: Linux does not
    // report ICMP errors on unconnected sockets).
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
