//! `udt cp`: copy files to or from a `udt serve` host, scp-style (`host:path` is remote).
//!
//! Exactly one side is remote: `udt cp SRC... host:DST` uploads, `udt cp host:SRC... DST`
//! downloads. The transfer itself is [`crate::transfer::session`]; this module parses
//! operands, connects, and reports (a progress bar on a terminal, a summary line, or
//! `--json` events, one object per line on stdout).

use std::ffi::{OsStr, OsString};
use std::io::IsTerminal;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use udt::{SocketOptions, UdtStream};

use crate::transfer::legacy;
use crate::transfer::manifest::Manifest;
use crate::transfer::paths::RelPath;
use crate::transfer::receiver::ReceiveOptions;
use crate::transfer::session::{download, upload};
use crate::transfer::{Observer, Summary, TransferError};
use crate::UsageError;

/// Arguments of `udt cp`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Sources then the destination; `host:path` (or `[v6addr]:path`) names a path under a
    /// `udt serve` root. Exactly one side is remote.
    #[arg(required = true, num_args = 2.., value_name = "SRC... DST")]
    pub operands: Vec<OsString>,
    /// The server's UDP port.
    #[arg(short = 'P', long, default_value_t = 9000)]
    pub port: u16,
    /// Copy directories and their contents.
    #[arg(short, long)]
    pub recursive: bool,
    /// Continue an interrupted transfer without resending what arrived intact; keep partial
    /// files if this one fails.
    #[arg(long)]
    pub resume: bool,
    /// Overwrite existing files at the destination (a server replaces files only if it
    /// runs with --allow-overwrite).
    #[arg(long)]
    pub force: bool,
    /// No progress bar and no summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// Print events as JSON lines on stdout (start, file_done, summary, error).
    #[arg(long)]
    pub json: bool,
    /// Talk to a classic UDT4 `sendfile` server (download of one file, no digest).
    #[arg(long)]
    pub legacy: bool,
    /// Congestion control when this side sends (uploads; for downloads the server's `--cc`
    /// decides): `model` holds its rate through random loss and long round trips, `native` is
    /// UDT4's DAIMD as in libudt.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_CC, value_parser = CC_NAMES)]
    pub cc: String,
}

/// The controllers `udt cp` and `udt serve` offer (`fixed-rate` needs a rate: `udt perf`).
pub const CC_NAMES: [&str; 2] = ["model", "native"];

/// The default controller of `udt cp` and `udt serve`: see docs/lab/loss-sweep and
/// decision-matrix for why (UDT4's default, `native`, stays the library's).
pub const DEFAULT_CC: &str = "model";

/// The socket options of a transfer connection, with congestion control `cc`.
pub fn transfer_options(cc: &str) -> anyhow::Result<SocketOptions> {
    let mut options = SocketOptions::default();
    options
        .set_controller_named(cc, None)
        .with_context(|| format!("--cc {cc}"))?;
    Ok(options)
}

/// One side of the copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// A local path.
    Local(PathBuf),
    /// `host:path`.
    Remote {
        /// Host name or address.
        host: String,
        /// Path under the server's root, as typed.
        path: Vec<u8>,
    },
}

impl Operand {
    /// scp's rule: a `:` before any `/` makes a remote operand; `[addr]:` for IPv6.
    pub fn parse(arg: &OsStr) -> Self {
        let bytes = arg.as_bytes();
        if let Some(rest) = bytes.strip_prefix(b"[") {
            if let Some(end) = rest.windows(2).position(|w| w == b"]:") {
                return Self::Remote {
                    host: String::from_utf8_lossy(&rest[..end]).into_owned(),
                    path: rest[end + 2..].to_vec(),
                };
            }
        }
        let colon = bytes.iter().position(|&b| b == b':');
        let slash = bytes.iter().position(|&b| b == b'/');
        match colon {
            Some(c) if c > 0 && slash.is_none_or(|s| c < s) => Self::Remote {
                host: String::from_utf8_lossy(&bytes[..c]).into_owned(),
                path: bytes[c + 1..].to_vec(),
            },
            _ => Self::Local(PathBuf::from(arg)),
        }
    }
}

/// Runs `udt cp`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let (dst, srcs) = args
        .operands
        .split_last()
        .ok_or_else(|| UsageError("need SRC... DST".into()))?;
    let srcs: Vec<Operand> = srcs.iter().map(|s| Operand::parse(s)).collect();
    let dst = Operand::parse(dst);
    let reporter = Reporter::new(&args);
    let started = Instant::now();
    let result = dispatch(&args, &srcs, &dst, &reporter);
    match result {
        Ok(summary) => {
            reporter.finish(&summary, started.elapsed().as_secs_f64());
            Ok(())
        }
        Err(err) => {
            reporter.fail(&err);
            Err(err)
        }
    }
}

/// Pick the direction and run it.
fn dispatch(
    args: &Args,
    srcs: &[Operand],
    dst: &Operand,
    reporter: &Reporter,
) -> anyhow::Result<Summary> {
    let opts = ReceiveOptions::new(args.force, args.resume);
    let all_local = srcs.iter().all(|s| matches!(s, Operand::Local(_)));
    match dst {
        Operand::Remote { host, path } if all_local => {
            if args.legacy {
                return Err(UsageError("--legacy only downloads (host:file dst)".into()).into());
            }
            let manifest = local_manifest(srcs, args.recursive)?;
            let dest = RelPath::parse_request(path)?;
            let stream = connect(host, args)?;
            finish(stream, |s| upload(s, &manifest, dest, opts, reporter))
        }
        Operand::Local(dest) => {
            let (host, paths) = remote_sources(srcs)?;
            if args.legacy {
                return legacy_download(args, &host, &paths, dest, reporter);
            }
            let paths = paths
                .iter()
                .map(|p| request_path(p))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let stream = connect(&host, args)?;
            finish(stream, |s| {
                download(s, paths, args.recursive, dest, opts, reporter)
            })
        }
        Operand::Remote { .. } => Err(UsageError(
            "copy either local sources to host:dst or host:sources to a local dst".into(),
        )
        .into()),
    }
}

fn legacy_download(
    args: &Args,
    host: &str,
    paths: &[Vec<u8>],
    dest: &Path,
    reporter: &Reporter,
) -> anyhow::Result<Summary> {
    let [name] = paths else {
        return Err(UsageError("--legacy fetches exactly one file".into()).into());
    };
    if args.recursive || args.resume {
        return Err(UsageError("--legacy supports neither -r nor --resume".into()).into());
    }
    let name = std::str::from_utf8(name).context("--legacy file names must be UTF-8")?;
    let stream = connect(host, args)?;
    finish(stream, |s| {
        legacy::fetch(s, name, dest, args.force, reporter)
    })
}

/// Run `transfer` on `stream`, then close it (waiting for the last bytes to be acknowledged).
fn finish(
    stream: UdtStream,
    transfer: impl FnOnce(&UdtStream) -> Result<Summary, TransferError>,
) -> anyhow::Result<Summary> {
    let result = transfer(&stream);
    let closed = stream.close();
    let summary = result?;
    closed.context("closing the connection")?;
    Ok(summary)
}

fn connect(host: &str, args: &Args) -> anyhow::Result<UdtStream> {
    let port = args.port;
    UdtStream::connect_with((host, port), transfer_options(&args.cc)?)
        .with_context(|| format!("connecting to {host}:{port}"))
}

/// All sources remote and on one host: the host and the paths.
fn remote_sources(srcs: &[Operand]) -> anyhow::Result<(String, Vec<Vec<u8>>)> {
    let mut host_seen: Option<&str> = None;
    let mut paths = Vec::new();
    for src in srcs {
        let Operand::Remote { host, path } = src else {
            return Err(UsageError(
                "copy either local sources to host:dst or host:sources to a local dst".into(),
            )
            .into());
        };
        if host_seen.is_some_and(|h| h != host) {
            return Err(UsageError("all remote sources must be on the same host".into()).into());
        }
        host_seen = Some(host);
        paths.push(path.clone());
    }
    Ok((host_seen.unwrap_or_default().to_string(), paths))
}

fn request_path(path: &[u8]) -> anyhow::Result<RelPath> {
    RelPath::parse_request(path)?.ok_or_else(|| {
        UsageError("name a file or directory under the served root (host:path)".into()).into()
    })
}

/// The manifest of local sources, each under its own name.
fn local_manifest(srcs: &[Operand], recursive: bool) -> anyhow::Result<Manifest> {
    let mut manifest = Manifest::default();
    for src in srcs {
        let Operand::Local(path) = src else {
            continue; // dispatch checked that all are local
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

/// One `--json` line.
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Event<'a> {
    Start {
        files: u64,
        bytes: u64,
    },
    FileDone {
        path: &'a str,
        bytes: u64,
    },
    Summary {
        files: u64,
        bytes: u64,
        transferred_bytes: u64,
        resumed_bytes: u64,
        seconds: f64,
        rate_bps: f64,
    },
    Error {
        code: &'a str,
        message: &'a str,
    },
}

fn emit(event: &Event<'_>) {
    if let Ok(line) = serde_json::to_string(event) {
        println!("{line}");
    }
}

/// Progress and results, as a bar, JSON events, or nothing.
struct Reporter {
    json: bool,
    quiet: bool,
    bar: Option<ProgressBar>,
}

impl Reporter {
    fn new(args: &Args) -> Self {
        let show_bar = !args.quiet && !args.json && std::io::stderr().is_terminal();
        let bar = show_bar.then(|| {
            let bar = ProgressBar::new(0);
            let style = ProgressStyle::with_template(
                "{wide_bar} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar
        });
        Self {
            json: args.json,
            quiet: args.quiet,
            bar,
        }
    }

    fn finish(&self, s: &Summary, seconds: f64) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        let rate_bps = s.transferred as f64 * 8.0 / seconds.max(1e-9);
        if self.json {
            emit(&Event::Summary {
                files: s.files,
                bytes: s.bytes,
                transferred_bytes: s.transferred,
                resumed_bytes: s.resumed,
                seconds,
                rate_bps,
            });
        } else if !self.quiet {
            let resumed = if s.resumed > 0 {
                format!(", {} already there", human_bytes(s.resumed))
            } else {
                String::new()
            };
            eprintln!(
                "{} files, {} in {seconds:.2} s ({:.1} Mbit/s){resumed}",
                s.files,
                human_bytes(s.transferred),
                rate_bps / 1e6
            );
        }
    }

    fn fail(&self, err: &anyhow::Error) {
        if let Some(bar) = &self.bar {
            bar.abandon();
        }
        if self.json {
            let code = err
                .chain()
                .find_map(|c| c.downcast_ref::<TransferError>())
                .map_or("io", |t| t.code.name());
            emit(&Event::Error {
                code,
                message: &format!("{err:#}"),
            });
        }
    }
}

impl Observer for Reporter {
    fn start(&self, files: u64, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(bytes);
        }
        if self.json {
            emit(&Event::Start { files, bytes });
        }
    }

    fn resumed(&self, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(bytes);
        }
    }

    fn progress(&self, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(bytes);
        }
    }

    fn file_done(&self, path: &RelPath, size: u64) {
        if self.json {
            emit(&Event::FileDone {
                path: &path.display(),
                bytes: size,
            });
        }
    }
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(s: &str) -> Operand {
        Operand::parse(OsStr::new(s))
    }

    #[test]
    fn operands_follow_scp() {
        let remote = |h: &str, p: &str| Operand::Remote {
            host: h.into(),
            path: p.as_bytes().to_vec(),
        };
        assert_eq!(op("host:a/b"), remote("host", "a/b"));
        assert_eq!(op("host:"), remote("host", ""));
        assert_eq!(op("[::1]:f"), remote("::1", "f"));
        assert_eq!(op("./a:b"), Operand::Local("./a:b".into()));
        assert_eq!(op("dir/x:y"), Operand::Local("dir/x:y".into()));
        assert_eq!(op(":x"), Operand::Local(":x".into()));
        assert_eq!(op("plain"), Operand::Local("plain".into()));
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_bytes(5), "5 B");
        assert_eq!(human_bytes(3 << 30), "3.00 GiB");
    }
}
