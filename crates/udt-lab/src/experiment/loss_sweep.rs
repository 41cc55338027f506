//! Experiment 5, the loss sweep (after the GENI experiment): random loss {0, 0.01%, 0.1%,
//! 1%} x RTT {10, 50, 100, 200} ms on a 100 Mbit/s link, UDT and TCP. Loss that is not
//! congestion is where TCP's loss-driven control suffers most and UDT's rate control
//! (which reacts to a loss only once per congestion epoch) was designed to hold up.
//!
//! Full: 16 cells x 5 implementations x 6 s flows (about 10 minutes). Quick: 0 and 1% at
//! 50 ms, 2 s flows.

use std::time::Duration;

use super::alone::{
    each_alone, failed_finding, goodputs, headline_goodputs, impl_header, loss_label, losses,
    plot_for_loss, TCP_HEADLINE, UDT_HEADLINE,
};
use super::{
    flow_time, implementations, links, row_of, Cell, Experiment, Row, Settings, Summary, Table,
    Truth,
};
use crate::LinkParams;

/// The link rate, bit/s (GENI's slices were 100 Mbit/s).
pub const RATE_BPS: u64 = 100_000_000;

/// Loss probabilities per packet, each direction.
pub const LOSSES: [f64; 4] = [0.0, 0.0001, 0.001, 0.01];

/// RTTs, ms.
pub const RTTS_MS: [u64; 4] = [10, 50, 100, 200];

/// The registry entry.
pub(crate) fn experiment() -> Experiment {
    Experiment {
        name: "loss-sweep",
        title: "Loss sweep: UDT and TCP under random loss",
        description: DESCRIPTION,
        cells,
        summarize,
        repeats: false,
    }
}

const DESCRIPTION: &str = "\
Reproduces the GENI loss experiment: goodput of UDT and TCP on a 100 Mbit/s link as random, \
non-congestion loss {0, 0.01%, 0.1%, 1%} (each direction, independent per packet) meets \
RTTs of 10 to 200 ms. One bulk flow of each implementation runs alone on a fresh link per \
cell, default buffers; the queue is one bandwidth-delay product.";

fn cells(settings: &Settings) -> Vec<Cell> {
    let (losses, rtts): (&[f64], &[u64]) = if settings.quick {
        (&[0.0, 0.01], &[50])
    } else {
        (&LOSSES, &RTTS_MS)
    };
    let secs = flow_time(settings, Duration::from_secs(2), Duration::from_secs(6));
    let mut cells = Vec::new();
    for &loss in losses {
        for &rtt in rtts {
            let link = LinkParams {
                loss,
                ..LinkParams::new(RATE_BPS, Duration::from_millis(rtt))
            };
            cells.push(Cell {
                link,
                runs: each_alone(secs),
            });
        }
    }
    cells
}

fn ratio(rows: &[Row], truth: &Truth) -> Option<f64> {
    let (udt, tcp) = headline_goodputs(rows, truth)?;
    (tcp > 0.0).then(|| udt / tcp)
}

fn summarize(_settings: &Settings, rows: &[Row]) -> Summary {
    let cells = links(rows);
    let impls = implementations(rows);
    let losses = losses(&cells);
    Summary {
        findings: findings(rows, &cells),
        tables: vec![
            goodput_table(rows, &cells, &impls),
            loss_table(rows, &cells, &impls),
        ],
        plots: losses
            .iter()
            .map(|l| plot_for_loss(rows, &cells, &impls, *l, "100 Mbit/s"))
            .collect(),
    }
}

fn goodput_table(rows: &[Row], cells: &[Truth], impls: &[String]) -> Table {
    let mut header = impl_header("loss", impls);
    header.push("UDT / TCP".to_owned());
    let table_rows = cells
        .iter()
        .map(|c| {
            let mut line = vec![loss_label(c.loss), format!("{} ms", c.rtt_ms)];
            line.extend(goodputs(rows, c, impls));
            line.push(ratio(rows, c).map_or("-".into(), |r| format!("{r:.2}")));
            line
        })
        .collect();
    Table {
        title: "Goodput (Mbit/s) under random loss, 100 Mbit/s link".into(),
        caption: format!(
            "Steady payload rate at the receiver, one flow alone. UDT / TCP is {UDT_HEADLINE} \
             over {TCP_HEADLINE}."
        ),
        header,
        rows: table_rows,
    }
}

fn loss_table(rows: &[Row], cells: &[Truth], impls: &[String]) -> Table {
    let header = impl_header("loss", impls);
    let table_rows = cells
        .iter()
        .map(|c| {
            let mut line = vec![loss_label(c.loss), format!("{} ms", c.rtt_ms)];
            for i in impls {
                let r = row_of(rows, c, i).and_then(|r| r.result.as_ref());
                line.push(r.map_or("-".into(), |r| {
                    format!("{} / {}", r.retransmissions, r.losses)
                }));
            }
            line
        })
        .collect();
    Table {
        title: "Retransmissions / losses seen".into(),
        caption: "Packets (UDT) or segments (TCP) the sender retransmitted, and the losses the \
                  protocol counted (UDT: sequence numbers the receiver found missing; TCP: \
                  retransmitted segments)."
            .into(),
        header,
        rows: table_rows,
    }
}

fn findings(rows: &[Row], cells: &[Truth]) -> Vec<String> {
    let losses = losses(cells);
    let mut out = Vec::new();
    for loss in losses {
        let ratios: Vec<String> = cells
            .iter()
            .filter(|c| c.loss == loss)
            .filter_map(|c| Some(format!("x{:.2} at {} ms", ratio(rows, c)?, c.rtt_ms)))
            .collect();
        if !ratios.is_empty() {
            out.push(format!(
                "At {} loss, {UDT_HEADLINE} over {TCP_HEADLINE}: {}.",
                loss_label(loss),
                ratios.join(", ")
            ));
        }
    }
    out.extend(super::still_rising_finding(rows));
    out.extend(failed_finding(rows));
    out
}
