//! `udt cp` to and from a `udt serve` daemon as a library call: [`copy`] moves local paths to
//! `udt://host[:port]/path` or fetches from one, every file checked end to end with BLAKE3,
//! reporting through an [`Observer`].
//!
//! This is the one implementation of the daemon form: the `udt` command (`cmd::cp`), the C
//! API (`udt-capi`) and the Python package call it, so they agree on keys, pinning, resume
//! and verification. Copies over SSH (`host:path`) need the command's ssh options and stay in
//! the command.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Context;
use udt::UdtStream;

use crate::cmd::cp::{transfer_options, Operand, DEFAULT_CC, DEFAULT_DAEMON_PORT};
use crate::cmd::keygen::{config_dir, default_key_file};
use crate::secure::{handshake, KeyPair, KnownServers, Pinned};
use crate::transfer::legacy;
use crate::transfer::manifest::Manifest;
use crate::transfer::paths::RelPath;
use crate::transfer::receiver::ReceiveOptions;
use crate::transfer::session::{download, upload};
use crate::transfer::{ErrorCode, Observer, Summary, TransferError};
use crate::UsageError;

/// How to copy: the daemon-related flags of `udt cp`.
#[derive(Debug, Clone)]
pub struct CopyOptions {
    /// Copy directories and their contents (`-r`).
    pub recursive: bool,
    /// Continue an interrupted transfer, keeping partial files on failure (`--resume`).
    pub resume: bool,
    /// Replace existing files at the destination, if the server allows it (`--force`).
    pub force: bool,
    /// Congestion control when this side sends (`--cc`: `model`, `native` or `ledbat`, the
    /// scavenger that `--priority background` picks).
    pub cc: String,
    /// Cap on this side's sending rate, bytes per second (`--maxbw`; UDT_MAXBW).
    pub max_bandwidth: Option<u64>,
    /// The daemon's port when the URL names none (`-P`; default 9000).
    pub port: Option<u16>,
    /// This user's private key (`--key`); default: the one `udt keygen` made, if any.
    pub key: Option<PathBuf>,
    /// Where server keys are pinned (`--known-servers`); default: beside the default key.
    pub known_servers: Option<PathBuf>,
    /// Use no key even if one exists (`--insecure`).
    pub insecure: bool,
    /// Talk to a classic UDT4 `sendfile` server (`--legacy`: one file, download only).
    pub legacy: bool,
    /// Print nothing (the first-contact pinning note goes to stderr otherwise).
    pub quiet: bool,
}

impl Default for CopyOptions {
    fn default() -> Self {
        Self {
            recursive: false,
            resume: false,
            force: false,
            cc: DEFAULT_CC.to_string(),
            max_bandwidth: None,
            port: None,
            key: None,
            known_servers: None,
            insecure: false,
            legacy: false,
            quiet: false,
        }
    }
}

/// Why a copy failed, for callers that branch on it (the C and Python bindings).
#[derive(Debug, Clone, thiserror::Error)]
pub enum CopyError {
    /// The operands or options make no sense (the command's exit code 2).
    #[error("{0}")]
    Usage(String),
    /// The transfer failed with a code both ends agree on (not found, exists, digest
    /// mismatch...); the message names the path.
    #[error("{message}")]
    Transfer {
        /// What kind of failure.
        code: ErrorCode,
        /// For people, with its context (`remote: PATH: REASON`).
        message: String,
    },
    /// Anything else: connecting, authenticating, local I/O.
    #[error("{0}")]
    Other(String),
}

impl CopyError {
    /// Classify an error of the command's code paths, keeping its whole context chain.
    pub fn from_anyhow(err: &anyhow::Error) -> Self {
        let message = format!("{err:#}");
        if err.chain().any(|cause| cause.is::<UsageError>()) {
            return Self::Usage(message);
        }
        match err.chain().find_map(|c| c.downcast_ref::<TransferError>()) {
            Some(t) => Self::Transfer {
                code: t.code,
                message,
            },
            None => Self::Other(message),
        }
    }
}

/// An [`Observer`] that reports `(done, total)` bytes of file data to a function, resumed
/// bytes counting as done: the bindings' progress callbacks.
#[derive(Debug)]
pub struct Progress<F> {
    report: F,
    done: AtomicU64,
    total: AtomicU64,
}

impl<F: Fn(u64, u64) + Sync> Progress<F> {
    /// Call `report(done, total)` as the copy starts and as bytes move.
    pub fn new(report: F) -> Self {
        Self {
            report,
            done: AtomicU64::new(0),
            total: AtomicU64::new(0),
        }
    }

    fn advance(&self, bytes: u64) {
        let done = self.done.fetch_add(bytes, Ordering::Relaxed) + bytes;
        (self.report)(done, self.total.load(Ordering::Relaxed));
    }
}

impl<F: Fn(u64, u64) + Sync> Observer for Progress<F> {
    fn start(&self, _files: u64, bytes: u64) {
        self.total.store(bytes, Ordering::Relaxed);
        (self.report)(self.done.load(Ordering::Relaxed), bytes);
    }

    fn resumed(&self, bytes: u64) {
        self.advance(bytes);
    }

    fn progress(&self, bytes: u64) {
        self.advance(bytes);
    }
}

/// Copy `src` to `dst`, one of them a `udt://host[:port]/path` daemon URL and the other a
/// local path (as `udt cp SRC DST`; `legacy` reads `host:path` as the classic server).
pub fn copy(
    src: &OsStr,
    dst: &OsStr,
    options: &CopyOptions,
    observer: &dyn Observer,
) -> Result<Summary, CopyError> {
    let parse = |arg: &OsStr| {
        Operand::parse(arg, options.legacy).map_err(|e| CopyError::Usage(e.to_string()))
    };
    let srcs = [parse(src)?];
    let dst = parse(dst)?;
    copy_operands(&srcs, &dst, options, observer).map_err(|e| CopyError::from_anyhow(&e))
}

/// [`copy`] for parsed operands, several sources allowed; errors keep their context chain
/// (the command prints it).
pub fn copy_operands(
    srcs: &[Operand],
    dst: &Operand,
    options: &CopyOptions,
    observer: &dyn Observer,
) -> anyhow::Result<Summary> {
    let mixed = || {
        anyhow::Error::from(UsageError(
            "copy either local sources to host:dst or host:sources to a local dst".into(),
        ))
    };
    if srcs.iter().chain([dst]).any(Operand::is_ssh) {
        return Err(UsageError("copies over SSH (host:path) need the udt command".into()).into());
    }
    let opts = ReceiveOptions::new(options.force, options.resume);
    let all_local = srcs.iter().all(|s| matches!(s, Operand::Local(_)));
    match dst {
        Operand::Remote { host, port, path } if all_local => {
            if options.legacy {
                return Err(UsageError("--legacy only downloads (host:file dst)".into()).into());
            }
            let manifest = local_manifest(srcs, options.recursive)?;
            let dest = RelPath::parse_request(path)?;
            let stream = connect(host, *port, options)?;
            finish(stream, |s| upload(s, &manifest, dest, opts, observer))
        }
        Operand::Local(dest) => {
            let (host, port, paths) = remote_sources(srcs)?;
            if options.legacy {
                return legacy_download(options, &host, port, &paths, dest, observer);
            }
            let paths = paths
                .iter()
                .map(|p| request_path(p))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let stream = connect(&host, port, options)?;
            finish(stream, |s| {
                download(s, paths, options.recursive, dest, opts, observer)
            })
        }
        Operand::Remote { .. } | Operand::Ssh(_) => Err(mixed()),
    }
}

/// Run `transfer` on `stream`, then close it (waiting for the last bytes to be acknowledged).
pub(crate) fn finish(
    stream: UdtStream,
    transfer: impl FnOnce(&UdtStream) -> Result<Summary, TransferError>,
) -> anyhow::Result<Summary> {
    let result = transfer(&stream);
    let closed = stream.close();
    let summary = result?;
    closed.context("closing the connection")?;
    Ok(summary)
}

/// The manifest of local sources, each under its own name.
pub(crate) fn local_manifest(srcs: &[Operand], recursive: bool) -> anyhow::Result<Manifest> {
    let mut manifest = Manifest::default();
    for src in srcs {
        let Operand::Local(path) = src else {
            continue; // the callers checked that all are local
        };
        let name = match path.file_name() {
            Some(n) => n.to_os_string(),
            None => path
                .canonicalize()
                .with_context(|| path.display().to_string())?
                .file_name()
                .map(OsStr::to_os_string)
                .with_context(|| format!("{}: has no name to copy under", path.display()))?,
        };
        manifest.add(path, RelPath::from_name(&name)?, recursive)?;
    }
    Ok(manifest)
}

fn legacy_download(
    options: &CopyOptions,
    host: &str,
    port: Option<u16>,
    paths: &[Vec<u8>],
    dest: &Path,
    observer: &dyn Observer,
) -> anyhow::Result<Summary> {
    let [name] = paths else {
        return Err(UsageError("--legacy fetches exactly one file".into()).into());
    };
    if options.recursive || options.resume {
        return Err(UsageError("--legacy supports neither -r nor --resume".into()).into());
    }
    let name = std::str::from_utf8(name).context("--legacy file names must be UTF-8")?;
    let stream = connect(host, port, options)?;
    finish(stream, |s| {
        legacy::fetch(s, name, dest, options.force, observer)
    })
}

fn connect(host: &str, port: Option<u16>, options: &CopyOptions) -> anyhow::Result<UdtStream> {
    let port = port.or(options.port).unwrap_or(DEFAULT_DAEMON_PORT);
    let key = if options.legacy {
        None
    } else {
        client_key(options)?
    };
    let mut socket_options = transfer_options(&options.cc, options.max_bandwidth)?;
    socket_options.set_protect_later(key.is_some());
    let stream = UdtStream::connect_with((host, port), socket_options)
        .with_context(|| format!("connecting to {host}:{port}"))?;
    if let Some(key) = key {
        authenticate(&stream, &key, &format!("{host}:{port}"), options)?;
    }
    Ok(stream)
}

/// The key to present to daemons: `key`, else the default one if it exists.
fn client_key(options: &CopyOptions) -> anyhow::Result<Option<KeyPair>> {
    if options.insecure {
        return Ok(None);
    }
    match &options.key {
        Some(file) => KeyPair::load(file).map(Some).context("--key"),
        None => {
            let file = default_key_file()?;
            if file.exists() {
                KeyPair::load(&file).map(Some)
            } else {
                Ok(None)
            }
        }
    }
}

/// The keyed session's handshake, then the server's key checked against the pinned one.
fn authenticate(
    stream: &UdtStream,
    key: &KeyPair,
    server: &str,
    options: &CopyOptions,
) -> anyhow::Result<()> {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let server_key = handshake::client(stream, key).with_context(|| {
        format!("authenticating with {server} (a server without keys refuses keyed clients: --insecure)")
    })?;
    let _ = stream.set_read_timeout(None);
    let known = match &options.known_servers {
        Some(file) => KnownServers::new(file.clone()),
        None => KnownServers::new(config_dir()?.join("known_servers")),
    };
    if known.check(server, &server_key)? == Pinned::New && !options.quiet {
        eprintln!(
            "udt: first contact with {server}: pinned its key {server_key} in {}",
            known.path().display()
        );
    }
    Ok(())
}

/// All sources remote and on one host: the host and the paths.
fn remote_sources(srcs: &[Operand]) -> anyhow::Result<(String, Option<u16>, Vec<Vec<u8>>)> {
    let mut host_seen: Option<(&str, Option<u16>)> = None;
    let mut paths = Vec::new();
    for src in srcs {
        let Operand::Remote { host, port, path } = src else {
            return Err(UsageError(
                "copy either local sources to host:dst or host:sources to a local dst".into(),
            )
            .into());
        };
        if host_seen.is_some_and(|seen| seen != (host, *port)) {
            return Err(UsageError("all remote sources must be on the same host".into()).into());
        }
        host_seen = Some((host, *port));
        paths.push(path.clone());
    }
    let (host, port) = host_seen.unwrap_or_default();
    Ok((host.to_string(), port, paths))
}

fn request_path(path: &[u8]) -> anyhow::Result<RelPath> {
    RelPath::parse_request(path)?.ok_or_else(|| {
        UsageError("name a file or directory under the served root (host:path)".into()).into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_operands_are_refused_as_usage() {
        let err = copy(
            OsStr::new("file"),
            OsStr::new("host:dir/"),
            &CopyOptions::default(),
            &crate::transfer::Quiet,
        )
        .unwrap_err();
        assert!(
            matches!(err, CopyError::Usage(ref m) if m.contains("SSH")),
            "{err}"
        );
    }

    #[test]
    fn progress_counts_resumed_and_moved_bytes_against_the_total() {
        let seen = std::sync::Mutex::new(Vec::new());
        let progress = Progress::new(|done, total| seen.lock().unwrap().push((done, total)));
        progress.start(2, 100);
        progress.resumed(30);
        progress.progress(70);
        assert_eq!(*seen.lock().unwrap(), [(0, 100), (30, 100), (100, 100)]);
    }

    #[test]
    fn two_local_operands_are_a_usage_error() {
        let err = copy(
            OsStr::new("a"),
            OsStr::new("b"),
            &CopyOptions::default(),
            &crate::transfer::Quiet,
        )
        .unwrap_err();
        assert!(matches!(err, CopyError::Usage(_)), "{err}");
    }

    #[test]
    fn a_missing_daemon_is_not_a_usage_error() {
        let dir = std::env::temp_dir();
        let options = CopyOptions {
            insecure: true,
            ..CopyOptions::default()
        };
        // Port 9 (discard) on loopback: nothing listens, so the connect fails fast.
        let err = copy(
            OsStr::new("udt://127.0.0.1:9/f"),
            dir.as_os_str(),
            &options,
            &crate::transfer::Quiet,
        )
        .unwrap_err();
        assert!(
            matches!(err, CopyError::Other(ref m) if m.contains("connecting")),
            "{err}"
        );
    }
}
