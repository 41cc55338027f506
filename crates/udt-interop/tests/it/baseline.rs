//! libudt-to-libudt baselines on loopback, printed not asserted (run explicitly, under the
//! benchmark lock):
//!
//! ```text
//! flock /tmp/udt-bench.lock cargo test -p udt-interop --test it -- --ignored baseline --nocapture
//! ```

use std::time::{Duration, Instant};

use crate::common::*;

/// ~10 s of stream goodput and the CPU both processes used.
#[test]
#[ignore = "timed baseline: run explicitly under flock /tmp/udt-bench.lock"]
fn baseline_libudt_goodput_10s() {
    let (mut srv, addr) = server(&[]);
    let mut cli = client(&[
        "--connect".into(),
        addr.to_string(),
        "--send".into(),
        "--seconds".into(),
        "10".into(),
    ]);
    let c = cli.result(Duration::from_secs(60));
    let s = srv.result(Duration::from_secs(30));
    let cpu = |j: &udt_interop::peers::Json| {
        j.num("cpu_user").unwrap_or(0.0) + j.num("cpu_sys").unwrap_or(0.0)
    };
    let bytes = s.int("bytes").unwrap_or(0) as u64;
    let secs = s.num("seconds").unwrap_or(0.0);
    println!(
        "BASELINE libudt->libudt 10 s: {bytes} B in {secs:.2} s = {:.0} Mbit/s; CPU sender {:.2} s, receiver {:.2} s; retrans {:?}",
        mbps(bytes, secs),
        cpu(&c),
        cpu(&s),
        c.int("retrans")
    );
    println!("  sender: {}\n  receiver: {}", c.0, s.0);
    assert_eq!(s.bool("ok"), Some(true));
}

/// Time for a complete 1 MB transfer (connect, send, close acknowledged), five times.
#[test]
#[ignore = "timed baseline: run explicitly under flock /tmp/udt-bench.lock"]
fn baseline_libudt_1mb_completion() {
    for run in 0..5 {
        let (mut srv, addr) = server(&["--bytes", "1000000"]);
        let start = Instant::now();
        let mut cli = client(&[
            "--connect".into(),
            addr.to_string(),
            "--send".into(),
            "--bytes".into(),
            "1000000".into(),
        ]);
        let c = cli.result(Duration::from_secs(30));
        let total = start.elapsed();
        let s = srv.result(Duration::from_secs(30));
        println!(
            "BASELINE libudt->libudt 1 MB run {run}: receiver got it in {:.3} s, sender close returned after {:.3} s, process wall {total:.3?}",
            s.num("seconds").unwrap_or(0.0),
            c.num("seconds").unwrap_or(0.0)
        );
        assert_eq!(s.bool("ok"), Some(true));
    }
}
