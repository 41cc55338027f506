//! A protected socket against libudt 4.11 (which cannot protect): the UDT4 handshake
//! completes, but no data crosses in either direction and our side ends with
//! `AuthenticationFailed` within seconds; libudt is never handed a packet it would act on
//! (our sealed control packets travel as user-defined 0x7FFF, which it ignores) and never
//! receives payload (we send none before the peer proves the key).

use udt::{connection_error, ConnectionError, SessionKey, SocketOptions, UdtListener, UdtStream};

use super::*;
use crate::PATIENCE;

fn protected() -> SocketOptions {
    let mut o = SocketOptions::default();
    o.set_session_key(Some(SessionKey::from_bytes([7; 32])));
    o
}

#[test]
fn our_protected_client_and_a_libudt_server_exchange_nothing() {
    let (mut srv, addr) = server(&["--recv", "--bytes", "1000000"]);
    let mut c = UdtStream::connect_with(addr, protected()).expect("the UDT4 handshake completes");
    c.set_read_timeout(Some(PATIENCE)).unwrap();
    let start = Instant::now();
    let err = c.read(&mut [0u8; 16]).unwrap_err();
    assert_eq!(
        connection_error(&err),
        Some(ConnectionError::AuthenticationFailed)
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(c.stats().packets_sent, 0, "no data went to libudt");
    srv.kill();
}

#[test]
fn a_libudt_client_gets_nothing_from_our_protected_server() {
    let listener = UdtListener::bind_with("127.0.0.1:0", protected()).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let mut cli = client(&["--connect", &addr, "--send", "--bytes", "1000000"]);
    let (mut s, _) = listener.accept().expect("the UDT4 handshake completes");
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    let err = s.read(&mut [0u8; 16]).unwrap_err();
    assert_eq!(
        connection_error(&err),
        Some(ConnectionError::AuthenticationFailed)
    );
    let refused = s.stats().protection;
    assert!(refused.forged + refused.plaintext > 0, "{refused:?}");
    assert_eq!(s.stats().packets_sent, 0, "no data went to libudt");
    cli.kill();
}
