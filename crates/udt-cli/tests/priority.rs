//! `udt cp --priority`, `--cc ledbat` and the `--maxbw` caps of `udt cp` and `udt serve`,
//! end to end on loopback: background copies arrive intact, bad values are one-line usage
//! errors, and a capped copy is never faster than its cap allows.
//!
//! The cap is checked from below only (a copy of `size` bytes at `cap` bytes per second takes
//! at least 0.8 × size / cap), which no machine can fail by being fast; how close to the cap a
//! copy gets is a benchmark's business.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::ok;

const UDT: &str = env!("CARGO_BIN_EXE_udt");

/// A `udt serve` on a loopback port, killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(root: &Path, args: &[&str]) -> Self {
        let mut child = Command::new(UDT)
            .args([
                "serve",
                "-p",
                "0",
                "-l",
                "127.0.0.1",
                "--allow-overwrite",
                "--root",
            ])
            .arg(root)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start udt serve");
        let mut line = String::new();
        let out = child.stdout.take().expect("stdout");
        BufReader::new(out)
            .read_line(&mut line)
            .expect("first line");
        let port = common::listening_port(&line);
        Self { child, port }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run `udt ARGS...` without the user's keys (these sessions are keyless on purpose).
fn udt(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let mut cmd = Command::new(UDT);
    for a in args {
        cmd.arg(a.as_ref());
    }
    cmd.env(
        "XDG_CONFIG_HOME",
        std::env::temp_dir().join("udt-priority-tests-no-config"),
    );
    cmd.output().expect("run udt")
}

fn remote(server: &Server, path: &str) -> String {
    format!("udt://127.0.0.1:{}/{path}", server.port)
}

/// Deterministic bytes that do not compress into a pattern.
fn contents(len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for b in &mut v {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    v
}

struct Dirs {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    local: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (root, local) = (tmp.path().join("root"), tmp.path().join("local"));
    fs::create_dir(&root).expect("root");
    fs::create_dir(&local).expect("local");
    Dirs {
        _tmp: tmp,
        root,
        local,
    }
}

/// A usage error: exit code 2 and exactly one line on stderr that names `flag`.
fn usage_error(out: &Output, flag: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
    assert!(err.contains(flag), "{flag} in {err:?}");
}

/// Uploads with `--priority background`, `--priority normal` and `--cc ledbat`, and a
/// download from a server sending with `--cc ledbat`, all arrive intact.
#[test]
fn background_copies_arrive_intact() {
    let d = dirs();
    let server = Server::start(&d.root, &["--cc", "ledbat"]);
    let data = contents(2 << 20);
    let file = d.local.join("f");
    fs::write(&file, &data).expect("write");
    let target = remote(&server, "");
    for how in [
        ["--priority", "background"],
        ["--priority", "normal"],
        ["--cc", "ledbat"],
    ] {
        ok(&udt(&[&"cp", &how[0], &how[1], &"--force", &file, &target]));
        let got = fs::read(d.root.join("f")).expect("uploaded");
        assert!(got == data, "upload with {how:?}");
    }
    let back = d.local.join("back");
    ok(&udt(&[&"cp", &remote(&server, "f"), &back]));
    assert!(fs::read(back).expect("downloaded") == data);
}

/// Bad values are one line naming the flag, before anything connects (no server runs
/// here); `--priority` and `--cc` together are refused too.
#[test]
fn bad_priority_and_rates_are_one_line_usage_errors() {
    let cases: [(&[&str], &str); 5] = [
        (&["--priority", "low"], "--priority"),
        (&["--priority", "high"], "--priority"),
        (&["--maxbw", "fast"], "--maxbw"),
        (&["--maxbw", "0"], "--maxbw"),
        (&["--maxbw", "100MBPS"], "--maxbw"),
    ];
    for (flags, flag) in cases {
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"cp"];
        args.extend(flags.iter().map(|f| f as &dyn AsRef<std::ffi::OsStr>));
        args.extend([&"a" as &dyn AsRef<std::ffi::OsStr>, &"udt://127.0.0.1:1/b"]);
        usage_error(&udt(&args), flag);
    }
    let d = dirs();
    let serve = udt(&[
        &"serve", &"-p", &"0", &"--root", &d.root, &"--maxbw", &"fast",
    ]);
    usage_error(&serve, "--maxbw");
    let both = udt(&[
        &"cp",
        &"--priority",
        &"background",
        &"--cc",
        &"native",
        &"a",
        &"udt://127.0.0.1:1/b",
    ]);
    assert_eq!(both.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&both.stderr).contains("--priority"));
}

/// Runs `copy`, which must succeed, and returns how long it took.
fn timed(copy: impl FnOnce() -> Output) -> Duration {
    let start = Instant::now();
    ok(&copy());
    start.elapsed()
}

/// A capped upload (`udt cp --maxbw`) and a capped download (`udt serve --maxbw`) each take
/// at least 0.8 × size / cap, and arrive intact. 3 MiB at 8 Mbit/s: about 3 s each.
#[test]
fn maxbw_caps_uploads_and_served_downloads() {
    const CAP_BITS: u64 = 8_000_000;
    let d = dirs();
    let server = Server::start(&d.root, &["--maxbw", "8M"]);
    let data = contents(3 << 20);
    let file = d.local.join("f");
    fs::write(&file, &data).expect("write");
    let least = Duration::from_secs_f64(0.8 * (data.len() as f64 * 8.0) / CAP_BITS as f64);

    let up = timed(|| udt(&[&"cp", &"--maxbw", &"8M", &file, &remote(&server, "")]));
    assert!(fs::read(d.root.join("f")).expect("uploaded") == data);
    assert!(up >= least, "upload at 8 Mbit/s took {up:?} < {least:?}");

    let back = d.local.join("back");
    let down = timed(|| udt(&[&"cp", &remote(&server, "f"), &back]));
    assert!(fs::read(&back).expect("downloaded") == data);
    assert!(
        down >= least,
        "download at 8 Mbit/s took {down:?} < {least:?}"
    );
}
