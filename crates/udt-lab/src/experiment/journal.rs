//! The rows of an experiment as they are measured, one JSON line each, so that a run that is
//! killed or fails half-way keeps what it measured and can be resumed.
//!
//! A full grid at 1 Gbit/s takes an hour or more; before this, everything lived in memory
//! until the report was written. The journal is `rows.partial.jsonl` in the report's
//! directory: a header line naming the experiment and the settings that shape its cells, then
//! one [`Row`] per line, flushed after every run. The report's `results.json` is only written
//! when the experiment finishes, and the journal is then removed, so a partial file is never
//! mistaken for a report. `udt lab run --resume` reuses the rows of runs already in the
//! journal (matched by link and run label) when its header matches the current settings.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use super::{Row, Run, Settings, Truth};

/// File name of the journal inside the report's directory.
pub const FILE_NAME: &str = "rows.partial.jsonl";

/// What makes two runs of an experiment comparable: rows from one are valid in the other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Header {
    experiment: String,
    quick: bool,
    rate_cap_bps: u64,
    warmup_s: f64,
    flow_time_s: Option<f64>,
}

impl Header {
    fn new(experiment: &str, settings: &Settings) -> Self {
        Self {
            experiment: experiment.to_owned(),
            quick: settings.quick,
            rate_cap_bps: settings.rate_cap_bps,
            warmup_s: settings.run.warmup.as_secs_f64(),
            flow_time_s: settings.flow_time.map(|t| t.as_secs_f64()),
        }
    }
}

/// An open journal: rows carried over from an earlier attempt, and the file new ones go to.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
    earlier: Vec<Row>,
}

impl Journal {
    /// Starts the journal in `dir` (created if needed). With `resume`, the rows of an earlier
    /// journal there are kept for [`Journal::earlier_rows`] if its header matches; without,
    /// any earlier journal is replaced.
    pub fn open(
        dir: &Path,
        experiment: &str,
        settings: &Settings,
        resume: bool,
    ) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(FILE_NAME);
        let header = Header::new(experiment, settings);
        let earlier = if resume {
            read_earlier(&path, &header)?
        } else {
            Vec::new()
        };
        let mut file =
            File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        let mut journal_text = serde_json::to_string(&header)? + "\n";
        for row in &earlier {
            journal_text += &(serde_json::to_string(row)? + "\n");
        }
        file.write_all(journal_text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(Self {
            path,
            file,
            earlier,
        })
    }

    /// The rows an earlier attempt measured for `run` on `truth`, if it finished that run.
    pub fn earlier_rows(&self, truth: &Truth, run: &Run) -> Option<Vec<Row>> {
        let rows: Vec<Row> = self
            .earlier
            .iter()
            .filter(|r| &r.truth == truth && r.run == run.label)
            .cloned()
            .collect();
        (rows.len() == run.flows.len() && !rows.is_empty()).then_some(rows)
    }

    /// Appends the rows of one run (earlier ones are already in the file).
    pub fn record(&mut self, rows: &[Row]) -> anyhow::Result<()> {
        let mut text = String::new();
        for row in rows {
            text += &(serde_json::to_string(row)? + "\n");
        }
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.flush())
            .with_context(|| format!("writing {}", self.path.display()))
    }

    /// Removes the journal once the report is written.
    pub fn finish(self) -> anyhow::Result<()> {
        std::fs::remove_file(&self.path)
            .with_context(|| format!("removing {}", self.path.display()))
    }
}

/// Rows of the journal at `path`, if there is one and it was made with the same settings.
fn read_earlier(path: &Path, header: &Header) -> anyhow::Result<Vec<Row>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
    };
    let mut lines = BufReader::new(file).lines();
    let Some(first) = lines.next() else {
        return Ok(Vec::new());
    };
    let earlier: Header = serde_json::from_str(&first?)
        .with_context(|| format!("{}: the first line is not a journal header", path.display()))?;
    if &earlier != header {
        bail!(
            "{} was made with other settings ({earlier:?}); run without --resume to start over",
            path.display()
        );
    }
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let line = line?;
        // A run killed mid-write leaves a torn last line: everything before it is good.
        match serde_json::from_str::<Row>(&line) {
            Ok(row) => rows.push(row),
            Err(_) => {
                eprintln!(
                    "udt lab: ignoring {} from line {} on (incomplete)",
                    path.display(),
                    i + 2
                );
                break;
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use std::fs::OpenOptions;
    use std::time::Duration;

    use super::*;
    use crate::experiment::testing;
    use crate::flows::{FlowSpec, Implementation};

    /// A fresh directory for one test (removed by the test when it passes).
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("udt-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn run_of(label: &str, flows: usize) -> Run {
        let spec = FlowSpec::timed(Implementation::UdpBlast, Duration::from_secs(1));
        Run {
            label: label.to_owned(),
            flows: vec![spec; flows],
            params: Default::default(),
        }
    }

    fn row_for(label: &str) -> Row {
        testing::row((label, "UDT", "ours"), &[], (1000, 1.0), 100_000_000)
    }

    #[test]
    fn resumes_finished_runs_and_ignores_a_torn_line() {
        let dir = scratch("resume");
        let settings = testing::settings(true);
        let truth = row_for("a").truth;
        let mut journal = Journal::open(&dir, "x", &settings, false).unwrap();
        journal.record(&[row_for("a")]).unwrap();
        drop(journal);
        let mut file = OpenOptions::new()
            .append(true)
            .open(dir.join(FILE_NAME))
            .unwrap();
        file.write_all(b"{\"experiment\":\"x\",\"tru").unwrap();

        let journal = Journal::open(&dir, "x", &settings, true).unwrap();
        assert_eq!(
            journal.earlier_rows(&truth, &run_of("a", 1)).unwrap().len(),
            1
        );
        assert!(journal.earlier_rows(&truth, &run_of("b", 1)).is_none());
        // A run of two flows with one row recorded did not finish: it runs again.
        assert!(journal.earlier_rows(&truth, &run_of("a", 2)).is_none());
        // The rewritten journal holds the header and the good row, not the torn one.
        let text = std::fs::read_to_string(dir.join(FILE_NAME)).unwrap();
        assert_eq!(text.lines().count(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refuses_to_resume_other_settings_and_starts_over_without_resume() {
        let dir = scratch("settings");
        let truth = row_for("a").truth;
        let mut journal = Journal::open(&dir, "x", &testing::settings(true), false).unwrap();
        journal.record(&[row_for("a")]).unwrap();
        drop(journal);

        let full = testing::settings(false);
        let err = Journal::open(&dir, "x", &full, true).unwrap_err();
        assert!(format!("{err:#}").contains("without --resume"), "{err:#}");
        let journal = Journal::open(&dir, "x", &full, false).unwrap();
        assert!(journal.earlier_rows(&truth, &run_of("a", 1)).is_none());
        journal.finish().unwrap();
        assert!(!dir.join(FILE_NAME).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
