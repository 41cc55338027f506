//! Experiment 2, the buffer sweep (the intercontinental study): the time to move a 200 MB
//! file over UDT against the UDT buffer size, on a 1 Gbit/s, ~100 ms link, with the rate
//! over time and its mean and standard deviation.
//!
//! **What varies:** UDT_SNDBUF and UDT_RCVBUF together, powers of two from 16 KiB to 512 MiB
//! in the full variant, for ours with each congestion controller that needs no parameter
//! ([`Implementation::ours_all`]: native and model), for uTP (the study's other protocol,
//! through librqbit-utp: [`Implementation::Utp`], its send and receive buffers set alike) and
//! for our scavenger (`ours (ledbat)`), the runs of one buffer size back to back so all see
//! the same machine. A last run puts uTP and the scavenger on the link together
//! ([`Shared`]). The UDP socket buffers stay at
//! the library's default: it asks for 8 MiB and, as root, forces it past the namespace's
//! 4 MiB `rmem_max` (the table shows what the socket reported).
//!
//! **Small buffers:** a buffer holds at most `buffer / RTT` in flight, so with 16 KiB at
//! 100 ms the file would take minutes. A run whose predicted time exceeds the variant's
//! budget is timed instead ([`Variant::timed`]) and its file time extrapolated from its
//! goodput, and the table says so; the rate of such a flow is window-limited and steady, so
//! the extrapolation is close.

mod shared;

use std::collections::BTreeMap;
use std::time::Duration;

use super::stats::{self, Summary as Stats};
use super::{
    implementations, report::mbit, Cell, Experiment, Plot, Row, Run, Series, Settings, Summary,
    Table,
};
use crate::flows::{BufferSizes, Buffers, FlowLimit, FlowSpec, Implementation};
use crate::LinkParams;

pub use shared::Shared;

/// The study's link rate, bit/s (run at the cap here).
pub const NOMINAL_RATE_BPS: u64 = 1_000_000_000;

/// The study's round-trip time.
pub const RTT: Duration = Duration::from_millis(100);

/// Payload bytes per full UDT packet at MTU 1500 (UDT keeps buffers as whole packets).
pub const PACKET_PAYLOAD: u64 = 1472;

/// The smallest UDT buffer, in packets (both implementations raise smaller ones to this).
pub const MIN_BUFFER_PACKETS: u64 = 32;

/// Payload share of the link rate for full UDT packets: 1472 of 1500 bytes minus the UDT
/// header (16 bytes), so about 97%.
const PAYLOAD_SHARE: f64 = 1456.0 / 1500.0;

/// One variant's grid and limits.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// The implementations swept over every buffer size.
    pub implementations: Vec<Implementation>,
    /// Buffer sizes, bytes.
    pub buffers: Vec<u64>,
    /// Implementations run at only some of the sizes (the quick variant's uTP), with those.
    pub partial: Vec<(Implementation, Vec<u64>)>,
    /// uTP and the scavenger together on the link, after the sweep.
    pub shared: Option<Shared>,
    /// The file, bytes.
    pub file_bytes: u64,
    /// A run predicted to take longer than this is timed instead of moving the file.
    pub budget: Duration,
    /// How long a timed run lasts.
    pub timed: Duration,
    /// Buffer sizes whose per-second series are plotted.
    pub plotted: Vec<u64>,
}

impl Variant {
    /// The full variant: 16 powers of two from 16 KiB to 512 MiB, a 200 MB file, each
    /// controller, uTP and the scavenger, then the shared run.
    pub fn full() -> Self {
        let mut implementations = Implementation::ours_all();
        implementations.push(Implementation::Utp);
        implementations.push(Implementation::ours(
            udt::SocketOptions::SCAVENGER_CONTROLLER_NAME,
        ));
        Self {
            implementations,
            buffers: (14..=29).map(|p| 1u64 << p).collect(),
            partial: Vec::new(),
            shared: Some(Shared::full()),
            file_bytes: 200_000_000,
            budget: Duration::from_secs(15),
            timed: Duration::from_secs(8),
            plotted: vec![256 << 10, 1 << 20, 2 << 20, 8 << 20, 64 << 20],
        }
    }

    /// The quick variant: three sizes (window-limited, about the BDP, ample), a 20 MB file,
    /// each controller; uTP at the ample size only; a short shared run.
    pub fn quick() -> Self {
        Self {
            implementations: Implementation::ours_all(),
            buffers: vec![64 << 10, 1 << 20, 16 << 20],
            // At 1 MiB uTP is window-limited and loses nothing (see `always_timed`).
            partial: vec![(Implementation::Utp, vec![1 << 20])],
            shared: Some(Shared::quick()),
            file_bytes: 20_000_000,
            budget: Duration::from_secs(4),
            timed: Duration::from_secs(2),
            plotted: vec![64 << 10, 1 << 20, 16 << 20],
        }
    }

    /// The variant `settings` ask for; `--flow-time` sets the length of the timed runs.
    fn of(settings: &Settings) -> Self {
        let mut v = if settings.quick {
            Self::quick()
        } else {
            Self::full()
        };
        v.timed = super::flow_time(settings, v.timed, v.timed);
        v
    }
}

/// The bytes a UDT buffer of `bytes` holds, as whole packets (at least 32).
pub fn effective_buffer(bytes: u64) -> u64 {
    (bytes / PACKET_PAYLOAD).max(MIN_BUFFER_PACKETS) * PACKET_PAYLOAD
}

/// The payload rate a window of `buffer_bytes` allows over `rtt` on a link of `rate_bps`.
pub fn window_limit_bps(buffer_bytes: u64, rtt: Duration, rate_bps: u64) -> f64 {
    let link = rate_bps as f64 * PAYLOAD_SHARE;
    if rtt.is_zero() {
        return link;
    }
    (effective_buffer(buffer_bytes) as f64 * 8.0 / rtt.as_secs_f64()).min(link)
}

/// How long moving `file_bytes` should take (plus a second for the start), seconds.
pub fn predicted_seconds(file_bytes: u64, buffer_bytes: u64, rtt: Duration, rate_bps: u64) -> f64 {
    file_bytes as f64 * 8.0 / window_limit_bps(buffer_bytes, rtt, rate_bps) + 1.0
}

/// The registry entry.
pub(crate) fn experiment() -> Experiment {
    Experiment {
        name: "buffer-sweep",
        title: "Buffer sweep: file time against UDT buffer size (the intercontinental study)",
        description: DESCRIPTION,
        cells,
        summarize,
        repeats: false,
    }
}

const DESCRIPTION: &str = "\
Reproduces the intercontinental study's buffer sweep: the time to move a 200 MB file with UDT \
over a 1 Gbit/s, 100 ms path against the UDT buffer size, with the rate over time and its mean \
and standard deviation. Here the link runs at the lab's rate cap, so the ideal time is longer \
than the study's; the *shape* is the result: the time falls as 1/buffer until the buffer covers one \
bandwidth-delay product; past it, it stays flat or, as the study also saw, gets worse when the \
window lets slow start overflow the bottleneck queue.\n\n\
Rows: ours with the native congestion control (UDT's own, as the study ran it) and with the \
model one (BBR-like: paced at its estimate of the bottleneck rate, a window of about twice \
the estimated BDP); uTP, the study's other protocol; and ours with the ledbat scavenger, each \
over the same buffer grid, the runs of one size back to back. \
UDT_SNDBUF = UDT_RCVBUF = the size (whole 1472-byte packets, at least 32: below 46 KiB the \
sizes coincide). The UDP buffers are the library's \
default, 8 MiB, forced past the namespace's 4 MiB `rmem_max` (as root; `ss -uam` in the \
namespace shows `rb16777216`, the kernel's doubled 8 MiB). Runs predicted to take longer \
than the budget, and every uTP run, are timed and their file time extrapolated (marked *). The rate statistics \
are over the whole seconds of each flow, slow start included, as the study tabulated them \
(population standard deviation).\n\n\
**uTP** (BitTorrent's uTorrent Transport Protocol, BEP 29: a byte stream over UDP with \
selective ACKs, a receive window and per-packet timestamps, designed around LEDBAT's \
delay-based, yielding congestion control) runs as `utp-perf` (crate `udt-utp-perf`) over \
**librqbit-utp 0.7**, the Rust implementation of the rqbit BitTorrent client; libutp itself \
is not packaged here. Its buffer is librqbit-utp's per-connection send buffer (the cap on \
unacknowledged bytes) and receive buffer (the advertised window), both set to the size; its \
UDP receive buffer is librqbit-utp's own request, capped by the namespace's `rmem_max`. \
librqbit-utp's congestion control is **CUBIC** (its LEDBAT is still a to-do), so this row is \
uTP's framing with a loss-based controller, not uTP's scavenging; our `ledbat` controller \
(RFC 6817) is the LEDBAT row. librqbit-utp does not expose its losses, retransmissions or \
RTT (—). A timed uTP run whose send buffer has not drained 10 s after its time is stopped, \
and counts what arrived until then. librqbit-utp closes a connection on the first failed \
UDP send: `sendto` failing with ENETUNREACH (seen with strace in this lab at full rate; \
our runtime retries such errors, `udt/src/sys/errqueue.rs`) ends the run as failed \
(\"socket closed\"). The window limit is UDT's (whole packets) for every row.\n\n\
**Shared run:** ours (ledbat) alone, then uTP joins it on the link, then ours (ledbat) alone \
again; uTP with a 1 MiB buffer (at most about 84 Mbit/s, a window below the BDP; with more, \
uTP runs near the link rate and librqbit-utp's send error ended them), ours with its default, \
autotuned buffers, so that it could take the whole link: who yields to whom, each flow's rate \
beside the other against its rate alone in the sweep, and how fast.";

fn cells(settings: &Settings) -> Vec<Cell> {
    let variant = Variant::of(settings);
    let link = LinkParams::new(NOMINAL_RATE_BPS, RTT);
    let rate = NOMINAL_RATE_BPS.min(settings.rate_cap_bps);
    let runs = runs(&variant, rate);
    vec![Cell { link, runs }]
}

/// Each buffer size with each implementation, the implementations back to back (partial
/// ones at their sizes), then the shared run.
fn runs(variant: &Variant, rate_bps: u64) -> Vec<Run> {
    let at = |b: u64| {
        let partial = variant
            .partial
            .iter()
            .filter(move |(_, sizes)| sizes.contains(&b))
            .map(|(i, _)| i);
        variant.implementations.iter().chain(partial)
    };
    let mut runs: Vec<Run> = variant
        .buffers
        .iter()
        .flat_map(|&b| at(b).map(move |i| run_for(variant, i, b, rate_bps)))
        .collect();
    runs.extend(variant.shared.map(|s| s.run()));
    runs
}

/// Whether `implementation` is always timed rather than moving the file: uTP, because once
/// a loss burst hits it (a window past the BDP plus the queue overflows it at the start)
/// librqbit-utp recovers at a few Mbit/s, so a 200 MB file would take minutes per size.
fn always_timed(implementation: &Implementation) -> bool {
    *implementation == Implementation::Utp
}

fn run_for(variant: &Variant, implementation: &Implementation, buffer: u64, rate_bps: u64) -> Run {
    let predicted = predicted_seconds(variant.file_bytes, buffer, RTT, rate_bps);
    let timed = always_timed(implementation) || predicted > variant.budget.as_secs_f64();
    let limit = if timed {
        FlowLimit::Duration(variant.timed)
    } else {
        FlowLimit::Bytes(variant.file_bytes)
    };
    let sizes = BufferSizes {
        sndbuf: Some(buffer),
        rcvbuf: Some(buffer),
        udp_sndbuf: None,
        udp_rcvbuf: None,
    };
    let mut flow = FlowSpec::timed(implementation.clone(), variant.timed)
        .with_buffers(Buffers::Explicit(sizes));
    flow.limit = limit;
    let params = BTreeMap::from([
        ("buffer_bytes".to_owned(), buffer as f64),
        ("file_bytes".to_owned(), variant.file_bytes as f64),
        ("timed".to_owned(), f64::from(u8::from(timed))),
        (
            "window_limit_bps".to_owned(),
            window_limit_bps(buffer, RTT, rate_bps),
        ),
    ]);
    Run {
        label: format!("{}, buffer {}", implementation.label(), size_label(buffer)),
        flows: vec![flow],
        params,
    }
}

/// `16 KiB`, `4 MiB`: binary units for buffer sizes.
pub fn size_label(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

/// The per-second rates of a flow (bit/s): each interval's bytes over its measured length
/// (1 s where unknown), without the last, partial interval when there are whole ones.
pub fn rate_series(series: &[u64], interval_s: &[f64]) -> Vec<f64> {
    let bps: Vec<f64> = series
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            let len = interval_s
                .get(i)
                .copied()
                .filter(|&l| l > 0.0)
                .unwrap_or(1.0);
            b as f64 * 8.0 / len
        })
        .collect();
    if bps.len() > 1 {
        stats::steady(&bps, 0, 1).to_vec()
    } else {
        bps
    }
}

/// The file time of a row: measured when the file was moved, else extrapolated from the
/// goodput (`None` if nothing moved). The flag says whether it was extrapolated.
pub fn file_seconds(row: &Row) -> Option<(f64, bool)> {
    let r = row.result.as_ref()?;
    let file = *row.params.get("file_bytes")?;
    let timed = row.params.get("timed").is_some_and(|&t| t > 0.0);
    if !timed && r.bytes as f64 >= file {
        return Some((r.seconds, false));
    }
    (r.goodput_bps > 0.0).then(|| (file * 8.0 / r.goodput_bps, true))
}

fn summarize(settings: &Settings, rows: &[Row]) -> Summary {
    summary(rows, &Variant::of(settings).plotted)
}

/// The summary of `rows`, plotting the per-second rates of the `plotted` buffer sizes; the
/// shared run's rows get their own table, figure and finding.
fn summary(all: &[Row], plotted: &[u64]) -> Summary {
    let rows: Vec<Row> = all
        .iter()
        .filter(|r| !shared::is_shared(r))
        .cloned()
        .collect();
    let rows = rows.as_slice();
    let series = implementations(rows);
    let mut plots = vec![time_plot(rows, &series)];
    plots.extend(series.iter().map(|i| series_plot(rows, i, plotted)));
    let mut findings: Vec<String> = series
        .iter()
        .flat_map(|i| findings(i, &of_implementation(rows, i)))
        .collect();
    findings.extend(comparison(rows, &series));
    let mut tables = vec![sweep_table(rows, &series)];
    let (shared_tables, shared_plots, shared_findings) = shared::summarize(all);
    tables.extend(shared_tables);
    plots.extend(shared_plots);
    findings.extend(shared_findings);
    Summary {
        findings,
        tables,
        plots,
    }
}

/// The rows of `implementation`, in run order (one sweep).
fn of_implementation(rows: &[Row], implementation: &str) -> Vec<Row> {
    rows.iter()
        .filter(|r| r.implementation == implementation)
        .cloned()
        .collect()
}

/// `native` from `ours (native)`, `utp-librqbit-utp` from `uTP (librqbit-utp)`: a
/// file-name part for each implementation (lowercase letters and digits, one `-` between
/// words).
pub fn slug(implementation: &str) -> String {
    let inner = implementation
        .strip_prefix("ours (")
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(implementation);
    let lower = inner.to_ascii_lowercase();
    lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

fn sweep_table(rows: &[Row], series: &[String]) -> Table {
    let header = [
        "implementation",
        "buffer",
        "in force (send/recv)",
        "window limit (Mbit/s)",
        "file time (s)",
        "mean rate (Mbit/s)",
        "std dev (Mbit/s)",
        "σ/μ",
        "goodput (Mbit/s)",
        "lost packets",
        "UDT capacity estimate (Mbit/s)",
        "UDT RTT (ms)",
    ];
    let body = series
        .iter()
        .flat_map(|i| rows.iter().filter(move |r| r.implementation == *i))
        .map(table_row)
        .collect();
    Table {
        title: "File time and rate against the buffer".to_owned(),
        caption: "One sweep per implementation (the runs alternated). Buffer: UDT_SNDBUF = \
                  UDT_RCVBUF, or uTP's send and receive buffers. Window limit: \
                  what a UDT window of the buffer allows in one RTT (payload, capped at the link's). \
                  File time * = extrapolated from a timed run's goodput. Mean and std dev: over \
                  the flow's whole seconds. The capacity estimate is UDT's own (packet pairs) \
                  beside the emulated rate in the title of the report."
            .to_owned(),
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows: body,
    }
}

fn table_row(row: &Row) -> Vec<String> {
    let buffer = row.params.get("buffer_bytes").copied().unwrap_or(0.0) as u64;
    let limit = row.params.get("window_limit_bps").copied().unwrap_or(0.0);
    let dash = || "—".to_owned();
    let mut cells = vec![row.implementation.clone(), size_label(buffer)];
    let Some(r) = &row.result else {
        cells.extend([dash(), mbit(limit), "failed".to_owned()]);
        cells.extend(std::iter::repeat_with(dash).take(7));
        return cells;
    };
    let b = &r.actual_buffers;
    let opt_size = |v: Option<u64>| v.map_or_else(dash, size_label);
    let rates = Stats::of(&rate_series(&r.series, &r.interval_s));
    let time = match file_seconds(row) {
        Some((t, true)) => format!("{t:.1} *"),
        Some((t, false)) => format!("{t:.1}"),
        None => dash(),
    };
    let udt = r.udt.as_ref();
    cells.extend([
        format!("{} / {}", opt_size(b.sndbuf), opt_size(b.rcvbuf)),
        mbit(limit),
        time,
        rates.map_or_else(dash, |s| mbit(s.mean)),
        rates.map_or_else(dash, |s| mbit(s.std_dev)),
        rates
            .and_then(|s| s.cov())
            .map_or_else(dash, |c| format!("{c:.2}")),
        mbit(r.goodput_bps),
        if losses_known(row) {
            r.losses.to_string()
        } else {
            dash()
        },
        udt.and_then(|u| u.bandwidth_bps).map_or_else(dash, mbit),
        udt.and_then(|u| u.rtt_ms)
            .map_or_else(dash, |ms| format!("{ms:.1}")),
    ]);
    cells
}

/// Whether the row's loss count is a measurement: uTP's is not (librqbit-utp keeps none).
fn losses_known(row: &Row) -> bool {
    row.protocol != Implementation::Utp.protocol()
}

/// The per-second rate of `implementation` for each plotted buffer size.
fn series_plot(rows: &[Row], implementation: &str, plotted: &[u64]) -> Plot {
    let series = rows
        .iter()
        .filter(|row| row.implementation == implementation)
        .filter_map(|row| {
            let b = row.params.get("buffer_bytes").copied().unwrap_or(0.0) as u64;
            let r = row.result.as_ref().filter(|_| plotted.contains(&b))?;
            let points = rate_series(&r.series, &r.interval_s)
                .iter()
                .enumerate()
                .map(|(i, bps)| (i as f64 + 1.0, bps / 1e6))
                .collect();
            Some(Series {
                name: format!("buffer {}", size_label(b)),
                points,
            })
        })
        .collect();
    Plot {
        title: format!("Rate per second, by buffer size: {implementation}"),
        file: format!("rate-series-{}.svg", slug(implementation)),
        x_label: "seconds".to_owned(),
        y_label: "Mbit/s".to_owned(),
        log_x: false,
        series,
    }
}

/// The file time against the buffer, one line per implementation.
fn time_plot(rows: &[Row], implementations: &[String]) -> Plot {
    let series = implementations
        .iter()
        .map(|i| Series {
            name: i.clone(),
            points: rows
                .iter()
                .filter(|row| row.implementation == *i)
                .filter_map(|row| {
                    let buffer = row.params.get("buffer_bytes").copied()?;
                    Some((buffer / 1024.0, file_seconds(row)?.0))
                })
                .collect(),
        })
        .collect();
    Plot {
        title: "Time to move the file against the buffer".to_owned(),
        file: "file-time.svg".to_owned(),
        x_label: "buffer (KiB, log scale)".to_owned(),
        y_label: "seconds".to_owned(),
        log_x: true,
        series,
    }
}

/// A buffer size, the file time with it (s), and whether that time was extrapolated.
type FileTime = (u64, f64, bool);

/// The [`FileTime`] of each row that moved data, in run order.
fn file_times(rows: &[Row]) -> Vec<FileTime> {
    rows.iter()
        .filter_map(|row| {
            let buffer = row.params.get("buffer_bytes").copied()? as u64;
            let (t, extrapolated) = file_seconds(row)?;
            Some((buffer, t, extrapolated))
        })
        .collect()
}

/// The findings of one implementation's sweep (`rows` are its rows only), each naming it.
fn findings(implementation: &str, rows: &[Row]) -> Vec<String> {
    let times = file_times(rows);
    let Some(best) = times.iter().map(|t| t.1).reduce(f64::min) else {
        return vec![format!(
            "{implementation}: no run moved any data: see the failed flows."
        )];
    };
    let mut out = Vec::new();
    if let Some((b, t, _)) = times.iter().find(|(_, t, _)| *t <= best * 1.1) {
        let why = if covers_bdp(rows, *b) {
            "the window then covers the bandwidth-delay product"
        } else {
            "a window still short of the bandwidth-delay product, yet the larger ones did worse"
        };
        out.push(format!(
            "{implementation}: the file time comes within 10% of its best ({best:.1} s) at a \
             buffer of {} ({t:.1} s): {why}.",
            size_label(*b)
        ));
    }
    if let (Some((bb, _, _)), Some((lb, lt, _))) =
        (times.iter().find(|(_, t, _)| *t == best), times.last())
    {
        let last = rows.last();
        let lost = last.and_then(|r| r.result.as_ref()).map_or(0, |r| r.losses);
        let why = if !last.is_some_and(losses_known) {
            "librqbit-utp does not count its losses, so whether the start overflowed the queue \
             is not measured here"
                .to_owned()
        } else if lost > 0 {
            format!(
                "a window beyond the BDP plus the drop-tail queue lets the start overflow the \
                 queue ({lost} packets lost) and the control recovers slowly at this RTT"
            )
        } else {
            "no packet was lost, so the cost is not queue overflow".to_owned()
        };
        if *lt > best * 1.1 {
            out.push(format!(
                "{implementation}: past {}, more buffer is worse: with {} the file takes \
                 {lt:.1} s; {why} (see the per-second series).",
                size_label(*bb),
                size_label(*lb)
            ));
        }
    }
    if let Some((b, t, e)) = times.first() {
        out.push(format!(
            "{implementation}: with {} the file takes {t:.0} s{}, {:.0}x the best.",
            size_label(*b),
            if *e { " (extrapolated)" } else { "" },
            t / best
        ));
    }
    out
}

/// Whether a window of `buffer` reaches the link's rate, as far as `rows` (one sweep) know:
/// its window limit is within 5% of the largest one (true when the rows do not say).
fn covers_bdp(rows: &[Row], buffer: u64) -> bool {
    let limit = |r: &Row| r.params.get("window_limit_bps").copied();
    let of_buffer = rows
        .iter()
        .find(|r| r.params.get("buffer_bytes").copied() == Some(buffer as f64))
        .and_then(limit);
    let top = rows.iter().filter_map(limit).reduce(f64::max);
    match (of_buffer, top) {
        (Some(w), Some(top)) => w >= top * 0.95,
        _ => true,
    }
}

/// Controllers side by side: each one's best file time, and the buffers where they differ
/// most (if by more than 10%).
fn comparison(rows: &[Row], implementations: &[String]) -> Option<String> {
    let sweeps: Vec<(&String, Vec<FileTime>)> = implementations
        .iter()
        .map(|i| (i, file_times(&of_implementation(rows, i))))
        .filter(|(_, t)| !t.is_empty())
        .collect();
    if sweeps.len() < 2 {
        return None;
    }
    let bests: Vec<String> = sweeps
        .iter()
        .filter_map(|(i, times)| {
            let (b, t, _) = times.iter().min_by(|x, y| x.1.total_cmp(&y.1))?;
            Some(format!("{i} {t:.1} s (buffer {})", size_label(*b)))
        })
        .collect();
    let mut text = format!("Best file time per controller: {}.", bests.join(", "));
    if let [(a, at), (b, bt), ..] = sweeps.as_slice() {
        let ratios = at.iter().filter_map(|(buf, ta, _)| {
            let (_, tb, _) = bt.iter().find(|(x, _, _)| x == buf)?;
            Some((*buf, tb / ta))
        });
        if let Some((buf, r)) = ratios.max_by(|x, y| x.1.ln().abs().total_cmp(&y.1.ln().abs())) {
            if !(1.0 / 1.1..=1.1).contains(&r) {
                text += &format!(
                    " They differ most at {}: {b} takes {r:.2}x the time of {a}.",
                    size_label(buf)
                );
            }
        }
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_as_documented() {
        let full = Variant::full();
        assert_eq!(full.buffers.len(), 16);
        assert_eq!(full.buffers.first(), Some(&(16 << 10)));
        assert_eq!(full.buffers.last(), Some(&(512 << 20)));
        assert!(full.plotted.iter().all(|p| full.buffers.contains(p)));
        let quick = Variant::quick();
        assert!(quick.plotted.iter().all(|p| quick.buffers.contains(p)));
        let labels =
            |v: &Variant| -> Vec<String> { v.implementations.iter().map(|i| i.label()).collect() };
        assert_eq!(
            labels(&full),
            [
                "ours (native)",
                "ours (model)",
                "uTP (librqbit-utp)",
                "ours (ledbat)"
            ]
        );
        assert!(full.partial.is_empty());
        assert_eq!(labels(&quick), ["ours (native)", "ours (model)"]);
        for (_, sizes) in &quick.partial {
            assert!(sizes.iter().all(|s| quick.buffers.contains(s)));
        }
        assert!(full.shared.is_some() && quick.shared.is_some());
    }

    #[test]
    fn runs_alternate_controllers_per_buffer() {
        let runs = runs(&Variant::quick(), 200_000_000);
        assert_eq!(runs.len(), 8);
        assert_eq!(runs[0].label, "ours (native), buffer 64 KiB");
        assert_eq!(runs[1].label, "ours (model), buffer 64 KiB");
        assert_eq!(
            runs[1].flows[0].implementation,
            Implementation::ours("model")
        );
        // uTP only at 1 MiB, after the controllers; the shared run last.
        assert_eq!(runs[4].label, "uTP (librqbit-utp), buffer 1 MiB");
        assert_eq!(runs[4].params["timed"], 1.0, "uTP runs are timed");
        assert_eq!(runs[7].flows.len(), 2);
        let full = super::runs(&Variant::full(), 200_000_000);
        assert_eq!(full.len(), 16 * 4 + 1);
        assert_eq!(full[2].flows[0].implementation, Implementation::Utp);
    }

    /// A row of `implementation` that moved the file (1 MB) in `seconds` with `buffer`.
    fn moved(implementation: &str, buffer: u64, seconds: f64) -> Row {
        let params = [("buffer_bytes", buffer as f64), ("file_bytes", 1e6)];
        let what = ("", "UDT", implementation);
        super::super::testing::row(what, &params, (1_000_000, seconds), 1)
    }

    #[test]
    fn summary_has_a_sweep_per_controller() {
        let rows = vec![
            moved("ours (native)", 1 << 20, 10.0),
            moved("ours (model)", 1 << 20, 10.5),
            moved("ours (native)", 4 << 20, 4.0),
            moved("ours (model)", 4 << 20, 2.0),
        ];
        let s = summary(&rows, &[1 << 20]);
        let table = &s.tables[0];
        let first: Vec<(&str, &str)> = table
            .rows
            .iter()
            .map(|r| (r[0].as_str(), r[1].as_str()))
            .collect();
        assert_eq!(
            first,
            [
                ("ours (native)", "1 MiB"),
                ("ours (native)", "4 MiB"),
                ("ours (model)", "1 MiB"),
                ("ours (model)", "4 MiB"),
            ]
        );
        let files: Vec<&str> = s.plots.iter().map(|p| p.file.as_str()).collect();
        assert_eq!(
            files,
            [
                "file-time.svg",
                "rate-series-native.svg",
                "rate-series-model.svg"
            ]
        );
        assert_eq!(s.plots[0].series.len(), 2);
        assert!(s.findings.iter().any(|f| f.starts_with("ours (model): ")));
        let last = s.findings.last().unwrap();
        assert!(
            last.contains("ours (native) 4.0 s (buffer 4 MiB)"),
            "{last}"
        );
        assert!(
            last.contains("at 4 MiB: ours (model) takes 0.50x the time"),
            "{last}"
        );
    }

    #[test]
    fn the_best_buffer_is_said_to_cover_the_bdp_only_if_it_does() {
        let with_limit = |buffer: u64, seconds: f64, limit: f64| {
            let mut row = moved("uTP (librqbit-utp)", buffer, seconds);
            row.params.insert("window_limit_bps".to_owned(), limit);
            row
        };
        let rows = [
            with_limit(1 << 20, 20.0, 80e6),
            with_limit(4 << 20, 90.0, 190e6),
        ];
        let f = findings("uTP (librqbit-utp)", &rows);
        assert!(
            f[0].contains("at a buffer of 1 MiB (20.0 s): a window still short"),
            "{f:?}"
        );
        let rows = [
            with_limit(1 << 20, 90.0, 80e6),
            with_limit(4 << 20, 20.0, 190e6),
        ];
        let f = findings("uTP (librqbit-utp)", &rows);
        assert!(f[0].contains("the window then covers"), "{f:?}");
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("ours (native)"), "native");
        assert_eq!(slug("ours (fixed-rate)"), "fixed-rate");
        assert_eq!(slug("libudt 4.11"), "libudt-4-11");
        assert_eq!(slug("uTP (librqbit-utp)"), "utp-librqbit-utp");
    }

    #[test]
    fn utp_rows_join_the_sweep_and_the_shared_run_stays_apart() {
        let mut utp = moved("uTP (librqbit-utp)", 1 << 20, 12.0);
        utp.protocol = "uTP".to_owned();
        let mut shared = moved("ours (ledbat)", 1 << 20, 30.0);
        shared.params.insert("shared".to_owned(), 1.0);
        let rows = vec![moved("ours (native)", 1 << 20, 10.0), utp, shared];
        let s = summary(&rows, &[1 << 20]);
        let sweep = &s.tables[0];
        assert_eq!(sweep.rows.len(), 2, "the shared row is not in the sweep");
        let lost = sweep
            .header
            .iter()
            .position(|h| h == "lost packets")
            .unwrap();
        assert_eq!(sweep.rows[0][lost], "0");
        assert_eq!(sweep.rows[1][lost], "—", "librqbit-utp counts no losses");
        assert!(s
            .plots
            .iter()
            .any(|p| p.file == "rate-series-utp-librqbit-utp.svg"));
        assert!(s.findings.iter().all(|f| !f.contains("ours (ledbat): ")));
    }

    #[test]
    fn small_buffers_are_window_limited() {
        let rate = 200_000_000;
        // 16 KiB is raised to 32 packets: 47 104 bytes per 100 ms = 3.77 Mbit/s.
        let w = window_limit_bps(16 << 10, RTT, rate);
        assert!((w - 3_768_320.0).abs() < 1.0, "{w}");
        // 64 MiB is far past the BDP: the link's payload rate.
        let w = window_limit_bps(64 << 20, RTT, rate);
        assert!((w - 200e6 * PAYLOAD_SHARE).abs() < 1.0);
        assert_eq!(
            window_limit_bps(1, Duration::ZERO, rate),
            200e6 * PAYLOAD_SHARE
        );
    }

    #[test]
    fn full_variant_fits_its_time_box() {
        let full = Variant::full();
        let series = full.implementations.len() as f64;
        let seconds: f64 = full
            .buffers
            .iter()
            .map(|&b| {
                predicted_seconds(full.file_bytes, b, RTT, 200_000_000)
                    .min(full.timed.as_secs_f64())
            })
            .sum();
        assert!(seconds * series < 600.0, "{seconds} s per controller");
    }

    #[test]
    fn labels() {
        assert_eq!(size_label(16 << 10), "16 KiB");
        assert_eq!(size_label(512 << 20), "512 MiB");
        assert_eq!(size_label(47_104), "46 KiB");
        assert_eq!(size_label(47_000), "45.9 KiB");
        assert_eq!(size_label(100), "100 B");
    }

    #[test]
    fn rate_series_drops_the_partial_last_second() {
        assert_eq!(rate_series(&[1, 2, 3], &[]), vec![8.0, 16.0]);
        assert_eq!(rate_series(&[1, 2, 3], &[0.5, 2.0, 0.1]), vec![16.0, 8.0]);
        assert_eq!(rate_series(&[5], &[0.5]), vec![80.0]);
        assert!(rate_series(&[], &[]).is_empty());
    }
}
