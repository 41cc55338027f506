//! `udt::classic` against libudt's own sample apps (`sendfile`, `recvfile`, compiled
//! unchanged from libudt-dev's examples by `make -C interop`): our `fetch` from their
//! server, their client from our `serve_one`, and path safety.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use udt::classic::{self, Served};
use udt::UdtListener;

use super::free_port;

/// A sample program; its path, or a panic naming the missing sources.
fn sample(name: &str) -> PathBuf {
    let path = udt_interop::peers::binaries().join(name);
    assert!(
        path.exists(),
        "{} was not built: libudt-dev's sample sources (/usr/share/doc/libudt-dev/examples) \
         are missing",
        path.display()
    );
    path
}

/// A scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("udt-classic-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A child process killed on drop.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// File contents that catch shifted or dropped blocks.
fn contents(len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    udt_interop::pattern::fill_stream(7, &mut v);
    v
}

/// Start libudt's `sendfile` serving from `dir`; returns it once it is listening.
fn start_sendfile(dir: &Path) -> (Killed, u16) {
    let port = free_port();
    let mut child = Command::new(sample("sendfile"))
        .arg(port.to_string())
        .current_dir(dir)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start sendfile");
    let out = child.stdout.take().unwrap();
    let mut lines = BufReader::new(out).lines();
    let ready = lines.next().and_then(Result::ok).unwrap_or_default();
    assert!(ready.contains("server is ready"), "sendfile said {ready:?}");
    // Keep draining its output so it never blocks on a full pipe.
    thread::spawn(move || lines.for_each(drop));
    (Killed(child), port)
}

#[test]
fn fetch_from_libudt_sendfile() {
    let dir = Scratch::new("fetch");
    let data = contents(3 << 20);
    fs::create_dir_all(dir.0.join("sub")).unwrap();
    fs::write(dir.0.join("sub/data.bin"), &data).unwrap();
    let (_server, port) = start_sendfile(&dir.0);
    let dest = dir.0.join("copy.bin");
    let n = classic::fetch(("127.0.0.1", port), "sub/data.bin", &dest).expect("fetch");
    assert_eq!(n, data.len() as u64);
    assert!(fs::read(&dest).unwrap() == data, "copy differs");
    // Missing file: the sample answers -1 (its tellg() of a failed open).
    let err = classic::fetch(("127.0.0.1", port), "nope.bin", &dir.0.join("x")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}");
}

/// Run libudt's `recvfile` against `port` asking for `name`; returns (exit ok, stdout).
fn run_recvfile(port: u16, name: &str, dest: &Path) -> (bool, String) {
    let mut child = Command::new(sample("recvfile"))
        .args(["127.0.0.1", &port.to_string(), name])
        .arg(dest)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start recvfile");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "recvfile hangs");
        thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = std::io::Read::read_to_string(&mut o, &mut out);
    }
    (status.success(), out)
}

#[test]
fn libudt_recvfile_from_our_server() {
    let dir = Scratch::new("serve");
    let root = dir.0.join("root");
    fs::create_dir_all(&root).unwrap();
    let data = contents(3 << 20);
    fs::write(root.join("data.bin"), &data).unwrap();
    fs::write(dir.0.join("secret"), b"outside the root").unwrap();
    let l = UdtListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let serve_root = root.clone();
    let server = thread::spawn(move || {
        (0..2)
            .map(|_| classic::serve_one(l.accept().unwrap().0, &serve_root).unwrap())
            .collect::<Vec<_>>()
    });
    let dest = dir.0.join("copy.bin");
    let (ok, out) = run_recvfile(port, "data.bin", &dest);
    assert!(ok, "recvfile failed: {out}");
    assert!(fs::read(&dest).unwrap() == data, "copy differs");
    let (ok, out) = run_recvfile(port, "../secret", &dir.0.join("stolen"));
    assert!(!ok && out.contains("no such file"), "recvfile said {out:?}");
    let served = server.join().unwrap();
    assert!(matches!(&served[0], Served::File { bytes, .. } if *bytes == data.len() as u64));
    assert!(
        matches!(&served[1], Served::Refused { .. }),
        "{:?}",
        served[1]
    );
}

#[test]
fn ours_to_ours_refuses_absolute_paths() {
    let dir = Scratch::new("ours");
    fs::write(dir.0.join("f"), b"hello").unwrap();
    let l = UdtListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let root = dir.0.clone();
    let server = thread::spawn(move || {
        (0..2)
            .map(|_| classic::serve_one(l.accept().unwrap().0, &root).unwrap())
            .collect::<Vec<_>>()
    });
    assert_eq!(classic::fetch(addr, "f", &dir.0.join("g")).unwrap(), 5);
    assert_eq!(fs::read(dir.0.join("g")).unwrap(), b"hello");
    let err = classic::fetch(addr, "/etc/passwd", &dir.0.join("h")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    let served = server.join().unwrap();
    assert!(matches!(&served[1], Served::Refused { .. }));
}
