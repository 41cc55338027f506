//! `udt serve` and `udt cp` end to end: the real binary, a server on a loopback port, temp
//! directories. Sizes are chosen for the debug test build (see each test).

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{symlink, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use udt_cli::transfer::protocol::{Frame, FrameReader, MAGIC};
use udt_cli::transfer::ErrorCode;

mod common;

use common::{fails_with, ok};

const UDT: &str = env!("CARGO_BIN_EXE_udt");

/// A running `udt serve`, killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(root: &Path) -> Self {
        Self::start_with(root, &[], None)
    }

    /// Start with extra environment, and optionally a file-size limit (RLIMIT_FSIZE).
    fn start_with(root: &Path, env: &[(&str, &str)], fsize_limit: Option<u64>) -> Self {
        Self::start_args(root, &[], env, fsize_limit)
    }

    /// [`Self::start_with`] with extra `udt serve` arguments.
    fn start_args(
        root: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        fsize_limit: Option<u64>,
    ) -> Self {
        Self::start_full(root, args, env, fsize_limit, None)
    }

    /// Everything: extra arguments (a `-l` among them replaces `-l 127.0.0.1`), environment,
    /// RLIMIT_FSIZE and umask.
    fn start_full(
        root: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        fsize_limit: Option<u64>,
        umask: Option<libc::mode_t>,
    ) -> Self {
        let mut cmd = Command::new(UDT);
        cmd.args(["serve", "-p", "0", "--root"]).arg(root);
        if !args.contains(&"-l") {
            cmd.args(["-l", "127.0.0.1"]);
        }
        cmd.args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // SAFETY: only async-signal-safe calls between fork and exec. An ignored SIGXFSZ
        // stays ignored across exec, so writes past the limit fail with EFBIG.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(mask) = umask {
                    libc::umask(mask);
                }
                if let Some(limit) = fsize_limit {
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    let lim = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().expect("start udt serve");
        let out = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(out).read_line(&mut line).unwrap();
        let port = common::listening_port(&line);
        Self { child, port }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Run `udt cp -P port ARGS...`.
fn cp(port: u16, args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    cp_env(port, args, &[])
}

fn cp_env(port: u16, args: &[&dyn AsRef<std::ffi::OsStr>], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(UDT);
    cmd.args(["cp", "-P", &port.to_string()]);
    for a in args {
        cmd.arg(a.as_ref());
    }
    // No user key from this machine's config: these sessions are keyless on purpose.
    cmd.env(
        "XDG_CONFIG_HOME",
        std::env::temp_dir().join("udt-cp-tests-no-config"),
    );
    cmd.envs(env.iter().copied()).output().expect("run udt cp")
}

fn remote(path: &str) -> String {
    format!("udt://127.0.0.1/{path}")
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

fn digest_file(path: &Path) -> blake3::Hash {
    let mut hasher = blake3::Hasher::new();
    hasher.update_reader(fs::File::open(path).unwrap()).unwrap();
    hasher.finalize()
}

/// `--json` events of a run, by name.
fn events(out: &Output, name: &str) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == name)
        .collect()
}

/// Entries left in `dir` whose name ends in `.udt-part`.
fn parts_in(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".udt-part"))
        .collect()
}

struct Dirs {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    local: PathBuf,
    outside: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = common::scratch_dir();
    let d = Dirs {
        root: tmp.path().join("root"),
        local: tmp.path().join("local"),
        outside: tmp.path().join("outside"),
        _tmp: tmp,
    };
    for p in [&d.root, &d.local, &d.outside] {
        fs::create_dir(p).unwrap();
    }
    d
}

#[test]
fn empty_and_one_byte_files_go_up_and_down() {
    let d = dirs();
    let server = Server::start(&d.root);
    fs::write(d.local.join("empty"), b"").unwrap();
    fs::write(d.local.join("one"), b"x").unwrap();
    ok(&cp(
        server.port,
        &[&d.local.join("empty"), &d.local.join("one"), &remote("")],
    ));
    assert_eq!(fs::read(d.root.join("empty")).unwrap(), b"");
    assert_eq!(fs::read(d.root.join("one")).unwrap(), b"x");
    let back = d.local.join("back");
    fs::create_dir(&back).unwrap();
    ok(&cp(server.port, &[&remote("empty"), &remote("one"), &back]));
    assert_eq!(fs::read(back.join("empty")).unwrap(), b"");
    assert_eq!(fs::read(back.join("one")).unwrap(), b"x");
    // Renaming a single file on the way, and no partial files left anywhere.
    ok(&cp(server.port, &[&remote("one"), &back.join("renamed")]));
    assert_eq!(fs::read(back.join("renamed")).unwrap(), b"x");
    assert!(parts_in(&back).is_empty() && parts_in(&d.root).is_empty());
}

/// 1 GiB up, digest checked. Measured in the debug test build: ~10 s on 2 cores.
#[test]
fn one_gib_file_uploads_intact() {
    let d = dirs();
    let server = Server::start(&d.root);
    let src = d.local.join("big.bin");
    let f = fs::File::create(&src).unwrap();
    f.set_len(1 << 30).unwrap(); // sparse; stamp some data so it is not all zeros
    for i in 0..16u64 {
        use std::os::unix::fs::FileExt;
        f.write_all_at(&contents(i, 4096), i * (64 << 20) + 12345)
            .unwrap();
    }
    drop(f);
    let started = Instant::now();
    let out = cp(server.port, &[&"--json", &src, &remote("")]);
    ok(&out);
    eprintln!("1 GiB upload: {:.1} s", started.elapsed().as_secs_f64());
    let summary = &events(&out, "summary")[0];
    assert_eq!(summary["bytes"], 1u64 << 30);
    assert_eq!(summary["transferred_bytes"], 1u64 << 30);
    assert_eq!(digest_file(&d.root.join("big.bin")), digest_file(&src));
}

/// 10,000 small files in 100 directories, up with -r then down with -r.
#[test]
fn ten_thousand_small_files_recursive() {
    let d = dirs();
    let server = Server::start(&d.root);
    let tree = d.local.join("tree");
    for dir in 0..100 {
        let sub = tree.join(format!("d{dir:03}"));
        fs::create_dir_all(&sub).unwrap();
        for file in 0..100 {
            let n = dir * 100 + file;
            fs::write(
                sub.join(format!("f{file:03}")),
                contents(n, (n % 300) as usize),
            )
            .unwrap();
        }
    }
    fs::create_dir(tree.join("empty-dir")).unwrap();
    let out = cp(server.port, &[&"-r", &"--json", &tree, &remote("")]);
    ok(&out);
    assert_eq!(events(&out, "file_done").len(), 10_000);
    let out = cp(
        server.port,
        &[&"-r", &remote("tree"), &d.local.join("copy")],
    );
    ok(&out);
    for n in [0u64, 1, 4242, 9999] {
        let rel = format!("d{:03}/f{:03}", n / 100, n % 100);
        assert_eq!(
            fs::read(d.root.join("tree").join(&rel)).unwrap(),
            contents(n, (n % 300) as usize)
        );
        assert_eq!(
            fs::read(d.local.join("copy").join(&rel)).unwrap(),
            contents(n, (n % 300) as usize)
        );
    }
    assert_eq!(
        fs::read_dir(d.local.join("copy/d099")).unwrap().count(),
        100
    );
    assert!(d.local.join("copy/empty-dir").is_dir());
    // A directory without -r is refused.
    fails_with(
        &cp(server.port, &[&remote("tree"), &d.local.join("x")]),
        "use -r",
    );
}

#[test]
fn unicode_names_round_trip() {
    let d = dirs();
    let server = Server::start(&d.root);
    let dir = d.local.join("данные");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("ünïcødé 文件 🚀.txt"), b"hello").unwrap();
    ok(&cp(server.port, &[&"-r", &dir, &remote("")]));
    assert_eq!(
        fs::read(d.root.join("данные/ünïcødé 文件 🚀.txt")).unwrap(),
        b"hello"
    );
    ok(&cp(
        server.port,
        &[
            &remote("данные/ünïcødé 文件 🚀.txt"),
            &d.local.join("日本.txt"),
        ],
    ));
    assert_eq!(fs::read(d.local.join("日本.txt")).unwrap(), b"hello");
}

/// Kill the sending server mid-download (then the stuck client, as a user would), restart,
/// and `--resume`: only the missing part crosses the network, and the file is intact.
#[test]
fn resume_after_killing_the_sender() {
    let d = dirs();
    let size = 256usize << 20;
    let data = contents(77, size);
    fs::write(d.root.join("big.bin"), &data).unwrap();
    let mut server = Server::start(&d.root);
    let mut client = Command::new(UDT)
        .args(["cp", "-P", &server.port.to_string(), "--resume", "--quiet"])
        .arg(remote("big.bin"))
        .arg(&d.local)
        .spawn()
        .unwrap();
    let part = d.local.join(".big.bin.udt-part");
    let deadline = Instant::now() + Duration::from_secs(60);
    while fs::metadata(&part).map_or(0, |m| m.len()) < (size / 4) as u64 {
        assert!(Instant::now() < deadline, "the download did not progress");
        assert!(
            client.try_wait().unwrap().is_none(),
            "the download ended too soon"
        );
        thread::sleep(Duration::from_millis(5));
    }
    server.kill();
    thread::sleep(Duration::from_millis(300)); // let the client write what it had
    let _ = client.kill();
    let _ = client.wait();
    let held = fs::metadata(&part).unwrap().len();
    assert!(held > 0 && held < size as u64, "partial file holds {held}");
    assert!(!d.local.join("big.bin").exists());

    let server = Server::start(&d.root);
    let out = cp(
        server.port,
        &[&"--resume", &"--json", &remote("big.bin"), &d.local],
    );
    ok(&out);
    let summary = &events(&out, "summary")[0];
    let resumed = summary["resumed_bytes"].as_u64().unwrap();
    let sent = summary["transferred_bytes"].as_u64().unwrap();
    assert!(resumed > 0, "{summary}");
    assert_eq!(resumed + sent, size as u64, "{summary}");
    assert!(
        fs::read(d.local.join("big.bin")).unwrap() == data,
        "resumed file differs"
    );
    assert!(!part.exists());
}

/// Kill the uploading client mid-transfer and run it again with `--resume`: the server
/// kept the partial file and only the rest is sent.
#[test]
fn resume_upload_after_killing_the_client() {
    let d = dirs();
    let size = 256usize << 20;
    let data = contents(78, size);
    let src = d.local.join("up.bin");
    fs::write(&src, &data).unwrap();
    let server = Server::start(&d.root);
    let mut client = Command::new(UDT)
        .args(["cp", "-P", &server.port.to_string(), "--resume", "--quiet"])
        .arg(&src)
        .arg(remote(""))
        .spawn()
        .unwrap();
    let part = d.root.join(".up.bin.udt-part");
    let deadline = Instant::now() + Duration::from_secs(60);
    while fs::metadata(&part).map_or(0, |m| m.len()) < (size / 4) as u64 {
        assert!(Instant::now() < deadline, "the upload did not progress");
        assert!(
            client.try_wait().unwrap().is_none(),
            "the upload ended too soon"
        );
        thread::sleep(Duration::from_millis(5));
    }
    let _ = client.kill();
    let _ = client.wait();
    thread::sleep(Duration::from_millis(300)); // the server writes what it had
    let out = cp(server.port, &[&"--resume", &"--json", &src, &remote("")]);
    ok(&out);
    let summary = &events(&out, "summary")[0];
    let resumed = summary["resumed_bytes"].as_u64().unwrap();
    assert!(resumed >= (size / 4) as u64, "{summary}");
    assert_eq!(
        resumed + summary["transferred_bytes"].as_u64().unwrap(),
        size as u64
    );
    assert!(
        fs::read(d.root.join("up.bin")).unwrap() == data,
        "resumed file differs"
    );
}

/// The sender flips a byte after hashing (test-only hook): the receiver refuses the file
/// and leaves nothing behind, in both directions.
#[test]
fn corruption_is_detected_and_not_kept() {
    let d = dirs();
    let corrupt = [("UDT_TEST_CORRUPT_AT", "100000")];
    fs::write(d.root.join("f.bin"), contents(1, 300_000)).unwrap();
    let server = Server::start_with(&d.root, &corrupt, None);
    let out = cp(server.port, &[&"--json", &remote("f.bin"), &d.local]);
    fails_with(&out, "digest mismatch");
    assert_eq!(events(&out, "error")[0]["code"], "digest_mismatch");
    assert!(!d.local.join("f.bin").exists() && parts_in(&d.local).is_empty());

    let clean = Server::start(&d.root);
    fs::write(d.local.join("up.bin"), contents(2, 300_000)).unwrap();
    let out = cp_env(
        clean.port,
        &[&d.local.join("up.bin"), &remote("")],
        &corrupt,
    );
    fails_with(&out, "remote: up.bin: BLAKE3 digest mismatch");
    assert!(!d.root.join("up.bin").exists() && parts_in(&d.root).is_empty());
}

/// Speak the protocol by hand to send what a well-behaved client never would.
fn raw_request(port: u16, request: &[u8]) -> (ErrorCode, String) {
    let stream = udt::UdtStream::connect(("127.0.0.1", port)).unwrap();
    let mut hello = MAGIC.to_vec();
    Frame::Hello { version: 1 }.emit(&mut hello);
    (&stream).write_all(&hello).unwrap();
    (&stream).write_all(request).unwrap();
    let mut reader = FrameReader::new(&stream);
    assert!(matches!(reader.next_frame().unwrap(), Frame::Hello { .. }));
    loop {
        match reader.next_frame() {
            Ok(Frame::Error { code, message }) => return (code, message),
            Ok(Frame::ManifestEnd { .. } | Frame::Entry(_)) => {}
            other => panic!("expected an error, got {other:?}"),
        }
    }
}

/// A frame with a hand-made payload.
fn frame(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![kind];
    v.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    v.extend_from_slice(payload);
    v
}

fn with_len(flag: u8, path: &[u8]) -> Vec<u8> {
    let mut v = vec![flag];
    v.extend_from_slice(&(path.len() as u16).to_le_bytes());
    v.extend_from_slice(path);
    v
}

#[test]
fn traversal_attempts_are_refused() {
    let d = dirs();
    fs::write(d.outside.join("secret"), b"secret").unwrap();
    symlink(d.outside.join("secret"), d.root.join("leak")).unwrap();
    symlink(&d.outside, d.root.join("out")).unwrap();
    let server = Server::start(&d.root);
    // By hand: Get (type 2) of `..`, absolute and symlinked paths; Put (type 3) above root.
    for path in [
        &b"../outside/secret"[..],
        b"/etc/passwd",
        b"leak",
        b"out/secret",
    ] {
        let (code, msg) = raw_request(server.port, &frame(2, &with_len(0, path)));
        assert_eq!(
            code,
            ErrorCode::PathRefused,
            "{}: {msg}",
            String::from_utf8_lossy(path)
        );
    }
    let (code, _) = raw_request(server.port, &frame(3, &with_len(0, b"../outside")));
    assert_eq!(code, ErrorCode::PathRefused);
    // Through the client: a symlinked directory leading out is not a way in.
    fs::write(d.local.join("f"), b"data").unwrap();
    fails_with(
        &cp(server.port, &[&d.local.join("f"), &remote("out/")]),
        "outside the served directory",
    );
    fails_with(
        &cp(server.port, &[&remote("leak"), &d.local]),
        "outside the served directory",
    );
    assert_eq!(fs::read_dir(&d.outside).unwrap().count(), 1);
    assert!(!d.local.join("leak").exists());
}

/// The server decides whether files are replaced: `--force` only asks.
#[test]
fn overwrite_needs_force_and_a_server_that_allows_it() {
    let d = dirs();
    fs::write(d.local.join("f"), b"new").unwrap();
    fs::write(d.root.join("f"), b"old").unwrap();
    let server = Server::start(&d.root);
    let out = cp(server.port, &[&"--json", &d.local.join("f"), &remote("")]);
    fails_with(&out, "already exists (use --force to overwrite)");
    assert_eq!(events(&out, "error")[0]["code"], "exists");
    let out = cp(server.port, &[&"--force", &d.local.join("f"), &remote("")]);
    fails_with(
        &out,
        "does not replace files (it would need `udt serve --allow-overwrite`)",
    );
    assert_eq!(fs::read(d.root.join("f")).unwrap(), b"old");
    let lenient = Server::start_args(&d.root, &["--allow-overwrite"], &[], None);
    fails_with(
        &cp(lenient.port, &[&d.local.join("f"), &remote("")]),
        "use --force",
    );
    ok(&cp(
        lenient.port,
        &[&"--force", &d.local.join("f"), &remote("")],
    ));
    assert_eq!(fs::read(d.root.join("f")).unwrap(), b"new");
    // Downloads: the client's own files, its own decision.
    fs::write(d.local.join("g"), b"mine").unwrap();
    fails_with(
        &cp(server.port, &[&remote("f"), &d.local.join("g")]),
        "already exists",
    );
    assert_eq!(fs::read(d.local.join("g")).unwrap(), b"mine");
    ok(&cp(
        server.port,
        &[&"--force", &remote("f"), &d.local.join("g")],
    ));
    assert_eq!(fs::read(d.local.join("g")).unwrap(), b"new");
}

/// Without keys a server listens on loopback only, unless told `--insecure-public`, and is
/// then read-only unless told `--allow-writes` too.
#[test]
fn public_addresses_need_insecure_public_and_are_read_only() {
    let d = dirs();
    let out = Command::new(UDT)
        .args(["serve", "-p", "0", "--root"])
        .arg(&d.root)
        .args(["-l", "0.0.0.0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--insecure-public") && err.contains("0.0.0.0"),
        "{err}"
    );
    fs::write(d.root.join("pub"), b"p").unwrap();
    fs::write(d.local.join("up"), b"u").unwrap();
    let public = Server::start_args(&d.root, &["-l", "0.0.0.0", "--insecure-public"], &[], None);
    ok(&cp(public.port, &[&remote("pub"), &d.local]));
    fails_with(
        &cp(public.port, &[&d.local.join("up"), &remote("")]),
        "remote: this server is read-only",
    );
    let writable = Server::start_args(
        &d.root,
        &["-l", "0.0.0.0", "--insecure-public", "--allow-writes"],
        &[],
        None,
    );
    ok(&cp(writable.port, &[&d.local.join("up"), &remote("")]));
    // --read-only on loopback.
    let read_only = Server::start_args(&d.root, &["--read-only"], &[], None);
    let out = cp(
        read_only.port,
        &[&"--json", &d.local.join("up"), &remote("x")],
    );
    fails_with(&out, "read-only");
    assert_eq!(events(&out, "error")[0]["code"], "permission_denied");
    assert!(!d.root.join("x").exists());
}

/// Uploaded files get the server's umask, whatever mode the client sent.
#[test]
fn uploads_get_the_servers_umask() {
    let d = dirs();
    let server = Server::start_full(&d.root, &[], &[], None, Some(0o027));
    let src = d.local.join("wide");
    fs::write(&src, b"w").unwrap();
    fs::set_permissions(&src, fs::Permissions::from_mode(0o777)).unwrap();
    ok(&cp(server.port, &[&src, &remote("")]));
    let mode = fs::metadata(d.root.join("wide"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o750);
}

/// A FIFO under the root is refused at once (never opened for a blocking read).
#[test]
fn special_files_are_refused_not_opened() {
    let d = dirs();
    let fifo =
        std::ffi::CString::new(d.root.join("pipe").into_os_string().into_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let server = Server::start(&d.root);
    fails_with(
        &cp(server.port, &[&remote("pipe"), &d.local]),
        "not a regular file",
    );
}

/// `--max-file-size`: a larger upload is refused before any data is sent.
#[test]
fn max_file_size_is_enforced() {
    let d = dirs();
    let server = Server::start_args(&d.root, &["--max-file-size", "1M"], &[], None);
    fs::write(d.local.join("big"), contents(9, (1 << 20) + 1)).unwrap();
    fs::write(d.local.join("small"), contents(9, 1 << 20)).unwrap();
    let out = cp(server.port, &[&"--json", &d.local.join("big"), &remote("")]);
    fails_with(&out, "--max-file-size");
    assert_eq!(events(&out, "error")[0]["code"], "disk_full");
    assert!(fs::read_dir(&d.root).unwrap().next().is_none());
    ok(&cp(server.port, &[&d.local.join("small"), &remote("")]));
}

/// A client that sends one byte at a time, each well inside the read timeout, is cut off
/// by the progress deadline (shortened for the test) and told why.
#[test]
fn a_trickling_client_is_cut_off() {
    let d = dirs();
    let server = Server::start_with(&d.root, &[("UDT_TEST_MAX_WAIT_MS", "1500")], None);
    let stream = udt::UdtStream::connect(("127.0.0.1", server.port)).unwrap();
    // Without the deadline nothing would arrive: fail rather than hang.
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut hello = MAGIC.to_vec();
    Frame::Hello { version: 1 }.emit(&mut hello);
    (&stream).write_all(&hello).unwrap();
    let put = frame(3, &with_len(0, &[b'x'; 200]));
    let started = Instant::now();
    let got = thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut reader = FrameReader::new(&stream);
            let hello = reader.next_frame();
            (hello, reader.next_frame())
        });
        for byte in &put {
            if reader.is_finished() || started.elapsed() > Duration::from_secs(20) {
                break;
            }
            let _ = (&stream).write_all(&[*byte]);
            thread::sleep(Duration::from_millis(100));
        }
        reader.join().unwrap()
    });
    assert!(matches!(got.0, Ok(Frame::Hello { .. })), "{got:?}");
    match got.1 {
        Ok(Frame::Error { message, .. }) => assert!(message.contains("too slow"), "{message}"),
        other => panic!("expected an error, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(15));
    // A classic client trickling its file name: the connection is closed.
    let stream = udt::UdtStream::connect(("127.0.0.1", server.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    (&stream).write_all(&1000i32.to_ne_bytes()).unwrap();
    let started = Instant::now();
    let closed = thread::scope(|s| {
        let reader = s.spawn(|| (&stream).read(&mut [0u8; 8]));
        while !reader.is_finished() && started.elapsed() < Duration::from_secs(20) {
            let _ = (&stream).write_all(b"x");
            thread::sleep(Duration::from_millis(100));
        }
        reader.join().unwrap()
    });
    assert!(matches!(closed, Ok(0) | Err(_)), "{closed:?}");
    assert!(started.elapsed() < Duration::from_secs(15));
}

/// A server whose files may not grow past 1 MiB (a small tmpfs when we may mount one, else
/// RLIMIT_FSIZE): the client hears "disk full" and nothing partial stays.
#[test]
fn disk_full_is_reported() {
    let d = dirs();
    let mounted = Mount::tmpfs(&d.root, "1m");
    let limit = if mounted.is_some() {
        None
    } else {
        Some(1 << 20)
    };
    disk_full_case(&d, limit);
}

/// The same with RLIMIT_FSIZE (EFBIG), whether or not a tmpfs could be mounted.
#[test]
fn file_size_limit_is_reported_as_disk_full() {
    disk_full_case(&dirs(), Some(1 << 20));
}

fn disk_full_case(d: &Dirs, limit: Option<u64>) {
    let server = Server::start_with(&d.root, &[], limit);
    fs::write(d.local.join("big"), contents(3, 4 << 20)).unwrap();
    let out = cp(server.port, &[&"--json", &d.local.join("big"), &remote("")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(events(&out, "error")[0]["code"], "disk_full", "{err}");
    // A small file system is seen before the upload starts (statvfs); a file-size limit
    // only when the write fails.
    let before = "remote: 4194304 bytes to write but only";
    let during = "remote: big:";
    let expected = if limit.is_some() { during } else { before };
    assert!(err.contains(expected), "{err}");
    assert!(!d.root.join("big").exists() && parts_in(&d.root).is_empty());
    drop(server);
}

/// A tmpfs mounted for one test, unmounted on drop.
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(at: &Path, size: &str) -> Option<Self> {
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .stderr(Stdio::null())
            .status()
            .ok()?;
        status.success().then(|| Self(at.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Both controllers, chosen on each side: the sender's decides.
#[test]
fn congestion_control_is_chosen_per_side() {
    let d = dirs();
    let server = Server::start_args(&d.root, &["--cc", "native", "--allow-overwrite"], &[], None);
    let data = contents(7, 3 << 20);
    fs::write(d.local.join("f"), &data).unwrap();
    for cc in ["native", "model"] {
        ok(&cp(
            server.port,
            &[&"--cc", &cc, &"--force", &d.local.join("f"), &remote("")],
        ));
        assert!(
            fs::read(d.root.join("f")).unwrap() == data,
            "upload with {cc}"
        );
    }
    ok(&cp(server.port, &[&remote("f"), &d.local.join("g")]));
    assert!(fs::read(d.local.join("g")).unwrap() == data);
    let out = Command::new(UDT)
        .args(["cp", "--cc", "reno", "a", "h:b"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("reno") && err.contains("model"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    let out = Command::new(UDT).args(["cp", "a", "b"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(UDT)
        .args(["cp", "h:a", "k:b"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// No server on the port (a typo in `-P`, say): the kernel's ICMP port unreachable ends the
/// connect in about a second with one clear line, not after the 3 s connect timeout; the
/// same for a download. (The message itself shows which way it ended: no timing asserted.)
#[test]
fn nothing_listening_fails_fast_with_one_line() {
    let d = dirs();
    let file = d.local.join("f");
    fs::write(&file, b"x").unwrap();
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port(); // closed again when the socket drops here
    let target = format!("127.0.0.1:{port}");
    for args in [
        [&file as &dyn AsRef<std::ffi::OsStr>, &remote("f")],
        [&remote("f"), &d.outside],
    ] {
        let out = cp(port, &args);
        fails_with(
            &out,
            &format!(
                "connecting to {target}: nothing listens on the peer's port (ICMP port unreachable)"
            ),
        );
        assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    }
}

/// libudt's sample programs (built from libudt-dev's examples by `make -C interop`).
fn sample(name: &str) -> PathBuf {
    let path = udt_interop::peers::binaries().join(name);
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// A child process killed on drop.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn legacy_download_from_libudt_sendfile() {
    let d = dirs();
    let data = contents(5, 3 << 20);
    fs::write(d.root.join("data.bin"), &data).unwrap();
    let port = {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap().port()
    };
    let mut child = Command::new(sample("sendfile"))
        .arg(port.to_string())
        .current_dir(&d.root)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = lines.next().and_then(Result::ok).unwrap_or_default();
    assert!(ready.contains("server is ready"), "sendfile said {ready:?}");
    thread::spawn(move || lines.for_each(drop));
    let _server = Killed(child);
    ok(&cp(port, &[&"--legacy", &remote("data.bin"), &d.local]));
    assert!(fs::read(d.local.join("data.bin")).unwrap() == data);
    fails_with(
        &cp(port, &[&"--legacy", &remote("missing"), &d.local]),
        "no such file",
    );
}

#[test]
fn libudt_recvfile_from_udt_serve() {
    let d = dirs();
    let data = contents(6, 3 << 20);
    fs::write(d.root.join("data.bin"), &data).unwrap();
    fs::write(d.outside.join("secret"), b"s").unwrap();
    let server = Server::start(&d.root);
    let fetch = |name: &str, dest: &Path| {
        let mut child = Command::new(sample("recvfile"))
            .args(["127.0.0.1", &server.port.to_string(), name])
            .arg(dest)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "recvfile hangs");
            thread::sleep(Duration::from_millis(20));
        }
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        (child.wait().unwrap().success(), out)
    };
    let (ok, out) = fetch("data.bin", &d.local.join("copy"));
    assert!(ok, "recvfile: {out}");
    assert!(fs::read(d.local.join("copy")).unwrap() == data);
    let (ok, out) = fetch("../outside/secret", &d.local.join("stolen"));
    assert!(!ok && out.contains("no such file"), "recvfile said {out:?}");
}

/// A hostile `udt serve`: answers the greeting and any request with `frames`.
fn hostile_server(frames: Vec<Frame>) -> (u16, thread::JoinHandle<()>) {
    let listener = udt::UdtListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut magic = [0u8; 4];
        (&stream).read_exact(&mut magic).unwrap();
        let mut reader = FrameReader::new(&stream);
        let _hello = reader.next_frame().unwrap();
        let mut out = Vec::new();
        Frame::Hello { version: 1 }.emit(&mut out);
        (&stream).write_all(&out).unwrap();
        let _request = reader.next_frame().unwrap();
        out.clear();
        for f in &frames {
            f.emit(&mut out);
        }
        (&stream).write_all(&out).unwrap();
        let _ = reader.next_frame(); // the client's answer, or its closing
        let _ = stream.close();
    });
    (port, handle)
}

fn manifest_entry(path: &str, size: u64) -> Frame {
    use udt_cli::transfer::manifest::{Entry, EntryKind, Mtime};
    Frame::Entry(Entry {
        path: udt_cli::transfer::paths::RelPath::parse(path.as_bytes()).unwrap(),
        kind: EntryKind::File,
        size,
        mode: 0o644,
        mtime: Mtime { secs: 0, nanos: 0 },
    })
}

/// CVE-2019-6111: asked for `a`, a server sends `a` and `.bashrc`. The client refuses the
/// whole manifest, writes nothing, and says what the server tried.
#[test]
fn a_server_cannot_plant_files_the_client_did_not_ask_for() {
    let d = dirs();
    let (port, server) = hostile_server(vec![
        manifest_entry("a", 1),
        manifest_entry(".bashrc", 1),
        Frame::ManifestEnd { count: 2 },
    ]);
    let out = cp(port, &[&"--json", &remote("a"), &d.local]);
    fails_with(&out, "the server sent \".bashrc\", which was not asked for");
    assert_eq!(events(&out, "error")[0]["code"], "path_refused");
    assert!(fs::read_dir(&d.local).unwrap().next().is_none());
    server.join().unwrap();
}

/// Whatever a server puts in names and error messages, no control character reaches the
/// client's terminal.
#[test]
fn peer_text_is_escaped_before_printing() {
    let d = dirs();
    let evil = "\x1b]0;owned\x07\x1b[2J\rudt: all good\n\u{9b}31m";
    let (port, server) = hostile_server(vec![Frame::Error {
        code: ErrorCode::Io,
        message: evil.into(),
    }]);
    let out = cp(port, &[&remote("a"), &d.local]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("\\u{1b}]0;owned"), "{err}");
    let printed = err.trim_end_matches('\n');
    assert!(!printed.chars().any(char::is_control), "{err:?}");
    server.join().unwrap();
    let name = "x\x1b[31mred";
    let (port, server) = hostile_server(vec![
        manifest_entry(name, 1),
        Frame::ManifestEnd { count: 1 },
    ]);
    let out = cp(port, &[&remote("a"), &d.local]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not asked for"), "{err}");
    assert!(
        !err.trim_end_matches('\n').chars().any(char::is_control),
        "{err:?}"
    );
    server.join().unwrap();
}
