//! Runs the Python package's pytest suite (`tests/test_udt.py`) from `cargo test`, with the
//! virtual environment `scripts/setup.sh` made (`$UDT_PY_VENV`, default
//! `~/.cache/udt/py-venv`): by default against the extension this build made, laid out as
//! the wheel installs it; with `--ignored`, against the wheel maturin builds and pip
//! installs. A `udt serve` daemon for the copy tests runs in this process.
//!
//! Skipped, with a message, only where there is no `python3` at all.

use std::io::Write;
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

/// `udt/` as the wheel installs it: the Python sources plus the extension cargo built,
/// under its import name.
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
        std::fs::copy(&path, package.join(path.file_name().expect("a file name")))
            .expect("copy a package file");
    }
    std::fs::copy(built, package.join("_udt.abi3.so")).expect("copy the extension");
    dir.to_path_buf()
}

/// cargo's target directory: this test binary is `<target>/<profile>/deps/pytest-HASH`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| panic!("no target directory above {}", exe.display()))
}

/// Build the wheel with maturin (dev profile, in cargo's target directory so the workspace's
/// compiled dependencies are reused) and install it into `site` with pip, offline.
fn build_and_install_wheel(venv_bin: &Path, work: &Path) -> PathBuf {
    let wheels = work.join("wheels");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let mut maturin = Command::new(venv_bin.join("maturin"));
    // cargo's variables for this test (CARGO_MANIFEST_DIR...) would leak into build scripts
    // that watch them (ring's) and rebuild half the workspace.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        if name.starts_with("CARGO_") && name != "CARGO_HOME" || name == "OUT_DIR" {
            maturin.env_remove(name);
        }
    }
    let status = maturin
        .args(["build", "--quiet", "--profile", "dev", "-m"])
        .arg(&manifest)
        .arg("-o")
        .arg(&wheels)
        .arg("-i")
        .arg(venv_bin.join("python"))
        .env("CARGO_TARGET_DIR", target_dir())
        .status()
        .expect("run maturin (scripts/setup.sh installs it into the venv)");
    assert!(status.success(), "maturin build failed");
    let wheel = std::fs::read_dir(&wheels)
        .expect("maturin's output directory")
        .map(|e| e.expect("dir entry").path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .expect("maturin built a wheel");
    let site = work.join("site");
    let status = Command::new(venv_bin.join("python"))
        .args(["-m", "pip", "install", "--quiet", "--no-index", "--no-deps"])
        .args(["--disable-pip-version-check", "--target"])
        .arg(&site)
        .arg(&wheel)
        .status()
        .expect("run pip");
    assert!(
        status.success(),
        "pip could not install {}",
        wheel.display()
    );
    site
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

/// The venv's interpreter, or `None` (after saying so) where there is no python3 at all.
fn python_or_skip() -> Option<PathBuf> {
    if !have_python3() {
        // Straight to stderr, past the test harness's capture, so the skip shows in CI logs.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED python/tests: python3 is not installed, the Python package's tests did not run"
        );
        return None;
    }
    let python = venv_python();
    assert!(
        python.exists(),
        "{} missing: run scripts/setup.sh (it makes the venv with pytest and maturin)",
        python.display()
    );
    Some(python)
}

/// Run `tests/test_udt.py` with the package in `package_dir` and a daemon for the copies.
fn run_pytest(python: &Path, package_dir: &Path) {
    let root = tempfile::tempdir().expect("temp dir");
    let port = start_daemon(root.path());
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let output = Command::new(python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(&tests)
        // Not python/: `python -m` puts the working directory first on sys.path, where the
        // sources without the extension would shadow the package under test.
        .current_dir(package_dir)
        .env("PYTHONPATH", package_dir)
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

/// The suite against the extension this `cargo test` built, laid out as the wheel installs
/// it (no second compile: CI's cost is pytest's couple of seconds).
#[test]
fn pytest_suite_passes() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let work = tempfile::tempdir().expect("temp dir");
    run_pytest(&python, &lay_out_package(work.path()));
}

/// The suite against the real wheel: maturin builds it, pip installs it. Not in the default
/// run because maturin's build of this one package resolves features apart from the
/// workspace's (`--features udt/tokio`, the dev-dependencies' tokio), so it recompiles udt,
/// udt-cli and pyo3 (minutes on two cores in CI); run it after changing `pyproject.toml` or
/// the layout of `udt/`: `cargo test -p udt-python -- --ignored`.
#[test]
#[ignore = "builds the wheel with maturin (slow); cargo test -p udt-python -- --ignored"]
fn wheel_installs_and_passes_pytest() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let work = tempfile::tempdir().expect("temp dir");
    let venv_bin = python.parent().expect("the venv's bin directory");
    run_pytest(&python, &build_and_install_wheel(venv_bin, work.path()));
}
