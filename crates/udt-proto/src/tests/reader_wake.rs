//! When a blocked stream reader is woken in the middle of a long write: by bytes at a fast
//! rate, but never after data has sat readable for long at a slow one.

use std::time::Duration;

use udt_netsim::LinkConfig;

use super::sim::Pair;
use crate::config::ConnectionConfig;

/// A reader that reads only when woken (an `Event::Readable`), under one long write over a
/// 2 Mbit/s path: the longest that data sat readable before its reader was woken. At that
/// rate 256 KiB (the byte threshold) take about a second to arrive, so without a bound on
/// the data's age the reader saw the stream in lumps a second apart.
fn longest_wait_for_a_slow_stream(seed: u64) -> Duration {
    const RATE_BPS: u64 = 2_000_000;
    let rtt = Duration::from_millis(20);
    let link = || {
        LinkConfig::new()
            .rate_bps(RATE_BPS)
            .delay(rtt / 2)
            .queue_bytes(64 << 10)
    };
    let mut p = Pair::new(link(), link(), ConnectionConfig::default(), seed);
    let (c, s) = p.connect(ConnectionConfig::default());
    let (cn, sn) = (p.client, p.server);
    // One write of 4 MB: the sender takes what its buffer holds and the rest as room frees.
    let data = vec![0x3c; 4 << 20];
    let mut written = 0;
    let mut rbuf = vec![0u8; 1 << 20];
    let mut got = 0;
    let mut readable_since = None;
    let mut longest = Duration::ZERO;
    let ok = p.sim.run_until(Duration::from_secs(8), |sim| {
        let now = sim.now;
        if written < data.len() {
            if let Ok(n) = sim.conn(cn, c).send(now, &data[written..]) {
                written += n;
            }
        }
        if readable_since.is_none() && sim.peek(sn, s).readable_bytes() > 0 {
            readable_since = Some(now);
        }
        // The receiver sends nothing, so its events are `Readable` ones.
        if sim.nodes[sn].woken.remove(&s) {
            if let Some(t) = readable_since.take() {
                longest = longest.max(now - t);
            }
            while let Ok(n) = sim.conn(sn, s).recv(&mut rbuf) {
                if n == 0 {
                    break;
                }
                got += n;
            }
        }
        got >= 1 << 20
    });
    assert!(ok, "1 MiB did not arrive in 8 s (read {got} bytes)");
    longest
}

/// Mid-write, data waits at most about 50 ms (`READ_WAKE_AGE`) plus an ACK's spacing for
/// its reader, however slow the path.
#[test]
fn a_slow_long_write_wakes_its_reader_every_few_tens_of_milliseconds() {
    for seed in [1, 2] {
        let longest = longest_wait_for_a_slow_stream(seed);
        println!("seed {seed}: data readable for up to {longest:?} before a wake-up");
        assert!(
            longest <= Duration::from_millis(100),
            "seed {seed}: {longest:?}"
        );
    }
}
