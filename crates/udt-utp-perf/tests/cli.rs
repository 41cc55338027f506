//! `utp-perf` end to end on loopback: a transfer whose report adds up, and bad command lines
//! that exit 2 with one line. (Also makes `cargo test` build the binary the lab runs.)

use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, UdpSocket};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_utp-perf");

/// A port free for both TCP and UDP on 127.0.0.1 (free when asked; the test binds it at once).
fn free_port() -> u16 {
    loop {
        let tcp = TcpListener::bind("127.0.0.1:0").expect("a TCP port");
        let port = tcp.local_addr().expect("its address").port();
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// A one-off server on a fresh port. The port was free when asked, but another test's
/// connection may take it before the server binds it, so a server that finds its port in use
/// is started again on another.
fn start_server() -> (Child, String) {
    for _ in 0..5 {
        let port = free_port().to_string();
        let mut server = Command::new(BIN)
            .args(["-s", "-1", "-B", "127.0.0.1", "-p", &port])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let mut ready = String::new();
        let stdout = server.stdout.take().expect("piped");
        BufReader::new(stdout)
            .read_line(&mut ready)
            .expect("a line");
        if ready.starts_with("utp-perf server on 127.0.0.1:") {
            // Passed on, as an inherited stderr would be (and a full pipe never blocks it).
            let mut err = server.stderr.take().expect("piped");
            std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::stderr()));
            return (server, port);
        }
        server.wait().expect("the server ends");
        let mut err = String::new();
        server
            .stderr
            .take()
            .expect("piped")
            .read_to_string(&mut err)
            .expect("its errors");
        assert!(err.contains("Address already in use"), "{ready}{err}");
    }
    panic!("five fresh ports were all taken before the server bound them");
}

#[test]
fn a_loopback_transfer_reports_every_byte() {
    let (mut server, port) = start_server();
    let out = Command::new(BIN)
        .args([
            "-c",
            "127.0.0.1",
            "-p",
            &port,
            "-n",
            "3MB",
            "--rcvbuf",
            "256K",
        ])
        .arg("--json")
        .output()
        .expect("the client runs");
    let status = server.wait().expect("the server ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(report["bytes"], 3_000_000);
    assert_eq!(report["sender_bytes"], 3_000_000);
    assert_eq!(report["receiver_buffers"]["recv_buffer_bytes"], 256 << 10);
    let intervals = report["intervals"].as_array().expect("intervals");
    let sum: u64 = intervals.iter().filter_map(|i| i["bytes"].as_u64()).sum();
    assert_eq!(sum, 3_000_000);
    assert!(report["goodput_bps"].as_f64().is_some_and(|g| g > 0.0));
}

#[test]
fn bad_lines_exit_2_and_a_missing_server_exits_1() {
    for args in [
        &[][..],
        &["-c", "127.0.0.1", "-t", "0"],
        &["-c", "127.0.0.1", "--sndbuf", "1"],
        &["--nonsense"],
    ] {
        let out = Command::new(BIN).args(args).output().expect("runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
    }
    let port = free_port().to_string();
    let out = Command::new(BIN)
        .args(["-c", "127.0.0.1", "-p", &port, "-t", "1"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("utp-perf: connecting to 127.0.0.1:"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
