//! What the one-flow-alone experiments share (the decision matrix and the loss sweep): each
//! cell runs one flow of every implementation by itself, and the tables and plots set the
//! implementations side by side per cell, with the headline UDT / TCP comparison.

use std::time::Duration;

use super::report::mbit;
use super::{row_of, Plot, Row, Run, Series, Truth};
use crate::flows::{FlowSpec, Implementation};

/// The UDT side of the headline comparison: the default a user gets.
pub(super) const UDT_HEADLINE: &str = "ours (native)";

/// The TCP side: the kernel default.
pub(super) const TCP_HEADLINE: &str = "kernel TCP cubic";

/// One run per implementation, each a single flow of `duration`.
pub(super) fn each_alone(duration: Duration) -> Vec<Run> {
    Implementation::all()
        .into_iter()
        .map(|i| Run::single(FlowSpec::timed(i, duration)))
        .collect()
}

/// The goodputs (bit/s) of the headline UDT and TCP flows on `truth`, if both worked.
pub(super) fn headline_goodputs(rows: &[Row], truth: &Truth) -> Option<(f64, f64)> {
    let udt = row_of(rows, truth, UDT_HEADLINE)?.goodput()?;
    let tcp = row_of(rows, truth, TCP_HEADLINE)?.goodput()?;
    Some((udt, tcp))
}

/// A per-cell table's header: `first` (what tells the cells apart), `RTT`, then one column
/// per implementation.
pub(super) fn impl_header(first: &str, impls: &[String]) -> Vec<String> {
    [first.to_owned(), "RTT".to_owned()]
        .into_iter()
        .chain(impls.iter().cloned())
        .collect()
}

/// Each implementation's goodput on `truth`, Mbit/s (`failed` where its flow failed).
pub(super) fn goodputs<'a>(
    rows: &'a [Row],
    truth: &'a Truth,
    impls: &'a [String],
) -> impl Iterator<Item = String> + 'a {
    impls.iter().map(move |i| {
        row_of(rows, truth, i)
            .and_then(Row::goodput)
            .map_or("failed".into(), mbit)
    })
}

/// One line per implementation: its goodput (Mbit/s) against the RTT of `cells`.
pub(super) fn goodput_vs_rtt(rows: &[Row], cells: &[&Truth], impls: &[String]) -> Vec<Series> {
    impls
        .iter()
        .map(|i| Series {
            name: i.clone(),
            points: cells
                .iter()
                .filter_map(|c| Some((c.rtt_ms, row_of(rows, c, i)?.goodput()? / 1e6)))
                .collect(),
        })
        .collect()
}

/// The finding that some flows failed, if any did.
pub(super) fn failed_finding(rows: &[Row]) -> Option<String> {
    let failed = rows.iter().filter(|r| r.error.is_some()).count();
    (failed > 0).then(|| format!("{failed} flow(s) failed; see the end of the report."))
}

/// A loss probability as a percentage without trailing zeros (`0.1%`, `1%`, `0%`).
pub(super) fn loss_label(loss: f64) -> String {
    let s = format!("{:.3}", loss * 100.0);
    format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
}

/// The distinct loss rates of `cells`, in order (cells are grouped by loss).
pub(super) fn losses(cells: &[Truth]) -> Vec<f64> {
    let mut losses: Vec<f64> = cells.iter().map(|c| c.loss).collect();
    losses.dedup();
    losses
}

/// Goodput against RTT for each implementation, on the cells at `loss`; `rate` names the
/// link in the title (`100 Mbit/s`).
pub(super) fn plot_for_loss(
    rows: &[Row],
    cells: &[Truth],
    impls: &[String],
    loss: f64,
    rate: &str,
) -> Plot {
    let on: Vec<&Truth> = cells.iter().filter(|c| c.loss == loss).collect();
    let tag = loss_label(loss).replace('%', "pct");
    Plot {
        file: format!("goodput-loss-{tag}.svg"),
        title: format!("Goodput vs RTT at {} loss, {rate}", loss_label(loss)),
        x_label: "RTT (ms)".into(),
        y_label: "goodput (Mbit/s)".into(),
        log_x: false,
        series: goodput_vs_rtt(rows, &on, impls),
    }
}
