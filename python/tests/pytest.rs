//! Runs the Python package's pytest suite (`tests/test_udt.py`) from `cargo test`: the
//! extension cargo just built (`lib_udt.so`) and `udt/*.py` are laid out as the package a
//! wheel installs, in a temporary directory on `PYTHONPATH`, and pytest runs with the
//! virtual environment `scripts/setup.sh` made (`$UDT_PY_VENV`, default
//! `~/.cache/udt/py-venv`). A `udt serve` daemon for the copy tests runs in this process.
//!
//! Skipped, with a message, only where there is no `python3` at all.

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use clap::Parser;

/// The virtual environment's interpreter.
fn venv_python() -> PathBuf {
    let venv = std::env::var_os("UDT_PY_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME").unwrap_or_else(|| "/root".into());
            Path::new(&home).join(".cache/udt/py-venv")
        });
    venv.join("bin/python")
}

fn have_python3() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `udt/` as installed: the Python sources plus the extension under its import name.
fn lay_out_package(dir: &Path) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("deps dir");
    let built = [deps, deps.parent().unwrap_or(deps)]
        .into_iter()
        .map(|d| d.join("lib_udt.so"))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("lib_udt.so not found near {}", exe.display()));
    let package = dir.join("udt");
    std::fs::create_dir(&package).expect("mkdir udt");
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("udt");
    for entry in std::fs::read_dir(&sources).expect("python/udt") {
        let path = entry.expect("dir entry").path();
        let name = path.file_name().expect("file name");
        std::fs::copy(&path, package.join(name)).expect("copy a package file");
    }
    std::fs::copy(built, package.join("_udt.abi3.so")).expect("copy the extension");
    dir.to_path_buf()
}

/// `udt serve` on 127.0.0.1 in a background thread (it lives until the test process ends).
fn start_daemon(root: &Path) -> u16 {
    let port = UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("a free UDP port")
        .port();
    let port_arg = port.to_string();
    let args = [
        "udt",
        "serve",
        "-l",
        "127.0.0.1",
        "-p",
        &port_arg,
        "--allow-overwrite",
    ];
    let cli = udt_cli::cli::Cli::try_parse_from(
        args.iter()
            .map(std::ffi::OsStr::new)
            .chain(["--root".as_ref(), root.as_os_str()]),
    )
    .expect("valid udt serve arguments");
    std::thread::spawn(move || udt_cli::run(cli));
    let deadline = Instant::now() + Duration::from_secs(10);
    while UdpSocket::bind(("127.0.0.1", port)).is_ok() {
        assert!(Instant::now() < deadline, "udt serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    port
}

#[test]
fn pytest_suite_passes() {
    if !have_python3() {
        eprintln!("SKIPPED: python3 is not installed; the Python package's tests did not run");
        return;
    }
    let python = venv_python();
    assert!(
        python.exists(),
        "{} missing: run scripts/setup.sh (it makes the venv with pytest and maturin)",
        python.display()
    );
    let site = tempfile::tempdir().expect("temp dir");
    let root = tempfile::tempdir().expect("temp dir");
    let package_dir = lay_out_package(site.path());
    let port = start_daemon(root.path());
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let output = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(&tests)
        // Not python/: `python -m` puts the working directory first on sys.path, where the
        // sources without the extension would shadow the laid-out package.
        .current_dir(&package_dir)
        .env("PYTHONPATH", &package_dir)
        .env("UDT_TEST_DAEMON_PORT", port.to_string())
        .env("UDT_TEST_DAEMON_ROOT", root.path())
        .env_remove("UDT_BIN")
        .output()
        .expect("run pytest");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(output.status.success(), "pytest failed\n{stdout}\n{stderr}");
    assert!(stdout.contains(" passed"), "pytest ran no test\n{stdout}");
}
