//! `udt cp [user@]host:path` end to end: a real OpenSSH server on a loopback port with host
//! and user keys made here, `udt cp --ssh 'ssh -F cfg'` logging in through a host alias that
//! only the client config knows, and the built binary as the remote udt. The one-shot
//! server's defences are tested on it directly (`udt __ssh-server`), with strangers that
//! lack the key.
//!
//! Needs Debian's openssh-server (`scripts/setup.sh` installs it) and root, as CI has.

mod common;

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use udt::{SessionKey, SocketOptions, UdtStream};
use udt_cli::ssh::ready::Ready;
use udt_cli::transfer::paths::RelPath;
use udt_cli::transfer::receiver::ReceiveOptions;
use udt_cli::transfer::session::download;
use udt_cli::transfer::Quiet;

const UDT: &str = env!("CARGO_BIN_EXE_udt");
const SSHD: &str = "/usr/sbin/sshd";
/// The host alias of the client config: no DNS knows it.
const HOST: &str = "udt-test";

/// A private sshd on a loopback port, and the client config to reach it; killed on drop.
struct Sshd {
    dir: tempfile::TempDir,
    child: Child,
    port: u16,
}

impl Sshd {
    fn start() -> Self {
        assert!(
            Path::new(SSHD).exists(),
            "{SSHD} is missing: run scripts/setup.sh (installs openssh-server)"
        );
        fs::create_dir_all("/run/sshd").expect("sshd's privilege separation directory");
        let dir = tempfile::tempdir().unwrap();
        for key in ["host_key", "user_key"] {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(dir.path().join(key))
                .status()
                .expect("ssh-keygen (openssh-client)");
            assert!(status.success());
        }
        let d = dir.path().display();
        fs::copy(
            dir.path().join("user_key.pub"),
            dir.path().join("authorized_keys"),
        )
        .unwrap();
        let host_pub = fs::read_to_string(dir.path().join("host_key.pub")).unwrap();
        fs::write(dir.path().join("known_hosts"), format!("{HOST} {host_pub}")).unwrap();
        fs::write(
            dir.path().join("sshd_config"),
            format!(
                "HostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n\
                 PermitRootLogin yes\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nListenAddress 127.0.0.1\nPidFile none\n"
            ),
        )
        .unwrap();
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port(); // free again once dropped here; sshd may lose a race: retry
            if let Some(child) = Self::spawn(dir.path(), port) {
                fs::write(
                    dir.path().join("ssh_config"),
                    format!(
                        "Host {HOST}\n  HostName 127.0.0.1\n  Port {port}\n  User root\n  \
                         IdentityFile {d}/user_key\n  IdentitiesOnly yes\n  \
                         HostKeyAlias {HOST}\n  UserKnownHostsFile {d}/known_hosts\n  \
                         StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n"
                    ),
                )
                .unwrap();
                return Self { dir, child, port };
            }
        }
        panic!("sshd did not start (see its messages above)");
    }

    /// sshd on `port`, once it says it listens.
    fn spawn(dir: &Path, port: u16) -> Option<Child> {
        let mut child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            .args(["-p", &port.to_string()])
            .stderr(Stdio::piped())
            .spawn()
            .expect("run sshd");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        for line in lines.by_ref() {
            let line = line.unwrap_or_default();
            if line.contains("Server listening on") {
                thread::spawn(move || lines.for_each(drop));
                return Some(child);
            }
            eprintln!("sshd: {line}");
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    /// `udt cp --ssh 'ssh -F cfg' --remote-udt UDT ARGS...`.
    fn cp(&self, args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
        self.cp_command(args).output().expect("run udt cp")
    }

    /// Wait until no SSH session is left (each is a child of the listening sshd), that is
    /// until every remote udt has exited.
    fn wait_sessions_end(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while children_of(self.child.id()) > 0 {
            assert!(
                Instant::now() < deadline,
                "an SSH session (remote udt) lingers"
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn cp_command(&self, args: &[&dyn AsRef<std::ffi::OsStr>]) -> Command {
        let mut cmd = Command::new(UDT);
        let ssh = format!("ssh -F {}", self.dir.path().join("ssh_config").display());
        cmd.args(["cp", "--ssh", &ssh, "--remote-udt", UDT]);
        for a in args {
            cmd.arg(a.as_ref());
        }
        cmd
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Processes whose parent is `pid` (from /proc/PID/stat: the field after the command name).
fn children_of(pid: u32) -> usize {
    let parent = |stat: &str| {
        let after = &stat[stat.rfind(')')? + 1..];
        after.split_whitespace().nth(1)?.parse::<u32>().ok()
    };
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| parent(stat) == Some(pid))
        .count()
}

/// `host:path` for a local path (the remote host is this one).
fn remote(path: &Path) -> String {
    format!("{HOST}:{}", path.display())
}

/// [`common::ok`], and no key in what it printed.
fn ok(out: &Output) {
    common::ok(out);
    no_key_in(out);
}

/// Nothing that looks like a key (64 hex digits) was printed.
fn no_key_in(out: &Output) {
    for text in [&out.stdout, &out.stderr] {
        let text = String::from_utf8_lossy(text);
        let mut run = 0;
        for c in text.chars() {
            run = if c.is_ascii_hexdigit() { run + 1 } else { 0 };
            assert!(run < 64, "a key-like string in the output: {text}");
        }
    }
}

/// Deterministic pseudo-random bytes.
fn contents(seed: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    blake3::Hasher::new()
        .update(&seed.to_le_bytes())
        .finalize_xof()
        .fill(&mut v);
    v
}

/// A small tree: `tree/a`, `tree/sub/b`, `tree/sub/empty`.
fn make_tree(dir: &Path) {
    fs::create_dir_all(dir.join("sub")).unwrap();
    fs::write(dir.join("a"), contents(1, 300_000)).unwrap();
    fs::write(dir.join("sub/b"), contents(2, 1 << 20)).unwrap();
    fs::write(dir.join("sub/empty"), b"").unwrap();
}

fn same_tree(a: &Path, b: &Path) {
    for name in ["a", "sub/b", "sub/empty"] {
        assert!(
            fs::read(a.join(name)).unwrap() == fs::read(b.join(name)).unwrap(),
            "{name} differs"
        );
    }
}

#[test]
fn files_and_directories_go_both_ways_over_ssh() {
    let sshd = Sshd::start();
    let tmp = tempfile::tempdir().unwrap();
    let (local, far) = (tmp.path().join("local"), tmp.path().join("far"));
    fs::create_dir_all(&local).unwrap();
    fs::create_dir_all(&far).unwrap();
    let data = contents(7, 3 << 20);
    fs::write(local.join("f.bin"), &data).unwrap();
    make_tree(&local.join("tree"));

    let out = sshd.cp(&[&"--json", &local.join("f.bin"), &remote(&far)]);
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"event\":\"summary\""));
    assert!(fs::read(far.join("f.bin")).unwrap() == data);
    ok(&sshd.cp(&[&"-r", &local.join("tree"), &remote(&far)]));
    same_tree(&local.join("tree"), &far.join("tree"));

    let back = tmp.path().join("back");
    fs::create_dir_all(&back).unwrap();
    ok(&sshd.cp(&[&remote(&far.join("f.bin")), &back.join("g.bin")]));
    assert!(fs::read(back.join("g.bin")).unwrap() == data);
    ok(&sshd.cp(&[&"-r", &remote(&far.join("tree")), &back]));
    same_tree(&local.join("tree"), &back.join("tree"));

    // A directory without -r is refused by the remote side, in one line.
    let out = sshd.cp(&[&remote(&far.join("tree")), &back.join("x")]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    no_key_in(&out);
}

/// Kill the uploading client mid-transfer, then `--resume`: the remote side kept the
/// partial file, and only the rest crosses the network.
#[test]
fn resume_over_ssh_after_killing_the_client() {
    let sshd = Sshd::start();
    let tmp = common::scratch_dir();
    let far = tmp.path().join("far");
    fs::create_dir_all(&far).unwrap();
    let size = 128usize << 20;
    let data = contents(8, size);
    let src = tmp.path().join("up.bin");
    fs::write(&src, &data).unwrap();
    let mut client = sshd
        .cp_command(&[&"--resume", &"--quiet", &src, &remote(&far)])
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while part_bytes(&far) < (size / 8) as u64 {
        assert!(Instant::now() < deadline, "the upload did not progress");
        assert!(client.try_wait().unwrap().is_none(), "ended too soon");
        thread::sleep(Duration::from_millis(5));
    }
    let _ = client.kill();
    let _ = client.wait();
    // The remote side ignores the hang-up while a transfer runs, notices the vanished client
    // itself (ICMP port unreachable, within seconds), keeps the partial file and exits.
    sshd.wait_sessions_end(Duration::from_secs(30));
    let held = part_bytes(&far);
    assert!(held > 0 && held < size as u64, "partial file holds {held}");

    let out = sshd.cp(&[&"--resume", &"--json", &src, &remote(&far)]);
    ok(&out);
    let summary: serde_json::Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["event"] == "summary")
        .expect("a summary event");
    let resumed = summary["resumed_bytes"].as_u64().unwrap();
    assert!(resumed >= (size / 8) as u64, "{summary}");
    assert_eq!(
        resumed + summary["transferred_bytes"].as_u64().unwrap(),
        size as u64
    );
    assert!(fs::read(far.join("up.bin")).unwrap() == data);
    assert_eq!(part_bytes(&far), 0);
}

/// Bytes in `dir`'s partial files.
fn part_bytes(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".udt-part"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// scp's own flags reach ssh: `-P` (here ssh's port), `-i`, `-o`, `-F`, for an address
/// that no `Host` block of the config matches.
#[test]
fn scp_style_options_reach_ssh() {
    let sshd = Sshd::start();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    fs::write(&file, b"through -P -i -o -F").unwrap();
    let d = sshd.dir.path();
    let known_hosts = format!("UserKnownHostsFile={}", d.join("known_hosts").display());
    let out = Command::new(UDT)
        .arg("cp")
        .args(["-P", &sshd.port.to_string(), "-i"])
        .arg(d.join("user_key"))
        .args(["-o", &format!("HostKeyAlias={HOST}"), "-o", &known_hosts])
        .args(["-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-F"])
        .arg(d.join("ssh_config"))
        .args(["--remote-udt", UDT])
        .arg(&file)
        .arg(format!("root@127.0.0.1:{}/g", tmp.path().display()))
        .output()
        .unwrap();
    ok(&out);
    assert_eq!(
        fs::read(tmp.path().join("g")).unwrap(),
        b"through -P -i -o -F"
    );
}

#[test]
fn a_missing_remote_udt_is_one_clear_line() {
    let sshd = Sshd::start();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    fs::write(&file, b"x").unwrap();
    let out = Command::new(UDT)
        .args(["cp", "--ssh"])
        .arg(format!(
            "ssh -F {}",
            sshd.dir.path().join("ssh_config").display()
        ))
        .args(["--remote-udt", "/nonexistent/udt"])
        .arg(&file)
        .arg(remote(tmp.path()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.trim_end(),
        "udt: udt-test: /nonexistent/udt: not found there: install udt on that host (on the \
         PATH of non-interactive ssh sessions) or give its path with --remote-udt PATH"
    );
}

/// `udt __ssh-server` run directly, as sshd would (the same environment variable), with its
/// SSH channel held by the test.
struct OneShot {
    child: Child,
    stdin: Option<ChildStdin>,
    ready: Ready,
}

impl OneShot {
    fn start(args: &[&str], cwd: &Path) -> Self {
        let mut child = Command::new(UDT)
            .arg("__ssh-server")
            .args(args)
            .current_dir(cwd)
            .env("SSH_CONNECTION", "127.0.0.1 50000 127.0.0.1 22")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ready = Ready::parse(&line).expect("a ready line");
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            ready,
        }
    }

    /// Wait for the exit (at most `limit`): success and stderr.
    fn exit(mut self, limit: Duration) -> (bool, String) {
        let deadline = Instant::now() + limit;
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "the one-shot server did not exit"
            );
            thread::sleep(Duration::from_millis(20));
        }
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        (self.child.wait().unwrap().success(), err)
    }
}

impl Drop for OneShot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn options(key: Option<SessionKey>) -> SocketOptions {
    let mut options = SocketOptions::default();
    options.set_session_key(key);
    options
}

/// Two strangers connect first, one without a key and one with a wrong key, and stay: the
/// client with the key still gets the one slot, the strangers get no byte, and the server
/// exits after serving it.
#[test]
fn strangers_do_not_take_the_one_shot_slot() {
    let tmp = tempfile::tempdir().unwrap();
    let data = contents(9, 2 << 20);
    fs::write(tmp.path().join("secret.bin"), &data).unwrap();
    let first = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let range = format!("{first}-{}", first.saturating_add(20));
    let server = OneShot::start(&["--port-range", &range], tmp.path());
    let port = server.ready.port;
    assert!((first..=first.saturating_add(20)).contains(&port), "{port}");
    assert_eq!(server.ready.addr, Some("127.0.0.1".parse().unwrap()));
    assert_eq!(
        server.ready.cwd,
        tmp.path()
            .canonicalize()
            .unwrap()
            .as_os_str()
            .as_encoded_bytes()
    );

    let wrong = SessionKey::from_bytes([7; 32]);
    let strangers: Vec<UdtStream> = [None, Some(wrong)]
        .into_iter()
        .map(|key| UdtStream::connect_with(("127.0.0.1", port), options(key)).unwrap())
        .collect();
    let stolen: Vec<_> = strangers
        .into_iter()
        .map(|s| {
            thread::spawn(move || {
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                let mut buf = [0u8; 64];
                (&s).read(&mut buf)
            })
        })
        .collect();
    thread::sleep(Duration::from_millis(200)); // the strangers are candidates by now

    let client =
        UdtStream::connect_with(("127.0.0.1", port), options(Some(server.ready.key.clone())))
            .unwrap();
    let dest = tempfile::tempdir().unwrap();
    let path = udt_cli::ssh::paths::under_root(b"secret.bin", &server.ready.cwd)
        .unwrap()
        .unwrap();
    let paths: Vec<RelPath> = vec![path];
    let summary = download(
        &client,
        paths,
        false,
        dest.path(),
        ReceiveOptions::default(),
        &Quiet,
    )
    .expect("the client with the key is served");
    assert_eq!(summary.bytes, data.len() as u64);
    assert!(fs::read(dest.path().join("secret.bin")).unwrap() == data);
    client.close().unwrap();
    for stranger in stolen {
        // An error is AuthenticationFailed, or the close when the slot was taken.
        if let Ok(n) = stranger.join().unwrap() {
            assert_eq!(n, 0, "a stranger read {n} bytes");
        }
    }
    let (success, err) = server.exit(Duration::from_secs(15));
    assert!(success, "{err}");
}

/// Nobody with the key: the server gives up after its idle time; and it exits as soon as
/// its SSH channel closes.
#[test]
fn the_one_shot_server_leaves_when_idle_or_hung_up() {
    let tmp = tempfile::tempdir().unwrap();
    let idle = OneShot::start(&["--idle-timeout", "1"], tmp.path());
    let (success, err) = idle.exit(Duration::from_secs(10));
    assert!(!success);
    assert!(
        err.contains("no client proved the session key within 1 s"),
        "{err}"
    );

    let mut hung_up = OneShot::start(&[], tmp.path());
    hung_up.stdin.take().unwrap().flush().unwrap(); // dropped: closed
    let (success, _) = hung_up.exit(Duration::from_secs(5));
    assert!(!success);
}
