//! Two of our connections from one local port to one libudt listener: 4.11 tells them apart
//! by socket id (it answers each caller at its own id), so both handshakes complete and both
//! carry data. `udt_server` accepts one connection and runs its transfer on it; the second
//! waits in libudt's accept backlog, fully connected, and libudt still acknowledges its data.

use udt::{SocketOptions, UdtStream};

use super::*;
use crate::PATIENCE;

#[test]
fn two_of_our_connections_from_one_port_to_one_libudt_server() {
    const TOTAL: u64 = 8 << 20;
    let (mut srv, addr) = server(&["--recv", "--bytes", &TOTAL.to_string()]);
    let mut first = UdtStream::connect_from(
        "127.0.0.1:0".parse().unwrap(),
        addr,
        SocketOptions::default(),
    )
    .expect("first connection to libudt");
    let local = first.local_addr().unwrap();
    let mut second = UdtStream::connect_from(local, addr, SocketOptions::default())
        .expect("second connection to libudt from the same port");
    assert_eq!(second.local_addr().unwrap(), local);
    second.set_write_timeout(Some(PATIENCE)).unwrap();
    second.write_all(&[7u8; 100_000]).unwrap();
    second
        .flush()
        .expect("libudt acknowledges the second connection's data");
    first.set_write_timeout(Some(PATIENCE)).unwrap();
    let (sha, _) = send_pattern(&mut first, TOTAL).expect("send on the first connection");
    first.close().expect("graceful close against libudt");
    let r = srv.result(RESULT_WAIT);
    assert_ok(&r);
    assert_eq!(r.int("bytes"), Some(TOTAL as i64));
    assert_eq!(r.str("sha256"), Some(sha.as_str()), "SHA-256 differs");
}
