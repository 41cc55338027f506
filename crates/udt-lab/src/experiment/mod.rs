//! The published UDT-vs-TCP experiments, reproduced on the lab: a registry, the grid runner,
//! and the [`Row`] every figure comes from.
//!
//! An [`Experiment`] is plain data: a name, a description (the study it reproduces and what
//! is measured), a function giving its [`Cell`]s for the quick or the full variant, and a
//! function summarizing its rows into tables, plots and findings. [`run`] walks the cells:
//! one fresh [`Lab`] per cell (the link as the study had it, with the rate capped at
//! [`Settings::rate_cap_bps`]), then each [`Run`] of the cell in turn, a set of flows run
//! together by [`flows::run_flows`]. Each flow becomes a [`Row`] that names the protocol
//! and implementation beside the emulated truth and the rate actually used.
//!
//! **Rate cap:** the emulator holds 200 Mbit/s on this 2-vCPU machine under load, 1 Gbit/s
//! only when quiet (docs/lab/calibration.md). Cells asking for more run at the cap and are
//! labelled so ([`Truth::capped`]); the report says which rate was used.
//!
//! **Adding an experiment:** a module with a `pub(crate) fn experiment() -> Experiment`,
//! and a line in [`registry`].

mod alone;
pub mod buffer_sweep;
pub mod decision_matrix;
pub mod fairness;
pub mod journal;
pub mod lock;
pub mod loss_sweep;
pub mod plot;
pub mod report;
pub mod scavenger;
pub mod stats;
pub mod tcp_tuning;
#[cfg(test)]
mod testing;
pub mod wan_grid;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::flows::{self, FlowResult, FlowSpec, RunOptions};
use crate::host::HostWatch;
use crate::params::format_rate;
use crate::slow_start::SlowStartExits;
use crate::{Lab, LinkParams};

pub use plot::{Plot, Series};
pub use report::{Report, Table};

/// The emulator's reliably sustained rate here (docs/lab/calibration.md): the default cap.
pub const DEFAULT_RATE_CAP_BPS: u64 = 200_000_000;

/// Index of the b→a direction in [`Lab::stats`] and [`Lab::intake_drops`]: flows send
/// from b to a ([`flows`]).
const DATA_DIRECTION: usize = 1;

/// Pause between runs on one link, so queues drain and sockets close.
const BETWEEN_RUNS: Duration = Duration::from_millis(500);

/// One registered experiment.
#[derive(Debug, Clone, Copy)]
pub struct Experiment {
    /// Short name for the command line (`decision-matrix`).
    pub name: &'static str,
    /// Title of its report.
    pub title: &'static str,
    /// Markdown: the study reproduced, what is measured, how to read it.
    pub description: &'static str,
    /// The cells of the quick (`true`) or full variant.
    pub cells: fn(&Settings) -> Vec<Cell>,
    /// Tables, plots and findings from the rows.
    pub summarize: fn(&Settings, &[Row]) -> Summary,
    /// Whether its cells run each run [`Settings::repeat`] times and its summary reports
    /// medians over the repetitions (the others run each once).
    pub repeats: bool,
}

/// Every experiment, in report order.
pub fn registry() -> Vec<Experiment> {
    vec![
        decision_matrix::experiment(),
        buffer_sweep::experiment(),
        tcp_tuning::experiment(),
        fairness::experiment(),
        loss_sweep::experiment(),
        wan_grid::experiment(),
        scavenger::experiment(),
    ]
}

/// The experiment named `name`.
pub fn find(name: &str) -> Option<Experiment> {
    registry().into_iter().find(|e| e.name == name)
}

/// How experiments are run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The quick variant (a few cells, short flows: CI).
    pub quick: bool,
    /// The highest link rate used; faster cells run at this rate and say so.
    pub rate_cap_bps: u64,
    /// Flows and their binaries.
    pub run: RunOptions,
    /// Where reports go (each experiment in `out/<name>/`).
    pub out: PathBuf,
    /// The command line, quoted in the reports.
    pub command: String,
    /// Print a line per run on stderr.
    pub progress: bool,
    /// Overrides each experiment's flow length (`--flow-time`), where it uses [`flow_time`].
    pub flow_time: Option<Duration>,
    /// Reuse the runs an earlier, unfinished attempt recorded in its [`journal`].
    pub resume: bool,
    /// Run only the cells whose link matches (`--rtts`, `--losses`); empty lists match all.
    pub only: CellFilter,
    /// How many times each run is repeated, where the experiment [`Experiment::repeats`]
    /// (`--repeat`); 1 runs each once.
    pub repeat: usize,
    /// When the scavenger experiment's competitor starts (`--competitor-start`), instead of
    /// a quarter of the way through the scavenger's flow.
    pub competitor_start: Option<Duration>,
}

/// Which cells and runs of an experiment to run: a part of a grid, re-measured after a change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellFilter {
    /// Nominal link rates to keep, bit/s (all when empty).
    pub rates: Vec<u64>,
    /// Round-trip times to keep (all when empty).
    pub rtts: Vec<Duration>,
    /// Random loss rates to keep (all when empty).
    pub losses: Vec<f64>,
    /// Runs to keep: those whose label contains one of these (all when empty), such as
    /// `model` for `ours (model)`.
    pub runs: Vec<String>,
}

impl CellFilter {
    /// Whether the filter keeps a cell on `link`.
    pub fn keeps(&self, link: &LinkParams) -> bool {
        (self.rates.is_empty() || self.rates.contains(&link.rate_bps))
            && (self.rtts.is_empty() || self.rtts.contains(&link.rtt))
            && (self.losses.is_empty() || self.losses.iter().any(|l| (l - link.loss).abs() < 1e-12))
    }

    /// Whether the filter keeps `run`.
    pub fn keeps_run(&self, run: &Run) -> bool {
        self.runs.is_empty() || self.runs.iter().any(|r| run.label.contains(r.as_str()))
    }
}

/// One link setting of an experiment, and what runs on it.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The link as the study had it (its rate may exceed the cap).
    pub link: LinkParams,
    /// The runs, one after the other on this link.
    pub runs: Vec<Run>,
}

/// A set of flows run together, and the parameters that tell it apart in the tables.
#[derive(Debug, Clone)]
pub struct Run {
    /// A short label (`buffer 16 KiB`, `2 UDT + 10 TCP`).
    pub label: String,
    /// The flows.
    pub flows: Vec<FlowSpec>,
    /// Experiment-specific parameters, copied into each row (`buffer_bytes` → 16384).
    pub params: BTreeMap<String, f64>,
}

impl Run {
    /// A run of one flow labelled with its implementation.
    pub fn single(flow: FlowSpec) -> Self {
        Self {
            label: flow.implementation.label(),
            flows: vec![flow],
            params: BTreeMap::new(),
        }
    }
}

/// The link a row ran on: what the study asked, and what was emulated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Truth {
    /// The rate the study asked for, bit/s.
    pub nominal_rate_bps: u64,
    /// The rate emulated (the nominal one, or the cap), bit/s.
    pub rate_bps: u64,
    /// Whether the cap applied.
    pub capped: bool,
    /// Round-trip propagation delay, ms.
    pub rtt_ms: f64,
    /// Random loss per packet, each direction.
    pub loss: f64,
    /// Drop-tail queue per direction, bytes.
    pub queue_bytes: u64,
}

impl Truth {
    fn new(nominal: &LinkParams, used: &LinkParams) -> Self {
        Self {
            nominal_rate_bps: nominal.rate_bps,
            rate_bps: used.rate_bps,
            capped: used.rate_bps < nominal.rate_bps,
            rtt_ms: used.rtt.as_secs_f64() * 1e3,
            loss: used.loss,
            queue_bytes: used.queue_bytes() as u64,
        }
    }

    /// `155 Mbit/s` or `1 Gbit/s (run at 200 Mbit/s)`.
    pub fn rate_label(&self) -> String {
        if self.capped {
            format!(
                "{} (run at {})",
                format_rate(self.nominal_rate_bps),
                format_rate(self.rate_bps)
            )
        } else {
            format_rate(self.rate_bps)
        }
    }
}

/// One flow of one run: every figure of the reports comes from these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The experiment's name.
    pub experiment: String,
    /// The link.
    pub truth: Truth,
    /// The run's label.
    pub run: String,
    /// The run's parameters.
    pub params: BTreeMap<String, f64>,
    /// Index of the flow in its run, and how many ran together.
    pub flow: usize,
    /// Flows in the run.
    pub flows_in_run: usize,
    /// `UDT` or `TCP`.
    pub protocol: String,
    /// `ours (native)`, `libudt 4.11`, `kernel TCP cubic`...
    pub implementation: String,
    /// `default`, `tuned` or `explicit`.
    pub buffers: String,
    /// The measurement, or `None` when the flow failed.
    pub result: Option<FlowResult>,
    /// Why the flow failed.
    pub error: Option<String>,
    /// Packets the link dropped in the data direction (random loss and a full queue) during
    /// the flow's run, all its flows together; `None` in reports made before it was counted.
    /// A sender's retransmissions over this tell repair from a spurious storm.
    #[serde(default)]
    pub link_drops: Option<u64>,
    /// Packets lost in the data direction before the link model saw them (the sending
    /// namespace's TUN queue was full: [`Lab::intake_drops`]), all the run's flows
    /// together; `None` in reports made before they were counted, or when they could not be
    /// read. As lost as `link_drops`: a sender repaired these too.
    #[serde(default)]
    pub intake_drops: Option<u64>,
    /// The median over the run's seconds of the busy fraction of all the machine's CPUs
    /// (see [`crate::host`]); `None` in reports made before it was measured.
    #[serde(default)]
    pub host_busy: Option<f64>,
    /// The median over the run's seconds of the share of the CPUs' time the hypervisor
    /// took (steal, see [`crate::host`]); `None` in reports made before it was measured.
    #[serde(default)]
    pub host_steal: Option<f64>,
    /// How kernel TCP left slow start during the run, all its TCP senders together (see
    /// [`crate::slow_start`]); `None` where the counters could not be read, and in reports
    /// made before they were.
    #[serde(default)]
    pub tcp_slow_start: Option<SlowStartExits>,
}

impl Row {
    /// The steady goodput, if the flow worked.
    pub fn goodput(&self) -> Option<f64> {
        self.result.as_ref().map(|r| r.steady_goodput_bps)
    }
}

/// What an experiment makes of its rows.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Markdown bullet points: the answers.
    pub findings: Vec<String>,
    /// Tables, in order.
    pub tables: Vec<Table>,
    /// Figures.
    pub plots: Vec<Plot>,
}

/// The link of `cell` as emulated: the rate capped, the default queue sized for that rate.
pub fn capped_link(link: &LinkParams, cap_bps: u64) -> LinkParams {
    LinkParams {
        rate_bps: link.rate_bps.min(cap_bps),
        ..link.clone()
    }
}

/// Runs `experiment` and returns its report (not yet written), recording each run's rows in
/// `journal` as they come.
pub fn run(
    experiment: &Experiment,
    settings: &Settings,
    journal: &mut journal::Journal,
) -> anyhow::Result<Report> {
    let started = Instant::now();
    let load_before = report::load_average();
    let cells = selected_cells(experiment, settings)?;
    let stop = StopOnSignal::register();
    let total: usize = cells.iter().map(|c| c.runs.len()).sum();
    let mut rows = Vec::new();
    let mut done = 0;
    for cell in &cells {
        let used = capped_link(&cell.link, settings.rate_cap_bps);
        let truth = Truth::new(&cell.link, &used);
        // Started at the first run the journal does not already hold.
        let mut lab: Option<Lab> = None;
        for run in &cell.runs {
            done += 1;
            if let Some(earlier) = journal.earlier_rows(&truth, run) {
                if settings.progress {
                    let line = progress_line(&truth, run, &earlier);
                    eprintln!("[{done}/{total}] {line} (from the journal)");
                }
                rows.extend(earlier);
                continue;
            }
            if stop.requested() {
                anyhow::bail!("stopped by a signal before run {done} of {total}");
            }
            let lab = match &mut lab {
                Some(lab) => lab,
                empty => empty.insert(Lab::start(used.clone()).context("starting the lab")?),
            };
            let new = {
                let _turn = lock::exclusive_turn()?;
                run_one(experiment, lab, &truth, run, settings)?
            };
            journal.record(&new)?;
            if settings.progress {
                eprintln!("[{done}/{total}] {}", progress_line(&truth, run, &new));
            }
            rows.extend(new);
            std::thread::sleep(BETWEEN_RUNS);
        }
    }
    let summary = (experiment.summarize)(settings, &rows);
    Ok(Report {
        experiment: experiment.name.to_owned(),
        title: experiment.title.to_owned(),
        description: experiment.description.to_owned(),
        command: settings.command.clone(),
        quick: settings.quick,
        rate_cap_bps: settings.rate_cap_bps,
        warmup_s: settings.run.warmup.as_secs_f64(),
        machine: report::machine(),
        load_before,
        load_after: report::load_average(),
        seconds: started.elapsed().as_secs_f64(),
        findings: summary.findings,
        tables: summary.tables,
        plots: summary.plots,
        rows,
    })
}

/// SIGINT, SIGTERM and SIGHUP during an experiment: the first asks it to stop after the run
/// under way (so the journal keeps every finished run and the lab's namespaces are removed
/// as it unwinds), a second one of the same kind ends the process at once.
struct StopOnSignal {
    flag: Arc<AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl StopOnSignal {
    fn register() -> Self {
        let flag = Arc::new(AtomicBool::new(false));
        let mut ids = Vec::new();
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            // The conditional default first: it sees the flag as the previous signal left it.
            ids.extend(
                signal_hook::flag::register_conditional_default(sig, Arc::clone(&flag)).ok(),
            );
            ids.extend(signal_hook::flag::register(sig, Arc::clone(&flag)).ok());
        }
        Self { flag, ids }
    }

    fn requested(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
}

impl Drop for StopOnSignal {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// The cells of `experiment` that [`Settings::only`] keeps; an error if none.
fn selected_cells(experiment: &Experiment, settings: &Settings) -> anyhow::Result<Vec<Cell>> {
    let cells: Vec<Cell> = (experiment.cells)(settings)
        .into_iter()
        .filter(|c| settings.only.keeps(&c.link))
        .map(|mut c| {
            c.runs.retain(|r| settings.only.keeps_run(r));
            c
        })
        .filter(|c| !c.runs.is_empty())
        .collect();
    if cells.is_empty() {
        anyhow::bail!(
            "{} has no cell with the rates, RTTs, losses and runs asked for (see its cells \
             and run labels in its report's tables)",
            experiment.name
        );
    }
    Ok(cells)
}

/// The data direction's [`Lab::intake_drops`] so far; `None` (with a warning) when they
/// cannot be read, so that a report without them says so instead of reading zero.
fn data_intake_drops(lab: &Lab) -> Option<u64> {
    match lab.intake_drops() {
        Ok(drops) => Some(drops[DATA_DIRECTION]),
        Err(err) => {
            eprintln!("udt lab: intake drops not counted: {err:#}");
            None
        }
    }
}

fn run_one(
    experiment: &Experiment,
    lab: &Lab,
    truth: &Truth,
    run: &Run,
    settings: &Settings,
) -> anyhow::Result<Vec<Row>> {
    let drops_before = lab.stats()[DATA_DIRECTION].link.dropped();
    let intake_before = data_intake_drops(lab);
    let exits_before = tcp_slow_start_exits(lab);
    let host = HostWatch::start();
    let results = flows::run_flows(lab, &run.flows, &settings.run)
        .with_context(|| format!("{}: {}", truth.rate_label(), run.label))?;
    let load = host.finish();
    let tcp_slow_start = exits_before
        .zip(tcp_slow_start_exits(lab))
        .map(|(before, after)| after.since(&before));
    let (host_busy, host_steal) = (load.map(|l| l.busy), load.map(|l| l.steal));
    // The forwarder's counters are at most 10 ms old: wait that out so the last drops count.
    std::thread::sleep(Duration::from_millis(20));
    let link_drops = lab.stats()[DATA_DIRECTION]
        .link
        .dropped()
        .saturating_sub(drops_before);
    let intake_drops = intake_before
        .zip(data_intake_drops(lab))
        .map(|(before, after)| after.saturating_sub(before));
    Ok(run
        .flows
        .iter()
        .zip(results)
        .enumerate()
        .map(|(i, (spec, result))| {
            let (result, error) = match result {
                Ok(r) => (Some(r), None),
                Err(e) => (None, Some(format!("{e:#}"))),
            };
            Row {
                experiment: experiment.name.to_owned(),
                truth: truth.clone(),
                run: run.label.clone(),
                params: run.params.clone(),
                flow: i,
                flows_in_run: run.flows.len(),
                protocol: spec.implementation.protocol().to_owned(),
                implementation: spec.implementation.label(),
                buffers: spec.buffers.label().to_owned(),
                result,
                error,
                link_drops: Some(link_drops),
                intake_drops,
                host_busy,
                host_steal,
                tcp_slow_start,
            }
        })
        .collect())
}

/// HyStart's exits so far in both of `lab`'s namespaces, if both could be read.
fn tcp_slow_start_exits(lab: &Lab) -> Option<SlowStartExits> {
    let read = |ns| SlowStartExits::read_in(ns).ok().flatten();
    Some(read(lab.a())?.plus(&read(lab.b())?))
}

fn progress_line(truth: &Truth, run: &Run, rows: &[Row]) -> String {
    let figures: Vec<String> = rows
        .iter()
        .map(|r| match (&r.result, &r.error) {
            (Some(res), _) => format_rate(res.steady_goodput_bps as u64),
            (None, Some(e)) => format!("failed: {e}"),
            (None, None) => "?".to_owned(),
        })
        .collect();
    let first = rows.first();
    let stolen = first
        .and_then(|r| r.host_steal)
        .filter(|&s| s >= crate::host::STOLEN)
        .map_or(String::new(), |s| format!(", {:.0}% stolen", s * 100.0));
    let host = first.and_then(|r| r.host_busy).map_or(String::new(), |b| {
        format!(" (host {:.0}% busy{stolen})", b * 100.0)
    });
    format!(
        "{}, rtt {} ms, loss {}: {}: {}{host}",
        truth.rate_label(),
        truth.rtt_ms,
        truth.loss,
        run.label,
        figures.join(", ")
    )
}

/// Runs each experiment and writes its report into `settings.out/<name>/` (or straight into
/// `settings.out` when only one runs), keeping a [`journal`] of its rows there until the
/// report is written. Returns the directories written.
pub fn run_and_write(
    experiments: &[Experiment],
    settings: &Settings,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for experiment in experiments {
        let dir = if experiments.len() == 1 {
            settings.out.clone()
        } else {
            settings.out.join(experiment.name)
        };
        if let Err(e) = selected_cells(experiment, settings) {
            if experiments.len() == 1 {
                return Err(e);
            }
            eprintln!("udt lab: skipping {}: no cell matches", experiment.name);
            continue;
        }
        let mut journal = journal::Journal::open(&dir, experiment.name, settings, settings.resume)?;
        let report = run(experiment, settings, &mut journal).with_context(|| {
            format!(
                "{} stopped; the runs measured so far are in {} (`--resume` continues)",
                experiment.name,
                dir.join(journal::FILE_NAME).display()
            )
        })?;
        report.write(&dir)?;
        journal.finish()?;
        written.push(dir);
    }
    Ok(written)
}

/// Flow length of the quick or full variant, unless [`Settings::flow_time`] overrides it.
pub fn flow_time(settings: &Settings, quick: Duration, full: Duration) -> Duration {
    if let Some(t) = settings.flow_time {
        t
    } else if settings.quick {
        quick
    } else {
        full
    }
}

/// The distinct links of `rows`, in order of first appearance.
pub fn links(rows: &[Row]) -> Vec<Truth> {
    let mut seen: Vec<Truth> = Vec::new();
    for r in rows {
        if !seen.contains(&r.truth) {
            seen.push(r.truth.clone());
        }
    }
    seen
}

/// The distinct implementation labels of `rows`, in order of first appearance.
pub fn implementations(rows: &[Row]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for r in rows {
        if !seen.contains(&r.implementation) {
            seen.push(r.implementation.clone());
        }
    }
    seen
}

/// The first row of `implementation` on `truth`.
pub fn row_of<'r>(rows: &'r [Row], truth: &Truth, implementation: &str) -> Option<&'r Row> {
    rows.iter()
        .find(|r| r.truth == *truth && r.implementation == implementation)
}

/// Mean of `f` over the rows of `implementation` where it is defined.
pub fn mean_of(rows: &[Row], implementation: &str, f: impl Fn(&Row) -> Option<f64>) -> Option<f64> {
    let values: Vec<f64> = rows
        .iter()
        .filter(|r| r.implementation == implementation)
        .filter_map(f)
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// A finding about UDT flows still accelerating when they ended (their last full second
/// more than 10% above their steady mean), if any were: UDT's native control converges
/// over seconds to tens of seconds, so short flows understate a long transfer's rate.
pub fn still_rising_finding(rows: &[Row]) -> Option<String> {
    let udt: Vec<&FlowResult> = rows
        .iter()
        .filter(|r| r.protocol == "UDT")
        .filter_map(|r| r.result.as_ref())
        .collect();
    let rising = udt
        .iter()
        .filter(|r| {
            let full = r.series.len().saturating_sub(1);
            let last = full.checked_sub(1).and_then(|i| {
                let len = r.interval_s.get(i).copied().unwrap_or(1.0);
                Some(*r.series.get(i)? as f64 * 8.0 / len.max(1e-3))
            });
            last.is_some_and(|l| l > r.steady_goodput_bps * 1.1)
        })
        .count();
    (rising > 0).then(|| {
        format!(
            "{rising} of {} UDT flows were still accelerating when they ended (last full second \
             more than 10% above their mean): UDT's native control converges over seconds to \
             tens of seconds, so these flows understate a long transfer's rate. Longer flows: \
             `--flow-time 30s` (the per-second series are in results.json).",
            udt.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_filter_keeps_what_it_lists_and_everything_when_empty() {
        let link = |rtt_ms: u64, loss: f64| LinkParams {
            loss,
            ..LinkParams::new(1_000_000_000, Duration::from_millis(rtt_ms))
        };
        let all = CellFilter::default();
        assert!(all.keeps(&link(0, 0.0)) && all.keeps(&link(200, 0.01)));
        let some = CellFilter {
            rates: vec![],
            rtts: vec![Duration::ZERO, Duration::from_millis(100)],
            losses: vec![0.001],
            runs: vec!["model".into()],
        };
        let run = |label: &str| Run {
            label: label.into(),
            flows: vec![],
            params: BTreeMap::new(),
        };
        assert!(some.keeps_run(&run("ours (model)")));
        assert!(!some.keeps_run(&run("kernel TCP bbr")));
        assert!(all.keeps_run(&run("kernel TCP bbr")));
        let fast = CellFilter {
            rates: vec![1_000_000_000],
            ..CellFilter::default()
        };
        assert!(fast.keeps(&link(10, 0.0)));
        assert!(!fast.keeps(&LinkParams::new(45_000_000, Duration::from_millis(10))));
        assert!(some.keeps(&link(0, 0.001)));
        assert!(some.keeps(&link(100, 0.001)));
        assert!(!some.keeps(&link(100, 0.0)));
        assert!(!some.keeps(&link(50, 0.001)));
        // 0.1% parsed from text is the same rate as the grid's constant.
        let parsed = crate::params::parse_loss("0.1%").unwrap();
        assert!(CellFilter {
            losses: vec![parsed],
            ..CellFilter::default()
        }
        .keeps(&link(10, 0.001)));
    }
}
