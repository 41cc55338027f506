//! `tests/c/smoke.c` compiled with the system's C compiler against the committed header and
//! this crate's shared library, then run against loopback sockets and a `udt serve` daemon
//! started in this process: the C API as a C program sees it.

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use clap::Parser;

/// The directory holding `libudt_capi.so`: cargo builds it beside this test's binary's
/// `deps/` directory (target/<profile>/).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("deps dir");
    let found = [deps, deps.parent().unwrap_or(deps)]
        .into_iter()
        .find(|dir| dir.join("libudt_capi.so").exists())
        .map(Path::to_path_buf);
    found.unwrap_or_else(|| panic!("libudt_capi.so not found near {}", exe.display()))
}

/// A port that was free a moment ago.
fn free_udp_port() -> u16 {
    let socket = UdpSocket::bind("127.0.0.1:0").expect("bind a UDP port");
    socket.local_addr().expect("local addr").port()
}

/// `udt serve` on 127.0.0.1 in a background thread (it lives until the test process ends).
fn start_daemon(root: &Path) -> u16 {
    let port = free_udp_port();
    let cli = udt_cli::cli::Cli::try_parse_from([
        "udt".as_ref(),
        "serve".as_ref(),
        "-l".as_ref(),
        "127.0.0.1".as_ref(),
        "-p".as_ref(),
        port.to_string().as_ref(),
        "--allow-overwrite".as_ref(),
        "--root".as_ref(),
        root.as_os_str(),
    ])
    .expect("valid udt serve arguments");
    std::thread::spawn(move || udt_cli::run(cli));
    // Ready once its port is taken.
    let deadline = Instant::now() + Duration::from_secs(10);
    while UdpSocket::bind(("127.0.0.1", port)).is_ok() {
        assert!(Instant::now() < deadline, "udt serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    port
}

fn compile(work: &Path, lib_dir: &Path) -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = work.join("smoke");
    let status = Command::new(std::env::var_os("CC").unwrap_or_else(|| "cc".into()))
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("tests/c/smoke.c"))
        .arg("-L")
        .arg(lib_dir)
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .args(["-ludt_capi", "-o"])
        .arg(&exe)
        .status()
        .expect("run the C compiler (cc)");
    assert!(status.success(), "compiling tests/c/smoke.c failed");
    exe
}

#[test]
fn c_program_uses_streams_stats_and_copy() {
    let root = tempfile::tempdir().expect("temp dir");
    let work = tempfile::tempdir().expect("temp dir");
    let download = work.path().join("down");
    std::fs::create_dir(&download).expect("mkdir");
    let file = work.path().join("payload.bin");
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&file, &data).expect("write payload");

    let port = start_daemon(root.path());
    let exe = compile(work.path(), &library_dir());
    let output = Command::new(&exe)
        .arg(port.to_string())
        .arg(&file)
        .arg(&download)
        .output()
        .expect("run the C program");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "C program failed\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
    let uploaded = std::fs::read(root.path().join("payload.bin")).expect("uploaded file");
    assert_eq!(uploaded, data, "the daemon holds the uploaded bytes");
    let fetched = std::fs::read(download.join("payload.bin")).expect("downloaded file");
    assert_eq!(fetched, data, "the download is the same bytes");
}
