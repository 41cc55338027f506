//! The buffer sweep's shared run: one uTP flow and one `ours (ledbat)` flow on the same link,
//! to see who yields to whom. uTP is BitTorrent's transport and LEDBAT (RFC 6817) the
//! scavenger it was designed around; our LEDBAT should give way to it. librqbit-utp's uTP
//! runs CUBIC, so here the scavenger meets a loss-based flow, as it would meet TCP.
//!
//! **Shape:** the scavenger starts alone and runs for `lead + overlap + tail`; uTP joins at
//! `lead` for `overlap`. Each flow's per-second rate is put on the run's common clock
//! ([`stats::per_second`]) and averaged over each phase (alone before, together, alone
//! after), leaving out each phase's first second, in which the flows react to the change.

use std::collections::BTreeMap;
use std::time::Duration;

use super::super::stats::{self, Span};
use super::super::{report::mbit, Plot, Row, Run, Series, Table};
use super::size_label;
use crate::flows::{BufferSizes, Buffers, FlowResult, FlowSpec, Implementation};

/// The parameter that marks a shared run's rows (their sweep is elsewhere).
pub(super) const SHARED_PARAM: &str = "shared";

/// One shared run's timing and buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shared {
    /// Both flows' buffers (UDT_SNDBUF/RCVBUF and uTP's send/receive buffers), bytes.
    pub buffer: u64,
    /// The scavenger alone before uTP starts.
    pub lead: Duration,
    /// Both flows together.
    pub overlap: Duration,
    /// The scavenger alone after uTP ends.
    pub tail: Duration,
}

impl Shared {
    /// The full variant: 5 s alone, 15 s together, 5 s alone. Each buffer is 1 MiB, which holds
    /// uTP to about 84 Mbit/s at 100 ms: in this lab librqbit-utp closed its connection on a
    /// failed UDP send (ENETUNREACH) in runs near the link rate, with 2 MiB and more.
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

    /// The two flows: the scavenger from the start, uTP from `lead`.
    pub fn run(&self) -> Run {
        let sizes = BufferSizes {
            sndbuf: Some(self.buffer),
            rcvbuf: Some(self.buffer),
            udp_sndbuf: None,
            udp_rcvbuf: None,
        };
        let buffers = Buffers::Explicit(sizes);
        let scavenger = FlowSpec::timed(
            Implementation::ours(udt::SocketOptions::SCAVENGER_CONTROLLER_NAME),
            self.lead + self.overlap + self.tail,
        )
        .with_buffers(buffers);
        let utp = FlowSpec::timed(Implementation::Utp, self.overlap)
            .with_buffers(buffers)
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
                "{} beside {}, buffer {}",
                utp.implementation.label(),
                scavenger.implementation.label(),
                size_label(self.buffer)
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
}

fn by_phase(rows: &[Row]) -> Option<(Phases, u64, Vec<ByPhase>)> {
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
            Some(ByPhase {
                implementation: row.implementation.clone(),
                start_s: r.spec.start.as_secs_f64(),
                means,
                series,
                goodput_bps: r.goodput_bps,
            })
        })
        .collect();
    Some((phases, first.truth.rate_bps, flows))
}

/// The shared run's table, figure and findings (nothing without shared rows).
pub(super) fn summarize(rows: &[Row]) -> (Vec<Table>, Vec<Plot>, Vec<String>) {
    let shared: Vec<Row> = rows.iter().filter(|r| is_shared(r)).cloned().collect();
    let Some((phases, link_bps, flows)) = by_phase(&shared) else {
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
    let body = flows
        .iter()
        .map(|f| {
            let share =
                f.means[1].map_or_else(dash, |m| format!("{:.0}%", 100.0 * m / link_bps as f64));
            vec![
                f.implementation.clone(),
                format!("{:.0}", f.start_s),
                rate(f.means[0]),
                rate(f.means[1]),
                share,
                rate(f.means[2]),
                mbit(f.goodput_bps),
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
             for {:.0} s; buffers {buffer} each. Rates are means over each phase without its first \
             second (Mbit/s); share: of the link's rate while both ran.",
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

/// Who yielded, and how fast: the scavenger's rate while uTP ran against its rate alone,
/// and the first second after uTP's start in which it fell below half of that.
fn finding(phases: &Phases, link_bps: u64, flows: &[ByPhase]) -> Option<String> {
    let scavenger = flows.iter().find(|f| f.start_s == 0.0)?;
    let utp = flows.iter().find(|f| f.start_s > 0.0)?;
    let (Some(alone), Some(with), Some(utp_rate)) =
        (scavenger.means[0], scavenger.means[1], utp.means[1])
    else {
        return Some(format!(
            "Shared run: too short to tell phases apart ({:.0} s alone, {:.0} s together).",
            phases.lead, phases.overlap
        ));
    };
    let link = link_bps as f64;
    if with + utp_rate < 0.9 * link {
        return Some(format!(
            "Shared run: the two flows did not fill the link ({} + {} Mbit/s of {}: both \
             window-limited by their buffers), so neither had to yield; {} kept {:.0}% of its \
             alone rate ({} Mbit/s). This run does not answer who yields to whom.",
            mbit(utp_rate),
            mbit(with),
            mbit(link),
            scavenger.implementation,
            100.0 * with / alone.max(1.0),
            mbit(alone)
        ));
    }
    let who = if utp_rate > with {
        format!(
            "{} yielded to {}",
            scavenger.implementation, utp.implementation
        )
    } else {
        format!(
            "{} did not yield to {}",
            scavenger.implementation, utp.implementation
        )
    };
    let link = link_bps as f64;
    let mut text = format!(
        "Shared run: {who}: while both ran, {} had {} Mbit/s ({:.0}% of the link) and {} {} \
         Mbit/s ({:.0}% of what it had alone, {} Mbit/s).",
        utp.implementation,
        mbit(utp_rate),
        100.0 * utp_rate / link,
        scavenger.implementation,
        mbit(with),
        100.0 * with / alone.max(1.0),
        mbit(alone)
    );
    let start = phases.lead.round() as usize;
    let end = (phases.lead + phases.overlap).round() as usize;
    let fell = scavenger
        .series
        .get(start..end.min(scavenger.series.len()))
        .and_then(|s| s.iter().position(|&bps| bps < alone / 2.0));
    if let Some(k) = fell {
        text += &format!(
            " It fell below half its alone rate within {} s of uTP's start.",
            k + 1
        );
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

    /// A shared-run row of `implementation` starting at `start` with `series` (1 s each).
    fn row(implementation: &str, start: u64, series: &[u64]) -> Row {
        let s = Shared {
            buffer: 1 << 20,
            lead: Duration::from_secs(3),
            overlap: Duration::from_secs(4),
            tail: Duration::from_secs(3),
        };
        let params: Vec<(String, f64)> = s.run().params.into_iter().collect();
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
        r.series = series.to_vec();
        r.interval_s = vec![1.0; series.len()];
        row
    }

    #[test]
    fn the_run_has_the_scavenger_first_and_utp_later() {
        let run = Shared::quick().run();
        assert_eq!(run.flows.len(), 2);
        assert_eq!(run.flows[0].implementation, Implementation::ours("ledbat"));
        assert_eq!(run.flows[1].implementation, Implementation::Utp);
        assert_eq!(run.flows[1].start, Shared::quick().lead);
        assert_eq!(
            run.label,
            "uTP (librqbit-utp) beside ours (ledbat), buffer 1 MiB"
        );
    }

    #[test]
    fn phases_tell_who_yielded() {
        let mb = 1_000_000 / 8; // 1 Mbit in bytes
        let ledbat = row(
            "ours (ledbat)",
            0,
            &[
                50 * mb,
                90 * mb,
                90 * mb,
                60 * mb,
                10 * mb,
                10 * mb,
                10 * mb,
                50 * mb,
                80 * mb,
                80 * mb,
            ],
        );
        let utp = row(
            "uTP (librqbit-utp)",
            3,
            &[30 * mb, 80 * mb, 80 * mb, 80 * mb],
        );
        let (tables, plots, findings) = summarize(&[ledbat, utp]);
        assert_eq!(tables[0].rows.len(), 2);
        assert_eq!(tables[0].rows[0][2], mbit(90e6));
        assert_eq!(tables[0].rows[0][3], mbit(10e6));
        assert_eq!(tables[0].rows[1][3], mbit(80e6));
        assert_eq!(tables[0].rows[1][4], "80%");
        assert_eq!(plots[0].series.len(), 2);
        let f = &findings[0];
        assert!(
            f.starts_with("Shared run: ours (ledbat) yielded to uTP (librqbit-utp)"),
            "{f}"
        );
        assert!(f.contains("within 2 s of uTP's start"), "{f}");
        assert!(f.contains("went back to 80.0 Mbit/s"), "{f}");
    }

    #[test]
    fn a_link_left_half_empty_answers_nothing() {
        let mb = 1_000_000 / 8;
        let ledbat = row("ours (ledbat)", 0, &[30 * mb; 10]);
        let utp = row("uTP (librqbit-utp)", 3, &[30 * mb; 4]);
        let (tables, _, findings) = summarize(&[ledbat, utp]);
        assert!(
            findings[0].contains("did not fill the link"),
            "{findings:?}"
        );
        assert_eq!(tables[0].rows[1][2], "—", "uTP did not run before");
        assert_eq!(tables[0].rows[1][5], "—", "nor after");
    }

    #[test]
    fn no_shared_rows_no_summary() {
        let (t, p, f) = summarize(&[]);
        assert!(t.is_empty() && p.is_empty() && f.is_empty());
    }
}
