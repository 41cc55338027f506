//! An experiment's [`Report`] and how it is written: `report.md` (the tables and findings a
//! reader acts on), `results.json` (every figure: the report itself, rows included, with
//! serde) and one SVG per [`Plot`].

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::{Plot, Row};
use crate::host;
use crate::params::format_rate;

/// A finished experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Its registry name.
    pub experiment: String,
    /// Its title.
    pub title: String,
    /// Its description (Markdown).
    pub description: String,
    /// The command that made it.
    pub command: String,
    /// Whether the quick variant ran.
    pub quick: bool,
    /// The rate cap, bit/s.
    pub rate_cap_bps: u64,
    /// Seconds of each flow left out of the steady goodput.
    pub warmup_s: f64,
    /// CPUs and model.
    pub machine: String,
    /// Load average (1, 5, 15 min) before the first run.
    pub load_before: String,
    /// Load average after the last run.
    pub load_after: String,
    /// Wall-clock seconds the experiment took.
    pub seconds: f64,
    /// The answers, as Markdown bullet points.
    pub findings: Vec<String>,
    /// The tables.
    pub tables: Vec<Table>,
    /// The figures (their data; the SVGs are beside the report).
    pub plots: Vec<Plot>,
    /// Every flow measured.
    pub rows: Vec<Row>,
}

/// A Markdown table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// Heading above it.
    pub title: String,
    /// A paragraph under the heading: how to read it.
    pub caption: String,
    /// Column names.
    pub header: Vec<String>,
    /// Cells, as text.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The table as Markdown, heading included.
    pub fn to_markdown(&self) -> String {
        let mut md = format!("### {}\n\n", self.title);
        if !self.caption.is_empty() {
            md += &format!("{}\n\n", self.caption);
        }
        let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        md += &line(&self.header);
        md += &line(&vec!["---".to_owned(); self.header.len()]);
        for row in &self.rows {
            md += &line(row);
        }
        md
    }
}

impl Report {
    /// Writes `report.md`, `results.json` and the plots into `dir` (created if needed).
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let json = serde_json::to_string_pretty(self).context("serializing the results")?;
        write(&dir.join("results.json"), &json)?;
        for plot in &self.plots {
            let path = dir.join(&plot.file);
            plot.render(&path)
                .with_context(|| format!("drawing {}", path.display()))?;
        }
        write(&dir.join("report.md"), &self.to_markdown())
    }

    /// The Markdown report.
    pub fn to_markdown(&self) -> String {
        let mut md = format!("# {}\n\n", self.title);
        let _ = writeln!(
            md,
            "Made by `{}`{}.\n",
            self.command,
            quick_note(self.quick)
        );
        let _ = writeln!(
            md,
            "Machine: {}; load average {} before, {} after; took {:.0} s. Rates above {} \
             (the emulator's sustained rate here, docs/lab/calibration.md) run at {} and are \
             labelled \"run at\". Goodputs are payload rates at the receiver, without the first \
             {} s of each flow (start-up); CPU is user + system seconds of both processes.\n",
            self.machine,
            self.load_before,
            self.load_after,
            self.seconds,
            format_rate(self.rate_cap_bps),
            format_rate(self.rate_cap_bps),
            self.warmup_s
        );
        md += &format!("{}\n\n", self.description.trim());
        if !self.findings.is_empty() {
            md += "## Findings\n\n";
            for f in &self.findings {
                let _ = writeln!(md, "- {f}");
            }
            md += "\n";
        }
        md += "## Tables\n\n";
        for t in &self.tables {
            md += &t.to_markdown();
            md += "\n";
        }
        if !self.plots.is_empty() {
            md += "## Figures\n\n";
            for p in &self.plots {
                let _ = writeln!(md, "![{}]({})\n", p.title, p.file);
            }
        }
        let failed: Vec<&Row> = self.rows.iter().filter(|r| r.error.is_some()).collect();
        if !failed.is_empty() {
            md += "## Failed flows\n\n";
            for r in failed {
                let _ = writeln!(
                    md,
                    "- {}: {}: {}",
                    run_place(r),
                    r.implementation,
                    r.error.as_deref().unwrap_or("")
                );
            }
            md += "\n";
        }
        md += &host_bound_section(&self.rows);
        md += "Every figure, per flow and per second, is in `results.json`.\n";
        md
    }
}

/// The runs during which the machine's CPUs were saturated, or lost a share of their time to
/// the hypervisor ([`crate::host`]), if any.
fn host_bound_section(rows: &[Row]) -> String {
    let runs: Vec<&Row> = rows
        .iter()
        .filter(|r| r.flow == 0)
        .filter(|r| {
            r.host_busy.is_some_and(|b| b >= host::SATURATED)
                || r.host_steal.is_some_and(|s| s >= host::STOLEN)
        })
        .collect();
    if runs.is_empty() {
        return String::new();
    }
    let mut md = format!(
        "## Host-bound runs\n\nDuring these runs the machine's CPUs were at least {:.0}% busy, \
         or the hypervisor took at least {:.0}% of their time (steal; medians of the run's \
         seconds): the flows waited for a CPU behind the emulator, whose threads run in real \
         time and carry the kernel's TCP receive path, or the emulator itself stalled, so \
         their figures measure this machine as much as the protocols (user-space ones, ours, \
         libudt and uTP, most). Run them at a lower `--rate-cap`, on a quieter or a larger \
         machine, and check `udt lab calibrate` first.\n\n",
        host::SATURATED * 100.0,
        host::STOLEN * 100.0
    );
    for r in runs {
        let busy = r
            .host_busy
            .map_or("?".to_owned(), |b| format!("{:.0}", b * 100.0));
        let _ = write!(md, "- {}: {busy}% busy", run_place(r));
        if let Some(steal) = r.host_steal.filter(|&s| s >= host::STOLEN) {
            let _ = write!(md, ", {:.0}% stolen", steal * 100.0);
        }
        md.push('\n');
    }
    md + "\n"
}

/// Which run a row belongs to, for a list: the link's rate, its RTT and the run's label.
fn run_place(r: &Row) -> String {
    format!("{}, {} ms, {}", r.truth.rate_label(), r.truth.rtt_ms, r.run)
}

fn quick_note(quick: bool) -> &'static str {
    if quick {
        " (the quick variant: few cells, short flows; a smoke test, not a measurement)"
    } else {
        ""
    }
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// The load average (1, 5, 15 minutes) now.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// CPU count and model.
pub fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    format!("{cpus} CPUs ({model})")
}

/// `123.4` Mbit/s as text with one decimal, for table cells.
pub fn mbit(bps: f64) -> String {
    format!("{:.1}", bps / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_on_a_saturated_host_are_listed_once_each() {
        let run = |label: &str, flow: usize, busy: Option<f64>, steal: Option<f64>| {
            let mut r = crate::experiment::testing::row(
                (label, "TCP", "kernel TCP bbr"),
                &[],
                (1_000_000, 1.0),
                1_000_000_000,
            );
            r.flow = flow;
            r.host_busy = busy;
            r.host_steal = steal;
            r
        };
        let rows = [
            run("51 × kernel TCP bbr", 0, Some(0.97), Some(0.0)),
            run("51 × kernel TCP bbr", 1, Some(0.97), Some(0.0)),
            run("ours (model) alone", 0, Some(0.55), Some(0.12)),
            run("11 × kernel TCP bbr", 0, Some(0.76), Some(0.02)),
            run("old", 0, None, None),
        ];
        let md = host_bound_section(&rows);
        assert!(md.starts_with("## Host-bound runs"), "{md}");
        assert_eq!(md.matches("\n- ").count(), 2, "{md}");
        assert!(md.contains("51 × kernel TCP bbr: 97% busy\n"), "{md}");
        assert!(
            md.contains("ours (model) alone: 55% busy, 12% stolen\n"),
            "{md}"
        );
        assert_eq!(host_bound_section(&rows[3..]), "");
    }

    #[test]
    fn table_markdown() {
        let t = Table {
            title: "T".into(),
            caption: String::new(),
            header: vec!["a".into(), "b".into()],
            rows: vec![vec!["1".into(), "2".into()]],
        };
        assert_eq!(
            t.to_markdown(),
            "### T\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n"
        );
        assert_eq!(mbit(155e6), "155.0");
    }
}
