//! The drop-in `libudt.so.0` against Debian's libudt 4.11, in three ways:
//! - `abi_check.cpp` (every call of `udt.h`, 4.11's results) built against Debian's libudt
//!   and against ours: both builds pass, and so does the Debian build run on ours;
//! - the interop peers (`interop/udt_server`, `udt_client`), built against Debian's libudt,
//!   run unchanged on ours through `LD_LIBRARY_PATH`, talking to a peer on Debian's libudt;
//! - the same peers on ours talking to the `udt` crate's native sockets.
//!
//! Our library is the cdylib cargo built for this test (`<target>/<profile>/libudt_libudt.so`,
//! or in `deps/` when only `cargo test` ran),
//! copied as `libudt.so.0` (and a `libudt.so` link for `-ludt`) into `<profile>/libudt/`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use udt_interop::pattern;
use udt_interop::peers::{Json, PeerProcess};

const LIMIT: Duration = Duration::from_secs(30);

/// `<target>/<profile>`, from this test binary's path (`<profile>/deps/<binary>`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.ancestors()
        .nth(2)
        .expect("test binary under <profile>/deps")
        .to_path_buf()
}

/// The directory holding our `libudt.so.0`, set up once per test process.
fn our_lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let profile = profile_dir();
        // `cargo build` puts the cdylib in <profile>/; `cargo test` alone leaves it in deps/.
        let built = [
            profile.join("libudt_libudt.so"),
            profile.join("deps/libudt_libudt.so"),
        ]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!(
                "cargo did not build libudt_libudt.so in {}",
                profile.display()
            )
        });
        let dir = profile.join("libudt");
        std::fs::create_dir_all(&dir).expect("create libudt dir");
        let so = dir.join("libudt.so.0");
        // Copy to a temporary name and rename, so a concurrent reader never sees half a file.
        let tmp = dir.join(format!(".libudt.so.0.{}", std::process::id()));
        std::fs::copy(&built, &tmp).expect("copy the cdylib");
        std::fs::rename(&tmp, &so).expect("install libudt.so.0");
        let link = dir.join("libudt.so");
        if std::fs::symlink_metadata(&link).is_err() {
            let _ = std::os::unix::fs::symlink("libudt.so.0", &link);
        }
        dir
    })
}

/// Build `abi_check.cpp` against Debian's libudt (`ours` false) or ours; returns the binary.
fn abi_check(ours: bool) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/abi_check.cpp");
    let out_dir = profile_dir().join("libudt-tests");
    std::fs::create_dir_all(&out_dir).expect("create output dir");
    let out = out_dir.join(if ours {
        "abi_check_udt"
    } else {
        "abi_check_libudt"
    });
    let mut cmd = Command::new("g++");
    cmd.args(["-O1", "-std=c++17", "-Wall", "-Wextra", "-o"])
        .arg(&out)
        .arg(&src);
    if ours {
        cmd.arg(format!("-L{}", our_lib_dir().display()));
    }
    cmd.args(["-ludt", "-lpthread", "-ldl"]);
    let result = cmd
        .output()
        .expect("run g++ (scripts/setup.sh installs it)");
    assert!(
        result.status.success(),
        "building {} failed:\n{}",
        out.display(),
        String::from_utf8_lossy(&result.stderr)
    );
    out
}

/// Run an abi_check binary, on our library if `on_ours`; returns its JSON summary.
fn run_abi_check(bin: &Path, on_ours: bool) -> Json {
    let mut cmd = Command::new(bin);
    if on_ours {
        cmd.env("LD_LIBRARY_PATH", our_lib_dir());
    } else {
        cmd.env_remove("LD_LIBRARY_PATH");
    }
    let out = cmd.output().expect("run abi_check");
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        out.status.success(),
        "{} (on ours: {on_ours}) failed: {stdout}\n{}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Json(stdout)
}

#[test]
fn every_call_of_udt_h_behaves_as_in_4_11_on_both_libraries() {
    let debian = abi_check(false);
    let ours = abi_check(true);
    let reference = run_abi_check(&debian, false);
    assert_eq!(reference.str("impl"), Some("libudt"), "{}", reference.0);
    // The binary built against Debian's libudt, run unchanged on ours.
    let swapped = run_abi_check(&debian, true);
    assert_eq!(
        swapped.str("impl"),
        Some("udt"),
        "not loaded: {}",
        swapped.0
    );
    // The binary built against ours.
    let native = run_abi_check(&ours, true);
    assert_eq!(native.str("impl"), Some("udt"), "{}", native.0);
    for run in [&swapped, &native] {
        assert_eq!(run.int("failed"), Some(0), "{}", run.0);
        assert_eq!(run.int("checks"), reference.int("checks"), "{}", run.0);
    }
}

/// `LD_LIBRARY_PATH` for a peer on ours, nothing for one on Debian's libudt.
fn lib_env(ours: bool) -> Vec<(&'static str, &'static Path)> {
    if ours {
        vec![("LD_LIBRARY_PATH", our_lib_dir())]
    } else {
        Vec::new()
    }
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Start `udt_server` (on ours or on Debian's libudt); returns it and its port.
fn server(ours: bool, extra: &[&str]) -> (PeerProcess, u16) {
    let mut a = args(&[
        "--port",
        "0",
        "--bind",
        "127.0.0.1",
        "--timeout-ms",
        "20000",
    ]);
    a.extend(args(extra));
    let mut p = PeerProcess::spawn_with_env("udt_server", &a, &lib_env(ours));
    let port = p
        .expect_event("listening", LIMIT)
        .int("port")
        .expect("port");
    (p, u16::try_from(port).expect("port fits u16"))
}

fn client(ours: bool, port: u16, extra: &[&str]) -> PeerProcess {
    let mut a = args(&["--connect", &format!("127.0.0.1:{port}")]);
    a.extend(args(extra));
    PeerProcess::spawn_with_env("udt_client", &a, &lib_env(ours))
}

fn assert_ok(r: &Json) {
    assert_eq!(r.bool("ok"), Some(true), "{}", r.0);
}

#[test]
fn interop_peers_on_ours_talk_to_peers_on_debian_libudt() {
    const BYTES: &str = "8000000";
    for (server_ours, client_ours) in [(true, false), (false, true)] {
        let (mut srv, port) = server(server_ours, &["--recv", "--bytes", BYTES]);
        let mut cli = client(client_ours, port, &["--send", "--bytes", BYTES]);
        let (c, s) = (cli.result(LIMIT), srv.result(LIMIT));
        assert_ok(&c);
        assert_ok(&s);
        assert_eq!(s.int("bytes"), Some(8_000_000), "{}", s.0);
        assert_eq!(c.str("sha256"), s.str("sha256"), "{} / {}", c.0, s.0);
        assert_eq!(s.bool("peer_closed"), Some(true), "{}", s.0);
    }
    // Messages, the other way round: the server sends.
    let (mut srv, port) = server(false, &["--mode", "dgram", "--send", "--msgs", "500"]);
    let mut cli = client(true, port, &["--mode", "dgram", "--recv", "--msgs", "500"]);
    let (c, s) = (cli.result(LIMIT), srv.result(LIMIT));
    assert_ok(&c);
    assert_ok(&s);
    assert_eq!(c.int("msgs"), Some(500), "{}", c.0);
    assert_eq!(c.int("missing"), Some(0), "{}", c.0);
}

#[test]
fn interop_peers_on_ours_talk_to_native_udt_sockets() {
    const TOTAL: u64 = 4_000_000;
    // A peer on ours receives from a native stream.
    let (mut srv, port) = server(true, &["--recv", "--bytes", &TOTAL.to_string()]);
    let mut stream = udt::UdtStream::connect(("127.0.0.1", port)).expect("connect");
    let mut buf = vec![0u8; 64 * 1024];
    let mut sent = 0u64;
    while sent < TOTAL {
        let n = buf
            .len()
            .min(usize::try_from(TOTAL - sent).unwrap_or(usize::MAX));
        pattern::fill_stream(sent, &mut buf[..n]);
        stream.write_all(&buf[..n]).expect("write");
        sent += n as u64;
    }
    stream.close().expect("close");
    let s = srv.result(LIMIT);
    assert_ok(&s);
    assert_eq!(s.int("bytes"), Some(TOTAL as i64), "{}", s.0);

    // A native listener receives from a peer on ours, checking every byte.
    let listener = udt::UdtListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("local addr").port();
    let mut cli = client(true, port, &["--send", "--bytes", &TOTAL.to_string()]);
    let (mut conn, _) = listener.accept().expect("accept");
    conn.set_read_timeout(Some(LIMIT)).expect("timeout");
    let mut got = 0u64;
    loop {
        let n = conn.read(&mut buf).expect("read");
        if n == 0 {
            break;
        }
        assert_eq!(pattern::check_stream(got, &buf[..n]), None, "bad byte");
        got += n as u64;
    }
    assert_eq!(got, TOTAL);
    assert_ok(&cli.result(LIMIT));
}
