//! [`Run`]: one end's half of a test once its data streams are open. One worker thread per
//! stream writes (sender) or reads (receiver) as fast as the transport lets it, counting
//! application bytes; the caller's thread samples every interval ([`Run::tick`]) and
//! collects the workers' endings from the [`Event`] channel it shares with the control
//! reader.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use udt::Bytes;

use super::control::Message;
use super::params::{Limit, TestParams};
use super::sample::{Sample, SideReport};
use super::stream::{is_timeout, DataStream, Probe};
use super::sys::CpuTime;

/// Size of each application write and read.
const CHUNK: usize = 128 * 1024;

/// Something the driving thread must handle.
// A handful of events per stream and interval: their size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Event {
    /// A worker finished its stream (or failed).
    Worker {
        /// Which stream.
        index: usize,
        /// When it finished.
        at: Instant,
        /// How.
        result: io::Result<()>,
    },
    /// A control message arrived, or the control connection failed.
    Control(anyhow::Result<Message>),
}

/// One end of a running test.
#[derive(Debug)]
pub(crate) struct Run {
    streams: Vec<Arc<DataStream>>,
    probes: Vec<Probe>,
    counters: Vec<Arc<AtomicU64>>,
    counted: Vec<u64>,
    workers: Vec<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    sender: bool,
    started: Instant,
    cpu_start: CpuTime,
    interval: Option<Duration>,
    next_tick: Option<Instant>,
    last_tick_s: f64,
    running: usize,
    last_finish: Option<Instant>,
}

impl Run {
    /// Starts the workers now: this end sends if `sender`, else receives.
    pub(crate) fn start(
        streams: Vec<DataStream>,
        params: &TestParams,
        sender: bool,
        events: &Sender<Event>,
    ) -> Self {
        let started = Instant::now();
        let cpu_start = CpuTime::now();
        let stop = Arc::new(AtomicBool::new(false));
        let interval =
            (params.interval_s > 0.0).then(|| Duration::from_secs_f64(params.interval_s));
        let deadline = match params.limit {
            Limit::Seconds(s) => Some(started + Duration::from_secs_f64(s)),
            Limit::Bytes(_) => None,
        };
        let streams: Vec<_> = streams.into_iter().map(Arc::new).collect();
        let counters: Vec<_> = streams
            .iter()
            .map(|_| Arc::new(AtomicU64::new(0)))
            .collect();
        let workers = (0..streams.len())
            .map(|index| {
                let job = Job {
                    index,
                    stream: streams[index].clone(),
                    bytes: counters[index].clone(),
                    stop: stop.clone(),
                    quota: params.stream_quota(index as u32),
                    deadline,
                };
                let events = events.clone();
                std::thread::spawn(move || job.run(sender, &events))
            })
            .collect();
        Self {
            probes: streams.iter().map(|_| Probe::default()).collect(),
            counted: vec![0; streams.len()],
            running: streams.len(),
            streams,
            counters,
            workers,
            stop,
            sender,
            started,
            cpu_start,
            interval,
            next_tick: interval.map(|i| started + i),
            last_tick_s: 0.0,
            last_finish: None,
        }
    }

    /// Waits for the next event until the next interval tick; `None` when the tick is due.
    pub(crate) fn wait(&self, events: &Receiver<Event>) -> anyhow::Result<Option<Event>> {
        let timeout = self
            .next_tick
            .filter(|_| self.running > 0)
            .map(|t| t.saturating_duration_since(Instant::now()));
        let event = match timeout {
            Some(t) => events.recv_timeout(t),
            None => events.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match event {
            Ok(e) => Ok(Some(e)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => {
                anyhow::bail!("internal error: event channel closed")
            }
        }
    }

    /// The interval that just ended, and the next tick scheduled.
    pub(crate) fn tick(&mut self) -> Sample {
        let now = Instant::now();
        if let (Some(next), Some(interval)) = (self.next_tick, self.interval) {
            self.next_tick = Some(next + interval);
        }
        self.sample_until(now)
    }

    fn sample_until(&mut self, now: Instant) -> Sample {
        let end_s = now.saturating_duration_since(self.started).as_secs_f64();
        let per_stream: Vec<Sample> = (0..self.streams.len())
            .map(|i| {
                let mut s = self.streams[i].sample(&mut self.probes[i]);
                let total = self.counters[i].load(Relaxed);
                s.bytes = total - self.counted[i];
                self.counted[i] = total;
                s
            })
            .collect();
        let sample = Sample::combine(self.last_tick_s, end_s, &per_stream);
        self.last_tick_s = end_s;
        sample
    }

    /// Records a worker's ending; `Ok(true)` once every worker has finished.
    pub(crate) fn worker_done(
        &mut self,
        index: usize,
        at: Instant,
        result: io::Result<()>,
    ) -> anyhow::Result<bool> {
        self.running = self.running.saturating_sub(1);
        self.last_finish = Some(self.last_finish.map_or(at, |t| t.max(at)));
        if let Err(e) = result {
            self.abort();
            let role = if self.sender { "sending" } else { "receiving" };
            return Err(anyhow::Error::new(e)
                .context(format!("data stream {} failed while {role}", index + 1)));
        }
        Ok(self.running == 0)
    }

    /// Makes the workers give up within one poll period.
    pub(crate) fn abort(&self) {
        self.stop.store(true, Relaxed);
    }

    /// After every worker finished: the last partial interval (if intervals are on and it
    /// is not empty) and this end's report. Closes the streams.
    pub(crate) fn finish(mut self, params: &TestParams) -> (Option<Sample>, SideReport) {
        self.abort();
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
        let end = self.last_finish.unwrap_or_else(Instant::now);
        let cpu_seconds = CpuTime::now().seconds_since(&self.cpu_start);
        let last = self
            .interval
            .map(|_| self.sample_until(end))
            .filter(|s| s.end_s - s.start_s > 1e-3 || s.bytes > 0);
        let seconds = end.saturating_duration_since(self.started).as_secs_f64();
        let totals: Vec<Sample> = self.streams.iter().map(|s| s.total_sample()).collect();
        let mut total = Sample::combine(0.0, seconds, &totals);
        total.bytes = self.counters.iter().map(|c| c.load(Relaxed)).sum();
        let report = SideReport {
            sender: self.sender,
            bytes: total.bytes,
            seconds,
            cpu_seconds,
            total,
            cc: self
                .streams
                .first()
                .map_or_else(|| params.cc_name(), |s| s.cc(params)),
            buffers: self
                .streams
                .first()
                .map(|s| s.buffers(params))
                .unwrap_or_default(),
        };
        for stream in self.streams.drain(..) {
            if let Ok(stream) = Arc::try_unwrap(stream) {
                stream.close();
            }
        }
        (last, report)
    }
}

/// What one worker thread does.
struct Job {
    index: usize,
    stream: Arc<DataStream>,
    bytes: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    quota: Option<u64>,
    deadline: Option<Instant>,
}

impl Job {
    fn run(self, sender: bool, events: &Sender<Event>) {
        let result = if sender { self.send() } else { self.receive() };
        let _ = events.send(Event::Worker {
            index: self.index,
            at: Instant::now(),
            result,
        });
    }

    fn send(&self) -> io::Result<()> {
        let chunk: Bytes = (0..CHUNK).map(|i| (i % 251) as u8).collect();
        let mut left = self.quota.unwrap_or(u64::MAX);
        while left > 0 && self.deadline.is_none_or(|d| Instant::now() < d) {
            self.check_stop()?;
            let want = usize::try_from(left).unwrap_or(CHUNK).min(CHUNK);
            match self.stream.write_bytes(&chunk.slice(..want)) {
                Ok(n) => {
                    self.bytes.fetch_add(n as u64, Relaxed);
                    left -= n as u64;
                }
                Err(e) if is_timeout(&e) => {}
                Err(e) => return Err(e),
            }
        }
        self.stream.finish_send(&self.stop)
    }

    fn receive(&self) -> io::Result<()> {
        let mut buf = vec![0u8; CHUNK];
        let mut chunks = Vec::new();
        loop {
            self.check_stop()?;
            match self.stream.read_to_drop(&mut buf, &mut chunks) {
                Ok(0) => break,
                Ok(n) => {
                    self.bytes.fetch_add(n as u64, Relaxed);
                }
                Err(e) if is_timeout(&e) => {}
                Err(e) => return Err(e),
            }
        }
        self.stream.finish_recv();
        Ok(())
    }

    fn check_stop(&self) -> io::Result<()> {
        if self.stop.load(Relaxed) {
            Err(io::Error::new(io::ErrorKind::Interrupted, "test stopped"))
        } else {
            Ok(())
        }
    }
}
