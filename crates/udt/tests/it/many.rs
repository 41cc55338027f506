//! Many concurrent connections on one listening port.

use std::thread;
use std::time::Instant;

use udt::UdtStream;

use super::{listener, recv_pattern, send_pattern, PATIENCE};

/// `UDT_CONNS` clients (default 100) each send 64 KiB to one listener; the server reads them
/// all from one thread, since accepted data waits in each connection's buffer.
#[test]
fn many_connections_share_one_port() {
    let count: usize = std::env::var("UDT_CONNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    const LEN: u64 = 64 << 10;
    let listener = listener();
    let addr = listener.local_addr().unwrap();
    let start = Instant::now();
    let clients: Vec<_> = (0..count)
        .map(|_| {
            thread::Builder::new()
                .stack_size(128 << 10)
                .spawn(move || {
                    let mut c = UdtStream::connect(addr).expect("connect");
                    c.set_write_timeout(Some(PATIENCE)).unwrap();
                    send_pattern(&mut c, LEN, 16 << 10).expect("send");
                    c.close().expect("close");
                })
                .unwrap()
        })
        .collect();
    let mut streams = Vec::with_capacity(count);
    for _ in 0..count {
        let (s, _) = listener.accept().expect("accept");
        assert_eq!(
            s.local_addr().unwrap(),
            addr,
            "accepted on the listener's port"
        );
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        streams.push(s);
    }
    let accepted = start.elapsed();
    for mut s in streams {
        assert_eq!(recv_pattern(&mut s).expect("receive"), LEN);
    }
    for c in clients {
        c.join().unwrap();
    }
    println!(
        "{count} connections: all accepted after {accepted:?}, all done after {:?}",
        start.elapsed()
    );
}
