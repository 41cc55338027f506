//! Many concurrent connections on one listening port.

use std::io::{Read, Write};
use std::thread;
use std::time::{Duration, Instant};

use udt::{ConnectionConfig, UdtStream};

use super::{listener, recv_pattern_upto, send_pattern, PATIENCE};

/// `UDT_CONNS` clients (default 1000) each send 64 KiB to one listener; the server reads them
/// all from one thread, since accepted data waits in each connection's buffer, and answers
/// each with one byte. Every client has its own multiplexer (port and I/O thread), so this
/// runs 2000 threads; it takes ~3 s on two cores. (The reply, not the end of stream, ends each
/// exchange: a UDT4 Shutdown is sent once, and if the flooded listener dropped it that side
/// would find out only by the ~46 s broken-connection rule.)
///
/// History: 1000 once failed here because every socket set `SO_REUSEADDR`, so the kernel
/// handed the same ephemeral port to two clients, and one of them never heard its handshake
/// response (connect timed out) or lost its control packets (peer lost).
#[test]
fn many_connections_share_one_port() {
    let count: usize = std::env::var("UDT_CONNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    const LEN: u64 = 64 << 10;
    let listener = listener();
    let addr = listener.local_addr().unwrap();
    let start = Instant::now();
    let clients: Vec<_> = (0..count)
        .map(|_| {
            thread::Builder::new()
                .stack_size(128 << 10)
                .spawn(move || {
                    // A thousand threads starting at once on a small machine can take longer
                    // than the default 3 s to get a handshake through.
                    let mut config = ConnectionConfig::default();
                    config.connect_timeout(Duration::from_secs(30));
                    let mut c = UdtStream::connect_with(addr, config).expect("client connect");
                    c.set_write_timeout(Some(PATIENCE)).unwrap();
                    c.set_read_timeout(Some(PATIENCE)).unwrap();
                    send_pattern(&mut c, LEN, 16 << 10).expect("client send");
                    let mut done = [0u8; 1];
                    c.read_exact(&mut done).expect("client reads the reply");
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
    let mut failed = 0;
    for (i, mut s) in streams.into_iter().enumerate() {
        match recv_pattern_upto(&mut s, LEN).and_then(|n| s.write_all(b"k").map(|()| n)) {
            Ok(n) if n == LEN => {}
            other => {
                failed += 1;
                println!("stream {i}: {other:?}, {:?}, {:?}", s.state(), s.stats());
            }
        }
    }
    let client_failures = clients.into_iter().filter_map(|c| c.join().err()).count();
    assert_eq!(
        (failed, client_failures),
        (0, 0),
        "failed streams, failed clients"
    );
    println!(
        "{count} connections: all accepted after {accepted:?}, all done after {:?}",
        start.elapsed()
    );
}
