//! `udt serve` as a daemon with keys, end to end: `udt keygen`, authorized keys with their
//! access, the client pinning the server's key and refusing a changed one, and the server
//! refusing clients without a key (or with an unknown one) when it listens publicly.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

mod common;

use common::{fails_with, ok};

const UDT: &str = env!("CARGO_BIN_EXE_udt");

/// A daemon with keys, listening on every address (so clients without keys are refused).
struct Daemon {
    child: Child,
    port: u16,
}

impl Daemon {
    fn start(root: &Path, authorized: &Path, key: &Path) -> Self {
        let mut child = Command::new(UDT)
            .args(["serve", "-l", "0.0.0.0", "-p", "0", "--root"])
            .arg(root)
            .arg("--authorized-keys")
            .arg(authorized)
            .arg("--key")
            .arg(key)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start udt serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = common::listening_port(&line);
        assert!(line.contains("only 3 client keys"), "{line}");
        Self { child, port }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scratch world: keys for the server and three clients, a served root with `incoming/`.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let w = Self { dir };
        for name in ["server", "writer", "reader", "stranger", "server2"] {
            let out = Command::new(UDT)
                .args(["keygen", "-C", name, "-f"])
                .arg(w.path(name))
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        fs::create_dir_all(w.path("root/incoming")).unwrap();
        fs::write(w.path("root/shared.txt"), b"for everyone").unwrap();
        fs::write(w.path("local.bin"), vec![7u8; 3 << 20]).unwrap();
        let line = |who: &str, access: &str| {
            let public = fs::read_to_string(w.path(&format!("{who}.pub"))).unwrap();
            let mut words = public.split_whitespace();
            format!(
                "{} {} {access}\n",
                words.next().unwrap(),
                words.next().unwrap()
            )
        };
        let authorized = format!(
            "# test clients\n{}{}{}",
            line("writer", "read-write:incoming"),
            line("reader", "read-only"),
            line("server2", "read-only")
        );
        fs::write(w.path("authorized_keys"), authorized).unwrap();
        w
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `udt cp` as client `who` (a key name, or None for `--insecure`), pinning in this
    /// world's known_servers.
    fn cp(&self, who: Option<&str>, args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
        let mut cmd = Command::new(UDT);
        cmd.arg("cp")
            .arg("--known-servers")
            .arg(self.path("known_servers"));
        match who {
            Some(who) => cmd.arg("--key").arg(self.path(who)),
            None => cmd.arg("--insecure"),
        };
        for a in args {
            cmd.arg(a.as_ref());
        }
        cmd.env("XDG_CONFIG_HOME", self.path("no-config"));
        cmd.output().unwrap()
    }
}

fn url(port: u16, path: &str) -> String {
    format!("udt://127.0.0.1:{port}/{path}")
}

#[test]
fn keyed_clients_get_their_access_and_others_nothing() {
    let w = World::new();
    let d = Daemon::start(
        &w.path("root"),
        &w.path("authorized_keys"),
        &w.path("server"),
    );
    // The writer uploads, into its sub-directory (its root there), pinning the key once.
    let out = w.cp(Some("writer"), &[&w.path("local.bin"), &url(d.port, "")]);
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("first contact"));
    assert_eq!(
        fs::read(w.path("root/incoming/local.bin")).unwrap(),
        fs::read(w.path("local.bin")).unwrap()
    );
    let out = w.cp(
        Some("writer"),
        &[&"--force", &w.path("local.bin"), &url(d.port, "again.bin")],
    );
    ok(&out);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("first contact"));
    // The reader downloads, and may not upload.
    let dest = w.path("down");
    fs::create_dir_all(&dest).unwrap();
    ok(&w.cp(Some("reader"), &[&url(d.port, "shared.txt"), &dest]));
    assert_eq!(fs::read(dest.join("shared.txt")).unwrap(), b"for everyone");
    let out = w.cp(Some("reader"), &[&w.path("local.bin"), &url(d.port, "")]);
    fails_with(&out, "read-only");
    assert!(!w.path("root/local.bin").exists());
    // A key the server does not list, and a client without a key, are turned away.
    let out = w.cp(Some("stranger"), &[&url(d.port, "shared.txt"), &dest]);
    fails_with(&out, "refused our key");
    let out = w.cp(None, &[&url(d.port, "shared.txt"), &w.path("nokey")]);
    fails_with(&out, "by key only");
    assert!(!w.path("nokey").exists());
}

/// Another server answers at an address whose key was pinned (a replaced machine, or someone
/// in the middle): the client refuses before sending anything, and says where the old key is
/// and how to check the new one. (The pin is written directly: the same port twice is not
/// something a test can count on.)
#[test]
fn a_changed_server_key_is_refused_with_directions() {
    let w = World::new();
    let dest = w.path("down");
    fs::create_dir_all(&dest).unwrap();
    let d = Daemon::start(
        &w.path("root"),
        &w.path("authorized_keys"),
        &w.path("server2"),
    );
    let a = fs::read_to_string(w.path("server.pub")).unwrap();
    let mut words = a.split_whitespace();
    let pinned = format!(
        "127.0.0.1:{} {} {}\n",
        d.port,
        words.next().unwrap(),
        words.next().unwrap()
    );
    fs::write(w.path("known_servers"), pinned).unwrap();
    let out = w.cp(Some("reader"), &[&url(d.port, "shared.txt"), &dest]);
    fails_with(&out, "has changed");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("known_servers line 1") && err.contains("udt keygen --show"),
        "{err}"
    );
    assert!(!dest.join("shared.txt").exists());
}
