//! `udt lab run EXPERIMENT --quick` end to end: the real binary runs the quick variant of
//! the decision matrix and the loss sweep across emulated links, and `results.json` must
//! hold every row with sane figures: every flow worked, goodput above zero and at most the
//! emulated rate (+5%), CPU figures and UDT's own estimates present.
//!
//! Needs root (network namespaces, TUN): skipped with a message otherwise. The figures are
//! not judged (timing belongs in reports): only that they exist and are possible.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

fn skip_without_root() -> bool {
    if let Err(e) = udt_lab::check_privileges() {
        eprintln!("skipping the lab experiments test: {e}");
        return true;
    }
    false
}

fn run_quick(experiment: &str, out: &Path) -> Value {
    let status = Command::new(env!("CARGO_BIN_EXE_udt"))
        .args(["lab", "run", experiment, "--quick", "--out"])
        .arg(out)
        .status()
        .expect("running udt lab run");
    assert!(
        status.success(),
        "udt lab run {experiment} --quick: {status}"
    );
    let json = std::fs::read_to_string(out.join("results.json")).expect("results.json");
    assert!(out.join("report.md").is_file());
    serde_json::from_str(&json).expect("results.json parses")
}

fn check_rows(report: &Value, cells: usize) {
    let rows = report["rows"].as_array().expect("rows");
    let impls = udt_lab::flows::Implementation::all();
    assert_eq!(
        rows.len(),
        cells * impls.len(),
        "one row per cell and implementation"
    );
    for imp in &impls {
        let label = imp.label();
        let n = rows
            .iter()
            .filter(|r| r["implementation"] == label.as_str())
            .count();
        assert_eq!(n, cells, "{label}: one row per cell");
    }
    for row in rows {
        let name = format!("{} at {}", row["implementation"], row["truth"]);
        assert!(row["error"].is_null(), "{name} failed: {}", row["error"]);
        let rate = row["truth"]["rate_bps"].as_f64().expect("rate");
        let result = &row["result"];
        // The whole flow's goodput can never beat the link. The steady one covers about a
        // second in the quick variant, where a burst the receiver read late (TCP's
        // out-of-order queue after a loss) can lift it a little: a looser bound.
        for (key, bound) in [("goodput_bps", 1.05), ("steady_goodput_bps", 1.15)] {
            let g = result[key].as_f64().expect(key);
            assert!(
                g > 0.0 && g <= rate * bound,
                "{name}: {key} {g} vs link {rate}"
            );
        }
        assert!(
            result["bytes"].as_u64().unwrap_or(0) > 0,
            "{name}: no bytes"
        );
        assert!(!result["series"].as_array().expect("series").is_empty());
        for key in ["sender_cpu_s", "receiver_cpu_s"] {
            assert!(
                result[key].as_f64().is_some_and(|c| c >= 0.0),
                "{name}: {key}"
            );
        }
        if row["protocol"] == "UDT" {
            let est = &result["udt"];
            assert!(est.is_object(), "{name}: no UDT estimates");
        }
    }
    let plots = report["plots"].as_array().expect("plots");
    assert!(!plots.is_empty());
}

#[test]
fn quick_decision_matrix_and_loss_sweep() {
    if skip_without_root() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let dm = run_quick("decision-matrix", &dir.path().join("dm"));
    check_rows(&dm, 2);
    assert!(dir.path().join("dm/goodput-45mbit.svg").is_file());
    let ls = run_quick("loss-sweep", &dir.path().join("ls"));
    check_rows(&ls, 2);
    let losses: Vec<f64> = ls["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["truth"]["loss"].as_f64())
        .collect();
    assert!(losses.contains(&0.0) && losses.contains(&0.01));
}

/// Several flows at once on one link, with start offsets and tuned TCP: what the fairness
/// experiment needs. Each flow must have moved data; the later one must have started later.
#[test]
fn concurrent_flows_with_offsets_and_tuned_tcp() {
    use udt_lab::flows::{
        run_flows, Binaries, Buffers, FlowSpec, Implementation, RunOptions, TcpCc,
    };
    if skip_without_root() {
        return;
    }
    let options = RunOptions {
        binaries: Binaries::with_udt(PathBuf::from(env!("CARGO_BIN_EXE_udt"))),
        warmup: Duration::from_secs(1),
        grace: Duration::from_secs(30),
    };
    let params = udt_lab::LinkParams::new(50_000_000, Duration::from_millis(20));
    let lab = udt_lab::Lab::start(params).expect("lab");
    let secs = Duration::from_secs(2);
    let tcp = |cc| FlowSpec::timed(Implementation::Tcp { cc }, secs).with_buffers(Buffers::Tuned);
    let flows = vec![
        FlowSpec::timed(Implementation::ours("native"), secs),
        tcp(TcpCc::Cubic),
        tcp(TcpCc::Bbr).starting_at(Duration::from_secs(1)),
    ];
    let results = run_flows(&lab, &flows, &options).expect("the set runs");
    assert_eq!(results.len(), 3);
    for r in &results {
        let r = r.as_ref().expect("flow");
        let g = r.goodput_bps;
        assert!(
            g > 0.0 && g <= 50e6 * 1.05,
            "{}: {g}",
            r.spec.implementation
        );
    }
    let mixed = vec![
        tcp(TcpCc::Cubic),
        FlowSpec::timed(Implementation::Tcp { cc: TcpCc::Cubic }, secs),
    ];
    assert!(
        run_flows(&lab, &mixed, &options).is_err(),
        "tuned and default TCP mixed"
    );
}

/// `--competitor-start` is refused before anything runs where it means nothing (another
/// experiment) or would leave no room to see the link taken back (the competitor must end
/// 2.5 s before the scavenger does), with the fix in the message and nothing written.
#[test]
fn a_competitor_start_out_of_place_is_refused_up_front() {
    if skip_without_root() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("udt-lab-start-{}", std::process::id()));
    let cases = [
        ("fairness", "5s", "applies to the scavenger experiment only"),
        ("scavenger", "6s", "start it at 5.50s at the latest"),
    ];
    for (experiment, start, says) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_udt"))
            .args([
                "lab",
                "run",
                experiment,
                "--competitor-start",
                start,
                "--out",
            ])
            .arg(&dir)
            .output()
            .expect("running udt lab run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{experiment} {start}: {stderr}");
        assert!(stderr.contains(says), "{experiment} {start}: {stderr}");
        assert!(
            !dir.exists(),
            "{experiment} {start} wrote {}",
            dir.display()
        );
    }
}
