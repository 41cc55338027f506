//! `UdtPort`: UDT4's bound-but-not-yet-listening-or-connected socket (`bind`, `bind2`), what
//! the drop-in libudt needs between its calls.

use std::io::{ErrorKind, Read, Write};
use std::net::UdpSocket;
use std::time::Duration;

use udt::blocking::UdtPort;
use udt::{Mode, SocketOptions, UdtStream};

#[test]
fn a_bound_port_knows_its_address_then_listens_there() {
    let options = SocketOptions::default();
    let port = UdtPort::bind("127.0.0.1:0", &options).expect("bind");
    let addr = port.local_addr();
    assert_ne!(addr.port(), 0);
    let listener = port.listen(&options).expect("listen");
    assert_eq!(listener.local_addr().unwrap(), addr);
    // A second listener on the same port is refused, as in 4.11.
    let again = UdtPort::bind(addr, &options).expect("shares the port");
    assert_eq!(
        again.listen(&options).unwrap_err().kind(),
        ErrorKind::AddrInUse
    );
    let mut client = UdtStream::connect(addr).expect("connect");
    let (mut server, _) = listener.accept().expect("accept");
    client.write_all(b"bound").unwrap();
    let mut buf = [0u8; 5];
    server.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"bound");
}

#[test]
fn an_adopted_udp_socket_carries_the_connection_and_a_failed_connect_keeps_the_port() {
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = udp.local_addr().unwrap();
    let mut options = SocketOptions::new(Mode::Stream);
    options
        .set_recv_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let adopted = UdtPort::from_udp_socket(udp, &options).expect("adopt");
    assert_eq!(adopted.local_addr(), addr);
    let listener = adopted.listen(&options).expect("listen");
    let from = UdtPort::bind("127.0.0.1:0", &options).expect("bind");
    // Nothing listens on the adopted port's neighbour: the connect fails, the port stays.
    let nobody = UdpSocket::bind("127.0.0.1:0").unwrap();
    let silent = nobody.local_addr().unwrap();
    drop(nobody);
    assert!(from.connect_stream(silent, &options).is_err());
    let mut client = from
        .connect_stream(addr, &options)
        .expect("connect after a failure");
    assert_eq!(client.local_addr().unwrap(), from.local_addr());
    let (mut server, _) = listener.accept().expect("accept");
    client.write_all(b"bind2").unwrap();
    let mut buf = [0u8; 5];
    server.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"bind2");
    // A socket that is not UDP is refused.
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let fd = std::os::fd::OwnedFd::from(tcp);
    let not_udp = UdpSocket::from(fd);
    let err = UdtPort::from_udp_socket(not_udp, &options).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}
