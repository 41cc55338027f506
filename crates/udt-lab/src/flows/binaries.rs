//! Finding the programs a flow runs: the `udt` binary and the libudt interop peers.
//!
//! The lab is usually driven by `udt lab run`, so the `udt` to run is the running executable
//! itself; from a test binary (`<target>/<profile>/deps/<test>`) it is `<target>/<profile>/udt`.
//! The interop peers live in `<target>/interop` (where `crates/udt-interop` builds them) and
//! are built with `make -C interop` when missing and the sources are at hand. Environment
//! variables override both: `UDT_LAB_UDT` (a path to `udt`) and `UDT_LAB_INTEROP` (a
//! directory with `udt_server` and `udt_client`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

/// Overrides the path of the `udt` binary.
pub const ENV_UDT: &str = "UDT_LAB_UDT";

/// Overrides the directory of the interop peers.
pub const ENV_INTEROP: &str = "UDT_LAB_INTEROP";

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
}

impl Binaries {
    /// Locates `udt` (required) and the interop peers (optional, built if possible).
    pub fn locate() -> anyhow::Result<Self> {
        let exe = std::env::current_exe().context("finding the running executable")?;
        Ok(Self::with_udt(locate_udt(&exe)?))
    }

    /// Uses the `udt` at `udt` (a test's `CARGO_BIN_EXE_udt`), and the interop peers
    /// found from it as [`Self::locate`] does.
    pub fn with_udt(udt: PathBuf) -> Self {
        let (interop, interop_error) = match locate_interop(&udt) {
            Ok(dir) => (Some(dir), None),
            Err(e) => (None, Some(format!("{e:#}"))),
        };
        Self {
            udt,
            interop,
            interop_error,
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
