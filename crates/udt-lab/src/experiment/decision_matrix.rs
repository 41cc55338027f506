//! Experiment 1, the decision matrix (after the Sterling File Accelerator study): bandwidth
//! {45, 155, 1000} Mbit/s x RTT {0, 10, 20, 30, 50, 100, 200} ms. In each cell one flow of
//! each implementation runs alone on a fresh link, in turn; the tables say which of UDT
//! and TCP is faster and by how much, and what each costs in CPU seconds per GiB.
//!
//! Full: 21 cells x 5 implementations x 6 s flows (about 13 minutes). Quick: 45 Mbit/s at
//! 10 and 100 ms, 2 s flows.

use std::time::Duration;

use super::alone::{
    each_alone, failed_finding, goodput_vs_rtt, goodputs, headline_goodputs, impl_header,
    TCP_HEADLINE, UDT_HEADLINE,
};
use super::report::mbit;
use super::{
    flow_time, implementations, links, mean_of, row_of, Cell, Experiment, Plot, Row, Settings,
    Summary, Table, Truth,
};
use crate::params::format_rate;
use crate::LinkParams;

/// The study's rates, Mbit/s.
pub const RATES_MBIT: [u64; 3] = [45, 155, 1000];

/// The study's RTTs, ms.
pub const RTTS_MS: [u64; 7] = [0, 10, 20, 30, 50, 100, 200];

/// The registry entry.
pub(crate) fn experiment() -> Experiment {
    Experiment {
        name: "decision-matrix",
        title: "Decision matrix: UDT or TCP, by bandwidth and RTT",
        description: DESCRIPTION,
        cells,
        summarize,
        repeats: false,
    }
}

const DESCRIPTION: &str = "\
Reproduces the decision matrix of the Sterling File Accelerator study: for a link of a given \
bandwidth and round-trip time, is UDT or TCP faster, by how much, and at what CPU cost (the \
study found UDT costs about twice TCP's CPU). Each cell is a fresh emulated link (drop-tail \
queue of one bandwidth-delay product, no random loss); one bulk flow of each implementation \
runs alone on it in turn, with default buffers: ours with each of its congestion \
controllers, libudt 4.11 through the interop peers, kernel TCP cubic and bbr through \
`udt perf --proto tcp`. The headline matrix compares the defaults a user gets: ours (native) \
against kernel TCP cubic.";

fn cells(settings: &Settings) -> Vec<Cell> {
    let (rates, rtts): (&[u64], &[u64]) = if settings.quick {
        (&[45], &[10, 100])
    } else {
        (&RATES_MBIT, &RTTS_MS)
    };
    let secs = flow_time(settings, Duration::from_secs(2), Duration::from_secs(6));
    let mut cells = Vec::new();
    for &rate in rates {
        for &rtt in rtts {
            let link = LinkParams::new(rate * 1_000_000, Duration::from_millis(rtt));
            cells.push(Cell {
                link,
                runs: each_alone(secs),
            });
        }
    }
    cells
}

fn summarize(_settings: &Settings, rows: &[Row]) -> Summary {
    let cells = links(rows);
    let impls = implementations(rows);
    let mut summary = Summary {
        findings: findings(rows, &cells, &impls),
        tables: vec![
            headline_matrix(rows, &cells),
            goodput_table(rows, &cells, &impls),
            cpu_table(rows, &cells, &impls),
            estimate_table(rows, &cells, &impls),
        ],
        plots: Vec::new(),
    };
    let mut rates: Vec<u64> = cells.iter().map(|c| c.nominal_rate_bps).collect();
    rates.dedup();
    for rate in rates {
        summary.plots.push(goodput_plot(rows, &cells, &impls, rate));
    }
    summary
}

/// The ratio of the headline UDT's goodput to the headline TCP's on `truth`.
fn ratio(rows: &[Row], truth: &Truth) -> Option<f64> {
    let (udt, tcp) = headline_goodputs(rows, truth)?;
    (udt > 0.0 && tcp > 0.0).then(|| udt / tcp)
}

/// `UDT x1.8` or `TCP x1.2` (the faster one, and its factor over the other).
fn verdict(r: f64) -> String {
    if r >= 1.05 {
        format!("UDT x{r:.2}")
    } else if r <= 1.0 / 1.05 {
        format!("TCP x{:.2}", 1.0 / r)
    } else {
        "tie".to_owned()
    }
}

fn headline_matrix(rows: &[Row], cells: &[Truth]) -> Table {
    let mut rtts: Vec<f64> = cells.iter().map(|c| c.rtt_ms).collect();
    rtts.sort_by(f64::total_cmp);
    rtts.dedup();
    let mut rates: Vec<&Truth> = Vec::new();
    for c in cells {
        if !rates
            .iter()
            .any(|r| r.nominal_rate_bps == c.nominal_rate_bps)
        {
            rates.push(c);
        }
    }
    let header = std::iter::once("bandwidth \\ RTT".to_owned())
        .chain(rtts.iter().map(|r| format!("{r} ms")))
        .collect();
    let table_rows = rates
        .iter()
        .map(|rate| {
            let mut line = vec![rate.rate_label()];
            for rtt in &rtts {
                let cell = cells
                    .iter()
                    .find(|c| c.nominal_rate_bps == rate.nominal_rate_bps && c.rtt_ms == *rtt);
                line.push(
                    cell.and_then(|c| ratio(rows, c))
                        .map_or("-".into(), verdict),
                );
            }
            line
        })
        .collect();
    Table {
        title: format!("Decision matrix: {UDT_HEADLINE} vs {TCP_HEADLINE}"),
        caption: "Each cell names the faster protocol and its goodput over the other's (tie: \
                  within 5%). Defaults on both sides: what a user gets without tuning."
            .into(),
        header,
        rows: table_rows,
    }
}

fn goodput_table(rows: &[Row], cells: &[Truth], impls: &[String]) -> Table {
    let mut header = impl_header("link", impls);
    header.push("UDT / TCP".to_owned());
    let table_rows = cells
        .iter()
        .map(|c| {
            let mut line = vec![c.rate_label(), format!("{} ms", c.rtt_ms)];
            line.extend(goodputs(rows, c, impls));
            line.push(ratio(rows, c).map_or("-".into(), |r| format!("{r:.2}")));
            line
        })
        .collect();
    Table {
        title: "Goodput (Mbit/s) of each implementation".into(),
        caption: format!(
            "Steady payload rate at the receiver of one flow alone on the link. UDT / TCP is \
             {UDT_HEADLINE} over {TCP_HEADLINE}."
        ),
        header,
        rows: table_rows,
    }
}

fn cpu_table(rows: &[Row], cells: &[Truth], impls: &[String]) -> Table {
    let header = impl_header("link", impls);
    let cpu = |r: &Row| r.result.as_ref().and_then(|x| x.cpu_s_per_gib());
    let mut table_rows: Vec<Vec<String>> = cells
        .iter()
        .map(|c| {
            let mut line = vec![c.rate_label(), format!("{} ms", c.rtt_ms)];
            for i in impls {
                let v = row_of(rows, c, i).and_then(cpu);
                line.push(v.map_or("-".into(), |v| format!("{v:.2}")));
            }
            line
        })
        .collect();
    let mut mean = vec!["mean".to_owned(), String::new()];
    for i in impls {
        mean.push(mean_of(rows, i, cpu).map_or("-".into(), |v| format!("**{v:.2}**")));
    }
    table_rows.push(mean);
    Table {
        title: "CPU seconds per GiB moved (sender + receiver)".into(),
        caption: "User + system CPU of both processes over the flow, per GiB received. The \
                  emulator's own CPU is not counted."
            .into(),
        header,
        rows: table_rows,
    }
}

fn estimate_table(rows: &[Row], cells: &[Truth], impls: &[String]) -> Table {
    let udt: Vec<&String> = impls
        .iter()
        .filter(|i| {
            rows.iter()
                .any(|r| &r.implementation == *i && r.protocol == "UDT")
        })
        .collect();
    let mut header = vec!["link (emulated)".to_owned(), "RTT (emulated)".to_owned()];
    for i in &udt {
        header.push(format!("{i}: capacity estimate"));
        header.push(format!("{i}: RTT"));
    }
    let table_rows = cells
        .iter()
        .map(|c| {
            let mut line = vec![format_rate(c.rate_bps), format!("{} ms", c.rtt_ms)];
            for i in &udt {
                let est = row_of(rows, c, i).and_then(|r| r.result.as_ref()?.udt);
                let bw = est.and_then(|e| e.bandwidth_bps);
                line.push(bw.map_or("-".into(), |b| format!("{} Mbit/s", mbit(b))));
                let rtt = est.and_then(|e| e.rtt_ms);
                line.push(rtt.map_or("-".into(), |r| format!("{r:.1} ms")));
            }
            line
        })
        .collect();
    Table {
        title: "UDT's own view of the link beside the emulated truth".into(),
        caption: "The capacity estimate (receiver's packet pairs, payload bits) and smoothed \
                  RTT each UDT sender held at the end of its flow. Under load the RTT includes \
                  queueing delay."
            .into(),
        header,
        rows: table_rows,
    }
}

fn goodput_plot(rows: &[Row], cells: &[Truth], impls: &[String], rate: u64) -> Plot {
    let on_rate: Vec<&Truth> = cells
        .iter()
        .filter(|c| c.nominal_rate_bps == rate)
        .collect();
    let label = on_rate
        .first()
        .map_or(format_rate(rate), |c| c.rate_label());
    let series = goodput_vs_rtt(rows, &on_rate, impls);
    Plot {
        file: format!("goodput-{}mbit.svg", rate / 1_000_000),
        title: format!("Goodput vs RTT, {label}"),
        x_label: "RTT (ms)".into(),
        y_label: "goodput (Mbit/s)".into(),
        log_x: false,
        series,
    }
}

fn findings(rows: &[Row], cells: &[Truth], impls: &[String]) -> Vec<String> {
    let ratios: Vec<(&Truth, f64)> = cells
        .iter()
        .filter_map(|c| Some((c, ratio(rows, c)?)))
        .collect();
    let mut out = Vec::new();
    if !ratios.is_empty() {
        let udt_wins = ratios.iter().filter(|(_, r)| *r >= 1.05).count();
        let tcp_wins = ratios.iter().filter(|(_, r)| *r <= 1.0 / 1.05).count();
        out.push(format!(
            "{UDT_HEADLINE} beat {TCP_HEADLINE} by more than 5% in {udt_wins} of {} cells, \
             lost in {tcp_wins}, tied in the rest.",
            ratios.len()
        ));
        if let Some((c, r)) = ratios.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
            out.push(format!(
                "Largest UDT advantage: x{r:.2} at {}, {} ms.",
                c.rate_label(),
                c.rtt_ms
            ));
        }
        if let Some((c, r)) = ratios.iter().min_by(|a, b| a.1.total_cmp(&b.1)) {
            out.push(format!(
                "Largest TCP advantage: x{:.2} at {}, {} ms.",
                1.0 / r,
                c.rate_label(),
                c.rtt_ms
            ));
        }
    }
    let cpu = |r: &Row| r.result.as_ref().and_then(|x| x.cpu_s_per_gib());
    let means: Vec<String> = impls
        .iter()
        .filter_map(|i| Some(format!("{i} {:.2}", mean_of(rows, i, cpu)?)))
        .collect();
    if !means.is_empty() {
        out.push(format!("Mean CPU seconds per GiB: {}.", means.join(", ")));
    }
    out.extend(super::still_rising_finding(rows));
    out.extend(failed_finding(rows));
    out
}
