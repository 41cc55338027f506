//! `udt cp`: copy files to or from another host, scp-style: `[user@]host:path` over SSH (see
//! [`crate::ssh`]), `udt://host[:port]/path` from a `udt serve` daemon (see `operand`).
//!
//! Exactly one side is remote: `udt cp SRC... host:DST` uploads, `udt cp host:SRC... DST`
//! downloads. The daemon form is [`crate::copy`] (a library call the bindings share), SSH
//! is [`crate::ssh`]; this module parses operands and reports (a progress bar on a terminal, a summary line, or
//! `--json` events, one object per line on stdout).

mod operand;

use std::ffi::OsString;
use std::io::IsTerminal;
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use udt::SocketOptions;

use crate::copy::{copy_operands, CopyOptions};
use crate::transfer::paths::RelPath;
use crate::transfer::receiver::ReceiveOptions;
use crate::transfer::{Observer, Summary, TransferError};
use crate::UsageError;
pub use operand::{Operand, SshOperand};

/// The daemon's port when neither the operand nor `-P` names one.
pub const DEFAULT_DAEMON_PORT: u16 = 9000;

/// Arguments of `udt cp`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Sources then the destination. `[user@]host:path` (or `[user@][v6addr]:path`) is a
    /// path on host, logged in with ssh; `udt://host[:port]/path` a path under a `udt serve`
    /// root. Exactly one side is remote.
    #[arg(required = true, num_args = 2.., value_name = "SRC... DST")]
    pub operands: Vec<OsString>,
    /// The remote's port: ssh's for `host:path` (default: ssh's own, 22), the daemon's UDP
    /// port for `udt://host/path` without one (default 9000).
    #[arg(short = 'P', long)]
    pub port: Option<u16>,
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
    /// decides, or over SSH this one): `model` holds its rate through random loss and long
    /// round trips, `native` is UDT4's DAIMD as in libudt, `ledbat` is the background
    /// scavenger (see --priority).
    #[arg(long, value_name = "NAME", default_value = DEFAULT_CC, value_parser = CC_NAMES)]
    pub cc: String,
    /// How this transfer shares the path with other traffic, after Aspera's transfer
    /// policies. `background` (Aspera's "low"): the LEDBAT scavenger (`--cc ledbat`) uses only
    /// the capacity other traffic leaves idle, gives way within a few round trips when
    /// anything else needs the path (it aims at 25 ms of queueing delay and backs off above
    /// it), and takes the capacity back when they are done. `normal` (Aspera's "fair"): the
    /// default controller (`model`), which takes a fair share. There is no "high". Like
    /// --cc, it applies to what this side sends: uploads, and downloads over SSH.
    #[arg(long, value_name = "background|normal", conflicts_with = "cc")]
    pub priority: Option<String>,
    /// Cap the sending rate (UDT_MAXBW): bits per second with decimal prefixes (100M, 1G,
    /// 1.5gbit), or bytes per second with a capital B (10MB/s). It counts whole packets with
    /// their headers, so file data moves about 3% slower. Applies to what this side sends:
    /// uploads, and downloads over SSH (a `udt serve` daemon's own --maxbw caps its
    /// downloads). Combines with --priority: a background transfer never exceeds the cap.
    #[arg(long, value_name = "RATE")]
    pub maxbw: Option<String>,
    /// For `udt://` daemons: this user's private key (from `udt keygen`), presented to the
    /// server, which must list its public half. Default: $XDG_CONFIG_HOME/udt/id_udt or
    /// ~/.config/udt/id_udt when it exists; without a key the session is neither
    /// authenticated nor encrypted (a keyed server refuses it).
    #[arg(long, value_name = "FILE", conflicts_with = "insecure")]
    pub key: Option<std::path::PathBuf>,
    /// For `udt://` daemons: where server keys are pinned on first contact. Default:
    /// known_servers beside the default key.
    #[arg(long, value_name = "FILE")]
    pub known_servers: Option<std::path::PathBuf>,
    /// For `udt://` daemons: do not use a key even if one exists (no authentication, no
    /// encryption; only servers without keys, or that also admit clients without keys, accept).
    #[arg(long)]
    pub insecure: bool,
    /// How to reach `host:path` operands over SSH.
    #[command(flatten)]
    pub ssh: crate::ssh::SshArgs,
}

impl Args {
    /// The controller this side sends with: `--priority`'s, else `--cc`.
    pub fn controller(&self) -> Result<&str, UsageError> {
        match self.priority.as_deref() {
            Some(priority) => Priority::parse(priority).map(Priority::controller),
            None => Ok(&self.cc),
        }
    }

    /// `--maxbw` in bytes per second.
    pub fn max_bandwidth(&self) -> Result<Option<u64>, UsageError> {
        parse_maxbw(self.maxbw.as_deref())
    }
}

/// `udt cp --priority`: Aspera's transfer policies, as our controllers. Read by hand rather
/// than by clap, so that a bad value is one line naming the flag and the choices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Priority {
    /// Only idle capacity, yield to any other traffic (Aspera "low"): `--cc ledbat`.
    Background,
    /// A fair share (Aspera "fair"): the default controller.
    Normal,
}

impl Priority {
    /// Reads `background` or `normal`.
    pub fn parse(value: &str) -> Result<Self, UsageError> {
        match value {
            "background" => Ok(Self::Background),
            "normal" => Ok(Self::Normal),
            _ => Err(UsageError(format!(
                "--priority {value:?}: use background (only idle capacity, like Aspera's \
                 low) or normal (a fair share, like Aspera's fair)"
            ))),
        }
    }

    /// The controller name this priority stands for.
    pub fn controller(self) -> &'static str {
        match self {
            Self::Background => udt_proto::congestion::LedbatFactory::NAME,
            Self::Normal => DEFAULT_CC,
        }
    }
}

/// Reads a `--maxbw` value (`udt_units` rates, as `udt perf --maxbw`) into bytes per second;
/// a bad one is a one-line usage error naming the flag.
pub fn parse_maxbw(rate: Option<&str>) -> Result<Option<u64>, UsageError> {
    rate.map(|r| {
        udt_units::parse_rate(r)
            .map(udt_units::Rate::bytes_per_sec)
            .map_err(|e| UsageError(format!("--maxbw: {e}")))
    })
    .transpose()
}

/// The controllers `udt cp` and `udt serve` offer: the library's that need no rate
/// (`fixed-rate` does: `udt perf --maxbw`).
pub const CC_NAMES: [&str; 4] = SocketOptions::RATELESS_CONTROLLER_NAMES;

/// The default controller of `udt cp` and `udt serve`: see docs/lab/loss-sweep and
/// decision-matrix for why (UDT4's default, `native`, stays the library's).
pub const DEFAULT_CC: &str = udt_proto::congestion::ModelFactory::NAME;

/// The socket options of a transfer connection, with congestion control `cc` and the
/// sending rate capped at `maxbw` bytes per second (UDT_MAXBW) if given.
pub fn transfer_options(cc: &str, maxbw: Option<u64>) -> anyhow::Result<SocketOptions> {
    let mut options = SocketOptions::default();
    options
        .set_controller_named(cc, None)
        .with_context(|| format!("--cc {cc}"))?;
    options.set_max_bandwidth(maxbw);
    Ok(options)
}

/// Runs `udt cp`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let (dst, srcs) = args
        .operands
        .split_last()
        .ok_or_else(|| UsageError("need SRC... DST".into()))?;
    // Bad values fail before anything connects.
    args.controller()?;
    args.max_bandwidth()?;
    let parse = |arg: &OsString| Operand::parse(arg, args.legacy);
    let srcs: Vec<Operand> = srcs.iter().map(parse).collect::<Result<_, _>>()?;
    let dst = parse(dst)?;
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

/// Pick the direction and run it: over SSH here, with a daemon in [`crate::copy`].
fn dispatch(
    args: &Args,
    srcs: &[Operand],
    dst: &Operand,
    reporter: &Reporter,
) -> anyhow::Result<Summary> {
    if srcs.iter().chain([dst]).any(Operand::is_ssh) {
        let opts = ReceiveOptions::new(args.force, args.resume);
        return crate::ssh::client::copy(args, srcs, dst, opts, reporter);
    }
    copy_operands(srcs, dst, &args.copy_options()?, reporter)
}

impl Args {
    /// The daemon-related flags, for [`crate::copy`].
    fn copy_options(&self) -> Result<CopyOptions, UsageError> {
        Ok(CopyOptions {
            recursive: self.recursive,
            resume: self.resume,
            force: self.force,
            cc: self.controller()?.to_string(),
            max_bandwidth: self.max_bandwidth()?,
            port: self.port,
            key: self.key.clone(),
            known_servers: self.known_servers.clone(),
            insecure: self.insecure,
            legacy: self.legacy,
            quiet: self.quiet,
        })
    }
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

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_bytes(5), "5 B");
        assert_eq!(human_bytes(3 << 30), "3.00 GiB");
    }
}
