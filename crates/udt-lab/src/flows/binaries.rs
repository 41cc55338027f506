//! Finding the programs a flow runs: the `udt` binary, the libudt interop peers and
//! `utp-perf` (uTP through librqbit-utp, crate `udt-utp-perf`).
//!
//! The lab is usually driven by `udt lab run`, so the `udt` to run is the running executable
//! itself; from a test binary (`<target>/<profile>/deps/<test>`) it is `<target>/<profile>/udt`.
//! The interop peers live in `<target>/interop` (where `crates/udt-interop` builds them) and
//! are built with `make -C interop` when missing and the sources are at hand. Environment
//! variables override both: `UDT_LAB_UDT` (a path to `udt`) and `UDT_LAB_INTEROP` (a
//! directory with `udt_server` and `udt_client`).
//!
//! `utp-perf` is a binary of this workspace, so it sits beside `udt` once the workspace is
//! built (`cargo build`, `cargo test`); when it is missing and the sources are at hand, it is
//! built with cargo into the same target directory and profile. `UDT_LAB_UTP_PERF` (a path to
//! `utp-perf`) overrides it.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

/// Overrides the path of the `udt` binary.
pub const ENV_UDT: &str = "UDT_LAB_UDT";

/// Overrides the directory of the interop peers.
pub const ENV_INTEROP: &str = "UDT_LAB_INTEROP";

/// Overrides the path of the `utp-perf` binary.
pub const ENV_UTP_PERF: &str = "UDT_LAB_UTP_PERF";

/// Where the programs are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binaries {
    /// The `udt` binary (`udt perf`).
    pub udt: PathBuf,
    /// The directory of `udt_server` / `udt_client`; `None` when they could not be found or
    /// built (libudt flows then fail with the reason).
    pub interop: Option<PathBuf>,
    /// Why the interop peers are missing, for the error of a libudt flow.
    pub interop_error: Option<String>,
    /// `utp-perf`, or why it could not be found or built (uTP flows then fail with it).
    pub utp_perf: Result<PathBuf, String>,
}

impl Binaries {
    /// Locates `udt` (required) and the interop peers (optional, built if possible).
    pub fn locate() -> anyhow::Result<Self> {
        let exe = std::env::current_exe().context("finding the running executable")?;
        Ok(Self::with_udt(locate_udt(&exe)?))
    }

    /// Uses the `udt` at `udt` (a test's `CARGO_BIN_EXE_udt`), and the interop peers and
    /// `utp-perf` found from it as [`Self::locate`] does.
    pub fn with_udt(udt: PathBuf) -> Self {
        let (interop, interop_error) = match locate_interop(&udt) {
            Ok(dir) => (Some(dir), None),
            Err(e) => (None, Some(format!("{e:#}"))),
        };
        let utp_perf = locate_utp_perf(&udt).map_err(|e| format!("{e:#}"));
        Self {
            udt,
            interop,
            interop_error,
            utp_perf,
        }
    }

    /// Only `udt`, nothing else looked for (a report re-summarized, not run).
    pub fn only_udt(udt: PathBuf) -> Self {
        let missing = "not looked for".to_owned();
        Self {
            udt,
            interop: None,
            interop_error: Some(missing.clone()),
            utp_perf: Err(missing),
        }
    }

    /// The path of `utp-perf`, or why there is none.
    pub fn utp_perf(&self) -> anyhow::Result<&Path> {
        match &self.utp_perf {
            Ok(path) => Ok(path),
            Err(why) => bail!("utp-perf is unavailable: {why}"),
        }
    }

    /// The path of interop program `name`, or why there is none.
    pub fn peer(&self, name: &str) -> anyhow::Result<PathBuf> {
        match &self.interop {
            Some(dir) => Ok(dir.join(name)),
            None => bail!(
                "the libudt 4.11 interop peers are unavailable: {}",
                self.interop_error.as_deref().unwrap_or("unknown reason")
            ),
        }
    }
}

fn locate_udt(exe: &Path) -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os(ENV_UDT) {
        let path = PathBuf::from(path);
        if !path.is_file() {
            bail!("${ENV_UDT} = {} is not a file", path.display());
        }
        return Ok(path);
    }
    if exe.file_name().is_some_and(|n| n == "udt") {
        return Ok(exe.to_owned());
    }
    // A test or example binary: <target>/<profile>/deps/<name> or <target>/<profile>/<name>.
    let candidates = exe.ancestors().skip(1).take(2).map(|dir| dir.join("udt"));
    for candidate in candidates {
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    bail!(
        "could not find the `udt` binary next to {}: build it (`cargo build -p udt-cli`) or set ${ENV_UDT}",
        exe.display()
    )
}

/// `utp-perf` beside `udt` (`<target>/<profile>/`), built with cargo if missing.
fn locate_utp_perf(udt: &Path) -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os(ENV_UTP_PERF) {
        let path = PathBuf::from(path);
        if !path.is_file() {
            bail!("${ENV_UTP_PERF} = {} is not a file", path.display());
        }
        return Ok(path);
    }
    let profile_dir = udt.parent().context("the udt binary has no directory")?;
    let path = profile_dir.join("utp-perf");
    if !path.is_file() {
        build_utp_perf(profile_dir)?;
    }
    if !path.is_file() {
        bail!(
            "no utp-perf in {}: run `cargo build -p udt-utp-perf` or set ${ENV_UTP_PERF}",
            profile_dir.display()
        );
    }
    Ok(path)
}

/// Builds `utp-perf` into `profile_dir` (`<target>/<profile>`), if this crate's workspace
/// is at hand.
fn build_utp_perf(profile_dir: &Path) -> anyhow::Result<()> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if !workspace.join("crates/udt-utp-perf/Cargo.toml").is_file() {
        return Ok(());
    }
    let (Some(target), Some(profile)) = (
        profile_dir.parent(),
        profile_dir.file_name().and_then(|p| p.to_str()),
    ) else {
        bail!("{} is not <target>/<profile>", profile_dir.display());
    };
    // Cargo's directory for the dev profile is `debug`; others are named after the profile.
    let profile = if profile == "debug" { "dev" } else { profile };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&workspace)
        .args([
            "build",
            "--quiet",
            "-p",
            "udt-utp-perf",
            "--bin",
            "utp-perf",
        ])
        .args(["--profile", profile])
        .env("CARGO_TARGET_DIR", target)
        .output()
        .context("running cargo to build utp-perf")?;
    if !out.status.success() {
        bail!(
            "building utp-perf failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// `<target>/interop` for a `udt` at `<target>/<profile>/udt`, built if needed.
fn locate_interop(udt: &Path) -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os(ENV_INTEROP) {
        return Ok(PathBuf::from(dir));
    }
    let target = udt
        .ancestors()
        .nth(2)
        .context("the udt binary has no target directory")?;
    let out = target.join("interop");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop");
    if source.join("Makefile").is_file() {
        // make is incremental: this costs nothing once the peers are current.
        let status = Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(&source)
            .arg(format!("INTEROP_OUT={}", out.display()))
            .output()
            .context("running make for the interop peers")?;
        if !status.status.success() {
            bail!(
                "building the interop peers failed (they need g++ and libudt-dev: scripts/setup.sh): {}",
                String::from_utf8_lossy(&status.stderr).trim()
            );
        }
    }
    if !out.join("udt_server").is_file() || !out.join("udt_client").is_file() {
        bail!(
            "no udt_server/udt_client in {}: run `make -C interop INTEROP_OUT={}` or set ${ENV_INTEROP}",
            out.display(),
            out.display()
        );
    }
    Ok(out)
}
