//! How busy the machine was while a run's flows ran: [`HostWatch`] reads `/proc/stat` once a
//! second on a thread of its own and keeps each second's busy fraction of all CPUs, and the
//! share of their time the hypervisor took away (steal).
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
//!
//! Steal is time a virtual CPU was ready to run but the host ran something else: the lab's
//! forwarder then stalls whatever its priority. On a day the idle machine showed up to 13%
//! steal, the emulator held 0.835 of 1 Gbit/s (0.98 on a quiet day) and kernel CUBIC alone
//! at 0 ms moved 551 Mbit/s against 962 (BENCHMARKS, session 60), while the busy fraction,
//! which leaves steal out, read nothing unusual. Reports mark the runs over [`STOLEN`] too.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::experiment::stats::median;

/// A run whose median second kept the CPUs at least this busy is marked as host-bound.
pub const SATURATED: f64 = 0.9;
/// …and one whose median second lost at least this share of the CPUs' time to steal.
pub const STOLEN: f64 = 0.05;

/// How often the watch reads `/proc/stat`.
const PERIOD: Duration = Duration::from_secs(1);

/// The kernel's cumulative CPU time of all CPUs, in ticks: busy, all but steal, and steal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTimes {
    busy: u64,
    total: u64,
    steal: u64,
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
        let &[user, nice, system, idle, iowait, irq, softirq, steal] = fields.as_slice() else {
            return None;
        };
        let busy = [user, nice, system, irq, softirq]
            .iter()
            .try_fold(0u64, |a, &b| a.checked_add(b))?;
        let total = busy.checked_add(idle)?.checked_add(iowait)?;
        total.checked_add(steal)?;
        Some(Self { busy, total, steal })
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

    /// The share of all CPUs' time stolen from `self` to `later`; `None` if no time passed or
    /// the counters went backwards.
    pub fn steal_since(&self, later: &Self) -> Option<f64> {
        let total = later.total.checked_sub(self.total)?;
        let steal = later.steal.checked_sub(self.steal)?;
        let all = total.checked_add(steal)?;
        (all > 0).then(|| steal as f64 / all as f64)
    }
}

/// What a [`HostWatch`] saw: medians over the whole seconds of the busy fraction of all CPUs
/// ([`CpuTimes::busy_since`]) and of the share stolen ([`CpuTimes::steal_since`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostLoad {
    /// Busy fraction of all CPUs.
    pub busy: f64,
    /// Share of all CPUs' time stolen by the hypervisor.
    pub steal: f64,
}

/// Samples the machine's busy and stolen fractions every second until [`HostWatch::finish`]
/// (or drop).
#[derive(Debug)]
pub struct HostWatch {
    /// Dropping it stops the thread at once (its wait ends disconnected).
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<Vec<(f64, f64)>>>,
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

    /// Stops watching; the medians of the whole seconds seen, or `None` if there were none
    /// (a run under a second, or no `/proc/stat`).
    pub fn finish(mut self) -> Option<HostLoad> {
        self.stop.take();
        let seconds = self.thread.take()?.join().ok()?;
        let (busy, steal): (Vec<f64>, Vec<f64>) = seconds.into_iter().unzip();
        Some(HostLoad {
            busy: median(&busy)?,
            steal: median(&steal)?,
        })
    }
}

impl Drop for HostWatch {
    fn drop(&mut self) {
        self.stop.take();
    }
}

/// The watch's loop: one reading per [`PERIOD`] until `stopped` disconnects; each whole
/// second's busy and stolen fractions.
fn watch(stopped: &Receiver<()>) -> Vec<(f64, f64)> {
    let mut seconds = Vec::new();
    let mut last = CpuTimes::read();
    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(PERIOD) {
        let now = CpuTimes::read();
        if let Some((a, b)) = last.zip(now) {
            if let Some(both) = a.busy_since(&b).zip(a.steal_since(&b)) {
                seconds.push(both);
            }
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
        assert_eq!(t.steal, 7);
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
    fn stolen_share_between_two_readings() {
        let a = CpuTimes::parse(STAT).unwrap();
        // 80 ticks of work, 10 idle and 10 stolen: a tenth of the CPUs' time went to the
        // host, and the busy fraction counts the other 90 ticks only.
        let b = CpuTimes::parse("cpu  180 5 50 810 20 3 2 17 0 0\n").unwrap();
        assert_eq!(a.steal_since(&b), Some(0.1));
        let busy = a.busy_since(&b).unwrap();
        assert!((busy - 8.0 / 9.0).abs() < 1e-12, "{busy}");
        assert_eq!(a.steal_since(&a), None, "no time passed");
        assert_eq!(b.steal_since(&a), None, "backwards");
    }

    #[test]
    fn a_watch_over_a_busy_second_reads_this_machine() {
        let w = HostWatch::start();
        let until = std::time::Instant::now() + Duration::from_millis(1300);
        let mut x = 0u64;
        while std::time::Instant::now() < until {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let load = w.finish().expect("a reading after a second");
        // One of this machine's CPUs spun the whole second.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        assert!(load.busy >= 0.8 / cpus && load.busy <= 1.0, "{load:?}");
        assert!((0.0..=1.0).contains(&load.steal), "{load:?}");
    }
}
