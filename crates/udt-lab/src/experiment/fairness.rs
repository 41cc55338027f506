//! Experiment 4, fairness and friendliness (the Teraflows paper): 1-4 UDT flows beside 10-50
//! TCP flows on one bottleneck. Fairness: how evenly the UDT flows share (σ/μ and Jain's index
//! across them); friendliness: the TCP flows' aggregate beside UDT against what the same TCP
//! flows get beside as many more TCP flows in the UDT flows' place (issue 12's measure: "TCP
//! keeps at least 90% of what it gets beside another TCP flow") and against the same TCP
//! flows alone (the paper's); and the total utilisation.
//!
//! **Rows:** the UDT flows of a run are ours with one congestion controller
//! ([`Implementation::ours_all`]: native, then model, each over the same grid); the TCP flows
//! are kernel TCP cubic (Linux's default) and, in the full variant, also bbr (a second
//! background, fewer TCP counts). Each background has its own all-TCP runs, shared by both
//! controllers: the baseline (UDT = 0) and, for each UDT count `k`, `k` more TCP flows in the
//! UDT flows' place. Against the baseline alone, even a UDT flow that takes exactly an equal
//! share reads as taking from TCP (ten TCP flows beside four fair UDT flows keep 10/14 of the
//! link: 71%), so that figure cannot tell a fair flow from an unfair one; the runs with TCP in
//! UDT's place can.
//!
//! **Feasibility:** every flow is its own `udt perf` client and server (per-flow figures are
//! needed; `-P` reports only the aggregate), so 50 TCP + 4 UDT flows are 108 processes on this
//! 2-vCPU machine. At the 200 Mbit/s cap the aggregate packet rate is what costs, not the
//! number of flows (51 bbr flows kept the machine 43-64% busy there, and 96-97% at 1 Gbit/s,
//! where the report marks their runs host-bound), so the full grid is, with 20 s flows,
//! cubic: TCP {10, 20, 50} × UDT {0, 1, 2, 4}, bbr: TCP {10, 50} × UDT {0, 1, 2, 4}, each UDT
//! count with each controller (35 runs, about 15 minutes); quick is cubic TCP {10} × UDT
//! {0, 2}, 4 s flows (3 runs).
//!
//! **Flow length:** 20 s, longer than the 10 s after which `model`'s competition mode tries
//! its rate model again. With 8 s flows no trial ever came, and the report could not show
//! what one does: beside 50 CUBIC flows a trial that met no loss once let `model` climb to
//! 2.4-4.6 times an equal share over the last 3 s of 30 s flows (BENCHMARKS, session 35).

use std::collections::BTreeMap;
use std::time::Duration;

use super::stats;
use super::{
    flow_time, report::mbit, Cell, Experiment, Plot, Row, Run, Series, Settings, Summary, Table,
};
use crate::flows::{FlowSpec, Implementation, TcpCc};
use crate::LinkParams;

/// The nominal link rate, bit/s (run at the cap here).
pub const NOMINAL_RATE_BPS: u64 = 1_000_000_000;

/// The round-trip time of the bottleneck path.
pub const RTT: Duration = Duration::from_millis(50);

/// The TCP flows of a set of runs: a kernel congestion control and its flow counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Background {
    /// The kernel congestion control of every TCP flow.
    pub cc: TcpCc,
    /// TCP flow counts.
    pub flows: Vec<usize>,
}

/// The grid of one variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// The TCP backgrounds, in run order.
    pub backgrounds: Vec<Background>,
    /// UDT flow counts, 0 being the all-TCP baseline (run first for each TCP count, once).
    pub udt: Vec<usize>,
    /// The UDT implementations, each run with every nonzero UDT count.
    pub implementations: Vec<Implementation>,
}

impl Grid {
    /// Cubic: TCP {10, 20, 50}, bbr: TCP {10, 50}; × UDT {0, 1, 2, 4} × each controller.
    pub fn full() -> Self {
        Self {
            backgrounds: vec![
                Background {
                    cc: TcpCc::Cubic,
                    flows: vec![10, 20, 50],
                },
                Background {
                    cc: TcpCc::Bbr,
                    flows: vec![10, 50],
                },
            ],
            udt: vec![0, 1, 2, 4],
            implementations: Implementation::ours_all(),
        }
    }

    /// Cubic: TCP {10} × UDT {0, 2} × each controller.
    pub fn quick() -> Self {
        Self {
            backgrounds: vec![Background {
                cc: TcpCc::Cubic,
                flows: vec![10],
            }],
            udt: vec![0, 2],
            implementations: Implementation::ours_all(),
        }
    }

    /// The runs, in order: per background and TCP count, the baseline, then per UDT count
    /// the all-TCP run with as many more TCP flows in the UDT flows' place, and each
    /// implementation, back to back; all of that `repeat` times over before the next TCP
    /// count, so that each repetition's UDT runs have their TCP references measured beside
    /// them.
    pub fn runs(&self, time: Duration, repeat: usize) -> Vec<Run> {
        let mut runs = Vec::new();
        let n = repeat.max(1);
        for background in &self.backgrounds {
            let tcp = Implementation::Tcp { cc: background.cc };
            for &t in &background.flows {
                for r in 1..=n {
                    for &u in &self.udt {
                        runs.push(mix((&tcp, t + u), None, time, (r, n)));
                        if u > 0 {
                            runs.extend(
                                self.implementations
                                    .iter()
                                    .map(|i| mix((&tcp, t), Some((i, u)), time, (r, n))),
                            );
                        }
                    }
                }
            }
        }
        runs
    }
}

/// What a run mixed: the TCP and UDT implementations (labels) and flow counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Mix {
    /// The TCP flows' implementation (`kernel TCP cubic`).
    pub tcp: String,
    /// TCP flows asked for.
    pub tcp_flows: usize,
    /// The UDT flows' implementation (`ours (model)`); `None` in the all-TCP baseline.
    pub udt: Option<String>,
    /// UDT flows asked for.
    pub udt_flows: usize,
    /// Which repetition of the run this was, from 1 (always 1 without `--repeat`).
    pub repeat: usize,
}

impl Mix {
    /// Whether `other` ran the same flows, perhaps in another repetition.
    fn same_as(&self, other: &Self) -> bool {
        (&self.tcp, self.tcp_flows, &self.udt, self.udt_flows)
            == (&other.tcp, other.tcp_flows, &other.udt, other.udt_flows)
    }
}

/// What one run (a mix of UDT and TCP flows) comes to.
#[derive(Debug, Clone, PartialEq)]
pub struct Fairness {
    /// What ran.
    pub mix: Mix,
    /// Flows that failed (left out of every figure).
    pub failed: usize,
    /// Mean goodput per UDT flow, bit/s.
    pub udt_mean: Option<f64>,
    /// σ/μ across the UDT flows (needs two).
    pub udt_cov: Option<f64>,
    /// Jain's index across the UDT flows (needs two).
    pub udt_jain: Option<f64>,
    /// Mean goodput per TCP flow, bit/s.
    pub tcp_mean: Option<f64>,
    /// Jain's index across the TCP flows.
    pub tcp_jain: Option<f64>,
    /// Sum of the TCP flows' goodputs, bit/s.
    pub tcp_aggregate: f64,
    /// The same number of TCP flows alone, bit/s (the baseline run).
    pub tcp_alone: Option<f64>,
    /// What the same number of TCP flows get beside as many more TCP flows as there are UDT
    /// flows here, bit/s: the mean flow of that all-TCP run times this run's TCP count (its
    /// flows are alike, so which of them stand in for UDT is arbitrary).
    pub tcp_beside_tcp: Option<f64>,
    /// All flows together over the link rate, over the seconds every flow covered (their
    /// per-second series summed on the set's clock, warm-up and partial tails left out);
    /// the sum of the steady goodputs where there are no such seconds.
    pub utilisation: f64,
    /// The mean UDT flow over an equal share of the link (rate / all flows).
    pub udt_over_fair_share: Option<f64>,
    /// The same over the last [`LATE_SECONDS`] of the seconds every flow covered: a flow
    /// that starts with half the link and ends starved averages to a fair-looking share,
    /// and only this shows where it was heading.
    pub udt_late_over_fair_share: Option<f64>,
    /// [`Fairness::udt_over_fair_share`] of each repetition, in run order, where these
    /// figures are the medians of several ([`combine_repeats`]); empty for a single run.
    pub each_share: Vec<f64>,
}

/// A mean UDT goodput (bit/s) over an equal split of the link among all of `mix`'s flows.
fn over_fair_share(udt_mean: Option<f64>, mix: &Mix, rate_bps: f64) -> Option<f64> {
    let all = mix.tcp_flows + mix.udt_flows;
    let fair_share = (all > 0).then(|| rate_bps / all as f64);
    udt_mean.zip(fair_share).map(|(m, f)| m / f)
}

/// The closing stretch of a run that [`Fairness::udt_late_over_fair_share`] covers, seconds.
pub const LATE_SECONDS: usize = 3;

impl Fairness {
    /// The figures of one run from its flows' goodputs (bit/s).
    pub fn new(
        mix: Mix,
        udt: &[f64],
        tcp: &[f64],
        tcp_alone: Option<f64>,
        (rate_bps, total_bps): (f64, Option<f64>),
    ) -> Self {
        let two_or_more = |v: Option<f64>| if udt.len() >= 2 { v } else { None };
        let tcp_aggregate: f64 = tcp.iter().sum();
        let total = total_bps.unwrap_or(tcp_aggregate + udt.iter().sum::<f64>());
        let udt_mean = stats::mean(udt);
        let udt_over_fair_share = over_fair_share(udt_mean, &mix, rate_bps);
        let all = mix.tcp_flows + mix.udt_flows;
        Self {
            failed: all.saturating_sub(udt.len() + tcp.len()),
            mix,
            udt_mean,
            udt_cov: two_or_more(stats::cov(udt)),
            udt_jain: two_or_more(stats::jain_index(udt)),
            tcp_mean: stats::mean(tcp),
            tcp_jain: stats::jain_index(tcp),
            tcp_aggregate,
            tcp_alone,
            tcp_beside_tcp: None,
            utilisation: if rate_bps > 0.0 {
                total / rate_bps
            } else {
                0.0
            },
            udt_over_fair_share,
            udt_late_over_fair_share: None,
            each_share: Vec::new(),
        }
    }

    /// Sets [`Fairness::udt_late_over_fair_share`] from the UDT flows' goodputs (bit/s)
    /// over the run's last seconds.
    fn with_late(mut self, udt_late: &[f64], rate_bps: f64) -> Self {
        self.udt_late_over_fair_share = over_fair_share(stats::mean(udt_late), &self.mix, rate_bps);
        self
    }

    /// Sets [`Fairness::tcp_beside_tcp`].
    fn with_beside_tcp(mut self, tcp_beside_tcp: Option<f64>) -> Self {
        self.tcp_beside_tcp = tcp_beside_tcp;
        self
    }

    /// TCP's aggregate beside UDT over TCP's aggregate alone: 1 means UDT took only spare
    /// capacity.
    pub fn tcp_kept(&self) -> Option<f64> {
        self.tcp_alone
            .filter(|&a| a > 0.0)
            .map(|a| self.tcp_aggregate / a)
    }

    /// TCP's aggregate beside UDT over what the same TCP flows get with TCP flows in UDT's
    /// place: 1 means UDT took what TCP would have.
    pub fn tcp_kept_beside_tcp(&self) -> Option<f64> {
        self.tcp_beside_tcp
            .filter(|&a| a > 0.0)
            .map(|a| self.tcp_aggregate / a)
    }
}

/// The registry entry.
pub(crate) fn experiment() -> Experiment {
    Experiment {
        name: "fairness",
        title: "Fairness and friendliness: UDT flows beside many TCP flows (the Teraflows paper)",
        description: DESCRIPTION,
        cells,
        summarize,
        repeats: true,
    }
}

const DESCRIPTION: &str = "\
Reproduces the Teraflows paper's fairness and friendliness runs: 1-4 UDT flows start together \
with 10-50 kernel TCP flows on one bottleneck (1 Gbit/s nominal, run at the rate cap, 50 ms \
RTT, drop-tail queue of one BDP, default buffers). The UDT flows of a run are all ours with one \
congestion controller: native (UDT's own, as the paper ran it) or model (BBR-like), each over \
the same grid, the two runs of one mix back to back. The TCP flows are cubic (Linux's default) \
and, in the full variant, a second background of bbr; each background's all-TCP runs are the \
baseline of both controllers. \
**Fairness** is how evenly the UDT flows share: σ/μ of their goodputs (0 is even; population \
σ) and Jain's index (1 is even). **Friendliness** is what TCP keeps: its aggregate beside UDT \
over what the same TCP flows get beside as many more TCP flows in the UDT flows' place (1: UDT \
took what TCP would have; these all-TCP runs come before the UDT runs of each count), and \
over the aggregate of the same number of TCP flows alone (1: UDT took only spare capacity; \
beside fair UDT flows this is the TCP flows' share of all flows, 10/14 for ten beside four). \
\"UDT / fair share\" compares the mean UDT flow with an equal split of the link among all \
flows. Utilisation counts payload, so about 97% is full.\n\n\
Feasibility on this 2-vCPU machine: each flow is its own pair of processes (per-flow figures \
need them), up to 108 processes, of which the UDT flows' run at nice -10 (kernel TCP's protocol \
runs in softirq, ahead of every process; a UDT flow's ACKs wait for its process to run). At \
1 Gbit/s the runs of 51 or more flows saturate it (the emulator's real-time threads, which \
carry the kernel's TCP receive path, took 1.7 of the 2 CPUs beside 51 bbr flows): the report \
lists such runs as host-bound, and their shares measure the scheduler as much as the \
controllers (a kernel bbr flow whose processes ran in SCHED_FIFO took 5.8 times an equal \
share). At the 200 Mbit/s cap the same runs kept the machine 43-64% busy. The \
full grid, 20 s flows (longer than the 10 s after which `model`'s competition mode tries its \
rate model again), is cubic TCP {10, 20, 50} and bbr TCP {10, 50}, each × UDT {0, 1, 2, 4} \
with each controller and with TCP in UDT's place (50 runs); the quick one cubic TCP {10} × \
UDT {0, 2} with each controller and with TCP in UDT's place, 4 s flows (4 runs). One run of a \
cell spreads widely (one `model` flow beside ten CUBIC flows took 0.49-6.30 times an equal \
share over 37 runs); `--repeat N` runs each TCP count's runs N times over and reports the \
median of each figure, with each run's share.";

fn cells(settings: &Settings) -> Vec<Cell> {
    let grid = if settings.quick {
        Grid::quick()
    } else {
        Grid::full()
    };
    let time = flow_time(settings, Duration::from_secs(4), Duration::from_secs(20));
    vec![Cell {
        link: LinkParams::new(NOMINAL_RATE_BPS, RTT),
        runs: grid.runs(time, settings.repeat),
    }]
}

/// `tcp` flows of a TCP implementation and, unless the baseline, `udt` flows of a UDT one;
/// repetition `r` of `n` (labelled so when `n` > 1).
fn mix(
    (tcp, tcp_flows): (&Implementation, usize),
    udt: Option<(&Implementation, usize)>,
    time: Duration,
    (r, n): (usize, usize),
) -> Run {
    let udt_flows = udt.map_or(0, |(_, n)| n);
    let mut flows: Vec<FlowSpec> = udt
        .into_iter()
        .flat_map(|(i, n)| (0..n).map(move |_| FlowSpec::timed(i.clone(), time)))
        .collect();
    flows.extend((0..tcp_flows).map(|_| FlowSpec::timed(tcp.clone(), time)));
    let mut label = match udt {
        Some((i, k)) => format!("{k} × {i} + {tcp_flows} × {tcp}"),
        None => format!("{tcp_flows} × {tcp}"),
    };
    if n > 1 {
        label.push_str(&format!(" (run {r} of {n})"));
    }
    Run {
        label,
        flows,
        params: BTreeMap::from([
            ("tcp_flows".to_owned(), tcp_flows as f64),
            ("udt_flows".to_owned(), udt_flows as f64),
            ("repeat".to_owned(), r as f64),
        ]),
    }
}

/// The goodputs of one run's flows, by protocol.
struct Goodputs {
    run: String,
    mix: Mix,
    rate_bps: f64,
    /// Each working flow: whether it is UDT, and its whole-flow steady goodput.
    flows: Vec<(bool, f64)>,
    /// Each working flow's per-second rates on the set's clock, in the order of `flows`.
    series: Vec<Vec<f64>>,
}

/// One run's goodputs as the figures use them (see [`Goodputs::steady`]).
struct Steady {
    udt: Vec<f64>,
    tcp: Vec<f64>,
    total: Option<f64>,
    /// The UDT flows over the window's last [`LATE_SECONDS`] (empty without a window).
    udt_late: Vec<f64>,
}

impl Goodputs {
    fn new(row: &Row) -> Self {
        let count = |k: &str| row.params.get(k).copied().unwrap_or(0.0) as usize;
        Self {
            run: row.run.clone(),
            mix: Mix {
                tcp: String::new(),
                tcp_flows: count("tcp_flows"),
                udt: None,
                udt_flows: count("udt_flows"),
                repeat: count("repeat").max(1),
            },
            rate_bps: row.truth.rate_bps as f64,
            flows: Vec::new(),
            series: Vec::new(),
        }
    }

    fn add(&mut self, row: &Row) {
        let udt = row.protocol == "UDT";
        if udt && self.mix.udt.is_none() {
            self.mix.udt = Some(row.implementation.clone());
        } else if !udt && self.mix.tcp.is_empty() {
            self.mix.tcp = row.implementation.clone();
        }
        if let (Some(r), Some(g)) = (&row.result, row.goodput()) {
            self.flows.push((udt, g));
            self.series.push(aligned(r));
        }
    }

    /// The UDT and TCP goodputs over the seconds every flow covered, and their sum. A flow
    /// that outlives the others (the last to start, or one slow to stop) would otherwise
    /// count seconds with the link to itself. Whole-flow goodputs where no second is common.
    fn steady(&self) -> Steady {
        let window = common_window(&self.series);
        let pick = |udt: bool| -> Vec<f64> {
            self.flows
                .iter()
                .zip(&self.series)
                .filter(|((is_udt, _), _)| *is_udt == udt)
                .map(|(&(_, whole), series)| match &window {
                    Some(w) => stats::mean(&series[w.clone()]).unwrap_or(whole),
                    None => whole,
                })
                .collect()
        };
        let late = window
            .clone()
            .map(|w| w.end.saturating_sub(LATE_SECONDS).max(w.start)..w.end);
        let udt_late = match &late {
            Some(w) => self
                .flows
                .iter()
                .zip(&self.series)
                .filter(|((is_udt, _), _)| *is_udt)
                .filter_map(|(_, series)| stats::mean(&series[w.clone()]))
                .collect(),
            None => Vec::new(),
        };
        Steady {
            udt: pick(true),
            tcp: pick(false),
            total: window.and_then(|w| stats::mean(&stats::sum_series(&self.series)[w])),
            udt_late,
        }
    }
}

/// The figures of every run, in row order, each with its TCP-alone baseline (the all-TCP
/// run of the same TCP implementation and count).
pub fn analyse(rows: &[Row]) -> Vec<Fairness> {
    let mut runs: Vec<Goodputs> = Vec::new();
    for row in rows {
        let i = match runs.iter().position(|r| r.run == row.run) {
            Some(i) => i,
            None => {
                runs.push(Goodputs::new(row));
                runs.len() - 1
            }
        };
        runs[i].add(row);
    }
    let steady: Vec<Steady> = runs.iter().map(Goodputs::steady).collect();
    // The all-TCP run of `mix`'s TCP implementation and repetition with `flows` flows.
    let all_tcp = |mix: &Mix, flows: usize| -> Option<&Steady> {
        runs.iter()
            .zip(&steady)
            .find(|(r, _)| {
                let m = &r.mix;
                m.tcp == mix.tcp
                    && m.tcp_flows == flows
                    && m.udt_flows == 0
                    && m.repeat == mix.repeat
            })
            .map(|(_, s)| s)
    };
    let alone = |mix: &Mix| all_tcp(mix, mix.tcp_flows).map(|s| s.tcp.iter().sum());
    // An all-TCP run has no UDT flows for TCP to stand in for.
    let beside_tcp = |mix: &Mix| -> Option<f64> {
        if mix.udt_flows == 0 {
            return None;
        }
        let s = all_tcp(mix, mix.tcp_flows + mix.udt_flows)?;
        stats::mean(&s.tcp).map(|m| m * mix.tcp_flows as f64)
    };
    runs.iter()
        .zip(&steady)
        .map(|(r, s)| {
            let total = (r.rate_bps, s.total);
            Fairness::new(r.mix.clone(), &s.udt, &s.tcp, alone(&r.mix), total)
                .with_late(&s.udt_late, r.rate_bps)
                .with_beside_tcp(beside_tcp(&r.mix))
        })
        .collect()
}

/// A flow's per-second rates (bit/s) on the set's clock, from its measured intervals.
fn aligned(r: &crate::flows::FlowResult) -> Vec<f64> {
    let mut t = r.spec.start.as_secs_f64();
    let spans: Vec<stats::Span> = r
        .series
        .iter()
        .enumerate()
        .map(|(i, &bytes)| {
            let len = r
                .interval_s
                .get(i)
                .copied()
                .filter(|&l| l > 0.0)
                .unwrap_or(1.0);
            let span = stats::Span {
                start_s: t,
                end_s: t + len,
                bps: bytes as f64 * 8.0 / len,
            };
            t += len;
            span
        })
        .collect();
    stats::per_second(&spans, 0.0, t.ceil() as usize)
}

/// The whole seconds every flow covered, after the first (the warm-up) and before the
/// shortest series' last bin (partial); `None` if there are none.
fn common_window(series: &[Vec<f64>]) -> Option<std::ops::Range<usize>> {
    let shortest = series.iter().map(Vec::len).min()?;
    let end = shortest.saturating_sub(1);
    (end > 1).then_some(1..end)
}

fn summarize(_settings: &Settings, rows: &[Row]) -> Summary {
    summarize_figures(&combine_repeats(&analyse(rows)))
}

/// One figure per mix: the repetitions of a run (`--repeat`) become the medians of each
/// figure, with each repetition's share kept in [`Fairness::each_share`]; the ratios
/// ([`Fairness::tcp_kept`], [`Fairness::tcp_kept_beside_tcp`]) are then those of the
/// medians. A mix that ran once is left as it is.
pub fn combine_repeats(figures: &[Fairness]) -> Vec<Fairness> {
    let mut groups: Vec<Vec<&Fairness>> = Vec::new();
    for f in figures {
        match groups.iter_mut().find(|g| g[0].mix.same_as(&f.mix)) {
            Some(g) => g.push(f),
            None => groups.push(vec![f]),
        }
    }
    groups.into_iter().map(|g| median_of(&g)).collect()
}

/// The medians of `group`'s figures (see [`combine_repeats`]).
fn median_of(group: &[&Fairness]) -> Fairness {
    if let [single] = group {
        return (*single).clone();
    }
    let med = |get: fn(&Fairness) -> Option<f64>| {
        let values: Vec<f64> = group.iter().filter_map(|f| get(f)).collect();
        stats::median(&values)
    };
    let first = group[0];
    Fairness {
        mix: Mix {
            repeat: 1,
            ..first.mix.clone()
        },
        failed: group.iter().map(|f| f.failed).sum(),
        udt_mean: med(|f| f.udt_mean),
        udt_cov: med(|f| f.udt_cov),
        udt_jain: med(|f| f.udt_jain),
        tcp_mean: med(|f| f.tcp_mean),
        tcp_jain: med(|f| f.tcp_jain),
        tcp_aggregate: med(|f| Some(f.tcp_aggregate)).unwrap_or(0.0),
        tcp_alone: med(|f| f.tcp_alone),
        tcp_beside_tcp: med(|f| f.tcp_beside_tcp),
        utilisation: med(|f| Some(f.utilisation)).unwrap_or(0.0),
        udt_over_fair_share: med(|f| f.udt_over_fair_share),
        udt_late_over_fair_share: med(|f| f.udt_late_over_fair_share),
        each_share: group.iter().filter_map(|f| f.udt_over_fair_share).collect(),
    }
}

/// Findings, a table and a plot per TCP background.
fn summarize_figures(figures: &[Fairness]) -> Summary {
    let backgrounds = backgrounds(figures);
    let mut findings: Vec<String> = backgrounds
        .iter()
        .flat_map(|tcp| {
            udt_implementations(figures, tcp)
                .into_iter()
                .filter_map(move |udt| group_finding(figures, tcp, &udt))
        })
        .collect();
    findings.extend(utilisation_finding(figures));
    Summary {
        findings,
        tables: backgrounds.iter().map(|tcp| table(figures, tcp)).collect(),
        plots: backgrounds.iter().map(|tcp| plot(figures, tcp)).collect(),
    }
}

/// The TCP implementations of the runs, in run order.
fn backgrounds(figures: &[Fairness]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for f in figures {
        if !seen.contains(&f.mix.tcp) {
            seen.push(f.mix.tcp.clone());
        }
    }
    seen
}

/// The UDT implementations that ran beside `tcp`, in run order.
fn udt_implementations(figures: &[Fairness], tcp: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for f in figures.iter().filter(|f| f.mix.tcp == tcp) {
        if let Some(u) = f.mix.udt.as_ref().filter(|u| !seen.contains(u)) {
            seen.push(u.clone());
        }
    }
    seen
}

/// `kernel TCP cubic` → `cubic`: the file-name part of a background.
fn background_slug(tcp: &str) -> String {
    tcp.strip_prefix("kernel TCP ")
        .unwrap_or(tcp)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn table(figures: &[Fairness], tcp: &str) -> Table {
    let header = [
        "TCP flows",
        "UDT implementation",
        "UDT flows",
        "UDT per flow (Mbit/s)",
        "UDT σ/μ",
        "UDT Jain",
        "UDT / fair share",
        "the same, last 3 s",
        "TCP per flow (Mbit/s)",
        "TCP Jain",
        "TCP aggregate (Mbit/s)",
        "TCP beside TCP (Mbit/s)",
        "TCP kept (beside TCP)",
        "TCP alone (Mbit/s)",
        "TCP kept (alone)",
        "utilisation",
        "failed flows",
    ];
    let dash = || "—".to_owned();
    let num = |v: Option<f64>, digits: usize| v.map_or_else(dash, |v| format!("{v:.digits$}"));
    let rows = figures
        .iter()
        .filter(|f| f.mix.tcp == tcp)
        .map(|f| {
            vec![
                f.mix.tcp_flows.to_string(),
                f.mix.udt.clone().unwrap_or_else(dash),
                f.mix.udt_flows.to_string(),
                f.udt_mean.map_or_else(dash, mbit),
                num(f.udt_cov, 3),
                num(f.udt_jain, 3),
                share_cell(f),
                num(f.udt_late_over_fair_share, 2),
                f.tcp_mean.map_or_else(dash, mbit),
                num(f.tcp_jain, 3),
                mbit(f.tcp_aggregate),
                f.tcp_beside_tcp.map_or_else(dash, mbit),
                num(f.tcp_kept_beside_tcp(), 2),
                f.tcp_alone.map_or_else(dash, mbit),
                num(f.tcp_kept(), 2),
                format!("{:.0}%", 100.0 * f.utilisation),
                f.failed.to_string(),
            ]
        })
        .collect();
    Table {
        title: format!("UDT beside {tcp} on one bottleneck"),
        caption: "Per-flow goodputs and utilisation cover only the whole seconds every flow \
                  of the run covered (the first second, warm-up, and partial tails left out), so \
                  a flow that outlives the others is not credited with the link to itself; \
                  \"the same, last 3 s\" covers only the last three of those seconds (a flow \
                  starting strong and ending starved averages to a fair-looking share). σ/μ \
                  and Jain's index need two UDT flows. With `--repeat`, every figure is the \
                  median over the repetitions, and the share also lists each one's. TCP \
                  beside TCP: what the same number of TCP flows got in the all-TCP run with \
                  as many more TCP flows in the UDT flows' place (the row with that many TCP \
                  flows, its mean flow times this row's TCP count); TCP kept (beside TCP): \
                  TCP aggregate here over that. TCP kept (alone): TCP aggregate here over the \
                  same number of TCP flows alone (the UDT = 0 row); all-TCP rows are shared \
                  by both controllers. \
                  Utilisation: all flows' per-second rates summed, over the link rate; the \
                  clients of one run start up to a few hundred ms apart (up to 54 processes), \
                  so the largest runs can show a few percent over the payload ceiling (~97%)."
            .to_owned(),
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows,
    }
}

/// The UDT flows' share: the median over repetitions with each one's in brackets
/// (`0.92 (0.56, 0.92, 1.87)`), or the single run's.
fn share_cell(f: &Fairness) -> String {
    let median = f
        .udt_over_fair_share
        .map_or_else(|| "—".to_owned(), |v| format!("{v:.2}"));
    if f.each_share.len() < 2 {
        return median;
    }
    let each: Vec<String> = f.each_share.iter().map(|v| format!("{v:.2}")).collect();
    format!("{median} ({})", each.join(", "))
}

/// TCP's aggregate against the UDT flows beside it: a line per TCP count and controller,
/// and one per TCP count with TCP flows in UDT's place, each starting at the all-TCP
/// baseline.
fn plot(figures: &[Fairness], tcp: &str) -> Plot {
    let mut series: Vec<Series> = Vec::new();
    let background: Vec<&Fairness> = figures.iter().filter(|f| f.mix.tcp == tcp).collect();
    for f in &background {
        let Some(udt) = &f.mix.udt else { continue };
        let baseline = background
            .iter()
            .find(|b| b.mix.udt_flows == 0 && b.mix.tcp_flows == f.mix.tcp_flows)
            .map(|b| (0.0, b.tcp_aggregate / 1e6));
        let k = f.mix.udt_flows as f64;
        let n = f.mix.tcp_flows;
        add_point(
            &mut series,
            format!("{n} TCP flows, {udt}"),
            baseline,
            (k, f.tcp_aggregate),
        );
        if let Some(reference) = f.tcp_beside_tcp {
            let name = format!("{n} TCP flows, TCP in UDT's place");
            add_point(&mut series, name, baseline, (k, reference));
        }
    }
    Plot {
        title: format!("{tcp}: TCP aggregate goodput as UDT flows join"),
        file: format!("tcp-aggregate-{}.svg", background_slug(tcp)),
        x_label: "UDT flows".to_owned(),
        y_label: "TCP aggregate, Mbit/s".to_owned(),
        log_x: false,
        series,
    }
}

/// Adds `(x, bit/s)` to the series `name` (begun at `first`, in Mbit/s), unless it has a
/// point at that x already (both controllers share the runs with TCP in UDT's place).
fn add_point(
    series: &mut Vec<Series>,
    name: String,
    first: Option<(f64, f64)>,
    (x, bps): (f64, f64),
) {
    let i = match series.iter().position(|s| s.name == name) {
        Some(i) => i,
        None => {
            series.push(Series {
                name,
                points: first.into_iter().collect(),
            });
            series.len() - 1
        }
    };
    let points = &mut series[i].points;
    if !points.iter().any(|&(px, _)| px == x) {
        points.push((x, bps / 1e6));
    }
}

/// The smallest and largest of `values`, if any.
fn range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// Friendliness, share and fairness of `udt`'s flows beside `tcp`.
fn group_finding(figures: &[Fairness], tcp: &str, udt: &str) -> Option<String> {
    let group: Vec<&Fairness> = figures
        .iter()
        .filter(|f| f.mix.tcp == tcp && f.mix.udt.as_deref() == Some(udt))
        .collect();
    let mut parts = Vec::new();
    if let Some((lo, hi)) = range(group.iter().filter_map(|f| f.tcp_kept_beside_tcp())) {
        parts.push(format!(
            "TCP keeps {}% of what the same TCP flows get with TCP flows in UDT's place",
            span(100.0 * lo, 100.0 * hi, 0)
        ));
    }
    if let Some((lo, hi)) = range(group.iter().filter_map(|f| f.tcp_kept())) {
        let kept = span(100.0 * lo, 100.0 * hi, 0);
        parts.push(if parts.is_empty() {
            format!("TCP keeps {kept}% of what the same TCP flows get alone")
        } else {
            format!("{kept}% of what they get alone")
        });
    }
    if let Some((lo, hi)) = range(group.iter().filter_map(|f| f.udt_over_fair_share)) {
        let verdict = if lo > 1.0 {
            "more than an equal share: more aggressive than TCP here"
        } else if hi < 1.0 {
            "less than an equal share: gentler than TCP here"
        } else {
            "around an equal share"
        };
        parts.push(format!(
            "a UDT flow takes {} times an equal share of the link ({verdict})",
            span(lo, hi, 1)
        ));
    }
    if let Some((lo, hi)) = range(group.iter().filter_map(|f| f.udt_late_over_fair_share)) {
        parts.push(format!(
            "{} times over the last {LATE_SECONDS} s of the shared seconds",
            span(lo, hi, 1)
        ));
    }
    if let Some((_, worst)) = range(group.iter().filter_map(|f| f.udt_cov)) {
        parts.push(format!(
            "σ/μ across the UDT flows at most {worst:.3} in the runs with two or more"
        ));
    }
    (!parts.is_empty()).then(|| format!("{udt} beside {tcp}: {}.", parts.join("; ")))
}

fn utilisation_finding(figures: &[Fairness]) -> Option<String> {
    let (lo, hi) = range(figures.iter().map(|f| f.utilisation))?;
    Some(format!(
        "Total utilisation {}% of the link (payload).",
        span(100.0 * lo, 100.0 * hi, 0)
    ))
}

/// `lo-hi` with `digits` decimals, or one number when both print alike.
fn span(lo: f64, hi: f64, digits: usize) -> String {
    let (lo, hi) = (format!("{lo:.digits$}"), format!("{hi:.digits$}"));
    if lo == hi {
        lo
    } else {
        format!("{lo}-{hi}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_include_the_all_tcp_baseline() {
        for g in [Grid::full(), Grid::quick()] {
            assert_eq!(g.udt.first(), Some(&0));
            assert!(g
                .backgrounds
                .iter()
                .flat_map(|b| &b.flows)
                .all(|&t| (10..=50).contains(&t)));
            assert!(g.udt.iter().all(|&u| u <= 4));
            let labels: Vec<String> = g.implementations.iter().map(|i| i.label()).collect();
            assert_eq!(labels, ["ours (native)", "ours (model)"]);
        }
        // Per TCP count: one baseline, then per UDT count (3) TCP in UDT's place and each
        // of the 2 controllers.
        let full = Grid::full().runs(Duration::from_secs(1), 1);
        assert_eq!(full.len(), 5 * (1 + 3 * 3));
        assert_eq!(Grid::quick().runs(Duration::from_secs(1), 1).len(), 4);
    }

    #[test]
    fn runs_put_the_baseline_first_and_controllers_side_by_side() {
        let runs = Grid::quick().runs(Duration::from_secs(1), 1);
        let labels: Vec<&str> = runs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "10 × kernel TCP cubic",
                "12 × kernel TCP cubic",
                "2 × ours (native) + 10 × kernel TCP cubic",
                "2 × ours (model) + 10 × kernel TCP cubic",
            ]
        );
        let bbr = &Grid::full().runs(Duration::from_secs(1), 1)[30];
        assert_eq!(bbr.label, "10 × kernel TCP bbr");
    }

    #[test]
    fn mix_orders_udt_first_and_labels_counts() {
        let tcp = Implementation::Tcp { cc: TcpCc::Cubic };
        let model = Implementation::ours("model");
        let run = mix(
            (&tcp, 10),
            Some((&model, 2)),
            Duration::from_secs(1),
            (1, 1),
        );
        assert_eq!(run.flows.len(), 12);
        assert!(run.flows[..2].iter().all(|f| f.implementation == model));
        assert!(run.flows[2..].iter().all(|f| f.implementation == tcp));
        assert_eq!(run.params.get("udt_flows"), Some(&2.0));
        let alone = mix((&tcp, 10), None, Duration::from_secs(1), (1, 1));
        assert_eq!(alone.flows.len(), 10);
        assert_eq!(alone.params.get("udt_flows"), Some(&0.0));
    }

    fn counts(tcp_flows: usize, udt_flows: usize) -> Mix {
        Mix {
            tcp: "kernel TCP cubic".to_owned(),
            tcp_flows,
            udt: Some("ours (native)".to_owned()),
            udt_flows,
            repeat: 1,
        }
    }

    #[test]
    fn fairness_figures() {
        let f = Fairness::new(
            counts(2, 2),
            &[30.0, 50.0],
            &[40.0, 40.0],
            Some(160.0),
            (200.0, None),
        );
        assert_eq!(f.udt_mean, Some(40.0));
        assert_eq!(f.udt_cov, Some(0.25));
        assert!((f.udt_jain.unwrap() - 6400.0 / 6800.0).abs() < 1e-12);
        assert_eq!(f.tcp_aggregate, 80.0);
        assert_eq!(f.tcp_kept(), Some(0.5));
        assert_eq!(f.utilisation, 0.8);
        assert_eq!(f.udt_over_fair_share, Some(0.8));
        assert_eq!(f.failed, 0);
    }

    #[test]
    fn one_udt_flow_has_no_spread_and_failures_are_counted() {
        let f = Fairness::new(
            counts(3, 1),
            &[10.0],
            &[5.0, 5.0],
            None,
            (100.0, Some(19.0)),
        );
        assert_eq!(f.utilisation, 0.19);
        assert_eq!((f.udt_cov, f.udt_jain), (None, None));
        assert_eq!(f.tcp_kept(), None);
        assert_eq!(f.failed, 1);
    }

    /// A run's rows: `udt` flows of `ours (CC)` (`cc` empty: none) beside `tcp` flows of
    /// `kernel TCP TCP_CC`, bytes per second of each UDT and each TCP flow in `bps`, on an
    /// 800 bit/s link.
    fn run_rows(tcp_cc: &str, tcp: usize, udt: (&str, usize), bps: (u64, u64)) -> Vec<Row> {
        repeated_rows(tcp_cc, tcp, udt, bps, 1)
    }

    /// [`run_rows`] for repetition `r` of a run.
    fn repeated_rows(
        tcp_cc: &str,
        tcp: usize,
        (cc, udt): (&str, usize),
        bps: (u64, u64),
        r: usize,
    ) -> Vec<Row> {
        let run = format!("{udt} {cc} + {tcp} {tcp_cc} (run {r})");
        let params = [
            ("tcp_flows", tcp as f64),
            ("udt_flows", udt as f64),
            ("repeat", r as f64),
        ];
        let udt_label = format!("ours ({cc})");
        let tcp_label = format!("kernel TCP {tcp_cc}");
        let flow = |protocol: &'static str, label: &str, b: u64| {
            let what = (run.as_str(), protocol, label);
            crate::experiment::testing::row(what, &params, (b, 1.0), 800)
        };
        let mut rows: Vec<Row> = (0..udt).map(|_| flow("UDT", &udt_label, bps.0)).collect();
        rows.extend((0..tcp).map(|_| flow("TCP", &tcp_label, bps.1)));
        rows
    }

    #[test]
    fn each_background_and_controller_is_its_own_group() {
        let mut rows = run_rows("cubic", 2, ("", 0), (0, 40));
        // Three TCP flows: one in the UDT flow's place of the two runs below.
        rows.extend(run_rows("cubic", 3, ("", 0), (0, 30)));
        rows.extend(run_rows("cubic", 2, ("native", 1), (40, 20)));
        rows.extend(run_rows("cubic", 2, ("model", 1), (20, 30)));
        rows.extend(run_rows("bbr", 2, ("", 0), (0, 50)));
        rows.extend(run_rows("bbr", 2, ("model", 1), (20, 40)));
        let figures = analyse(&rows);
        assert_eq!(figures.len(), 6);
        let kept: Vec<Option<f64>> = figures.iter().map(Fairness::tcp_kept).collect();
        assert_eq!(
            kept,
            [
                Some(1.0),
                Some(1.0),
                Some(0.5),
                Some(0.75),
                Some(1.0),
                Some(0.8)
            ]
        );
        // Two of the three flows stand for the two TCP flows: 60 bytes a second, 480 bit/s.
        let beside: Vec<Option<f64>> = figures.iter().map(|f| f.tcp_beside_tcp).collect();
        assert_eq!(beside, [None, None, Some(480.0), Some(480.0), None, None]);
        let kept = figures[2].tcp_kept_beside_tcp().unwrap();
        assert!((kept - 2.0 / 3.0).abs() < 1e-12, "{kept}");
        assert_eq!(figures[3].tcp_kept_beside_tcp(), Some(1.0));
        assert_eq!(figures[3].mix.udt.as_deref(), Some("ours (model)"));
        assert_eq!(figures[4].mix.tcp, "kernel TCP bbr");
        let s = summarize_figures(&figures);
        assert_eq!(s.tables.len(), 2);
        assert_eq!(s.tables[0].rows.len(), 4);
        assert_eq!(s.tables[0].rows[3][1], "ours (model)");
        let files: Vec<&str> = s.plots.iter().map(|p| p.file.as_str()).collect();
        assert_eq!(files, ["tcp-aggregate-cubic.svg", "tcp-aggregate-bbr.svg"]);
        // Both controllers' lines and the one with TCP in UDT's place start at the shared
        // baseline; the last ends at what the two TCP flows got beside a third.
        let names: Vec<&str> = s.plots[0].series.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "2 TCP flows, ours (native)",
                "2 TCP flows, TCP in UDT's place",
                "2 TCP flows, ours (model)"
            ]
        );
        assert!(s.plots[0]
            .series
            .iter()
            .all(|l| l.points[0] == (0.0, 80.0 * 8.0 / 1e6)));
        assert_eq!(s.plots[0].series[1].points, [(0.0, 640e-6), (1.0, 480e-6)]);
        assert_eq!(s.plots[1].series.len(), 1);
        assert_eq!(s.findings.len(), 4, "{:?}", s.findings);
        assert!(
            s.findings[0].starts_with(
                "ours (native) beside kernel TCP cubic: TCP keeps 67% of what the same TCP \
                 flows get with TCP flows in UDT's place; 50% of what they get alone; "
            ),
            "{}",
            s.findings[0]
        );
        assert!(
            s.findings[1].contains("gentler than TCP"),
            "{}",
            s.findings[1]
        );
        // No run with TCP in UDT's place beside bbr: only the figure against TCP alone.
        assert!(
            s.findings[2].starts_with(
                "ours (model) beside kernel TCP bbr: TCP keeps 80% of what the same TCP flows \
                 get alone; "
            ),
            "{}",
            s.findings[2]
        );
    }

    #[test]
    fn repeated_runs_come_in_blocks_per_tcp_count() {
        let runs = Grid::quick().runs(Duration::from_secs(1), 2);
        let labels: Vec<&str> = runs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels.len(), 8);
        assert_eq!(labels[0], "10 × kernel TCP cubic (run 1 of 2)");
        assert_eq!(
            labels[3],
            "2 × ours (model) + 10 × kernel TCP cubic (run 1 of 2)"
        );
        assert_eq!(labels[4], "10 × kernel TCP cubic (run 2 of 2)");
        assert_eq!(runs[5].params.get("repeat"), Some(&2.0));
        assert_eq!(Grid::full().runs(Duration::from_secs(1), 3).len(), 3 * 50);
    }

    /// Three repetitions of one mix become one figure of medians, each compared with the
    /// TCP runs of its own repetition, and the table lists each repetition's share.
    #[test]
    fn repetitions_become_medians_against_their_own_references() {
        let mut rows = Vec::new();
        // (UDT, TCP) bytes a second in the mix, and each flow of the three-flow TCP run.
        for (r, mix_bps, stand_in) in [(1, (10, 45), 30), (2, (40, 20), 25), (3, (20, 30), 30)] {
            rows.extend(repeated_rows("cubic", 2, ("", 0), (0, 40), r));
            rows.extend(repeated_rows("cubic", 3, ("", 0), (0, stand_in), r));
            rows.extend(repeated_rows("cubic", 2, ("model", 1), mix_bps, r));
        }
        let figures = combine_repeats(&analyse(&rows));
        assert_eq!(figures.len(), 3, "two all-TCP mixes and the model one");
        let f = &figures[2];
        assert_eq!(f.mix.udt.as_deref(), Some("ours (model)"));
        // Shares of an equal split (800 bit/s over three flows): 0.3, 1.2, 0.6.
        let each: Vec<String> = f.each_share.iter().map(|v| format!("{v:.2}")).collect();
        assert_eq!(each, ["0.30", "1.20", "0.60"]);
        assert_eq!(
            f.udt_over_fair_share.map(|v| format!("{v:.2}")).as_deref(),
            Some("0.60")
        );
        // TCP aggregates 90, 40, 60 bytes a second against 60, 50, 60 beside TCP: medians 60
        // and 60.
        assert_eq!(f.tcp_aggregate, 480.0);
        assert_eq!(f.tcp_beside_tcp, Some(480.0));
        let s = summarize_figures(&figures);
        assert_eq!(s.tables[0].rows[2][6], "0.60 (0.30, 1.20, 0.60)");
        assert_eq!(s.tables[0].rows[0][6], "—");
    }

    #[test]
    fn spans_collapse_when_equal() {
        assert_eq!(span(55.6, 55.9, 0), "56");
        assert_eq!(span(0.44, 1.26, 1), "0.4-1.3");
    }

    #[test]
    fn common_window_keeps_the_seconds_all_flows_covered() {
        let series = vec![vec![1.0, 10.0, 10.0, 10.0, 2.0], vec![3.0, 20.0, 20.0, 1.0]];
        // Bins 1-2 (the first is warm-up, bin 3 is the second flow's partial tail).
        assert_eq!(common_window(&series), Some(1..3));
        assert_eq!(common_window(&[vec![1.0, 2.0]]), None);
        assert_eq!(common_window(&[]), None);
    }

    /// One flow of a "1 model + 1 cubic" run on an 800 bit/s link, `per_second` bytes in
    /// each second.
    fn timed(protocol: &str, per_second: &[u64]) -> Row {
        let mut row = crate::experiment::testing::row(
            ("1 model + 1 cubic", protocol, protocol),
            &[("tcp_flows", 1.0), ("udt_flows", 1.0)],
            (per_second.iter().sum(), per_second.len() as f64),
            800,
        );
        let r = row.result.as_mut().unwrap();
        r.series = per_second.to_vec();
        r.interval_s = vec![1.0; per_second.len()];
        row
    }

    /// A UDT flow that runs on after the TCP flows stopped is measured only over the seconds
    /// they shared: its solo tail must not inflate its share.
    #[test]
    fn goodputs_leave_out_seconds_after_other_flows_ended() {
        // Bytes per second: UDT 50 while sharing, then 100 alone for three more seconds.
        let rows = [
            timed("UDT", &[10, 50, 50, 50, 50, 100, 100, 100]),
            timed("TCP", &[10, 50, 50, 50, 50]),
        ];
        let f = &analyse(&rows)[0];
        assert_eq!(f.udt_mean, Some(400.0));
        assert_eq!(f.tcp_aggregate, 400.0);
        assert_eq!(f.utilisation, 1.0);
    }

    /// A UDT flow that starts with most of the link and ends starved: its share over the
    /// run looks fair, its share over the last seconds shows the starvation.
    #[test]
    fn the_late_share_shows_a_flow_that_starves() {
        // Bytes per second (link 100 bytes/s, so 400 bit/s is an equal share of two).
        let rows = [
            timed("UDT", &[10, 90, 90, 50, 10, 10, 10, 5]),
            timed("TCP", &[10, 10, 10, 50, 90, 90, 90, 5]),
        ];
        let f = &analyse(&rows)[0];
        // Seconds 1-6 shared: UDT 260 / 6 bytes a second over the whole window.
        assert_eq!(f.udt_over_fair_share, Some(260.0 / 6.0 * 8.0 / 400.0));
        assert_eq!(f.udt_late_over_fair_share, Some(0.2));
    }
}
