//! `udt lab`: an emulated wide-area link in network namespaces (see the `udt-lab` crate).
//!
//! - `udt lab link --rate R --rtt T [--loss P] [--queue N] [--jitter D] [--a CMD] [-- CMD...]`
//!   runs `CMD...` in namespace b (an interactive shell without it) and `--a CMD` in namespace
//!   a, across the emulated link; the exit status is `CMD`'s.
//! - `udt lab calibrate` measures the highest rate the emulator sustains on this machine.
//! - `udt lab run EXPERIMENT|all [--quick] [--out DIR] [--rate-cap RATE]` runs the
//!   published UDT-vs-TCP experiments (`udt_lab::experiment`) and writes their reports.
//!
//! This is a thin front: parsing here, everything else in `udt_lab`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Subcommand;
use udt_lab::experiment::{self, Settings};
use udt_lab::flows::RunOptions;
use udt_lab::params::{parse_duration, parse_loss, parse_queue};
use udt_lab::run::LinkCommands;
use udt_lab::{LinkParams, QueueLimit};
use udt_units::{parse_rate, Rate};

/// Arguments of `udt lab`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to do in the lab.
    #[command(subcommand)]
    pub command: LabCommand,
}

/// The `udt lab` commands.
#[derive(Debug, Subcommand)]
pub enum LabCommand {
    /// Run commands across an emulated link (needs root).
    ///
    /// Namespace a is 10.201.0.1, namespace b is 10.201.0.2; both commands get UDT_LAB_A,
    /// UDT_LAB_B (the addresses) and UDT_LAB_NS_A, UDT_LAB_NS_B (the namespace names, for
    /// `ip netns exec` from another terminal). Example:
    /// `udt lab link --rate 100mbit --rtt 50ms --a 'iperf3 -s -1' -- iperf3 -c 10.201.0.1`
    Link(LinkArgs),
    /// Measure the highest rate the emulator sustains here, as a Markdown report (needs root).
    Calibrate(CalibrateArgs),
    /// Run an experiment (or `all`) and write report.md, results.json and SVG plots
    /// (needs root).
    ///
    /// Each runs real flows across emulated links: ours (`udt perf`, each congestion
    /// control), libudt 4.11 (the interop peers), kernel TCP cubic and bbr, and in the buffer
    /// sweep uTP (`utp-perf` over librqbit-utp, built beside `udt` when missing). Run it on
    /// an otherwise idle machine: the emulator is timing-sensitive. On a shared one, set
    /// UDT_LAB_LOCK=FILE: each run then holds an exclusive flock on FILE while it measures,
    /// and work that takes the same lock (`flock FILE.turn true; flock -s FILE cargo build`)
    /// waits between runs.
    Run(RunArgs),
}

/// Arguments of `udt lab run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The experiment's name, or `all`.
    #[arg(value_name = "EXPERIMENT", value_parser = experiment_name)]
    pub experiment: String,
    /// The quick variant: a few cells and short flows (a smoke test, as CI runs it).
    #[arg(long)]
    pub quick: bool,
    /// Where to write the reports (with `all`, one subdirectory per experiment).
    #[arg(long, default_value = "lab-results")]
    pub out: PathBuf,
    /// The highest link rate to emulate; faster cells run at this rate and say so. The
    /// default is the rate this kind of machine sustains (see `udt lab calibrate`).
    #[arg(long, value_parser = parse_rate, default_value = "200mbit")]
    pub rate_cap: Rate,
    /// Seconds at the start of each flow left out of its steady goodput.
    #[arg(long, value_parser = parse_duration, default_value = "1s")]
    pub warmup: Duration,
    /// Length of every flow, instead of each experiment's own (6 s full, 2 s quick for the
    /// decision matrix and the loss sweep): UDT converges more slowly than TCP.
    #[arg(long, value_parser = parse_duration)]
    pub flow_time: Option<Duration>,
    /// Continue an experiment that was stopped: reuse the runs recorded in
    /// OUT/rows.partial.jsonl (written as each run ends) and measure only the rest. The
    /// settings must match the stopped attempt's.
    #[arg(long)]
    pub resume: bool,
    /// Run only the cells with these nominal link rates (comma-separated: 1gbit), as the
    /// experiment lists them (before --rate-cap).
    #[arg(long, value_delimiter = ',', value_parser = parse_rate)]
    pub rates: Vec<Rate>,
    /// Run only the cells with these round-trip times (comma-separated: 0,100ms), to
    /// re-measure part of a grid.
    #[arg(long, value_delimiter = ',', value_parser = parse_duration)]
    pub rtts: Vec<Duration>,
    /// Run only the cells with these random loss rates (comma-separated: 0,0.1%).
    #[arg(long, value_delimiter = ',', value_parser = parse_loss)]
    pub losses: Vec<f64>,
    /// Run only the runs whose label contains one of these (comma-separated: model,bbr);
    /// the labels are the column and row names of the report's tables.
    #[arg(long, value_delimiter = ',')]
    pub runs: Vec<String>,
    /// The scavenger experiment only: when the competitor starts (default: a quarter of
    /// the way through the scavenger's flow, 4s of 16s). Its slowdowns come at nearly the
    /// same times in every run, so compare builds over several starts.
    #[arg(long, value_parser = parse_duration)]
    pub competitor_start: Option<Duration>,
    /// Run each run N times and report medians, with each run's share of the link beside
    /// them (fairness only: one run of a fairness cell spreads widely, and the runs of one
    /// TCP count repeat together, so a UDT run is compared with TCP measured beside it).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=100))]
    pub repeat: u16,
}

/// Accepts `all` or a registered experiment name, and lists them otherwise.
fn experiment_name(name: &str) -> Result<String, String> {
    let names: Vec<&str> = experiment::registry().iter().map(|e| e.name).collect();
    if name == "all" || names.contains(&name) {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "no experiment {name:?}; choose all, {}",
            names.join(", ")
        ))
    }
}

/// Arguments of `udt lab link`.
#[derive(Debug, clap::Args)]
pub struct LinkArgs {
    /// Link rate in bits per second, each direction: 45mbit, 155M, 1gbit, 1G (a capital B
    /// says bytes: 10MB/s).
    #[arg(long, value_parser = parse_rate)]
    pub rate: Rate,
    /// Round-trip propagation delay (half each way): 0, 250us, 100ms, 1s.
    #[arg(long, value_parser = parse_duration)]
    pub rtt: Duration,
    /// Random loss per packet, each direction: 0.1% or 0.001.
    #[arg(long, value_parser = parse_loss, default_value = "0")]
    pub loss: f64,
    /// Drop-tail queue per direction: a bare number is packets of the MTU; with a unit, bytes
    /// (B; KB, MB decimal; K, M, KiB, MiB binary). Default: one bandwidth-delay product, at
    /// least 64 packets.
    #[arg(long, value_parser = parse_queue)]
    pub queue: Option<QueueLimit>,
    /// Extra random delay, uniform in [0, D] per packet, each direction; never reorders.
    #[arg(long, value_parser = parse_duration, default_value = "0")]
    pub jitter: Duration,
    /// MTU of the link (the TUN devices).
    #[arg(long, default_value_t = LinkParams::DEFAULT_MTU)]
    pub mtu: u32,
    /// Seed of the random loss and jitter.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Shell command to run in namespace a, in the background (e.g. a server); stopped when
    /// the main command ends.
    #[arg(long = "a", value_name = "CMD")]
    pub a: Option<String>,
    /// Command to run in namespace b (default: an interactive $SHELL).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// Arguments of `udt lab calibrate`.
#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    /// Rates to try, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = parse_rate,
          default_value = "100mbit,200mbit,500mbit,1gbit,2gbit")]
    pub rates: Vec<Rate>,
    /// RTT of the calibration link.
    #[arg(long, value_parser = parse_duration, default_value = "10ms")]
    pub rtt: Duration,
    /// Length of each blast.
    #[arg(long, value_parser = parse_duration, default_value = "3s")]
    pub duration: Duration,
    /// Blasts per rate, and flows per rate and implementation (the report gives medians).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Skip the real flows (a kernel TCP BBR and a UDT `model` flow per rate, each
    /// DURATION plus a 1 s warm-up) and measure with UDP blasts only.
    #[arg(long)]
    pub no_flows: bool,
    /// Write the Markdown report here (default: standard output).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `udt lab`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        LabCommand::Link(args) => link(args),
        LabCommand::Calibrate(args) => calibrate(args),
        LabCommand::Run(args) => run_experiments(args),
    }
}

fn run_experiments(args: RunArgs) -> anyhow::Result<()> {
    let experiments: Vec<experiment::Experiment> = if args.experiment == "all" {
        experiment::registry()
    } else {
        experiment::find(&args.experiment).into_iter().collect()
    };
    if args.repeat > 1 {
        if let Some(e) = experiments.iter().find(|e| !e.repeats) {
            let can: Vec<&str> = experiment::registry()
                .into_iter()
                .filter(|e| e.repeats)
                .map(|e| e.name)
                .collect();
            anyhow::bail!(
                "--repeat: the {} experiment runs each run once; only {} can repeat its runs \
                 (run it on its own: udt lab run {} --repeat N)",
                e.name,
                can.join(", "),
                can.first().copied().unwrap_or("fairness")
            );
        }
    }
    udt_lab::check_privileges()?;
    let mut run = RunOptions::new()?;
    run.warmup = args.warmup;
    let settings = Settings {
        quick: args.quick,
        rate_cap_bps: args.rate_cap.bits_per_sec(),
        run,
        out: args.out,
        command: command_line(),
        progress: true,
        flow_time: args.flow_time,
        resume: args.resume,
        only: experiment::CellFilter {
            rates: args.rates.iter().map(|r| r.bits_per_sec()).collect(),
            rtts: args.rtts,
            losses: args.losses,
            runs: args.runs,
        },
        repeat: usize::from(args.repeat),
        competitor_start: args.competitor_start,
    };
    if settings.competitor_start.is_some() {
        if experiments.len() != 1 || experiments[0].name != "scavenger" {
            anyhow::bail!(
                "--competitor-start applies to the scavenger experiment only \
                 (udt lab run scavenger --competitor-start 5s)"
            );
        }
        experiment::scavenger::check_competitor_start(&settings).map_err(anyhow::Error::msg)?;
    }
    for dir in experiment::run_and_write(&experiments, &settings)? {
        eprintln!("udt lab: wrote {}", dir.join("report.md").display());
    }
    Ok(())
}

/// `udt ARGS...` as typed, for the reports.
fn command_line() -> String {
    std::iter::once("udt".to_owned())
        .chain(std::env::args().skip(1).map(|a| shell_quoted(&a)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `arg` as a POSIX shell reads it back: as it is when it holds only characters no shell
/// treats specially, else in single quotes (a `--runs` list of labels has spaces and `×`).
fn shell_quoted(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,%@+".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

fn link(args: LinkArgs) -> anyhow::Result<()> {
    let params = LinkParams {
        rate_bps: args.rate.bits_per_sec(),
        rtt: args.rtt,
        loss: args.loss,
        jitter: args.jitter,
        queue: args.queue,
        mtu: args.mtu,
        seed: args.seed,
    };
    let commands = LinkCommands {
        a: args.a,
        b: args.command,
    };
    let status = udt_lab::run::run_link(params, &commands)?;
    // The lab is torn down by now; pass the command's status on as ours.
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => std::process::exit(code),
        None => std::process::exit(
            128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0),
        ),
    }
}

fn calibrate(args: CalibrateArgs) -> anyhow::Result<()> {
    let rates_bps: Vec<u64> = args.rates.iter().map(|r| r.bits_per_sec()).collect();
    let flows = if args.no_flows {
        None
    } else {
        Some(RunOptions::new().context(
            "locating the flows' binaries (or pass --no-flows to calibrate with blasts only)",
        )?)
    };
    let report = udt_lab::calibrate::calibrate(
        &rates_bps,
        args.rtt,
        args.duration,
        args.runs,
        flows.as_ref(),
    )?;
    let md = report.to_markdown(&command_line());
    match args.out {
        Some(path) => {
            std::fs::write(&path, md).with_context(|| format!("writing {}", path.display()))
        }
        None => {
            print!("{md}");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn link(line: &str) -> Result<LinkArgs, clap::Error> {
        let argv = std::iter::once("udt").chain(line.split_whitespace());
        match Cli::try_parse_from(argv)?.command {
            Command::Lab(Args {
                command: LabCommand::Link(args),
            }) => Ok(args),
            _ => unreachable!("a lab link command line"),
        }
    }

    #[test]
    fn rates_and_queues_read_as_perf_reads_them() {
        for (rate, bps) in [
            ("100mbit", 100_000_000),
            ("100M", 100_000_000),
            ("100Mbps", 100_000_000),
            ("1.5gbit", 1_500_000_000),
            ("10MB/s", 80_000_000),
        ] {
            let args = link(&format!("lab link --rate {rate} --rtt 10ms")).unwrap();
            assert_eq!(args.rate.bits_per_sec(), bps, "{rate}");
        }
        let args = link("lab link --rate 1G --rtt 10ms --queue 16MB").unwrap();
        assert_eq!(args.queue, Some(QueueLimit::Bytes(16_000_000)));
        let args = link("lab link --rate 1G --rtt 10ms --queue 16M").unwrap();
        assert_eq!(args.queue, Some(QueueLimit::Bytes(16 << 20)));
        let err = link("lab link --rate fast --rtt 10ms")
            .unwrap_err()
            .to_string();
        assert!(err.contains("e.g. 100M"), "{err}");
    }

    #[test]
    fn defaults_parse() {
        let argv = ["udt", "lab", "calibrate"];
        let Command::Lab(Args {
            command: LabCommand::Calibrate(args),
        }) = Cli::try_parse_from(argv).unwrap().command
        else {
            panic!("a calibrate command line")
        };
        assert_eq!(args.rates.len(), 5);
        assert_eq!(args.rates[4].bits_per_sec(), 2_000_000_000);
    }

    #[test]
    fn report_commands_quote_what_a_shell_would_split() {
        assert_eq!(shell_quoted("--rate-cap"), "--rate-cap");
        assert_eq!(shell_quoted("0,0.1%"), "0,0.1%");
        assert_eq!(
            shell_quoted("10 × kernel TCP cubic"),
            "'10 × kernel TCP cubic'"
        );
        assert_eq!(shell_quoted("it's"), r"'it'\''s'");
        assert_eq!(shell_quoted(""), "''");
    }

    #[test]
    fn repeat_is_one_to_a_hundred() {
        let parse = |line: &str| Cli::try_parse_from(line.split(' '));
        let Command::Lab(Args {
            command: LabCommand::Run(args),
        }) = parse("udt lab run fairness --repeat 3").unwrap().command
        else {
            panic!("a run command line")
        };
        assert_eq!(args.repeat, 3);
        assert!(parse("udt lab run fairness --repeat 0").is_err());
        assert!(parse("udt lab run fairness --repeat 101").is_err());
    }
}
