//! The 1 Gbit/s grid (issue 12's bar): one flow alone per cell on a 1 Gbit/s link with a
//! one-BDP drop-tail queue, RTT {0, 10, 20, 50, 100, 200} ms x random loss {0, 0.1%, 1%},
//! our controllers with their default (self-sizing) buffers beside kernel TCP BBR and CUBIC
//! with tuned buffers and libudt 4.11, all in one run.
//!
//! What a cell must show for `model`, the default between our peers: at least 95% of the
//! payload capacity without loss, 90% at 0.1% and 85% at 1%; at least tuned BBR's goodput;
//! retransmissions within 1.5x the packets the link dropped. The ramp table gives the first
//! whole second at 90% of capacity (the bar: within 2 s at 100 ms).
//!
//! Full: 18 cells x 5 flows x 15 s (about 30 minutes). Quick: 50 ms at 0.1%, 2 s flows
//! (at 1% libudt 4.11 can take longer than the grace to drain its buffer after 2 s).

use std::time::Duration;

use super::alone::{failed_finding, goodputs, impl_header, loss_label, losses, plot_for_loss};
use super::report::mbit;
use super::{
    flow_time, implementations, links, row_of, Cell, Experiment, Row, Run, Settings, Summary,
    Table, Truth,
};
use crate::flows::{payload_capacity_bps, Buffers, FlowSpec, Implementation, TcpCc};
use crate::LinkParams;

/// The link rate, bit/s.
pub const RATE_BPS: u64 = 1_000_000_000;

/// RTTs, ms.
pub const RTTS_MS: [u64; 6] = [0, 10, 20, 50, 100, 200];

/// Loss probabilities per packet, each direction.
pub const LOSSES: [f64; 3] = [0.0, 0.001, 0.01];

/// The controller the bars apply to.
const SUBJECT: &str = "ours (model)";

/// The peer it must match or beat.
const RIVAL: &str = "kernel TCP bbr";

/// Retransmissions allowed per packet the link dropped.
const RETRANSMIT_BOUND: f64 = 1.5;

/// The registry entry.
pub(crate) fn experiment() -> Experiment {
    Experiment {
        name: "wan-grid",
        title: "1 Gbit/s grid: RTT x random loss against tuned TCP",
        description: DESCRIPTION,
        cells,
        summarize,
        repeats: false,
    }
}

const DESCRIPTION: &str = "\
One bulk flow alone per cell on a 1 Gbit/s link whose drop-tail queue holds one \
bandwidth-delay product (at least 64 packets), RTT 0 to 200 ms, random loss 0, 0.1% and 1% \
(each direction, independent per packet). Ours (`model` and `native`) and libudt 4.11 run \
with their default buffers (ours size themselves); kernel TCP BBR and CUBIC with buffers \
tuned to the path (autotuning limits of four BDPs). Payload capacity is the link rate times \
1456/1500 for UDT and 1448/1500 for TCP (headers of a 1500-byte packet). The bars for \
`model`: >= 95% of capacity without loss, >= 90% at 0.1%, >= 85% at 1%, at least tuned \
BBR's goodput, retransmissions within 1.5x the packets lost on the way (the link's drops \
and those at its intake).";

/// The flows of every cell, each alone.
fn implementations_run() -> Vec<(Implementation, Buffers)> {
    vec![
        (Implementation::ours("model"), Buffers::Default),
        (Implementation::ours("native"), Buffers::Default),
        (Implementation::Tcp { cc: TcpCc::Bbr }, Buffers::Tuned),
        (Implementation::Tcp { cc: TcpCc::Cubic }, Buffers::Tuned),
        (Implementation::Libudt, Buffers::Default),
    ]
}

fn cells(settings: &Settings) -> Vec<Cell> {
    let (losses, rtts): (&[f64], &[u64]) = if settings.quick {
        (&[0.001], &[50])
    } else {
        (&LOSSES, &RTTS_MS)
    };
    let secs = flow_time(settings, Duration::from_secs(2), Duration::from_secs(15));
    let mut cells = Vec::new();
    for &loss in losses {
        for &rtt in rtts {
            let link = LinkParams {
                loss,
                ..LinkParams::new(RATE_BPS, Duration::from_millis(rtt))
            };
            let runs = implementations_run()
                .into_iter()
                .map(|(i, b)| Run::single(FlowSpec::timed(i, secs).with_buffers(b)))
                .collect();
            cells.push(Cell { link, runs });
        }
    }
    cells
}

/// The payload rate the link can carry for `row`'s protocol, bit/s.
fn capacity(row: &Row) -> f64 {
    payload_capacity_bps(&row.protocol, row.truth.rate_bps)
}

/// The share of capacity a cell's loss asks of the subject.
fn bar(loss: f64) -> f64 {
    if loss == 0.0 {
        0.95
    } else if loss <= 0.001 {
        0.90
    } else {
        0.85
    }
}

/// The goodput once settled: the mean rate over the whole seconds of the flow's second
/// half, bit/s (the steady goodput when the series is too short). At 200 ms a start-up
/// from an initial window takes two seconds or more, for TCP as for UDT, and the steady
/// figure, which leaves out only the first second, still counts it: the capacity bars are
/// about a transfer's cruising rate, and the ramp has a bar of its own.
fn settled(row: &Row) -> Option<f64> {
    let r = row.result.as_ref()?;
    let total: f64 = r.interval_s.iter().sum();
    let mut start = 0.0;
    let mut late = Vec::new();
    for (bytes, len) in r.series.iter().zip(&r.interval_s) {
        if start >= total / 2.0 && *len >= 0.9 {
            late.push(*bytes as f64 * 8.0 / len);
        }
        start += len;
    }
    if late.len() >= 2 {
        Some(late.iter().sum::<f64>() / late.len() as f64)
    } else {
        row.goodput()
    }
}

/// Settled goodput over capacity.
fn share(row: &Row) -> Option<f64> {
    Some(settled(row)? / capacity(row))
}

/// Packets lost in the data direction during the run: the link's drops and, where they
/// were counted, those at the emulator's intake (`None` without the link's count).
fn drops(row: &Row) -> Option<u64> {
    Some(row.link_drops? + row.intake_drops.unwrap_or(0))
}

/// Retransmissions per packet lost on the way, at the link or before it (`None` without
/// drops or counts). The link model's count alone read a 100 ms start-up's retransmissions
/// as 4.77 times the drops in session 96's grid, where the TUN queue in front of it had lost
/// most of them.
fn retransmit_ratio(row: &Row) -> Option<f64> {
    let drops = drops(row).filter(|&d| d > 0)?;
    Some(row.result.as_ref()?.retransmissions as f64 / drops as f64)
}

/// Seconds from the flow's start to the end of its first whole second at >= 90% of
/// capacity, if any.
fn ramp_s(row: &Row) -> Option<f64> {
    let r = row.result.as_ref()?;
    let target = 0.9 * capacity(row);
    let mut elapsed = 0.0;
    for (bytes, len) in r.series.iter().zip(&r.interval_s) {
        elapsed += len;
        if *len >= 0.9 && *bytes as f64 * 8.0 / len >= target {
            return Some(elapsed);
        }
    }
    None
}

/// Whether the subject met every bar on `truth`: `Some(true)`, `Some(false)`, or `None`
/// when a flow is missing.
fn verdict(rows: &[Row], truth: &Truth) -> Option<(bool, Vec<&'static str>)> {
    let ours = row_of(rows, truth, SUBJECT)?;
    let mut missed = Vec::new();
    if share(ours)? < bar(truth.loss) {
        missed.push("capacity");
    }
    if let Some(rival) = row_of(rows, truth, RIVAL).and_then(settled) {
        if settled(ours)? < rival {
            missed.push("below bbr");
        }
    }
    if retransmit_ratio(ours).is_some_and(|r| r > RETRANSMIT_BOUND) {
        missed.push("retransmissions");
    }
    Some((missed.is_empty(), missed))
}

fn summarize(_settings: &Settings, rows: &[Row]) -> Summary {
    let cells = links(rows);
    let impls = implementations(rows);
    let losses = losses(&cells);
    Summary {
        findings: findings(rows, &cells),
        tables: vec![
            goodput_table(rows, &cells, &impls),
            settled_table(rows, &cells, &impls),
            retransmission_table(rows, &cells, &impls),
            ramp_table(rows, &cells, &impls),
            cpu_table(rows, &cells, &impls),
        ],
        plots: losses
            .iter()
            .map(|l| plot_for_loss(rows, &cells, &impls, *l, "1 Gbit/s"))
            .collect(),
    }
}

fn goodput_table(rows: &[Row], cells: &[Truth], impls: &[String]) -> Table {
    let mut header = impl_header("loss", impls);
    header.extend([
        format!("{SUBJECT} settled, % of capacity"),
        format!("{SUBJECT} / {RIVAL}, settled"),
        "bars met".to_owned(),
    ]);
    let table_rows = cells
        .iter()
        .map(|c| {
            let mut line = vec![loss_label(c.loss), format!("{} ms", c.rtt_ms)];
            line.extend(goodputs(rows, c, impls));
            let ours = row_of(rows, c, SUBJECT);
            line.push(
                ours.and_then(share)
                    .map_or("-".into(), |s| format!("{:.1}%", s * 100.0)),
            );
            let vs = ours.and_then(settled).zip(
                row_of(rows, c, RIVAL)
                    .and_then(settled)
                    .filter(|&g| g > 0.0),
            );
            line.push(vs.map_or("-".into(), |(o, r)| format!("{:.2}", o / r)));
            line.push(match verdict(rows, c) {
                Some((true, _)) => "yes".into(),
                Some((false, missed)) => format!("no ({})", missed.join(", ")),
                None => "-".into(),
            });
            line
        })
        .collect();
    Table {
        title: "Goodput (Mbit/s), 1 Gbit/s link, one flow alone".into(),
        caption: format!(
            "Steady payload rate at the receiver (the first second left out). The last three \
             columns judge the settled rate (the flow's second half, next table). Capacity: \
             1456/1500 of the rate for UDT, 1448/1500 for TCP. Bars for {SUBJECT}: 95/90/85% \
             of capacity at 0/0.1/1% loss, at least {RIVAL} (tuned), retransmissions <= \
             {RETRANSMIT_BOUND}x the packets lost on the way (at the link or its intake)."
        ),
        header,
        rows: table_rows,
    }
}

/// A table with a line per cell (loss, RTT) and a column per implementation, each entry
/// `entry` of that implementation's row there (`-` where it has none).
fn per_implementation(
    rows: &[Row],
    cells: &[Truth],
    impls: &[String],
    (title, caption): (&str, &str),
    entry: impl Fn(&Row) -> String,
) -> Table {
    let table_rows = cells
        .iter()
        .map(|c| {
            let mut line = vec![loss_label(c.loss), format!("{} ms", c.rtt_ms)];
            line.extend(
                impls
                    .iter()
                    .map(|i| row_of(rows, c, i).map_or("-".into(), &entry)),
            );
            line
        })
        .collect();
    Table {
        title: title.into(),
        caption: caption.into(),
        header: impl_header("loss", impls),
        rows: table_rows,
    }
}

fn settled_table(rows: &[Row], cells: &[Truth], impls: &[String]) -> Table {
    let text = (
        "Settled goodput (Mbit/s): the second half of each flow",
        "The mean of the whole seconds in the second half of each flow, and its share of the \
         protocol's payload capacity: the cruising rate of a long transfer, start-up left out \
         (at 200 ms it takes seconds).",
    );
    per_implementation(rows, cells, impls, text, |r| {
        settled(r).map_or("failed".into(), |g| {
            format!("{} ({:.0}%)", mbit(g), g / capacity(r) * 100.0)
        })
    })
}

fn retransmission_table(rows: &[Row], cells: &[Truth], impls: &[String]) -> Table {
    let text = (
        "Retransmissions / packets lost on the way",
        "Packets (UDT) or segments (TCP) the sender retransmitted, over the packets lost in \
         the data direction during the flow: the emulated link's drops (random loss and queue \
         overflow) and, as `+ N at intake`, those the sending side's TUN queue dropped before \
         the emulator read them (a sender bursting faster than the forwarder reads); the \
         ratio in brackets. Above 1 means packets resent that had arrived (or were resent \
         twice); for ours, `N twice` counts the data packets the receiver got twice, the \
         spurious retransmissions among them.",
    );
    per_implementation(rows, cells, impls, text, |r| {
        let Some(res) = r.result.as_ref() else {
            return "-".into();
        };
        let drops = drops(r).map_or("?".into(), |d| d.to_string());
        let intake = match r.intake_drops {
            Some(n) if n > 0 => format!(" (+ {n} at intake)"),
            _ => String::new(),
        };
        let ratio = retransmit_ratio(r).map_or(String::new(), |x| format!(" (x{x:.2})"));
        let twice = res
            .duplicates
            .map_or(String::new(), |n| format!(", {n} twice"));
        format!("{} / {drops}{intake}{ratio}{twice}", res.retransmissions)
    })
}

fn ramp_table(rows: &[Row], cells: &[Truth], impls: &[String]) -> Table {
    let text = (
        "Ramp: end of the first whole second at >= 90% of capacity",
        "From the receiver's per-second series (start-up and handshake included); `never` when \
         no second reached it. The bar: within 2 s at 100 ms.",
    );
    per_implementation(rows, cells, impls, text, |r| match r.result {
        None => "-".into(),
        Some(_) => ramp_s(r).map_or("never".into(), |s| format!("{s:.0} s")),
    })
}

/// Sender plus receiver CPU seconds per GiB delivered, if the flow reported its CPU time.
fn cpu_per_gib(row: &Row) -> Option<f64> {
    row.result
        .as_ref()
        .and_then(|r| r.cpu_s_per_gib())
        .filter(|&c| c > 0.0)
}

fn cpu_table(rows: &[Row], cells: &[Truth], impls: &[String]) -> Table {
    let text = (
        "CPU seconds per GiB delivered, sender and receiver together",
        "User plus system time of the two endpoint processes over the bytes received, as \
         each tool reports it (getrusage). Kernel TCP's receive work done in softirq context \
         is charged to whichever process is running, so TCP's figure may be low; the \
         emulator's own CPU is not counted for anyone.",
    );
    per_implementation(rows, cells, impls, text, |r| {
        cpu_per_gib(r).map_or("-".into(), |c| format!("{c:.2}"))
    })
}

/// The CPU cost of the subject against the rival's and libudt's at 100 ms without loss
/// (issue 13's emulated-WAN row).
fn cpu_finding(rows: &[Row], cells: &[Truth]) -> Option<String> {
    let c = cells.iter().find(|c| c.rtt_ms == 100.0 && c.loss == 0.0)?;
    let ours = row_of(rows, c, SUBJECT).and_then(cpu_per_gib)?;
    let mut parts = vec![format!("{SUBJECT} {ours:.2}")];
    for peer in [RIVAL, "libudt 4.11"] {
        if let Some(p) = row_of(rows, c, peer).and_then(cpu_per_gib) {
            parts.push(format!("{peer} {p:.2} (ours x{:.2})", ours / p));
        }
    }
    Some(format!(
        "CPU per GiB at 100 ms without loss, both ends: {}.",
        parts.join(", ")
    ))
}

fn findings(rows: &[Row], cells: &[Truth]) -> Vec<String> {
    let mut out = Vec::new();
    let judged: Vec<(&Truth, bool, Vec<&str>)> = cells
        .iter()
        .filter_map(|c| verdict(rows, c).map(|(ok, m)| (c, ok, m)))
        .collect();
    let met = judged.iter().filter(|(_, ok, _)| *ok).count();
    out.push(format!(
        "{SUBJECT} met every bar in {met} of {} cells.",
        judged.len()
    ));
    let missed: Vec<String> = judged
        .iter()
        .filter(|(_, ok, _)| !ok)
        .map(|(c, _, m)| {
            format!(
                "{} ms / {} ({})",
                c.rtt_ms,
                loss_label(c.loss),
                m.join(", ")
            )
        })
        .collect();
    if !missed.is_empty() {
        out.push(format!("Missed: {}.", missed.join("; ")));
    }
    let ratios: Vec<f64> = cells
        .iter()
        .filter_map(|c| {
            let o = settled(row_of(rows, c, SUBJECT)?)?;
            let r = settled(row_of(rows, c, RIVAL)?)?;
            (r > 0.0).then(|| o / r)
        })
        .collect();
    if let (Some(lo), Some(hi)) = (
        ratios.iter().copied().reduce(f64::min),
        ratios.iter().copied().reduce(f64::max),
    ) {
        out.push(format!(
            "{SUBJECT} over {RIVAL} (tuned), settled rates: x{lo:.2} to x{hi:.2} across the \
             cells."
        ));
    }
    for c in cells.iter().filter(|c| c.rtt_ms == 100.0 && c.loss == 0.0) {
        if let Some(r) = row_of(rows, c, SUBJECT).filter(|r| r.result.is_some()) {
            out.push(match ramp_s(r) {
                Some(s) => {
                    format!("{SUBJECT} at 100 ms without loss: 90% of capacity by {s:.0} s.")
                }
                None => format!(
                    "{SUBJECT} at 100 ms without loss never held 90% of capacity for a second."
                ),
            });
        }
    }
    out.extend(cpu_finding(rows, cells));
    out.extend(failed_finding(rows));
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing::row;
    use super::*;

    /// A row of `implementation` that moved `mbps` for 10 s on a 1 Gbit/s link at
    /// 100 ms with `loss`, with `retx` retransmissions against `drops`.
    fn flow(implementation: &str, mbps: f64, loss: f64, (retx, drops): (u64, u64)) -> Row {
        let protocol = if implementation.starts_with("kernel TCP") {
            "TCP"
        } else {
            "UDT"
        };
        let bytes = (mbps * 1e6 / 8.0 * 10.0) as u64;
        let mut r = row(("", protocol, implementation), &[], (bytes, 10.0), RATE_BPS);
        r.truth.loss = loss;
        r.link_drops = Some(drops);
        if let Some(res) = r.result.as_mut() {
            res.retransmissions = retx;
        }
        r
    }

    #[test]
    fn a_cell_passes_only_when_every_bar_is_met() {
        // 95% of UDT's capacity (970.7 Mbit/s) is 922 Mbit/s.
        let rows = vec![
            flow(SUBJECT, 930.0, 0.0, (0, 0)),
            flow(RIVAL, 920.0, 0.0, (0, 0)),
        ];
        assert_eq!(verdict(&rows, &rows[0].truth), Some((true, vec![])));
        let rows = vec![
            flow(SUBJECT, 915.0, 0.0, (0, 0)),
            flow(RIVAL, 900.0, 0.0, (0, 0)),
        ];
        assert_eq!(
            verdict(&rows, &rows[0].truth),
            Some((false, vec!["capacity"]))
        );
        let rows = vec![
            flow(SUBJECT, 930.0, 0.0, (0, 0)),
            flow(RIVAL, 940.0, 0.0, (0, 0)),
        ];
        assert_eq!(
            verdict(&rows, &rows[0].truth),
            Some((false, vec!["below bbr"]))
        );
        // At 1% the bar is 85%: 830 Mbit/s passes on capacity, 2x drops does not.
        let rows = vec![
            flow(SUBJECT, 830.0, 0.01, (200, 100)),
            flow(RIVAL, 500.0, 0.01, (0, 0)),
        ];
        assert_eq!(
            verdict(&rows, &rows[0].truth),
            Some((false, vec!["retransmissions"]))
        );
    }

    /// Packets the TUN queue dropped before the link model saw them were lost as surely as
    /// the link's own drops: a sender that repaired them is not storming. A report made
    /// before they were counted judges by the link's drops alone.
    #[test]
    fn drops_at_the_intake_count_as_lost() {
        let mut ours = flow(SUBJECT, 930.0, 0.0, (13_522, 2_837));
        let rows = |ours: &Row| vec![ours.clone(), flow(RIVAL, 920.0, 0.0, (0, 0))];
        assert_eq!(
            verdict(&rows(&ours), &ours.truth),
            Some((false, vec!["retransmissions"]))
        );
        ours.intake_drops = Some(10_700);
        assert_eq!(verdict(&rows(&ours), &ours.truth), Some((true, vec![])));
        if let Some(res) = ours.result.as_mut() {
            res.duplicates = Some(3);
        }
        let table = retransmission_table(&rows(&ours), &[ours.truth.clone()], &[SUBJECT.into()]);
        let cell = table.rows[0].last().expect("a cell");
        assert_eq!(cell, "13522 / 13537 (+ 10700 at intake) (x1.00), 3 twice");
    }

    #[test]
    fn settled_is_the_mean_of_the_second_half() {
        let mut r = flow(SUBJECT, 900.0, 0.0, (0, 0));
        let res = r.result.as_mut().expect("result");
        let mbit = |m: f64| (m * 1e6 / 8.0) as u64;
        res.series = vec![mbit(100.0), mbit(500.0), mbit(900.0), mbit(950.0)];
        res.interval_s = vec![1.0; 4];
        assert!((settled(&r).expect("settled") / 1e6 - 925.0).abs() < 0.1);
        // Too short for a second half of two whole seconds: the steady goodput.
        let res = r.result.as_mut().expect("result");
        res.series.truncate(2);
        res.interval_s.truncate(2);
        assert_eq!(settled(&r), r.goodput());
    }

    #[test]
    fn ramp_is_the_end_of_the_first_second_at_ninety_percent() {
        let mut r = flow(SUBJECT, 900.0, 0.0, (0, 0));
        let full = (0.95 * payload_capacity_bps("UDT", RATE_BPS) / 8.0) as u64;
        let res = r.result.as_mut().expect("result");
        res.series = vec![full / 4, full / 2, full, full];
        res.interval_s = vec![1.0; 4];
        assert_eq!(ramp_s(&r), Some(3.0));
        r.result.as_mut().expect("result").series = vec![1, 2, 3, 4];
        assert_eq!(ramp_s(&r), None);
    }

    #[test]
    fn cpu_finding_compares_the_subject_at_100_ms_without_loss() {
        let mut rows = vec![
            flow(SUBJECT, 900.0, 0.0, (0, 0)),
            flow(RIVAL, 900.0, 0.0, (0, 0)),
            flow("libudt 4.11", 900.0, 0.0, (0, 0)),
        ];
        // 900 Mbit/s for 10 s is 1.048 GiB: 2.1 s, 0.42 s and 8.4 s of CPU in all.
        for (r, cpu) in rows.iter_mut().zip([2.1, 0.42, 8.4]) {
            r.result.as_mut().unwrap().sender_cpu_s = cpu;
        }
        let cells = links(&rows);
        let text = cpu_finding(&rows, &cells).expect("a finding");
        assert!(text.contains("ours (model) 2.00"), "{text}");
        assert!(text.contains("kernel TCP bbr 0.40 (ours x5.00)"), "{text}");
        assert!(text.contains("libudt 4.11 8.02 (ours x0.25)"), "{text}");
        rows[0].result.as_mut().unwrap().sender_cpu_s = 0.0;
        assert_eq!(cpu_finding(&rows, &cells), None);
    }

    #[test]
    fn full_grid_has_every_cell_and_flow() {
        let cells = cells(&super::super::testing::settings(false));
        assert_eq!(cells.len(), RTTS_MS.len() * LOSSES.len());
        assert!(cells
            .iter()
            .all(|c| c.runs.len() == 5 && c.link.rate_bps == RATE_BPS));
    }
}
