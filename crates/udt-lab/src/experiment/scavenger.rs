//! The scavenger's yield (issue 12): our LEDBAT controller (`--cc ledbat`, what
//! `udt cp --priority background` uses) runs alone, then with a competitor that starts
//! partway through and leaves before it ends: kernel TCP CUBIC and BBR (tuned buffers) and
//! our `model`. A scavenger should fill the idle link, give way within a few round trips when
//! the competitor arrives, and take the link back when it leaves.
//!
//! Measured from the receivers' per-second series, so times have a one-second grain: the
//! yield time is the end of the first whole second, counted from the competitor's start, in
//! which the scavenger moved less than [`YIELDED`] of the link. What the competitor keeps is
//! its steady goodput beside the scavenger over its goodput alone.
//!
//! Full: one link (1 Gbit/s nominal, run at the cap; 50 ms; one-BDP queue), the scavenger for
//! 12 s with the competitor from 4 s to 10 s (7 runs, about 2 minutes); `--flow-time T`
//! keeps those proportions (T/3, T/2). Quick: CUBIC only, 5 s with the competitor from
//! 1.7 s for 2.5 s.

use std::time::Duration;

use super::report::mbit;
use super::{flow_time, Cell, Experiment, Plot, Row, Run, Series, Settings, Summary, Table};
use crate::flows::{payload_capacity_bps, Buffers, FlowResult, FlowSpec, Implementation, TcpCc};
use crate::LinkParams;

/// The nominal link rate, bit/s (run at the cap here).
pub const NOMINAL_RATE_BPS: u64 = 1_000_000_000;

/// The path's round-trip time.
pub const RTT: Duration = Duration::from_millis(50);

/// Share of the link below which the scavenger counts as having given way.
pub const YIELDED: f64 = 0.1;

/// The scavenger's controller name.
const SCAVENGER: &str = "ledbat";

/// The registry entry.
pub(crate) fn experiment() -> Experiment {
    Experiment {
        name: "scavenger",
        title: "Scavenger: LEDBAT giving way to TCP and to model",
        description: DESCRIPTION,
        cells,
        summarize,
    }
}

const DESCRIPTION: &str = "\
Our LEDBAT controller (`udt perf --cc ledbat`, `udt cp --priority background`) on a 50 ms path \
with a one-BDP drop-tail queue: alone, then with a competitor that starts after it and leaves \
before it ends (kernel TCP CUBIC and BBR with tuned buffers, and our `model`), and each \
competitor alone as its baseline. A scavenger should fill an idle link, give way within a few \
round trips (RFC 6817), and take the link back when the competitor leaves. Figures come from \
the receivers' per-second series, so times have a one-second grain.";

/// When the competitor starts and how long it runs, and how long the scavenger runs.
#[derive(Debug, Clone, Copy)]
struct Timing {
    scavenger: Duration,
    start: Duration,
    competitor: Duration,
}

fn timing(settings: &Settings) -> Timing {
    let scavenger = flow_time(settings, Duration::from_secs(5), Duration::from_secs(12));
    Timing {
        scavenger,
        start: scavenger / 3,
        competitor: scavenger / 2,
    }
}

fn competitors(quick: bool) -> Vec<(Implementation, Buffers)> {
    let mut all = vec![(Implementation::Tcp { cc: TcpCc::Cubic }, Buffers::Tuned)];
    if !quick {
        all.push((Implementation::Tcp { cc: TcpCc::Bbr }, Buffers::Tuned));
        all.push((Implementation::ours("model"), Buffers::Default));
    }
    all
}

fn cells(settings: &Settings) -> Vec<Cell> {
    let t = timing(settings);
    let scavenger = FlowSpec::timed(Implementation::ours(SCAVENGER), t.scavenger);
    let mut runs = vec![Run {
        label: "scavenger alone".into(),
        flows: vec![scavenger.clone()],
        params: Default::default(),
    }];
    for (imp, buffers) in competitors(settings.quick) {
        let alone = FlowSpec::timed(imp.clone(), t.competitor).with_buffers(buffers);
        runs.push(Run {
            label: format!("{imp} alone"),
            flows: vec![alone.clone()],
            params: Default::default(),
        });
        runs.push(Run {
            label: format!("scavenger + {imp}"),
            flows: vec![scavenger.clone(), alone.starting_at(t.start)],
            params: [("competitor_start_s".to_owned(), t.start.as_secs_f64())].into(),
        });
    }
    vec![Cell {
        link: LinkParams::new(NOMINAL_RATE_BPS, RTT),
        runs,
    }]
}

/// The scavenger's label.
fn scavenger_label() -> String {
    Implementation::ours(SCAVENGER).label()
}

/// A flow's rate in each whole second of its series, bit/s, with the second's end measured
/// from the set's clock (`offset`: when the flow started).
fn per_second(r: &FlowResult, offset: f64) -> Vec<(f64, f64)> {
    let mut end = offset;
    r.series
        .iter()
        .zip(&r.interval_s)
        .filter_map(|(bytes, len)| {
            end += len;
            (*len >= 0.9).then(|| (end, *bytes as f64 * 8.0 / len))
        })
        .collect()
}

/// What one mixed run shows.
#[derive(Debug, Clone, PartialEq)]
struct Yield {
    /// Seconds from the competitor's start to the end of the scavenger's first second
    /// below [`YIELDED`] of the link, if it ever went below.
    yield_s: Option<f64>,
    /// The scavenger's mean rate over the seconds wholly inside the competitor's run, bit/s.
    during_bps: Option<f64>,
    /// The scavenger's mean rate over its seconds after the competitor left, bit/s.
    after_bps: Option<f64>,
}

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The yield figures of a scavenger flow `scav` beside a competitor that ran from `start`
/// for `length` seconds on a link of `capacity_bps` (the scavenger's payload capacity).
fn yield_of(scav: &FlowResult, start: f64, length: f64, capacity_bps: f64) -> Yield {
    let seconds = per_second(scav, 0.0);
    let end = start + length;
    let yield_s = seconds
        .iter()
        .find(|(t, bps)| *t > start + 0.5 && *bps < YIELDED * capacity_bps)
        .map(|(t, _)| t - start);
    let during: Vec<f64> = seconds
        .iter()
        .filter(|(t, _)| *t - 1.0 >= start && *t <= end)
        .map(|(_, b)| *b)
        .collect();
    let after: Vec<f64> = seconds
        .iter()
        .filter(|(t, _)| *t - 1.0 >= end + 1.0)
        .map(|(_, b)| *b)
        .collect();
    Yield {
        yield_s,
        during_bps: mean(&during),
        after_bps: mean(&after),
    }
}

fn summarize(_settings: &Settings, rows: &[Row]) -> Summary {
    let scav = scavenger_label();
    let alone = rows
        .iter()
        .find(|r| r.run == "scavenger alone")
        .and_then(Row::goodput);
    let mut table_rows = Vec::new();
    let mut findings = Vec::new();
    let mut plots = Vec::new();
    let competitors: Vec<&Row> = rows
        .iter()
        .filter(|r| r.run.starts_with("scavenger + ") && r.implementation != scav)
        .collect();
    for comp in competitors {
        let mixed: Vec<&Row> = rows.iter().filter(|r| r.run == comp.run).collect();
        let Some(s) = mixed.iter().find(|r| r.implementation == scav) else {
            continue;
        };
        let baseline = rows
            .iter()
            .find(|r| r.run == format!("{} alone", comp.implementation))
            .and_then(Row::goodput);
        let start = comp
            .params
            .get("competitor_start_s")
            .copied()
            .unwrap_or(0.0);
        let length = match comp.result.as_ref().map(|r| r.spec.limit) {
            Some(crate::flows::FlowLimit::Duration(d)) => d.as_secs_f64(),
            _ => 0.0,
        };
        let capacity = payload_capacity_bps(&s.protocol, s.truth.rate_bps);
        let y = s
            .result
            .as_ref()
            .map(|r| yield_of(r, start, length, capacity));
        let kept = comp.goodput().zip(baseline).map(|(b, a)| b / a);
        let fmt_bps = |b: Option<f64>| b.map_or("-".to_owned(), mbit);
        let during = y.as_ref().and_then(|y| y.during_bps);
        table_rows.push(vec![
            comp.implementation.clone(),
            fmt_bps(baseline),
            fmt_bps(comp.goodput()),
            kept.map_or("-".into(), |k| format!("{:.0}%", k * 100.0)),
            during.map_or("-".into(), |d| {
                format!("{} ({:.0}%)", mbit(d), d / capacity * 100.0)
            }),
            y.as_ref().map_or("-".into(), |y| {
                y.yield_s.map_or("never".into(), |s| format!("{s:.0} s"))
            }),
            fmt_bps(y.as_ref().and_then(|y| y.after_bps)),
        ]);
        if let (Some(k), Some(y)) = (kept, &y) {
            findings.push(format!(
                "Beside {}: the competitor kept {:.0}% of its rate alone; the scavenger {}.",
                comp.implementation,
                k * 100.0,
                match y.yield_s {
                    Some(s) => format!(
                        "was below {:.0}% of the link within {s:.0} s of its arrival",
                        YIELDED * 100.0
                    ),
                    None => format!("never went below {:.0}% of the link", YIELDED * 100.0),
                }
            ));
        }
        plots.push(timeline(comp, &mixed, start));
    }
    if let Some(a) = alone {
        let cap = rows
            .first()
            .map(|r| payload_capacity_bps("UDT", r.truth.rate_bps))
            .unwrap_or(f64::NAN);
        findings.insert(
            0,
            format!(
                "Alone the scavenger moved {} Mbit/s ({:.0}% of the payload capacity).",
                mbit(a),
                a / cap * 100.0
            ),
        );
    }
    findings.extend(super::alone::failed_finding(rows));
    Summary {
        findings,
        tables: vec![Table {
            title: "The scavenger beside each competitor".into(),
            caption: format!(
                "Steady goodputs (Mbit/s). Kept: the competitor's goodput beside the scavenger \
                 over its goodput alone. Scavenger during: its mean rate over the seconds wholly \
                 inside the competitor's run (and its share of the link). Yield: from the \
                 competitor's start to the end of the scavenger's first second below {:.0}% of \
                 the link. After: its mean rate once the competitor left.",
                YIELDED * 100.0
            ),
            header: [
                "competitor",
                "competitor alone",
                "competitor beside scavenger",
                "kept",
                "scavenger during",
                "yield",
                "scavenger after",
            ]
            .map(String::from)
            .to_vec(),
            rows: table_rows,
        }],
        plots,
    }
}

/// The two flows' per-second rates of one mixed run, against the set's clock.
fn timeline(comp: &Row, mixed: &[&Row], start: f64) -> Plot {
    let series = mixed
        .iter()
        .filter_map(|r| {
            let offset = if r.implementation == comp.implementation {
                start
            } else {
                0.0
            };
            Some(Series {
                name: r.implementation.clone(),
                points: per_second(r.result.as_ref()?, offset)
                    .into_iter()
                    .map(|(t, b)| (t, b / 1e6))
                    .collect(),
            })
        })
        .collect();
    let tag: String = comp
        .implementation
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    Plot {
        file: format!("timeline-{tag}.svg"),
        title: format!("The scavenger and {} (per second)", comp.implementation),
        x_label: "seconds (end of each second)".into(),
        y_label: "goodput (Mbit/s)".into(),
        log_x: false,
        series,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(series_mbit: &[f64]) -> FlowResult {
        let mut r = super::super::testing::row(("", "UDT", "x"), &[], (1, 1.0), 1)
            .result
            .expect("result");
        r.series = series_mbit.iter().map(|m| (m * 1e6 / 8.0) as u64).collect();
        r.interval_s = vec![1.0; series_mbit.len()];
        r
    }

    #[test]
    fn yield_is_the_first_second_below_a_tenth_after_the_arrival() {
        // Competitor from 4 s for 6 s on a 1000 Mbit/s link (capacity taken as 1000).
        let r = result(&[
            900.0, 950.0, 950.0, 950.0, 600.0, 80.0, 20.0, 20.0, 20.0, 20.0, 500.0, 900.0,
        ]);
        let y = yield_of(&r, 4.0, 6.0, 1000e6);
        assert_eq!(y.yield_s, Some(2.0)); // the second ending at 6 s
                                          // Seconds ending 5..=10 are inside [4, 10]: 600, 80, 20, 20, 20, 20.
        assert!((y.during_bps.expect("during") / 1e6 - 760.0 / 6.0).abs() < 1.0);
        // Seconds starting at or after 11 s: the last one.
        assert!((y.after_bps.expect("after") / 1e6 - 900.0).abs() < 1.0);
        let never = result(&[900.0; 12]);
        assert_eq!(yield_of(&never, 4.0, 6.0, 1000e6).yield_s, None);
    }

    #[test]
    fn full_variant_runs_each_competitor_alone_and_mixed() {
        let cells = cells(&super::super::testing::settings(false));
        let labels: Vec<&str> = cells[0].runs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels.len(), 7, "{labels:?}");
        let mixed = &cells[0].runs[2];
        assert_eq!(mixed.flows.len(), 2);
        assert_eq!(mixed.flows[1].start, Duration::from_secs(4));
        assert_eq!(
            mixed.flows[1].limit,
            crate::flows::FlowLimit::Duration(Duration::from_secs(6))
        );
    }
}
