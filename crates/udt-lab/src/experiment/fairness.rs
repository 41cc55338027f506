//! Experiment 4, fairness and friendliness (the Teraflows paper): 1-4 UDT flows beside 10-50
//! TCP flows on one bottleneck. Fairness: how evenly the UDT flows share (σ/μ and Jain's index
//! across them); friendliness: the TCP flows' aggregate beside UDT against the same number of
//! TCP flows alone; and the total utilisation.
//!
//! **Feasibility:** every flow is its own `udt perf` client and server (per-flow figures are
//! needed; `-P` reports only the aggregate), so 50 TCP + 4 UDT flows are 108 processes on this
//! 2-vCPU machine. At the 200 Mbit/s cap the aggregate packet rate is what costs, not the
//! number of flows, so the full grid is TCP {10, 20, 50} × UDT {0, 1, 2, 4} (0: the all-TCP
//! baseline), 8 s flows; quick is TCP {10} × UDT {0, 1, 2}, 4 s flows.

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

/// The kernel TCP the UDT flows compete with: Linux's default.
pub const TCP_CC: TcpCc = TcpCc::Cubic;

/// The grid of one variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// TCP flow counts.
    pub tcp: Vec<usize>,
    /// UDT flow counts, 0 being the all-TCP baseline (run first for each TCP count).
    pub udt: Vec<usize>,
}

impl Grid {
    /// TCP {10, 20, 50} × UDT {0, 1, 2, 4}.
    pub fn full() -> Self {
        Self {
            tcp: vec![10, 20, 50],
            udt: vec![0, 1, 2, 4],
        }
    }

    /// TCP {10} × UDT {0, 1, 2}.
    pub fn quick() -> Self {
        Self {
            tcp: vec![10],
            udt: vec![0, 1, 2],
        }
    }
}

/// What one run (a mix of UDT and TCP flows) comes to.
#[derive(Debug, Clone, PartialEq)]
pub struct Fairness {
    /// TCP flows asked for.
    pub tcp_flows: usize,
    /// UDT flows asked for.
    pub udt_flows: usize,
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
    /// All flows together over the link rate, over the seconds every flow covered (their
    /// per-second series summed on the set's clock, warm-up and partial tails left out);
    /// the sum of the steady goodputs where there are no such seconds.
    pub utilisation: f64,
    /// The mean UDT flow over an equal share of the link (rate / all flows).
    pub udt_over_fair_share: Option<f64>,
}

impl Fairness {
    /// The figures of one run from its flows' goodputs (bit/s).
    pub fn new(
        (tcp_flows, udt_flows): (usize, usize),
        udt: &[f64],
        tcp: &[f64],
        tcp_alone: Option<f64>,
        (rate_bps, total_bps): (f64, Option<f64>),
    ) -> Self {
        let two_or_more = |v: Option<f64>| if udt.len() >= 2 { v } else { None };
        let tcp_aggregate: f64 = tcp.iter().sum();
        let total = total_bps.unwrap_or(tcp_aggregate + udt.iter().sum::<f64>());
        let udt_mean = stats::mean(udt);
        let all = tcp_flows + udt_flows;
        let fair_share = (all > 0).then(|| rate_bps / all as f64);
        Self {
            tcp_flows,
            udt_flows,
            failed: (tcp_flows + udt_flows).saturating_sub(udt.len() + tcp.len()),
            udt_mean,
            udt_cov: two_or_more(stats::cov(udt)),
            udt_jain: two_or_more(stats::jain_index(udt)),
            tcp_mean: stats::mean(tcp),
            tcp_jain: stats::jain_index(tcp),
            tcp_aggregate,
            tcp_alone,
            utilisation: if rate_bps > 0.0 {
                total / rate_bps
            } else {
                0.0
            },
            udt_over_fair_share: udt_mean.zip(fair_share).map(|(m, f)| m / f),
        }
    }

    /// TCP's aggregate beside UDT over TCP's aggregate alone: 1 is perfectly friendly.
    pub fn tcp_kept(&self) -> Option<f64> {
        self.tcp_alone
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
    }
}

const DESCRIPTION: &str = "\
Reproduces the Teraflows paper's fairness and friendliness runs: 1-4 UDT flows (ours, native \
congestion control) start together with 10-50 kernel TCP cubic flows on one bottleneck \
(1 Gbit/s nominal, run at the rate cap, 50 ms RTT, drop-tail queue of one BDP, default buffers). \
**Fairness** is how evenly the UDT flows share: σ/μ of their goodputs (0 is even; population \
σ) and Jain's index (1 is even). **Friendliness** is what TCP keeps: its aggregate beside UDT \
over the aggregate of the same number of TCP flows alone (1: UDT took only spare capacity). \
\"UDT / fair share\" compares the mean UDT flow with an equal split of the link among all \
flows. Utilisation counts payload, so about 97% is full.\n\n\
Feasibility on this 2-vCPU machine: each flow is its own pair of processes (per-flow figures \
need them), up to 108 processes; the full grid is TCP {10, 20, 50} × UDT {0, 1, 2, 4} with 8 s \
flows, the quick one TCP {10} × UDT {0, 1, 2} with 4 s flows.";

fn cells(settings: &Settings) -> Vec<Cell> {
    let grid = if settings.quick {
        Grid::quick()
    } else {
        Grid::full()
    };
    let time = flow_time(settings, Duration::from_secs(4), Duration::from_secs(8));
    let runs = grid
        .tcp
        .iter()
        .flat_map(|&t| grid.udt.iter().map(move |&u| mix(t, u, time)))
        .collect();
    vec![Cell {
        link: LinkParams::new(NOMINAL_RATE_BPS, RTT),
        runs,
    }]
}

fn mix(tcp: usize, udt: usize, time: Duration) -> Run {
    let mut flows: Vec<FlowSpec> = (0..udt)
        .map(|_| FlowSpec::timed(Implementation::ours("native"), time))
        .collect();
    flows.extend((0..tcp).map(|_| FlowSpec::timed(Implementation::Tcp { cc: TCP_CC }, time)));
    Run {
        label: format!("{udt} UDT + {tcp} TCP"),
        flows,
        params: BTreeMap::from([
            ("tcp_flows".to_owned(), tcp as f64),
            ("udt_flows".to_owned(), udt as f64),
        ]),
    }
}

/// The goodputs of one run's flows, by protocol.
struct Goodputs {
    tcp_flows: usize,
    udt_flows: usize,
    rate_bps: f64,
    udt: Vec<f64>,
    tcp: Vec<f64>,
    /// Each working flow's per-second rates on the set's clock.
    series: Vec<Vec<f64>>,
}

/// The figures of every run, in row order, each with its TCP-alone baseline.
pub fn analyse(rows: &[Row]) -> Vec<Fairness> {
    let mut runs: Vec<Goodputs> = Vec::new();
    for row in rows {
        let count = |k: &str| row.params.get(k).copied().unwrap_or(0.0) as usize;
        let key = (count("tcp_flows"), count("udt_flows"));
        let i = match runs.iter().position(|r| (r.tcp_flows, r.udt_flows) == key) {
            Some(i) => i,
            None => {
                runs.push(Goodputs {
                    tcp_flows: key.0,
                    udt_flows: key.1,
                    rate_bps: row.truth.rate_bps as f64,
                    udt: Vec::new(),
                    tcp: Vec::new(),
                    series: Vec::new(),
                });
                runs.len() - 1
            }
        };
        if let Some(r) = &row.result {
            runs[i].series.push(aligned(r));
        }
        if let Some(g) = row.goodput() {
            let run = &mut runs[i];
            if row.protocol == "UDT" {
                run.udt.push(g);
            } else {
                run.tcp.push(g);
            }
        }
    }
    let alone = |tcp: usize| -> Option<f64> {
        runs.iter()
            .find(|r| r.tcp_flows == tcp && r.udt_flows == 0)
            .map(|r| r.tcp.iter().sum())
    };
    runs.iter()
        .map(|r| {
            let counts = (r.tcp_flows, r.udt_flows);
            let total = common_total(&r.series);
            Fairness::new(
                counts,
                &r.udt,
                &r.tcp,
                alone(r.tcp_flows),
                (r.rate_bps, total),
            )
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

/// The mean aggregate rate over the whole seconds every flow covered, after the first (the
/// warm-up); `None` if there are none.
fn common_total(series: &[Vec<f64>]) -> Option<f64> {
    // The last bin of each flow is partial: the common seconds end before the shortest one's.
    let shortest = series.iter().map(Vec::len).min()?;
    let total = stats::sum_series(series);
    let kept = total.get(1..shortest.saturating_sub(1))?;
    stats::mean(kept)
}

fn summarize(_settings: &Settings, rows: &[Row]) -> Summary {
    let figures = analyse(rows);
    Summary {
        findings: findings(&figures),
        tables: vec![table(&figures)],
        plots: vec![plot(&figures)],
    }
}

fn table(figures: &[Fairness]) -> Table {
    let header = [
        "TCP flows",
        "UDT flows",
        "UDT per flow (Mbit/s)",
        "UDT σ/μ",
        "UDT Jain",
        "UDT / fair share",
        "TCP per flow (Mbit/s)",
        "TCP Jain",
        "TCP aggregate (Mbit/s)",
        "TCP alone (Mbit/s)",
        "TCP kept",
        "utilisation",
        "failed flows",
    ];
    let dash = || "—".to_owned();
    let num = |v: Option<f64>, digits: usize| v.map_or_else(dash, |v| format!("{v:.digits$}"));
    let rows = figures
        .iter()
        .map(|f| {
            vec![
                f.tcp_flows.to_string(),
                f.udt_flows.to_string(),
                f.udt_mean.map_or_else(dash, mbit),
                num(f.udt_cov, 3),
                num(f.udt_jain, 3),
                num(f.udt_over_fair_share, 2),
                f.tcp_mean.map_or_else(dash, mbit),
                num(f.tcp_jain, 3),
                mbit(f.tcp_aggregate),
                f.tcp_alone.map_or_else(dash, mbit),
                num(f.tcp_kept(), 2),
                format!("{:.0}%", 100.0 * f.utilisation),
                f.failed.to_string(),
            ]
        })
        .collect();
    Table {
        title: "UDT beside TCP on one bottleneck".to_owned(),
        caption: "Per-flow goodputs are steady-state (the warm-up left out). σ/μ and Jain's \
                  index need two UDT flows. TCP kept: TCP aggregate here over the same number \
                  of TCP flows alone (the UDT = 0 row). Utilisation: all flows' per-second rates summed \
                  over the seconds every flow covered (warm-up and partial tails left out), over \
                  the link rate; the clients of one run start up to a few hundred ms apart (up to 54 processes), \
                  so the largest runs can show a few percent over the payload ceiling (~97%)."
            .to_owned(),
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows,
    }
}

fn plot(figures: &[Fairness]) -> Plot {
    let mut series: Vec<Series> = Vec::new();
    for f in figures {
        let name = format!("{} TCP flows", f.tcp_flows);
        let point = (f.udt_flows as f64, f.tcp_aggregate / 1e6);
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                name,
                points: vec![point],
            }),
        }
    }
    Plot {
        title: "TCP aggregate goodput as UDT flows join".to_owned(),
        file: "tcp-aggregate.svg".to_owned(),
        x_label: "UDT flows".to_owned(),
        y_label: "TCP aggregate, Mbit/s".to_owned(),
        log_x: false,
        series,
    }
}

fn findings(figures: &[Fairness]) -> Vec<String> {
    let mixed: Vec<&Fairness> = figures.iter().filter(|f| f.udt_flows > 0).collect();
    let kept: Vec<f64> = mixed.iter().filter_map(|f| f.tcp_kept()).collect();
    let covs: Vec<f64> = mixed.iter().filter_map(|f| f.udt_cov).collect();
    let utils: Vec<f64> = figures.iter().map(|f| f.utilisation).collect();
    let mut out = Vec::new();
    if let (Some(lo), Some(hi)) = (
        kept.iter().copied().reduce(f64::min),
        kept.iter().copied().reduce(f64::max),
    ) {
        out.push(format!(
            "Friendliness: beside UDT, TCP keeps {:.0}%-{:.0}% of what the same TCP flows get \
             alone.",
            100.0 * lo,
            100.0 * hi
        ));
    }
    let shares: Vec<f64> = mixed.iter().filter_map(|f| f.udt_over_fair_share).collect();
    if let (Some(lo), Some(hi)) = (
        shares.iter().copied().reduce(f64::min),
        shares.iter().copied().reduce(f64::max),
    ) {
        out.push(format!(
            "A UDT flow takes {lo:.1}-{hi:.1} times an equal share of the link: against many \
             cubic flows at this RTT, UDT's rate-based control is more aggressive than TCP."
        ));
    }
    if let Some(worst) = covs.iter().copied().reduce(f64::max) {
        out.push(format!(
            "Fairness among UDT flows: σ/μ at most {worst:.3} across the runs with two or more."
        ));
    }
    if let (Some(lo), Some(hi)) = (
        utils.iter().copied().reduce(f64::min),
        utils.iter().copied().reduce(f64::max),
    ) {
        out.push(format!(
            "Total utilisation {:.0}%-{:.0}% of the link (payload).",
            100.0 * lo,
            100.0 * hi
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_include_the_all_tcp_baseline() {
        for g in [Grid::full(), Grid::quick()] {
            assert_eq!(g.udt.first(), Some(&0));
            assert!(g.tcp.iter().all(|&t| (10..=50).contains(&t)));
            assert!(g.udt.iter().all(|&u| u <= 4));
        }
        assert_eq!(Grid::full().tcp.len() * Grid::full().udt.len(), 12);
    }

    #[test]
    fn mix_orders_udt_first_and_labels_counts() {
        let run = mix(10, 2, Duration::from_secs(1));
        assert_eq!(run.flows.len(), 12);
        assert!(run.flows[..2].iter().all(|f| f.implementation.is_udt()));
        assert!(run.flows[2..].iter().all(|f| !f.implementation.is_udt()));
        assert_eq!(run.label, "2 UDT + 10 TCP");
    }

    #[test]
    fn fairness_figures() {
        let f = Fairness::new(
            (2, 2),
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
        let f = Fairness::new((3, 1), &[10.0], &[5.0, 5.0], None, (100.0, Some(19.0)));
        assert_eq!(f.utilisation, 0.19);
        assert_eq!((f.udt_cov, f.udt_jain), (None, None));
        assert_eq!(f.tcp_kept(), None);
        assert_eq!(f.failed, 1);
    }

    #[test]
    fn common_total_keeps_the_seconds_all_flows_covered() {
        let series = vec![vec![1.0, 10.0, 10.0, 10.0, 2.0], vec![3.0, 20.0, 20.0, 1.0]];
        // Bins 1-2 (the first is warm-up, bin 3 is the second flow's partial tail).
        assert_eq!(common_total(&series), Some(30.0));
        assert_eq!(common_total(&[vec![1.0, 2.0]]), None);
        assert_eq!(common_total(&[]), None);
    }
}
