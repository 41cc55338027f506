//! `udt perf` end to end: the built binary as server and client over loopback, the JSON
//! report parsed and checked, and the usage and connection errors with their exit codes.
//! Each test runs its own one-off server on its own port, for a second or two.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, UdpSocket};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

const UDT: &str = env!("CARGO_BIN_EXE_udt");

/// A port free for both TCP and UDP on loopback (just now).
fn free_port() -> u16 {
    loop {
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = tcp.local_addr().unwrap().port();
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// A `udt perf -s -1` server, killed on drop if still running.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start() -> Self {
        Self::start_with(&["-1"])
    }

    /// The port was free when asked, but another test's connection may take it before the
    /// server binds it: a server that finds its port in use is started again on another.
    fn start_with(extra: &[&str]) -> Self {
        for _ in 0..5 {
            let port = free_port();
            let port_text = port.to_string();
            let mut args = vec!["perf", "-s", "-B", "127.0.0.1", "-p", &port_text];
            args.extend_from_slice(extra);
            let mut child = Command::new(UDT)
                .args(&args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // The first line says it is listening.
            let mut line = String::new();
            let stdout = child.stdout.take().unwrap();
            let mut reader = BufReader::new(stdout);
            reader.read_line(&mut line).unwrap();
            if line.contains("udt perf server on") {
                std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
                return Self { child, port };
            }
            child.wait().unwrap();
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            assert!(err.contains("Address already in use"), "{line:?} {err}");
        }
        panic!("five fresh ports were all taken before the server bound them");
    }

    /// Waits for the one-off server to exit, and checks it succeeded.
    fn finish(mut self) {
        let status = self.child.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(self.child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert!(status.success(), "server failed: {err}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn udt(args: &[&str]) -> Output {
    udt_env(args, &[])
}

/// [`udt`] with environment variables set.
fn udt_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(UDT)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// Runs a client against `server` with `extra` flags and `--json`; returns the report.
fn client_json(server: &Server, extra: &[&str]) -> Value {
    let port = server.port.to_string();
    let mut args = vec!["perf", "-c", "127.0.0.1", "-p", &port, "--json"];
    args.extend_from_slice(extra);
    let out = udt(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "client failed: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON object ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn f64_field(v: &Value, name: &str) -> f64 {
    v[name]
        .as_f64()
        .unwrap_or_else(|| panic!("{name} missing or not a number in {v}"))
}

fn u64_field(v: &Value, name: &str) -> u64 {
    v[name]
        .as_u64()
        .unwrap_or_else(|| panic!("{name} missing or not an integer in {v}"))
}

/// What every report must hold, whatever the test.
fn check_common(v: &Value) {
    let bytes = u64_field(v, "bytes");
    let seconds = f64_field(v, "seconds");
    let goodput = f64_field(v, "goodput_bps");
    assert!(bytes > 0 && seconds > 0.0 && goodput > 0.0, "{v}");
    let expected = bytes as f64 * 8.0 / seconds;
    assert!((goodput - expected).abs() <= expected * 1e-9, "{v}");
    for name in ["rtt_ms", "sender_cpu_seconds", "receiver_cpu_seconds"] {
        assert!(f64_field(v, name) >= 0.0, "{name}");
    }
    assert!(f64_field(v, "sender_cpu_seconds") > 0.0, "{v}");
    assert!(f64_field(v, "receiver_cpu_seconds") > 0.0, "{v}");
    u64_field(v, "retransmitted_packets");
    u64_field(v, "lost_packets");
    u64_field(v, "duplicate_packets");
    let intervals = v["intervals"].as_array().expect("intervals array");
    let interval_bytes: u64 = intervals.iter().map(|i| u64_field(i, "bytes")).sum();
    assert_eq!(interval_bytes, bytes, "intervals add up to the total");
    assert!(v["cc"].as_str().is_some_and(|cc| !cc.is_empty()));
}

#[test]
fn udt_two_seconds_json() {
    let server = Server::start();
    let v = client_json(&server, &["-t", "2", "-i", "0.5"]);
    server.finish();
    check_common(&v);
    assert_eq!(v["protocol"], "udt");
    assert_eq!(v["cc"], "native");
    assert_eq!(
        (v["streams"].as_u64(), v["reverse"].as_bool()),
        (Some(1), Some(false))
    );
    let seconds = f64_field(&v, "seconds");
    assert!((1.9..10.0).contains(&seconds), "seconds {seconds}");
    assert_eq!(u64_field(&v, "sender_bytes"), u64_field(&v, "bytes"));
    assert!(u64_field(&v, "sent_packets") > 0);
    assert!(f64_field(&v, "rtt_ms") > 0.0);
    let udt = &v["udt"];
    assert!(f64_field(udt, "bandwidth_estimate_bps") > 0.0, "{udt}");
    assert!(f64_field(udt, "rtt_ms") > 0.0, "{udt}");
    let intervals = v["intervals"].as_array().unwrap();
    assert!(
        (4..=6).contains(&intervals.len()),
        "{} intervals",
        intervals.len()
    );
    assert!(intervals
        .iter()
        .all(|i| i["rtt_ms"].is_number() && i["send_period_us"].is_number()));
}

#[test]
fn byte_limit_sends_exactly_that_many() {
    let server = Server::start();
    let v = client_json(&server, &["-n", "20M"]);
    server.finish();
    check_common(&v);
    assert_eq!(u64_field(&v, "bytes"), 20 << 20);
    assert_eq!(u64_field(&v, "sender_bytes"), 20 << 20);
}

#[test]
fn reverse_has_the_server_send() {
    let server = Server::start();
    let v = client_json(&server, &["-R", "-t", "1"]);
    server.finish();
    check_common(&v);
    assert_eq!(v["reverse"], true);
    assert!(f64_field(&v["udt"], "rtt_ms") > 0.0);
}

#[test]
fn parallel_streams_aggregate() {
    let server = Server::start();
    let v = client_json(&server, &["-P", "2", "-n", "16M"]);
    server.finish();
    check_common(&v);
    assert_eq!(v["streams"], 2);
    assert_eq!(u64_field(&v, "bytes"), 16 << 20);
}

#[test]
fn kernel_tcp_with_buffers() {
    let server = Server::start();
    let v = client_json(&server, &["--proto", "tcp", "-t", "1", "--sndbuf", "1M"]);
    server.finish();
    check_common(&v);
    assert_eq!(v["protocol"], "tcp");
    assert!(v["udt"].is_null());
    // Linux reports twice what was asked (its bookkeeping share).
    assert_eq!(
        u64_field(&v["sender_buffers"], "send_buffer_bytes"),
        2 << 20
    );
}

#[test]
fn human_output_has_intervals_and_a_summary() {
    let server = Server::start();
    let port = server.port.to_string();
    let out = udt(&[
        "perf",
        "-c",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "1",
        "-i",
        "0.5",
    ]);
    server.finish();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .filter(|l| l.contains("bit/s") && l.contains("rtt"))
            .count()
            >= 2,
        "{text}"
    );
    assert!(
        text.contains("receiver") && text.contains("CPU: sender"),
        "{text}"
    );
}

#[test]
fn bad_flags_exit_2_with_one_line() {
    let cases: [&[&str]; 10] = [
        &["perf"],
        &["perf", "-c", "127.0.0.1", "-P", "0"],
        &["perf", "-c", "127.0.0.1", "-t", "0"],
        &["perf", "-c", "127.0.0.1", "--maxbw", "lots"],
        &["perf", "-c", "127.0.0.1", "--maxbw", "0"],
        &["perf", "-c", "127.0.0.1", "-n", "16 furlongs"],
        &["perf", "-c", "127.0.0.1", "--cc", "fixed-rate"],
        &["perf", "-c", "127.0.0.1", "--proto", "sctp"],
        &["perf", "-c", "127.0.0.1", "--mss", "10"],
        &["perf", "-s", "-R"],
    ];
    for args in cases {
        let out = udt(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("udt: "), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn connection_refused_exits_1_and_says_so() {
    let port = free_port().to_string();
    let out = udt(&["perf", "-c", "127.0.0.1", "-p", &port, "-t", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot connect to 127.0.0.1:"), "{err}");
    assert!(err.contains("refused"), "{err}");
    assert!(err.contains("udt perf -s"), "{err}");
}

#[test]
fn server_outlives_a_client_killed_mid_test() {
    let server = Server::start_with(&[]);
    let port = server.port.to_string();
    let mut doomed = Command::new(UDT)
        .args(["perf", "-c", "127.0.0.1", "-p", &port, "-t", "30"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    doomed.kill().unwrap();
    doomed.wait().unwrap();
    // The server notices within a poll period and serves the next client.
    let v = client_json(&server, &["-n", "8M"]);
    check_common(&v);
    assert_eq!(u64_field(&v, "bytes"), 8 << 20);
}

/// `UDT_LOG` prints the library's events on stderr: the model's mode changes as a transfer
/// starts (start-up ends with a drain on loopback too); a filter that does not parse is a
/// usage error that names the variable.
#[test]
fn udt_log_shows_the_controllers_mode_changes() {
    let server = Server::start();
    let port = server.port.to_string();
    let out = udt_env(
        &[
            "perf",
            "-c",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "1",
            "--cc",
            "model",
        ],
        &[("UDT_LOG", "udt_proto::congestion=debug")],
    );
    server.finish();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("model: mode mode=Drain"), "{err}");

    let out = udt_env(
        &["perf", "-c", "127.0.0.1", "-t", "1"],
        &[("UDT_LOG", "udt_proto=loud")],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("UDT_LOG"), "{err}");
}
