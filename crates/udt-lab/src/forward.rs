//! The forwarder: one thread per direction moving packets from one TUN to the other through a
//! `udt-netsim` [`Link`] driven by the real monotonic clock.
//!
//! Each thread loops: write every packet whose delivery time has come, read what the source TUN
//! holds (up to `BATCH` packets, each offered to the link with the time it was read), and when
//! there is nothing to do, sleep until the next delivery time or until a packet arrives
//! (`ppoll` on the source fd). The thread's timer slack is set to 1 ns.
//!
//! **Scheduling** (measured, see `docs/lab/calibration.md`): the threads ask for `SCHED_FIFO`
//! (priority 10; `UDT_LAB_REALTIME=0` disables it). Without it, a busy machine preempts the
//! forwarder for milliseconds, the emulated transmitter idles meanwhile (it only sees packets
//! once read) and 1 Gbit/s measured 0.87 of the setting.
//!
//! **Spinning:** `ppoll` wakes 50-100 µs late on this VM (more under load), so on a lightly
//! loaded link the thread spins the last stretch before a deadline instead of sleeping it:
//! twice the recent average oversleep, within `SPIN_MIN`..`SPIN_MAX`. It spins only when a
//! delivery is that close, never while the link is empty, and the spin loop keeps reading the
//! source so arrivals are not held up. Spinning is bounded twice over: at most `SPIN_BUDGET`
//! of each 10 ms (10% of a core), and not at all on a busy link (more than
//! `SPIN_BELOW_PACKETS` per 10 ms): there the thread is working most of the time anyway, and
//! spinning under `SCHED_FIFO` burns CPU that the kernel's real-time throttling (95% of a CPU)
//! takes back as 50 ms stalls, which cost 3.5% of the rate. On an idle link, packets are then
//! written within a few µs of their time even on a busy machine (a margin capped at 50 µs
//! left a mean lateness of 20-40 µs per direction).
//!
//! **Busy links: a delivery horizon.** On a busy link the thread does not spin and does not
//! aim at each packet's time: a packet every 12 µs (1 Gbit/s) against a wake-up 50-100 µs
//! late made every write late by about the oversleep (261 µs mean at 1 Gbit/s) and cost a
//! wake-up per handful of packets. There, each wake-up writes every packet due within the
//! next [`HORIZON`] (200 µs, up to 17 full-size packets at 1 Gbit/s) and then sleeps until
//! the next one is due less the average oversleep, so packets leave at most the horizon early
//! and the first of each train about on time. (Idle links keep exact timing, which the RTT
//! probes need.)
//!
//! Buffers come from a per-thread pool and go back to it when delivered or dropped
//! ([`Link::offer`] hands dropped ones back), so the steady state allocates nothing per packet.
//!
//! TUN has no batched read (no `recvmmsg`); multi-queue TUN would spread one direction over
//! several threads, which two shared cores cannot use, so one queue per device it is.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use udt_netsim::{Link, LinkStats};

/// Most packets read from the source in one go before checking deliveries again.
const BATCH: usize = 64;

/// Least spin margin before a deadline.
const SPIN_MIN: Duration = Duration::from_micros(5);

/// Most spin margin before a deadline: covers the oversleep of a loaded VM.
const SPIN_MAX: Duration = Duration::from_micros(300);

/// The oversleep assumed until measured: a typical figure on a VM.
const INITIAL_OVERSLEEP: Duration = Duration::from_micros(50);

/// Most spinning per stats period ([`STATS_EVERY`]): 10% of a core.
const SPIN_BUDGET: Duration = Duration::from_millis(1);

/// Spinning stops when more packets than this were delivered in the last stats period
/// ([`STATS_EVERY`]): 100 per 10 ms is 10k packets/s, 120 Mbit/s of full-size packets.
const SPIN_BELOW_PACKETS: u64 = 100;

/// On a busy link, each wake-up writes every packet due this far ahead (module doc).
pub const HORIZON: Duration = Duration::from_micros(200);

/// Longest sleep, so a stop request is noticed promptly.
const MAX_SLEEP: Duration = Duration::from_millis(20);

/// How often the shared stats snapshot is refreshed.
const STATS_EVERY: Duration = Duration::from_millis(10);

/// Buffers kept in the pool beyond this are freed (after a burst has drained).
const POOL_MAX: usize = 16_384;

/// A write later than this past its delivery time counts as late.
const LATE: Duration = Duration::from_micros(200);

/// Counters of one direction: the link model's, plus how faithfully real time followed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirectionStats {
    /// The link model's counters (pushed, delivered, drops by cause, bytes).
    pub link: LinkStats,
    /// Packets written more than 200 µs after their delivery time.
    pub late: u64,
    /// The largest lateness seen.
    pub max_late: Duration,
    /// Sum of lateness over all written packets, for the mean.
    pub total_late: Duration,
    /// Reads or writes that failed (other than `EAGAIN`).
    pub io_errors: u64,
    /// CPU time the forwarding thread has used.
    pub cpu: Duration,
    /// How late `ppoll` wakes up after its timeout, on average: the sleep precision here.
    pub oversleep: Duration,
    /// Time spent spinning before deliveries instead of sleeping (part of `cpu`).
    pub spin: Duration,
}

impl DirectionStats {
    /// Mean lateness of written packets.
    pub fn mean_late(&self) -> Duration {
        match u32::try_from(self.link.delivered) {
            Ok(0) => Duration::ZERO,
            Ok(n) => self.total_late / n,
            Err(_) => self.total_late / u32::MAX,
        }
    }
}

/// The two forwarding threads; stopped and joined on drop.
#[derive(Debug)]
pub struct Forwarder {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    stats: [Arc<Mutex<DirectionStats>>; 2],
}

impl Forwarder {
    /// Starts forwarding `tun_a` → `link_ab` → `tun_b` and `tun_b` → `link_ba` → `tun_a`.
    /// `mtu` sizes the buffers.
    pub fn start(tun_a: File, tun_b: File, links: [Link<()>; 2], mtu: u32) -> io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let stats = [Arc::default(), Arc::default()];
        let (tun_a, tun_b) = (Arc::new(tun_a), Arc::new(tun_b));
        let epoch = Instant::now();
        let mut threads = Vec::new();
        let [ab, ba] = links;
        let dirs = [(ab, &tun_a, &tun_b, "a->b"), (ba, &tun_b, &tun_a, "b->a")];
        for (i, (link, src, dst, name)) in dirs.into_iter().enumerate() {
            let mut dir = Direction {
                src: Arc::clone(src),
                dst: Arc::clone(dst),
                link,
                epoch,
                buf_len: mtu as usize + 64,
                pool: Vec::new(),
                oversleep_ns: INITIAL_OVERSLEEP.as_nanos() as u64,
                busy: false,
                spin_since: None,
                spun: Duration::ZERO,
                stats: DirectionStats::default(),
                shared: Arc::clone(&stats[i]),
            };
            let stop = Arc::clone(&stop);
            let handle = std::thread::Builder::new()
                .name(format!("udtlab {name}"))
                .spawn(move || dir.run(&stop))?;
            threads.push(handle);
        }
        Ok(Self {
            stop,
            threads,
            stats,
        })
    }

    /// A snapshot of the counters, `[a→b, b→a]`, at most 10 ms old.
    pub fn stats(&self) -> [DirectionStats; 2] {
        self.stats
            .each_ref()
            .map(|s| s.lock().map(|s| s.clone()).unwrap_or_default())
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// The state of one direction's thread.
struct Direction {
    src: Arc<File>,
    dst: Arc<File>,
    link: Link<()>,
    /// Time zero of the link's `Duration` clock.
    epoch: Instant,
    buf_len: usize,
    pool: Vec<Vec<u8>>,
    /// More than [`SPIN_BELOW_PACKETS`] were delivered in the last stats period: no
    /// spinning, and deliveries within [`HORIZON`] (see the module doc).
    busy: bool,
    /// When the current spin began (link time), if spinning.
    spin_since: Option<Duration>,
    /// Spinning in this stats period, closed spins only.
    spun: Duration,
    /// Average oversleep of `ppoll` timeouts, in nanoseconds (exponential, weight 1/16).
    oversleep_ns: u64,
    stats: DirectionStats,
    shared: Arc<Mutex<DirectionStats>>,
}

impl Direction {
    fn run(&mut self, stop: &AtomicBool) {
        set_timer_slack_ns(1);
        if realtime_wanted() {
            set_realtime(FORWARDER_PRIORITY);
        }
        let mut published = Duration::ZERO;
        let mut delivered_then = 0;
        while !stop.load(Ordering::Relaxed) {
            let delivered = self.deliver_due();
            let read = self.read_batch();
            let now = self.epoch.elapsed();
            if delivered > 0 || read > 0 {
                self.end_spin(now);
            }
            if now.saturating_sub(published) >= STATS_EVERY {
                self.end_spin(now);
                self.publish();
                self.spun = Duration::ZERO;
                published = now;
                // Spin only while the link is lightly loaded; see the module doc.
                let recent = self.stats.link.delivered - delivered_then;
                delivered_then = self.stats.link.delivered;
                self.busy = recent >= SPIN_BELOW_PACKETS;
            }
            if delivered == 0 && read == 0 {
                self.idle(now);
            }
        }
        self.publish();
    }

    /// The most spin margin now: [`SPIN_MAX`] on a lightly loaded link, none on a busy one.
    fn spin_max(&self) -> Duration {
        if self.busy {
            Duration::ZERO
        } else {
            SPIN_MAX
        }
    }

    /// How far ahead deliveries are written: [`HORIZON`] on a busy link, else nothing.
    fn horizon(&self) -> Duration {
        if self.busy {
            HORIZON
        } else {
            Duration::ZERO
        }
    }

    /// Writes every packet due by now (within the horizon on a busy link); returns how many.
    fn deliver_due(&mut self) -> usize {
        let mut n = 0;
        let mut now = self.epoch.elapsed();
        loop {
            let Some(d) = self.link.poll_delivery(now + self.horizon()) else {
                // Deliveries may have come due while writing.
                let later = self.epoch.elapsed();
                if self
                    .link
                    .next_deadline()
                    .is_some_and(|t| t <= later + self.horizon())
                {
                    now = later;
                    continue;
                }
                return n;
            };
            let late = now.saturating_sub(d.at);
            self.stats.total_late += late;
            self.stats.max_late = self.stats.max_late.max(late);
            self.stats.late += u64::from(late > LATE);
            if (&*self.dst).write(&d.data).is_err() {
                self.stats.io_errors += 1;
            }
            self.recycle(d.data);
            n += 1;
        }
    }

    /// Reads up to [`BATCH`] packets from the source into the link; returns how many.
    fn read_batch(&mut self) -> usize {
        for n in 0..BATCH {
            let mut buf = self.pool.pop().unwrap_or_default();
            buf.resize(self.buf_len, 0);
            match (&*self.src).read(&mut buf) {
                Ok(len) => {
                    buf.truncate(len);
                    let now = self.epoch.elapsed();
                    if let Err((_, buf)) = self.link.offer(now, (), buf) {
                        self.recycle(buf);
                    }
                }
                Err(err) => {
                    if err.kind() != io::ErrorKind::WouldBlock {
                        self.stats.io_errors += 1;
                    }
                    self.recycle(buf);
                    return n;
                }
            }
        }
        BATCH
    }

    /// Nothing to do: sleep until the next delivery (less the spin margin) or a packet
    /// arrives. Close to a deadline, return at once and let the loop spin (it keeps reading
    /// the source meanwhile), while the spin budget lasts.
    fn idle(&mut self, now: Duration) {
        let until = self
            .link
            .next_deadline()
            .map_or(MAX_SLEEP, |t| t.saturating_sub(now))
            .min(MAX_SLEEP);
        let spinning = self
            .spin_since
            .map_or(Duration::ZERO, |t| now.saturating_sub(t));
        let margin = if self.spun + spinning < SPIN_BUDGET {
            Duration::from_nanos(2 * self.oversleep_ns)
                .max(SPIN_MIN)
                .min(self.spin_max())
        } else {
            Duration::ZERO
        };
        // A busy link writes ahead, so it can wake as late as the deadline itself: aim the
        // wake-up that much early (see the module doc).
        let margin = margin.max(Duration::from_nanos(self.oversleep_ns).min(self.horizon()));
        if until <= margin && !self.busy {
            self.spin_since.get_or_insert(now);
            std::hint::spin_loop();
            return;
        }
        self.end_spin(now);
        let timeout = until.saturating_sub(margin);
        if timeout.is_zero() {
            return;
        }
        let start = Instant::now();
        if !wait_readable(self.src.as_raw_fd(), timeout) {
            let over = start.elapsed().saturating_sub(timeout).as_nanos();
            let over = u64::try_from(over).unwrap_or(u64::MAX).min(1_000_000);
            self.oversleep_ns = (self.oversleep_ns * 15 + over) / 16;
        }
    }

    /// Closes the current spin, if any, into the period's and the total spin time.
    fn end_spin(&mut self, now: Duration) {
        if let Some(since) = self.spin_since.take() {
            let spun = now.saturating_sub(since);
            self.spun += spun;
            self.stats.spin += spun;
        }
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        if self.pool.len() < POOL_MAX {
            self.pool.push(buf);
        }
    }

    fn publish(&mut self) {
        self.stats.link = self.link.stats().clone();
        self.stats.cpu = thread_cpu_time();
        self.stats.oversleep = Duration::from_nanos(self.oversleep_ns);
        if let Ok(mut shared) = self.shared.lock() {
            shared.clone_from(&self.stats);
        }
    }
}

/// Whether to ask for real-time scheduling: yes unless `UDT_LAB_REALTIME=0`.
fn realtime_wanted() -> bool {
    std::env::var_os("UDT_LAB_REALTIME").is_none_or(|v| v != "0")
}

/// The forwarder's `SCHED_FIFO` priority: low, and above the probes'
/// ([`probe::echo`](crate::probe::echo)), so that a probe's send wakes the forwarder at once
/// instead of waiting for the probe to block.
pub(crate) const FORWARDER_PRIORITY: i32 = 10;

/// Puts the calling thread in `SCHED_FIFO` at a low real-time `priority`, so builds and other
/// busy processes on the machine do not preempt the forwarder for milliseconds at a time:
/// a stalled forwarder leaves the emulated transmitter idle (it sees packets only when it
/// reads them), and then reads a burst that overflows the queue. The thread sleeps whenever
/// it is idle, and the kernel's real-time throttling (95% of a CPU by default) bounds it
/// anyway. Failure (no `CAP_SYS_NICE`) leaves the normal policy.
pub(crate) fn set_realtime(priority: i32) {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
}

/// Sleeps until `fd` is readable or `timeout` has passed, with nanosecond resolution; true if
/// it became readable (or the wait was interrupted), false on timeout.
fn wait_readable(fd: i32, timeout: Duration) -> bool {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: libc::c_long::from(timeout.subsec_nanos() as i32),
    };
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, a valid timespec, no signal mask.
    unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) != 0 }
}

/// CPU time used by the calling thread.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec to a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Sets the calling thread's timer slack: the default 50 µs would make every sleep that late.
pub(crate) fn set_timer_slack_ns(ns: libc::c_ulong) {
    // SAFETY: PR_SET_TIMERSLACK takes one integer and affects only the calling thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns) };
}
