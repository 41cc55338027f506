//! The quick variants of experiments 2-4 (buffer sweep, TCP tuning, fairness), the 1 Gbit/s
//! grid and the scavenger run end to end: every row is there, and every goodput is sane
//! (above zero, at most the link rate + 5% over the whole flow; the short steady span gets
//! more slack, see `check`).
//! They need root and the `udt` binary (`cargo build -p udt-cli`, or `$UDT_LAB_UDT`); without
//! either, each test says why and passes. The figures themselves are the reports' business:
//! no timing threshold here beyond "sane".

use std::sync::Mutex;

use udt_lab::experiment::{self, Settings, DEFAULT_RATE_CAP_BPS};
use udt_lab::flows::RunOptions;

/// One lab at a time: the experiments measure timing.
static SERIAL: Mutex<()> = Mutex::new(());

fn settings(name: &str) -> Option<Settings> {
    if let Err(err) = udt_lab::check_privileges() {
        eprintln!("skipping {name}: {err}");
        return None;
    }
    let run = match RunOptions::new() {
        Ok(run) => run,
        Err(err) => {
            eprintln!("skipping {name}: {err:#}");
            return None;
        }
    };
    let out = std::env::temp_dir().join(format!("udt-lab-quick-{}-{name}", std::process::id()));
    Some(Settings {
        quick: true,
        rate_cap_bps: DEFAULT_RATE_CAP_BPS,
        run,
        out,
        command: format!("cargo test -p udt-lab --test experiments_quick {name}"),
        progress: true,
        flow_time: None,
        resume: false,
        only: Default::default(),
        repeat: 1,
        competitor_start: None,
    })
}

/// Runs experiment `name` quick and checks its rows, tables and written report.
fn check(name: &str) {
    let Some(settings) = settings(name) else {
        return;
    };
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let exp = experiment::find(name).expect("registered");
    let flows: usize = (exp.cells)(&settings)
        .iter()
        .flat_map(|c| &c.runs)
        .map(|r| r.flows.len())
        .sum();
    let mut journal = experiment::journal::Journal::open(&settings.out, name, &settings, false)
        .expect("the journal opens");
    let report = experiment::run(&exp, &settings, &mut journal).expect("the experiment runs");
    assert_eq!(report.rows.len(), flows, "one row per flow");
    let journal_path = settings.out.join(experiment::journal::FILE_NAME);
    let recorded = std::fs::read_to_string(&journal_path).expect("the journal is written");
    assert_eq!(
        recorded.lines().count(),
        flows + 1,
        "a header and one line per flow"
    );
    for row in &report.rows {
        let what = format!("{}: {}", row.run, row.implementation);
        let r = row
            .result
            .as_ref()
            .unwrap_or_else(|| panic!("{what}: {:?}", row.error));
        let link = row.truth.rate_bps as f64;
        // The steady rate of a quick run spans a second or so after the warm-up, and what a
        // reader held back during the warm-up lands in it: kernel TCP with buffers of four
        // BDPs (5 MB at 200 Mbit/s x 50 ms, a fifth of a second) read 235 Mbit/s on a
        // 200 Mbit/s link once in CI. The whole flow's goodput has no such slack.
        for (figure, bps, slack) in [
            ("goodput", r.goodput_bps, 1.05),
            ("steady", r.steady_goodput_bps, 1.3),
        ] {
            assert!(
                bps > 0.0 && bps <= link * slack,
                "{what}: {figure} {bps} on a {link} link"
            );
        }
        assert!(r.bytes > 0, "{what}");
    }
    assert!(
        report.tables.iter().all(|t| !t.rows.is_empty()),
        "empty table"
    );
    report.write(&settings.out).expect("the report is written");
    journal.finish().expect("the journal is removed");
    assert!(settings.out.join("report.md").is_file());
    for plot in &report.plots {
        assert!(settings.out.join(&plot.file).is_file(), "{}", plot.file);
    }
    let _ = std::fs::remove_dir_all(&settings.out);
}

#[test]
fn buffer_sweep_quick() {
    check("buffer-sweep");
}

#[test]
fn tcp_tuning_quick() {
    check("tcp-tuning");
}

#[test]
fn fairness_quick() {
    check("fairness");
}

#[test]
fn wan_grid_quick() {
    check("wan-grid");
}

#[test]
fn scavenger_quick() {
    check("scavenger");
}

/// Not a test: rebuilds the findings, tables and plots of a written report from its
/// `results.json` (after a change to an experiment's summary), without measuring again.
/// `UDT_LAB_RESUMMARIZE=docs/lab/buffer-sweep cargo test -p udt-lab --test
/// experiments_quick -- --ignored resummarize` (a relative directory is taken from the
/// workspace's root: cargo runs the test in the crate's directory).
#[test]
#[ignore = "a tool: needs UDT_LAB_RESUMMARIZE=DIR"]
fn resummarize() {
    let Some(dir) = std::env::var_os("UDT_LAB_RESUMMARIZE").map(std::path::PathBuf::from) else {
        eprintln!("set UDT_LAB_RESUMMARIZE to a report directory");
        return;
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join(dir);
    let json = std::fs::read_to_string(dir.join("results.json")).expect("results.json");
    let mut report: experiment::Report = serde_json::from_str(&json).expect("a report");
    let exp = experiment::find(&report.experiment).expect("registered");
    let settings = Settings {
        quick: report.quick,
        rate_cap_bps: report.rate_cap_bps,
        run: RunOptions {
            binaries: udt_lab::flows::Binaries::only_udt("udt".into()),
            warmup: std::time::Duration::from_secs_f64(report.warmup_s),
            grace: std::time::Duration::ZERO,
        },
        out: dir.clone(),
        command: report.command.clone(),
        progress: false,
        flow_time: None,
        resume: false,
        only: Default::default(),
        repeat: 1,
        competitor_start: None,
    };
    let summary = (exp.summarize)(&settings, &report.rows);
    report.description = exp.description.to_owned();
    report.findings = summary.findings;
    report.tables = summary.tables;
    report.plots = summary.plots;
    report.write(&dir).expect("written");
}
