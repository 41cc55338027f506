//! Experiment 3, TCP tuning (the GridFTP study): kernel TCP throughput against its socket
//! buffer in multiples of the bandwidth-delay product, beside untuned UDT and raw UDP.
//!
//! **Link:** 1 Gbit/s nominal (run at the cap), 40 ms RTT. The RTT is chosen so that four
//! BDPs at the 200 Mbit/s cap (4 MB) stay under `net.core.rmem_max`/`wmem_max` (4 MiB here,
//! global, and `SO_RCVBUF` cannot pass it without `SO_RCVBUFFORCE`, which `udt perf` does not
//! use for TCP): every multiple is then really set. The BDP is that of the emulated rate.
//!
//! **Rows:** for cubic and bbr, `SO_SNDBUF` = `SO_RCVBUF` = 0.25..4 BDP (which turns
//! autotuning off), then autotuning with this host's limits ("default") and with the limits
//! raised to four BDPs ("tuned", in a fresh lab since those limits are namespace-wide); then
//! untuned UDT (default buffers): ours with each congestion controller that needs no
//! parameter (native and model) and libudt 4.11 in the full variant, ours with both
//! controllers in the quick one; and a raw UDP blast at the link rate (the ceiling of any
//! protocol here).

use std::collections::BTreeMap;
use std::time::Duration;

use super::{
    flow_time, report::mbit, Cell, Experiment, Plot, Row, Run, Series, Settings, Summary, Table,
};
use crate::flows::{tuned, BufferSizes, Buffers, FlowSpec, Implementation, TcpCc};
use crate::LinkParams;

/// The study's link rate, bit/s (run at the cap here).
pub const NOMINAL_RATE_BPS: u64 = 1_000_000_000;

/// The round-trip time: four BDPs at the cap fit under `rmem_max`.
pub const RTT: Duration = Duration::from_millis(40);

/// The buffer multiples of the full variant.
pub const FULL_MULTIPLES: [f64; 5] = [0.25, 0.5, 1.0, 2.0, 4.0];

/// A TCP row's buffer setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TcpBuffer {
    /// `SO_SNDBUF` = `SO_RCVBUF` = this many BDPs.
    Bdp(f64),
    /// Autotuning within this host's limits.
    Autotuned,
    /// Autotuning with the limits raised to four BDPs.
    AutotunedTuned,
}

impl TcpBuffer {
    /// `0.25 BDP`, `autotuning`, `autotuning, limits 4 BDP`.
    pub fn label(self) -> String {
        match self {
            Self::Bdp(k) => format!("{k} BDP"),
            Self::Autotuned => "autotuning".to_owned(),
            Self::AutotunedTuned => "autotuning, limits ≥ 4 BDP".to_owned(),
        }
    }
}

/// The grid of one variant: TCP congestion controls, buffer settings, UDT implementations.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Kernel congestion controls.
    pub ccs: Vec<TcpCc>,
    /// TCP buffer settings, each for every cc.
    pub buffers: Vec<TcpBuffer>,
    /// UDT implementations, default buffers.
    pub udt: Vec<Implementation>,
}

impl Grid {
    /// Both ccs, five multiples and both autotuning rows; every UDT implementation.
    pub fn full() -> Self {
        let mut buffers: Vec<TcpBuffer> =
            FULL_MULTIPLES.iter().map(|&k| TcpBuffer::Bdp(k)).collect();
        buffers.extend([TcpBuffer::Autotuned, TcpBuffer::AutotunedTuned]);
        Self {
            ccs: vec![TcpCc::Cubic, TcpCc::Bbr],
            buffers,
            udt: Implementation::all()
                .into_iter()
                .filter(Implementation::is_udt)
                .collect(),
        }
    }

    /// Cubic at half and two BDPs and autotuning; ours only, each controller.
    pub fn quick() -> Self {
        Self {
            ccs: vec![TcpCc::Cubic],
            buffers: vec![
                TcpBuffer::Bdp(0.5),
                TcpBuffer::Bdp(2.0),
                TcpBuffer::Autotuned,
            ],
            udt: Implementation::all()
                .into_iter()
                .filter(|i| matches!(i, Implementation::Ours { .. }))
                .collect(),
        }
    }
}

/// The registry entry.
pub(crate) fn experiment() -> Experiment {
    Experiment {
        name: "tcp-tuning",
        title: "TCP tuning: throughput against socket buffer, beside UDT and raw UDP (the GridFTP study)",
        description: DESCRIPTION,
        cells,
        summarize,
        repeats: false,
    }
}

const DESCRIPTION: &str = "\
Reproduces the GridFTP study's tuning table: kernel TCP's throughput as its socket buffers \
grow in multiples of the bandwidth-delay product (BDP), beside untuned UDT and a raw UDP blast \
at the link rate. A window of k BDP allows at most k times the link rate, so an untuned TCP \
is window-limited on a long fat network; UDT, whose default buffers (8192 packets, 12 MB) \
cover the BDP here, needs no tuning. Link: 1 Gbit/s nominal at 40 ms RTT, run at the rate \
cap; the BDP is the emulated one.\n\n\
`SO_SNDBUF` = `SO_RCVBUF` = k BDP switches autotuning off; the kernel doubles the value for \
its bookkeeping and the socket reports the doubled one (\"in force\"). \"autotuning\" keeps \
this host's `tcp_rmem`/`tcp_wmem` limits; \"limits ≥ 4 BDP\" raises them in the lab's \
namespaces (a fresh lab). Untuned UDT rows: ours with the native congestion control (UDT's \
own) and with the model one (BBR-like), and libudt 4.11 through the interop peers (the quick \
variant runs ours only, both controllers). The raw UDP row is a paced blast at the link rate, counted at the \
receiver: no congestion control, the ceiling of any protocol on this emulated link.";

fn cells(settings: &Settings) -> Vec<Cell> {
    let grid = if settings.quick {
        Grid::quick()
    } else {
        Grid::full()
    };
    let time = flow_time(settings, Duration::from_secs(3), Duration::from_secs(8));
    let link = LinkParams::new(NOMINAL_RATE_BPS, RTT);
    let emulated = super::capped_link(&link, settings.rate_cap_bps);
    let bdp = tuned::bdp_bytes(&emulated);
    let tcp = |tuned_limits: bool| -> Vec<Run> {
        grid.ccs
            .iter()
            .flat_map(|&cc| grid.buffers.iter().map(move |&b| (cc, b)))
            .filter(|(_, b)| (*b == TcpBuffer::AutotunedTuned) == tuned_limits)
            .map(|(cc, b)| tcp_run(cc, b, bdp, time))
            .collect()
    };
    let mut runs = tcp(false);
    runs.extend(
        grid.udt
            .iter()
            .map(|i| labelled(FlowSpec::timed(i.clone(), time), "untuned")),
    );
    runs.push(labelled(
        FlowSpec::timed(Implementation::UdpBlast, time),
        "link rate",
    ));
    let mut cells = vec![Cell {
        link: link.clone(),
        runs,
    }];
    let tuned_runs = tcp(true);
    if !tuned_runs.is_empty() {
        cells.push(Cell {
            link,
            runs: tuned_runs,
        });
    }
    cells
}

fn tcp_run(cc: TcpCc, buffer: TcpBuffer, bdp: u64, time: Duration) -> Run {
    let implementation = Implementation::Tcp { cc };
    let (buffers, multiple) = match buffer {
        TcpBuffer::Bdp(k) => {
            let bytes = (bdp as f64 * k).round() as u64;
            let sizes = BufferSizes {
                sndbuf: Some(bytes),
                rcvbuf: Some(bytes),
                ..BufferSizes::default()
            };
            (Buffers::Explicit(sizes), Some((k, bytes)))
        }
        TcpBuffer::Autotuned => (Buffers::Default, None),
        TcpBuffer::AutotunedTuned => (Buffers::Tuned, None),
    };
    let mut params = BTreeMap::from([("bdp_bytes".to_owned(), bdp as f64)]);
    if let Some((k, bytes)) = multiple {
        params.insert("bdp_multiple".to_owned(), k);
        params.insert("buffer_bytes".to_owned(), bytes as f64);
    }
    Run {
        label: format!("{} {}", implementation.label(), buffer.label()),
        flows: vec![FlowSpec::timed(implementation, time).with_buffers(buffers)],
        params,
    }
}

fn labelled(flow: FlowSpec, what: &str) -> Run {
    let mut run = Run::single(flow);
    run.label = format!("{} {what}", run.label);
    run
}

fn summarize(_settings: &Settings, rows: &[Row]) -> Summary {
    Summary {
        findings: findings(rows),
        tables: vec![table(rows)],
        plots: vec![plot(rows)],
    }
}

/// The buffer column of a row: `0.5 BDP (500 KB)`, or the run's own wording.
fn buffer_cell(row: &Row) -> String {
    match (
        row.params.get("bdp_multiple"),
        row.params.get("buffer_bytes"),
    ) {
        (Some(k), Some(b)) => format!("{k} BDP ({:.0} KB)", b / 1e3),
        _ => match row.buffers.as_str() {
            "tuned" => "autotuning, limits ≥ 4 BDP".to_owned(),
            _ if row.protocol == "TCP" => "autotuning".to_owned(),
            other => other.to_owned(),
        },
    }
}

fn table(rows: &[Row]) -> Table {
    let header = [
        "protocol",
        "implementation",
        "buffer",
        "in force (send/recv, bytes)",
        "goodput (Mbit/s)",
        "of the link",
        "window limit (Mbit/s)",
        "RTT (ms)",
        "retransmitted",
        "UDT capacity estimate (Mbit/s)",
    ];
    let body = rows.iter().map(table_row).collect();
    Table {
        title: "Throughput against buffer".to_owned(),
        caption: "Window limit: k BDP per RTT, k times the link rate (payload), for the fixed \
                  buffers. \"of the link\": goodput over the emulated rate (payload is about 97% \
                  of it for full packets)."
            .to_owned(),
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows: body,
    }
}

fn table_row(row: &Row) -> Vec<String> {
    let dash = || "—".to_owned();
    let rate = row.truth.rate_bps as f64;
    let limit = row
        .params
        .get("bdp_multiple")
        .map_or_else(dash, |k| mbit(rate * k.min(1.0) * 0.97));
    let mut cells = vec![
        row.protocol.clone(),
        row.implementation.clone(),
        buffer_cell(row),
    ];
    let Some(r) = &row.result else {
        cells.extend([
            dash(),
            "failed".to_owned(),
            dash(),
            limit,
            dash(),
            dash(),
            dash(),
        ]);
        return cells;
    };
    let b = &r.actual_buffers;
    let opt = |v: Option<u64>| v.map_or_else(dash, |v| v.to_string());
    cells.extend([
        format!("{} / {}", opt(b.sndbuf), opt(b.rcvbuf)),
        mbit(r.steady_goodput_bps),
        format!("{:.0}%", 100.0 * r.steady_goodput_bps / rate),
        limit,
        r.rtt_ms.map_or_else(dash, |ms| format!("{ms:.1}")),
        r.retransmissions.to_string(),
        r.udt.and_then(|u| u.bandwidth_bps).map_or_else(dash, mbit),
    ]);
    cells
}

fn plot(rows: &[Row]) -> Plot {
    let mut series: Vec<Series> = Vec::new();
    for row in rows {
        let (Some(k), Some(r)) = (row.params.get("bdp_multiple"), &row.result) else {
            continue;
        };
        let point = (*k, r.steady_goodput_bps / 1e6);
        match series.iter_mut().find(|s| s.name == row.implementation) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                name: row.implementation.clone(),
                points: vec![point],
            }),
        }
    }
    let span = FULL_MULTIPLES;
    let flat = rows
        .iter()
        .filter(|r| !r.params.contains_key("bdp_multiple") && r.protocol != "TCP")
        .filter_map(|row| {
            let g = row.result.as_ref()?.steady_goodput_bps / 1e6;
            Some(Series {
                name: format!("{} (untuned)", row.implementation),
                points: vec![(span[0], g), (span[span.len() - 1], g)],
            })
        });
    series.extend(flat);
    Plot {
        title: "Goodput against socket buffer (multiples of the BDP)".to_owned(),
        file: "tcp-buffer.svg".to_owned(),
        x_label: "TCP buffer, multiples of the BDP (log scale)".to_owned(),
        y_label: "Mbit/s".to_owned(),
        log_x: true,
        series,
    }
}

fn findings(rows: &[Row]) -> Vec<String> {
    let goodput = |pred: &dyn Fn(&Row) -> bool| -> Option<f64> {
        rows.iter()
            .filter(|r| pred(r))
            .filter_map(Row::goodput)
            .reduce(f64::max)
    };
    let mut out = Vec::new();
    for row in rows
        .iter()
        .filter(|r| r.params.get("bdp_multiple") == Some(&0.25))
    {
        if let Some(g) = row.goodput() {
            out.push(format!(
                "{} with a quarter-BDP buffer reaches {} Mbit/s ({:.0}% of the link): an untuned \
                 window caps TCP on a long fat network.",
                row.implementation,
                mbit(g),
                100.0 * g / row.truth.rate_bps as f64
            ));
        }
    }
    let fixed = goodput(&|r| r.params.contains_key("bdp_multiple"));
    let auto = goodput(&|r| r.protocol == "TCP" && r.buffers == "default");
    if let (Some(a), Some(f)) = (auto, fixed) {
        out.push(format!(
            "Autotuning with this host's limits reaches {} Mbit/s, {:.0}% of the best hand-set \
             buffer ({} Mbit/s): at this BDP the window problem the study tuned by hand is \
             solved by Linux's autotuning.",
            mbit(a),
            100.0 * a / f,
            mbit(f)
        ));
    }
    let udt: Vec<String> = rows
        .iter()
        .filter(|r| r.protocol == "UDT")
        .filter_map(|r| {
            let res = r.result.as_ref()?;
            Some(format!(
                "{} {} Mbit/s ({} retransmitted)",
                r.implementation,
                mbit(res.steady_goodput_bps),
                res.retransmissions
            ))
        })
        .collect();
    if !udt.is_empty() {
        out.push(format!(
            "Untuned UDT (default buffers, which cover the BDP): {}.",
            udt.join(", ")
        ));
    }
    if let Some(p) = goodput(&|r| r.protocol == "UDP") {
        out.push(format!(
            "Raw UDP at the link rate delivers {} Mbit/s: the ceiling.",
            mbit(p)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_bdp_fit_under_rmem_max_at_the_cap() {
        let link = LinkParams::new(200_000_000, RTT);
        let four = 4 * tuned::bdp_bytes(&link);
        assert!(four <= 4 << 20, "{four}");
    }

    #[test]
    fn full_grid_has_every_row_once() {
        let g = Grid::full();
        assert_eq!(g.ccs.len() * g.buffers.len(), 14);
        assert!(g.udt.contains(&Implementation::Libudt));
        assert!(g.udt.contains(&Implementation::ours("native")));
        assert!(g.udt.contains(&Implementation::ours("model")));
        assert_eq!(g.udt.len(), 3);
        let quick = Grid::quick().udt;
        assert_eq!(
            quick,
            [
                Implementation::ours("native"),
                Implementation::ours("model")
            ]
        );
    }

    #[test]
    fn tcp_runs_set_both_buffers_to_the_multiple() {
        let run = tcp_run(
            TcpCc::Bbr,
            TcpBuffer::Bdp(0.5),
            1_000_000,
            Duration::from_secs(1),
        );
        let Buffers::Explicit(sizes) = run.flows[0].buffers else {
            panic!("explicit buffers expected")
        };
        assert_eq!((sizes.sndbuf, sizes.rcvbuf), (Some(500_000), Some(500_000)));
        assert_eq!(run.params.get("bdp_multiple"), Some(&0.5));
        let auto = tcp_run(
            TcpCc::Cubic,
            TcpBuffer::AutotunedTuned,
            1,
            Duration::from_secs(1),
        );
        assert_eq!(auto.flows[0].buffers, Buffers::Tuned);
    }
}
