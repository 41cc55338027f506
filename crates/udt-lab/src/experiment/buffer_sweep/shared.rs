//! The buffer sweep's shared run: one uTP flow and one `ours (ledbat)` flow on the same link,
//! to answer the study's question of who yields to whom. uTP is BitTorrent's transport and
//! LEDBAT (RFC 6817) the scavenger it was designed around; our LEDBAT should give way to it.
//! librqbit-utp's uTP runs CUBIC, so here the scavenger meets a loss-based flow, as it would
//! meet TCP.
//!
//! **Buffers:** uTP keeps the sweep's 1 MiB (larger ones ended librqbit-utp's runs on a send
//! error), ours the default, autotuned buffers: with both window-limited at 1 MiB the two did
//! not fill the link, so neither had to yield and the run could not tell.
//!
//! **Shape:** the scavenger starts alone and runs for `lead + overlap + tail`; uTP joins at
//! `lead` for `overlap`. Each flow's per-second rate is put on the run's common clock
//! ([`stats::per_second`]) and averaged over each phase (alone before, together, alone
//! after), leaving out each phase's first second, in which the flows react to the change.
//!
//! **Verdict:** each flow's rate while both ran against its rate alone in the sweep (uTP at
//! the same buffer; ours (ledbat) at the buffers that cover the path, where autotuning takes
//! it): the one that kept the smaller part of its rate alone yielded, unless both kept at
//! least [`UNTOUCHED`] of it.

use std::collections::BTreeMap;
use std::time::Duration;

use super::super::stats::{self, Span};
use super::super::{report::mbit, Plot, Row, Run, Series, Table};
use super::size_label;
use crate::flows::{BufferSizes, Buffers, FlowResult, FlowSpec, Implementation};

/// The parameter that marks a shared run's rows (their sweep is elsewhere).
pub(super) const SHARED_PARAM: &str = "shared";

/// A flow that kept at least this part of its rate alone did not yield.
const UNTOUCHED: f64 = 0.9;

/// One shared run's timing and buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shared {
    /// uTP's send and receive buffers, bytes (ours runs with its default, autotuned ones).
    pub buffer: u64,
    /// The scavenger alone before uTP starts.
    pub lead: Duration,
    /// Both flows together.
    pub overlap: Duration,
    /// The scavenger alone after uTP ends.
    pub tail: Duration,
}

impl Shared {
    /// The full variant: 5 s alone, 15 s together, 5 s alone. uTP's buffer is 1 MiB, which
    /// holds it to about 84 Mbit/s at 100 ms: in this lab librqbit-utp closed its connection
    /// on a failed UDP send (ENETUNREACH) in runs near the link rate, with 2 MiB and more.
    pub fn full() -> Self {
        Self {
            buffer: 1 << 20,
            lead: Duration::from_secs(5),
            overlap: Duration::from_secs(15),
            tail: Duration::from_secs(5),
        }
    }

    /// The quick variant: the same shape in 5 s.
    pub fn quick() -> Self {
        Self {
            buffer: 1 << 20,
            lead: Duration::from_secs(2),
            overlap: Duration::from_secs(2),
            tail: Duration::from_secs(1),
        }
    }

    /// The two flows: the scavenger from the start with its default buffers, uTP from
    /// `lead` with [`Shared::buffer`].
    pub fn run(&self) -> Run {
        let sizes = BufferSizes {
            sndbuf: Some(self.buffer),
            rcvbuf: Some(self.buffer),
            udp_sndbuf: None,
            udp_rcvbuf: None,
        };
        let scavenger = FlowSpec::timed(
            Implementation::ours(udt::SocketOptions::SCAVENGER_CONTROLLER_NAME),
            self.lead + self.overlap + self.tail,
        );
        let utp = FlowSpec::timed(Implementation::Utp, self.overlap)
            .with_buffers(Buffers::Explicit(sizes))
            .starting_at(self.lead);
        let params = BTreeMap::from([
            (SHARED_PARAM.to_owned(), 1.0),
            ("buffer_bytes".to_owned(), self.buffer as f64),
            ("lead_s".to_owned(), self.lead.as_secs_f64()),
            ("overlap_s".to_owned(), self.overlap.as_secs_f64()),
            ("tail_s".to_owned(), self.tail.as_secs_f64()),
        ]);
        Run {
            label: format!(
                "{} (buffer {}) beside {} (autotuned buffers)",
                utp.implementation.label(),
                size_label(self.buffer),
                scavenger.implementation.label(),
            ),
            flows: vec![scavenger, utp],
            params,
        }
    }
}

/// Whether `row` belongs to a shared run.
pub(super) fn is_shared(row: &Row) -> bool {
    row.params.contains_key(SHARED_PARAM)
}

/// The phases of a shared run, seconds on its common clock: `[0, lead)`, `[lead, lead +
/// overlap)`, `[lead + overlap, end)`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Phases {
    lead: f64,
    overlap: f64,
    tail: f64,
}

impl Phases {
    fn of(row: &Row) -> Option<Self> {
        let get = |k: &str| row.params.get(k).copied();
        Some(Self {
            lead: get("lead_s")?,
            overlap: get("overlap_s")?,
            tail: get("tail_s")?,
        })
    }

    fn seconds(&self) -> usize {
        (self.lead + self.overlap + self.tail).ceil() as usize + 1
    }

    /// The bins of each phase, without its first second.
    fn windows(&self) -> [(usize, usize); 3] {
        let (a, b, c) = (
            self.lead.round() as usize,
            (self.lead + self.overlap).round() as usize,
            (self.lead + self.overlap + self.tail).round() as usize,
        );
        [(1, a), (a + 1, b), (b + 1, c)]
    }
}

/// A flow's rate per second (bit/s) on the run's common clock.
fn common_series(r: &FlowResult, seconds: usize) -> Vec<f64> {
    let mut t = 0.0;
    let spans: Vec<Span> = r
        .series
        .iter()
        .enumerate()
        .map(|(i, &bytes)| {
            let len = r
                .interval_s
                .get(i)
                .copied()
                .filter(|l| *l > 0.0)
                .unwrap_or(1.0);
            let span = Span {
                start_s: t,
                end_s: t + len,
                bps: bytes as f64 * 8.0 / len,
            };
            t += len;
            span
        })
        .collect();
    stats::per_second(&spans, r.spec.start.as_secs_f64(), seconds)
}

/// The mean over bins `[from, to)`, if there are any.
fn window_mean(series: &[f64], (from, to): (usize, usize)) -> Option<f64> {
    stats::mean(series.get(from..to.min(series.len()))?)
}

/// One flow of a shared run, measured by phase.
#[derive(Debug, Clone, PartialEq)]
struct ByPhase {
    implementation: String,
    start_s: f64,
    /// Mean rate alone before, together, alone after (bit/s).
    means: [Option<f64>; 3],
    series: Vec<f64>,
    goodput_bps: f64,
    /// Its steady goodput alone in the sweep (bit/s), see [`alone_in_sweep`].
    alone_bps: Option<f64>,
}

impl ByPhase {
    /// The rate while both ran over the rate alone in the sweep.
    fn kept(&self) -> Option<f64> {
        let (with, alone) = (self.means[1]?, self.alone_bps?);
        (alone > 0.0).then(|| with / alone)
    }
}

/// A flow's steady goodput alone in the sweep rows: at `buffer` when given (uTP's, the
/// shared run's size), else (ours with autotuned buffers, which grow to what the path needs)
/// the median over the buffers whose window covers the path (within 5% of the largest
/// window limit).
fn alone_in_sweep(rows: &[Row], implementation: &str, buffer: Option<u64>) -> Option<f64> {
    let sweep: Vec<&Row> = rows
        .iter()
        .filter(|r| !is_shared(r) && r.implementation == implementation)
        .collect();
    let size = |r: &Row| r.params.get("buffer_bytes").copied();
    if let Some(b) = buffer {
        return sweep
            .iter()
            .find(|r| size(r) == Some(b as f64))
            .and_then(|r| r.goodput());
    }
    let limit = |r: &Row| r.params.get("window_limit_bps").copied();
    let top = sweep.iter().filter_map(|r| limit(r)).reduce(f64::max)?;
    let covering: Vec<f64> = sweep
        .iter()
        .filter(|r| limit(r).is_some_and(|w| w >= 0.95 * top))
        .filter_map(|r| r.goodput())
        .collect();
    stats::median(&covering)
}

/// The shared rows by phase, each with its rate alone from the `sweep` rows.
fn by_phase(rows: &[Row], sweep: &[Row]) -> Option<(Phases, u64, Vec<ByPhase>)> {
    let first = rows.first()?;
    let phases = Phases::of(first)?;
    let flows = rows
        .iter()
        .filter_map(|row| {
            let r = row.result.as_ref()?;
            let series = common_series(r, phases.seconds());
            let (start, end) = (
                r.spec.start.as_secs_f64(),
                r.spec.start.as_secs_f64() + r.seconds,
            );
            // A phase counts for a flow only if the flow ran through it.
            let ran = [
                start < phases.lead,
                true,
                end > phases.lead + phases.overlap + 1.0,
            ];
            let mut means = phases.windows().map(|w| window_mean(&series, w));
            for (mean, ran) in means.iter_mut().zip(ran) {
                if !ran {
                    *mean = None;
                }
            }
            // uTP's buffer is the run's; ours ran with its default ones.
            let buffer = match r.spec.buffers {
                Buffers::Explicit(b) => b.sndbuf,
                _ => None,
            };
            Some(ByPhase {
                implementation: row.implementation.clone(),
                start_s: r.spec.start.as_secs_f64(),
                means,
                series,
                goodput_bps: r.goodput_bps,
                alone_bps: alone_in_sweep(sweep, &row.implementation, buffer),
            })
        })
        .collect();
    Some((phases, first.truth.rate_bps, flows))
}

/// The shared run's table, figure and findings (nothing without shared rows).
pub(super) fn summarize(rows: &[Row]) -> (Vec<Table>, Vec<Plot>, Vec<String>) {
    let shared: Vec<Row> = rows.iter().filter(|r| is_shared(r)).cloned().collect();
    let Some((phases, link_bps, flows)) = by_phase(&shared, rows) else {
        return (vec![], vec![], vec![]);
    };
    let failed = shared.iter().filter(|r| r.result.is_none());
    let mut findings: Vec<String> = failed
        .map(|r| {
            format!(
                "Shared run: {} failed: {}",
                r.implementation,
                r.error.as_deref().unwrap_or("no result")
            )
        })
        .collect();
    findings.extend(finding(&phases, link_bps, &flows));
    let table = table(&phases, link_bps, &flows, &shared);
    (vec![table], vec![plot(&flows)], findings)
}

fn table(phases: &Phases, link_bps: u64, flows: &[ByPhase], rows: &[Row]) -> Table {
    let dash = || "—".to_owned();
    let rate = |v: Option<f64>| v.map_or_else(dash, mbit);
    let percent = |v: Option<f64>| v.map_or_else(dash, |v| format!("{:.0}%", 100.0 * v));
    let body = flows
        .iter()
        .map(|f| {
            vec![
                f.implementation.clone(),
                format!("{:.0}", f.start_s),
                rate(f.means[0]),
                rate(f.means[1]),
                percent(f.means[1].map(|m| m / link_bps as f64)),
                rate(f.means[2]),
                mbit(f.goodput_bps),
                rate(f.alone_bps),
                percent(f.kept()),
            ]
        })
        .collect();
    let buffer = rows
        .first()
        .and_then(|r| r.params.get("buffer_bytes"))
        .map_or_else(dash, |b| size_label(*b as u64));
    Table {
        title: "uTP and the scavenger on one link".to_owned(),
        caption: format!(
            "ours (ledbat) alone for {:.0} s, then with uTP (librqbit-utp) for {:.0} s, then alone \
             for {:.0} s; uTP's buffers {buffer}, ours the default (autotuned). Rates are means \
             over each phase without its first second (Mbit/s); share: of the link's rate while \
             both ran. Alone in the sweep: the steady goodput of the sweep's run of uTP at \
             {buffer}, and the median of ours (ledbat) over the buffers that cover the path; \
             kept: both running over alone in the sweep.",
            phases.lead, phases.overlap, phases.tail
        ),
        header: [
            "implementation",
            "starts at (s)",
            "alone before (Mbit/s)",
            "both running (Mbit/s)",
            "share of the link",
            "alone after (Mbit/s)",
            "goodput (Mbit/s)",
            "alone in the sweep (Mbit/s)",
            "kept",
        ]
        .iter()
        .map(|h| (*h).to_owned())
        .collect(),
        rows: body,
    }
}

fn plot(flows: &[ByPhase]) -> Plot {
    let series = flows
        .iter()
        .map(|f| Series {
            name: f.implementation.clone(),
            points: f
                .series
                .iter()
                .enumerate()
                .map(|(i, bps)| (i as f64 + 0.5, bps / 1e6))
                .collect(),
        })
        .collect();
    Plot {
        title: "uTP joins ours (ledbat): rate per second".to_owned(),
        file: "shared-utp-ledbat.svg".to_owned(),
        x_label: "seconds".to_owned(),
        y_label: "Mbit/s".to_owned(),
        log_x: false,
        series,
    }
}

/// Who yielded to whom: each flow's rate while both ran against its rate alone in the
/// sweep; then how fast the scavenger fell below half its own rate alone before uTP came,
/// and what it had after uTP left.
fn finding(phases: &Phases, link_bps: u64, flows: &[ByPhase]) -> Option<String> {
    let scavenger = flows.iter().find(|f| f.start_s == 0.0)?;
    let utp = flows.iter().find(|f| f.start_s > 0.0)?;
    let (Some(with), Some(utp_rate)) = (scavenger.means[1], utp.means[1]) else {
        return Some(format!(
            "Shared run: too short to tell phases apart ({:.0} s alone, {:.0} s together).",
            phases.lead, phases.overlap
        ));
    };
    let (Some(kept_scavenger), Some(kept_utp)) = (scavenger.kept(), utp.kept()) else {
        return Some(format!(
            "Shared run: {} had {} Mbit/s and {} {} Mbit/s while both ran, but the sweep has no \
             rate alone to compare with, so it does not say who yielded.",
            utp.implementation,
            mbit(utp_rate),
            scavenger.implementation,
            mbit(with)
        ));
    };
    let (s_name, u_name) = (&scavenger.implementation, &utp.implementation);
    let verdict = if kept_scavenger >= UNTOUCHED && kept_utp >= UNTOUCHED {
        "neither yielded".to_owned()
    } else if kept_scavenger <= kept_utp {
        format!("{s_name} yielded to {u_name}")
    } else {
        format!("{u_name} yielded to {s_name}")
    };
    let link = link_bps as f64;
    let part = |f: &ByPhase, rate: f64, kept: f64| {
        format!(
            "{} had {} Mbit/s ({:.0}% of the link, {:.0}% of its {} Mbit/s alone in the sweep)",
            f.implementation,
            mbit(rate),
            100.0 * rate / link,
            100.0 * kept,
            f.alone_bps.map_or_else(|| "—".to_owned(), mbit)
        )
    };
    let mut text = format!(
        "Shared run: {verdict}: while both ran, {} and {}.",
        part(utp, utp_rate, kept_utp),
        part(scavenger, with, kept_scavenger),
    );
    if let Some(alone) = scavenger.means[0] {
        let start = phases.lead.round() as usize;
        let end = (phases.lead + phases.overlap).round() as usize;
        let fell = scavenger
            .series
            .get(start..end.min(scavenger.series.len()))
            .and_then(|s| s.iter().position(|&bps| bps < alone / 2.0));
        if let Some(k) = fell {
            text += &format!(
                " {s_name} fell below half its rate before uTP ({} Mbit/s) within {} s of uTP's \
                 start.",
                mbit(alone),
                k + 1
            );
        }
    }
    if let Some(after) = scavenger.means[2] {
        text += &format!(" After uTP ended it went back to {} Mbit/s.", mbit(after));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::testing;

    const MB: u64 = 1_000_000 / 8; // 1 Mbit in bytes
    const UTP: &str = "uTP (librqbit-utp)";
    const OURS: &str = "ours (ledbat)";

    /// A shared-run row of `implementation` starting at `start` with `series` (1 s each);
    /// uTP's with its 1 MiB buffers, as the run gives them.
    fn row(implementation: &str, start: u64, series: &[u64]) -> Row {
        let s = Shared {
            buffer: 1 << 20,
            lead: Duration::from_secs(3),
            overlap: Duration::from_secs(4),
            tail: Duration::from_secs(3),
        };
        let run = s.run();
        let params: Vec<(String, f64)> = run.params.into_iter().collect();
        let params: Vec<(&str, f64)> = params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let total: u64 = series.iter().sum();
        let mut row = testing::row(
            ("shared", "x", implementation),
            &params,
            (total, series.len() as f64),
            100_000_000,
        );
        let r = row.result.as_mut().unwrap();
        r.spec.start = Duration::from_secs(start);
        if start > 0 {
            r.spec.buffers = run.flows[1].buffers;
        }
        r.series = series.to_vec();
        r.interval_s = vec![1.0; series.len()];
        row
    }

    /// A sweep row of `implementation` at `buffer` with steady goodput `mbit`.
    fn sweep(implementation: &str, buffer: u64, mbit: u64) -> Row {
        let limit = window_limit_bps_of(buffer);
        testing::row(
            ("sweep", "x", implementation),
            &[("buffer_bytes", buffer as f64), ("window_limit_bps", limit)],
            (mbit * MB * 10, 10.0),
            100_000_000,
        )
    }

    fn window_limit_bps_of(buffer: u64) -> f64 {
        super::super::window_limit_bps(buffer, super::super::RTT, 100_000_000)
    }

    /// uTP alone at 80 Mbit/s with 1 MiB (its 2 MiB row must not count), ours (ledbat) at
    /// 30 (window-limited, must not count) and 88, 90, 92 (covering the path: median 90).
    fn the_sweep() -> Vec<Row> {
        vec![
            sweep(UTP, 1 << 20, 80),
            sweep(UTP, 2 << 20, 10),
            sweep(OURS, 256 << 10, 30),
            sweep(OURS, 16 << 20, 88),
            sweep(OURS, 32 << 20, 92),
            sweep(OURS, 64 << 20, 90),
        ]
    }

    /// [`the_sweep`]'s rows with a shared run of `ledbat` and `utp`.
    fn beside_the_sweep(ledbat: Row, utp: Row) -> Vec<Row> {
        let mut rows = the_sweep();
        rows.extend([ledbat, utp]);
        rows
    }

    #[test]
    fn the_run_has_the_scavenger_first_and_utp_later() {
        let run = Shared::quick().run();
        assert_eq!(run.flows.len(), 2);
        assert_eq!(run.flows[0].implementation, Implementation::ours("ledbat"));
        assert_eq!(run.flows[0].buffers, Buffers::Default);
        assert_eq!(run.flows[1].implementation, Implementation::Utp);
        assert!(matches!(run.flows[1].buffers, Buffers::Explicit(b) if b.sndbuf == Some(1 << 20)));
        assert_eq!(run.flows[1].start, Shared::quick().lead);
        assert_eq!(
            run.label,
            "uTP (librqbit-utp) (buffer 1 MiB) beside ours (ledbat) (autotuned buffers)"
        );
    }

    #[test]
    fn alone_rates_come_from_the_matching_sweep_rows() {
        let rows = the_sweep();
        assert_eq!(alone_in_sweep(&rows, UTP, Some(1 << 20)), Some(80e6));
        assert_eq!(alone_in_sweep(&rows, OURS, None), Some(90e6));
        assert_eq!(alone_in_sweep(&rows, UTP, Some(4 << 20)), None);
        assert_eq!(alone_in_sweep(&rows, "ours (model)", None), None);
    }

    #[test]
    fn the_scavenger_yielding_is_told_with_both_rates_alone() {
        let ledbat = row(
            OURS,
            0,
            &[50, 90, 90, 60, 10, 10, 10, 50, 80, 80].map(|m| m * MB),
        );
        let utp = row(UTP, 3, &[30, 80, 80, 80].map(|m| m * MB));
        let (tables, plots, findings) = summarize(&beside_the_sweep(ledbat, utp));
        let t = &tables[0];
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0][2], mbit(90e6));
        assert_eq!(t.rows[0][3], mbit(10e6));
        assert_eq!(t.rows[1][3], mbit(80e6));
        assert_eq!(t.rows[1][4], "80%");
        assert_eq!(
            (t.rows[0][7].as_str(), t.rows[0][8].as_str()),
            ("90.0", "11%")
        );
        assert_eq!(
            (t.rows[1][7].as_str(), t.rows[1][8].as_str()),
            ("80.0", "100%")
        );
        assert_eq!(plots[0].series.len(), 2);
        let f = &findings[0];
        assert!(
            f.starts_with("Shared run: ours (ledbat) yielded to uTP"),
            "{f}"
        );
        assert!(f.contains("100% of its 80.0 Mbit/s alone"), "{f}");
        assert!(f.contains("within 2 s of uTP's start"), "{f}");
        assert!(f.contains("went back to 80.0 Mbit/s"), "{f}");
    }

    #[test]
    fn utp_yielding_is_told_too() {
        let ledbat = row(OURS, 0, &[90 * MB; 10]);
        let utp = row(UTP, 3, &[10 * MB; 4]);
        let f = &summarize(&beside_the_sweep(ledbat, utp)).2[0];
        assert!(
            f.starts_with("Shared run: uTP (librqbit-utp) yielded to ours"),
            "{f}"
        );
        assert!(f.contains("12% of its 80.0 Mbit/s alone"), "{f}");
    }

    #[test]
    fn both_near_their_rates_alone_yielded_nothing() {
        let ledbat = row(OURS, 0, &[85 * MB; 10]);
        let utp = row(UTP, 3, &[78 * MB; 4]);
        let f = &summarize(&beside_the_sweep(ledbat, utp)).2[0];
        assert!(f.starts_with("Shared run: neither yielded"), "{f}");
    }

    #[test]
    fn without_the_sweep_no_verdict() {
        let ledbat = row(OURS, 0, &[30 * MB; 10]);
        let utp = row(UTP, 3, &[30 * MB; 4]);
        let (tables, _, findings) = summarize(&[ledbat, utp]);
        assert!(
            findings[0].contains("does not say who yielded"),
            "{findings:?}"
        );
        assert_eq!(tables[0].rows[1][2], "—", "uTP did not run before");
        assert_eq!(tables[0].rows[1][5], "—", "nor after");
        assert_eq!(tables[0].rows[1][8], "—", "nor alone");
    }

    #[test]
    fn no_shared_rows_no_summary() {
        let (t, p, f) = summarize(&[]);
        assert!(t.is_empty() && p.is_empty() && f.is_empty());
    }
}
