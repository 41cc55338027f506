//! Helpers shared by the interop tests: starting peers, moving pattern data through our
//! `Connection`, waiting for states.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use udt_interop::driver::Driver;
use udt_interop::pattern;
use udt_interop::peers::PeerProcess;
use udt_proto::{ConnectionConfig, Mode, RecvError, SocketId, State};

pub(crate) const LOCALHOST: &str = "127.0.0.1:0";
/// Messages per message-mode test, and their largest size (up to ~7 packets).
pub(crate) const MSGS: u64 = 500;
pub(crate) const MAX_MSG: usize = 10_000;

/// Stream size for the transfer tests: 16 MiB, or 256 MiB with `UDT_INTEROP_BIG=1`.
pub(crate) fn stream_bytes() -> u64 {
    if std::env::var_os("UDT_INTEROP_BIG").is_some() {
        256 << 20
    } else {
        16 << 20
    }
}

/// A driver on an ephemeral loopback port.
pub(crate) fn driver(seed: u64) -> Driver {
    Driver::bind(LOCALHOST.parse().expect("literal address"), seed).expect("bind udp")
}

/// Start `udt_server` with `args` and return it with its listening address.
pub(crate) fn server(args: &[&str]) -> (PeerProcess, SocketAddr) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let mut p = PeerProcess::spawn("udt_server", &args);
    let port = p
        .expect_event("listening", Duration::from_secs(10))
        .int("port")
        .expect("listening line has a port");
    (p, SocketAddr::from(([127, 0, 0, 1], port as u16)))
}

/// Start `udt_client` with `args`.
pub(crate) fn client(args: &[String]) -> PeerProcess {
    PeerProcess::spawn("udt_client", args)
}

/// A loopback UDP port that was free a moment ago (for the libudt rendezvous side).
pub(crate) fn free_port() -> u16 {
    let s = UdpSocket::bind(LOCALHOST).expect("bind");
    s.local_addr().expect("addr").port()
}

pub(crate) fn config(mode: Mode) -> ConnectionConfig {
    ConnectionConfig::new(mode)
}

/// Turn until connection `id` is connected.
pub(crate) fn wait_connected(d: &mut Driver, id: SocketId) {
    let ok = d
        .run_until(Duration::from_secs(10), |d| {
            d.conn(id).state() != State::Connecting
        })
        .expect("driver io");
    assert!(ok, "handshake did not finish in 10 s");
    assert_eq!(
        d.conn(id).state(),
        State::Connected,
        "{:?}",
        d.conn(id).error()
    );
}

/// Turn until the listener accepted a connection; returns its id.
pub(crate) fn wait_accepted(d: &mut Driver) -> SocketId {
    let ok = d
        .run_until(Duration::from_secs(10), |d| !d.accepted().is_empty())
        .expect("driver io");
    assert!(ok, "no connection accepted in 10 s");
    d.accepted()[0]
}

/// Send `total` pattern bytes on stream connection `id`, close, and turn until the Shutdown
/// is out. Returns the seconds from the first byte to the close.
pub(crate) fn send_stream(d: &mut Driver, id: SocketId, total: u64, limit: Duration) -> f64 {
    let start = std::time::Instant::now();
    let mut chunk = vec![0u8; 64 << 10];
    let mut offset = 0u64;
    let mut filled = (0u64, 0usize); // (offset, len) of the pattern now in `chunk`
    let ok = d
        .run_until(limit, |d| {
            let now = d.now();
            let conn = d.conn(id);
            while offset < total && conn.send_buffer_free() > 0 {
                if filled.0 != offset || filled.1 == 0 {
                    let len = chunk.len().min((total - offset) as usize);
                    pattern::fill_stream(offset, &mut chunk[..len]);
                    filled = (offset, len);
                }
                match conn.send(now, &chunk[..filled.1]) {
                    Ok(n) => offset += n as u64,
                    Err(_) => break,
                }
            }
            if offset == total && conn.state() == State::Connected {
                conn.close(now);
            }
            conn.is_drained()
        })
        .expect("driver io");
    assert!(
        ok,
        "sending {total} bytes did not finish in {limit:?} (sent {offset})"
    );
    assert_eq!(
        d.conn(id).error(),
        Some(udt_proto::ConnectionError::LocallyClosed)
    );
    start.elapsed().as_secs_f64()
}

/// Receive pattern bytes on stream connection `id` until the peer closes (end of stream),
/// checking each byte. Returns (bytes, seconds until the last byte).
pub(crate) fn recv_stream(d: &mut Driver, id: SocketId, limit: Duration) -> (u64, f64) {
    let start = std::time::Instant::now();
    let mut buf = vec![0u8; 256 << 10];
    let mut got = 0u64;
    let mut last = 0.0;
    let mut eof = false;
    let ok = d
        .run_until(limit, |d| {
            loop {
                match d.conn(id).recv(&mut buf) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(n) => {
                        let bad = pattern::check_stream(got, &buf[..n]);
                        assert_eq!(bad, None, "stream byte mismatch");
                        got += n as u64;
                        last = start.elapsed().as_secs_f64();
                    }
                    Err(RecvError::WouldBlock) => break,
                    Err(e) => panic!("recv failed after {got} bytes: {e}"),
                }
            }
            eof
        })
        .expect("driver io");
    assert!(
        ok,
        "no end of stream within {limit:?} ({got} bytes received)"
    );
    (got, last)
}

/// Send messages 0..`count` (in order, no TTL) on connection `id`, then close and drain.
pub(crate) fn send_messages(d: &mut Driver, id: SocketId, count: u64, limit: Duration) {
    let mut k = 0u64;
    let ok = d
        .run_until(limit, |d| {
            let now = d.now();
            let conn = d.conn(id);
            while k < count {
                let msg = pattern::message(k, MAX_MSG);
                match conn.send_msg(now, &msg, None, true) {
                    Ok(()) => k += 1,
                    Err(udt_proto::SendError::WouldBlock) => break,
                    Err(e) => panic!("send_msg {k}: {e}"),
                }
            }
            if k == count && conn.state() == State::Connected {
                conn.close(now);
            }
            conn.is_drained()
        })
        .expect("driver io");
    assert!(ok, "sending {count} messages did not finish (queued {k})");
}

/// Receive messages until the peer closes; every one must be whole and correct, and they
/// must come in order. Returns the sizes in arrival order.
pub(crate) fn recv_messages(
    d: &mut Driver,
    id: SocketId,
    count: u64,
    limit: Duration,
) -> Vec<usize> {
    let mut buf = vec![0u8; MAX_MSG + 1];
    let mut sizes = Vec::new();
    let mut closed = false;
    let ok = d
        .run_until(limit, |d| {
            loop {
                match d.conn(id).recv_msg(&mut buf) {
                    Ok((n, len)) => {
                        assert_eq!(n, len, "message truncated");
                        let k = pattern::check_message(&buf[..n], count, MAX_MSG);
                        assert_eq!(k, Some(sizes.len() as u64), "message {} wrong", sizes.len());
                        sizes.push(n);
                    }
                    Err(RecvError::WouldBlock) => break,
                    Err(RecvError::Closed(_)) => {
                        closed = true;
                        break;
                    }
                    Err(e) => panic!("recv_msg: {e}"),
                }
            }
            closed
        })
        .expect("driver io");
    assert!(
        ok,
        "peer did not close within {limit:?} ({} messages)",
        sizes.len()
    );
    sizes
}

/// Goodput in Mbit/s.
pub(crate) fn mbps(bytes: u64, secs: f64) -> f64 {
    bytes as f64 * 8.0 / secs.max(1e-9) / 1e6
}
