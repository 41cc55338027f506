//! How busy the machine was while a run's flows ran: [`HostWatch`] reads `/proc/stat` once a
//! second on a thread of its own and keeps each second's busy fraction of all CPUs.
//!
//! Why: the emulator, the flows and the kernel's network stack share this machine's CPUs,
//! and when they run out the figures measure the scheduler instead of the protocols. The
//! forwarding threads run in real time (`forward.rs`), and the kernel's TCP receive path runs
//! inside their writes to the TUN device, so kernel TCP keeps its pace while user-space
//! protocols (ours, libudt, uTP) wait for a CPU. With 51 kernel BBR flows at 1 Gbit/s the two
//! CPUs were 96-97% busy (the forwarder alone 1.7-1.75 CPUs), and a BBR flow whose processes
//! ran in `SCHED_FIFO` took 5.8 times an equal share where, like the others, it took about
//! one. At 200 Mbit/s the same run kept the machine 55% busy. Reports mark the runs over
//! [`SATURATED`].
//!
//! The median of the seconds, not the mean over the run: setting up 51 flows and waiting out
//! their servers' tails takes seconds of a nearly idle machine, which a mean would average
//! in. The kernel counts busy time by its tick (idle time it measures exactly), which misses
//! threads that sleep between ticks: over one 8 s flow at 1 Gbit/s the tick fields summed to
//! 2.23 CPU-s against getrusage's 2.47 (BENCHMARKS, session 28), so a second tends to read a
//! little less busy than it was, and the mark to leave a borderline run unmarked.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::experiment::stats::median;

/// A run whose median second kept the CPUs at least this busy is marked as host-bound.
pub const SATURATED: f64 = 0.9;

/// How often the watch reads `/proc/stat`.
const PERIOD: Duration = Duration::from_secs(1);

/// The kernel's cumulative CPU time of all CPUs, in ticks: busy and all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTimes {
    busy: u64,
    total: u64,
}

impl CpuTimes {
    /// Parses the aggregate `cpu` line of `/proc/stat` (user nice system idle iowait irq
    /// softirq steal ...); idle and iowait count as idle, steal as neither. `None` when the
    /// line is missing or malformed.
    pub fn parse(proc_stat: &str) -> Option<Self> {
        let line = proc_stat.lines().find(|l| l.starts_with("cpu "))?;
        let fields: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .take(8)
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        let &[user, nice, system, idle, iowait, irq, softirq, _steal] = fields.as_slice() else {
            return None;
        };
        let busy = [user, nice, system, irq, softirq]
            .iter()
            .try_fold(0u64, |a, &b| a.checked_add(b))?;
        let total = busy.checked_add(idle)?.checked_add(iowait)?;
        Some(Self { busy, total })
    }

    /// Reads `/proc/stat`.
    pub fn read() -> Option<Self> {
        Self::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// The busy fraction of all CPUs from `self` to `later`; `None` if no time passed or the
    /// counters went backwards.
    pub fn busy_since(&self, later: &Self) -> Option<f64> {
        let total = later.total.checked_sub(self.total)?;
        let busy = later.busy.checked_sub(self.busy)?;
        (total > 0).then(|| (busy as f64 / total as f64).min(1.0))
    }
}

/// Samples the machine's busy fraction every second until [`HostWatch::finish`] (or drop).
#[derive(Debug)]
pub struct HostWatch {
    /// Dropping it stops the thread at once (its wait ends disconnected).
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<Vec<f64>>>,
}

impl HostWatch {
    /// Starts watching.
    pub fn start() -> Self {
        let (stop, stopped) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("host-watch".into())
            .spawn(move || watch(&stopped))
            .ok();
        Self {
            stop: Some(stop),
            thread,
        }
    }

    /// Stops watching; the median busy fraction of the whole seconds seen, or `None` if
    /// there were none (a run under a second, or no `/proc/stat`).
    pub fn finish(mut self) -> Option<f64> {
        self.stop.take();
        median(&self.thread.take()?.join().ok()?)
    }
}

impl Drop for HostWatch {
    fn drop(&mut self) {
        self.stop.take();
    }
}

/// The watch's loop: one reading per [`PERIOD`] until `stopped` disconnects; each whole
/// second's busy fraction.
fn watch(stopped: &Receiver<()>) -> Vec<f64> {
    let mut seconds = Vec::new();
    let mut last = CpuTimes::read();
    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(PERIOD) {
        let now = CpuTimes::read();
        if let Some(f) = last.zip(now).and_then(|(a, b)| a.busy_since(&b)) {
            seconds.push(f);
        }
        last = now;
    }
    seconds
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  100 5 50 800 20 3 2 7 0 0\ncpu0 50 2 25 400 10 1 1 3 0 0\nintr 1\n";

    #[test]
    fn the_aggregate_line_counts_busy_and_idle_time() {
        let t = CpuTimes::parse(STAT).unwrap();
        assert_eq!(t.busy, 100 + 5 + 50 + 3 + 2);
        assert_eq!(t.total, 160 + 800 + 20);
    }

    #[test]
    fn malformed_or_missing_lines_are_none() {
        assert_eq!(CpuTimes::parse("cpu0 1 2 3 4 5 6 7 8\n"), None);
        assert_eq!(CpuTimes::parse("cpu  1 2 x 4 5 6 7 8\n"), None);
        assert_eq!(CpuTimes::parse("cpu  1 2 3\n"), None);
        let huge = format!("cpu  {} 1 0 0 0 0 0 0\n", u64::MAX);
        assert_eq!(CpuTimes::parse(&huge), None);
    }

    #[test]
    fn busy_fraction_between_two_readings() {
        let a = CpuTimes::parse(STAT).unwrap();
        let b = CpuTimes::parse("cpu  190 5 50 810 20 3 2 7 0 0\n").unwrap();
        assert_eq!(a.busy_since(&b), Some(0.9));
        assert_eq!(a.busy_since(&a), None, "no time passed");
        assert_eq!(b.busy_since(&a), None, "backwards");
    }

    #[test]
    fn a_watch_over_a_busy_second_reads_this_machine() {
        let w = HostWatch::start();
        let until = std::time::Instant::now() + Duration::from_millis(1300);
        let mut x = 0u64;
        while std::time::Instant::now() < until {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let busy = w.finish().expect("a reading after a second");
        // One of this machine's CPUs spun the whole second.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        assert!(busy >= 0.8 / cpus && busy <= 1.0, "{busy}");
    }
}
