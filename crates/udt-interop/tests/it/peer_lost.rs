//! A libudt peer killed mid-transfer: our side must end with `PeerLost` in bounded time.
//! 4.11's EXP rule (17 expiries, last one > 5 s, 300 ms × N floor) makes that about 46 s of
//! silence on loopback; we implement the same rule, so the test allows up to 90 s.

use std::time::{Duration, Instant};

use udt_proto::{ConnectionError, Mode, State};

use crate::common::*;

#[test]
fn killed_libudt_sender_is_detected_as_peer_lost() {
    let mut d = driver(31);
    d.listen(config(Mode::Stream));
    let addr = d.local_addr();
    let mut cli = client(&[
        "--connect".into(),
        addr.to_string(),
        "--send".into(),
        "--seconds".into(),
        "600".into(),
        "--maxbw".into(),
        "20000000".into(),
    ]);
    let id = wait_accepted(&mut d);
    let mut buf = vec![0u8; 256 << 10];
    let mut got = 0usize;
    let ok = d
        .run_until(Duration::from_secs(30), |d| {
            while let Ok(n) = d.conn(id).recv(&mut buf) {
                if n == 0 {
                    break;
                }
                got += n;
            }
            got >= 2 << 20
        })
        .expect("driver io");
    assert!(ok, "transfer did not get going ({got} bytes)");
    cli.kill();
    let killed = Instant::now();
    let ok = d
        .run_until(Duration::from_secs(90), |d| {
            d.conn(id).state() == State::Closed
        })
        .expect("driver io");
    let waited = killed.elapsed();
    println!(
        "libudt killed after {got} B; our side closed after {waited:.1?}: {:?}",
        d.conn(id).error()
    );
    assert!(ok, "no PeerLost within 90 s");
    assert_eq!(d.conn(id).error(), Some(ConnectionError::PeerLost));
    assert!(
        waited > Duration::from_secs(5),
        "declared lost too early: {waited:?}"
    );
}
