//! Running a set of flows: the servers, the clock, the clients, and turning their output
//! into [`FlowResult`]s.
//!
//! Each program's stdout is read line by line by a thread into a channel, its stderr kept
//! for error messages; a [`Running`] program is killed when dropped, so an error or a panic
//! anywhere leaves no process behind (and the lab's teardown would kill them anyway).
//! Programs whose protocol runs in user space start at [`USER_SPACE_NICE`].

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use super::{
    libudt, perf, steady_rate, tuned, utp, BufferSizes, FlowLimit, FlowResult, FlowSpec,
    Implementation, RunOptions, BASE_PORT,
};
use crate::{Lab, ADDR_A};

/// Tells a server's "listening" line.
type ReadyLine = fn(&str) -> bool;

/// How long a server gets to say it listens.
const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a server gets to finish after its client did: longer than a libudt 4.11
/// receiver takes to find its peer gone (more than 16 EXP expirations and 5 s of silence,
/// about 46 s). 4.11 sends its Shutdown once, so on a lossy path
/// it can be lost, and the server then waits that long; with 10 s, CI once lost a libudt
/// flow at 100 Mbit/s, 50 ms, 1% loss to "did not finish in time" (most likely this; the
/// same test passed in the runs before and after).
const SERVER_TAIL: Duration = Duration::from_secs(60);

/// The niceness of the processes of flows whose protocol runs in user space (ours, libudt,
/// uTP). Kernel TCP's protocol runs in softirq context, ahead of every process: its ACKs
/// and retransmissions go out on time however many processes wait for the CPU. A user-space
/// protocol's go out only when its process runs, and the fairness grid puts up to 108
/// processes on this machine's two CPUs: at nice 0 beside 50 kernel BBR flows, our flow's
/// receiver reported its ACKs up to 300-400 ms apart where it sends one every 10 ms, its
/// smoothed RTT read 150-560 ms where the TCP flows' read 111-127 ms. With its processes
/// at -10, the fairness grid's medians of three beside 50 bbr flows moved from 1.11, 0.53,
/// 0.68 of an equal share to 0.96-1.43, 0.91-0.98, 0.83-1.04 for 1, 2, 4 native flows (two
/// sittings; model: 0.09, 0.30, 0.09 to 0.17-0.29, 0.18-0.41, 0.13-0.17). On a transfer host of its own a UDT flow does not wait behind
/// a hundred processes; this gives it back what the kernel gives TCP. (The TCP flows' own
/// processes only fill and drain socket buffers holding seconds of their data.) Not
/// `SCHED_FIFO`: with its processes there, `model` took 3.7-10 times an equal share beside 50
/// bbr flows (three runs), and a real-time flow can also hold back the kernel's TCP work that
/// overflows into `ksoftirqd`, whose threads are ordinary processes.
const USER_SPACE_NICE: libc::c_int = -10;

/// A started program whose stdout lines arrive on a channel.
struct Running {
    name: String,
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
    stderr: Option<JoinHandle<String>>,
}

impl Running {
    fn spawn(mut cmd: Command, name: String) -> anyhow::Result<Self> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        let (tx, lines) = mpsc::channel();
        if let Some(out) = child.stdout.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let stderr = child.stderr.take().map(|mut err| {
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = err.read_to_string(&mut text);
                text
            })
        });
        Ok(Self {
            name,
            child,
            lines,
            seen: Vec::new(),
            stderr,
        })
    }

    /// Waits for a stdout line that satisfies `ready`.
    fn wait_line(&mut self, ready: ReadyLine, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let done = ready(&line);
                    self.seen.push(line);
                    if done {
                        return Ok(());
                    }
                }
                Err(RecvTimeoutError::Timeout) => bail!("{} did not start in time", self.name),
                Err(RecvTimeoutError::Disconnected) => {
                    let why = self.stderr_text();
                    bail!("{} exited: {why}", self.name)
                }
            }
        }
    }

    /// Waits for the program to exit (killing it at `deadline`) and returns all its stdout
    /// lines; an error if it had to be killed or failed.
    fn finish(mut self, deadline: Instant) -> anyhow::Result<Vec<String>> {
        let status = loop {
            if let Some(status) = self.child.try_wait()? {
                break status;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                bail!("{} did not finish in time: killed", self.name);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader thread ends at EOF, which follows the exit.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            self.seen.push(line);
        }
        if !status.success() {
            let why = self.stderr_text();
            bail!("{} failed ({status}): {why}", self.name);
        }
        Ok(std::mem::take(&mut self.seen))
    }

    fn stderr_text(&mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let text = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let text = text.trim();
        let tail = text.len().saturating_sub(600);
        text.get(tail..).unwrap_or(text).to_owned()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One flow between its server start and its result.
struct Prepared<'s> {
    spec: &'s FlowSpec,
    port: u16,
    buffers: BufferSizes,
    server: Running,
}

pub(super) fn run_set(
    lab: &Lab,
    flows: &[FlowSpec],
    options: &RunOptions,
) -> anyhow::Result<Vec<anyhow::Result<FlowResult>>> {
    let mut prepared = Vec::with_capacity(flows.len());
    for (i, spec) in flows.iter().enumerate() {
        let port = u16::try_from(i)
            .ok()
            .and_then(|i| BASE_PORT.checked_add(i))
            .context("too many flows in one set")?;
        let buffers = tuned::resolve(spec, lab.params());
        let (mut cmd, ready) = server_command(lab, spec, port, &buffers, options)?;
        prioritise(&mut cmd, &spec.implementation);
        let mut server = Running::spawn(cmd, format!("flow {i} server ({})", spec.implementation))?;
        server.wait_line(ready, READY_TIMEOUT)?;
        prepared.push(Prepared {
            spec,
            port,
            buffers,
            server,
        });
    }
    let t0 = Instant::now();
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = prepared
            .into_iter()
            .enumerate()
            .map(|(i, p)| s.spawn(move || run_one(lab, i, p, t0, options)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("flow thread panicked")))
            })
            .collect()
    });
    Ok(results)
}

fn server_command(
    lab: &Lab,
    spec: &FlowSpec,
    port: u16,
    buffers: &BufferSizes,
    options: &RunOptions,
) -> anyhow::Result<(Command, ReadyLine)> {
    let udt = &options.binaries.udt;
    Ok(match spec.implementation {
        Implementation::Libudt => {
            if spec.streams > 1 {
                bail!("libudt flows have one stream each: use several flows");
            }
            let peer = options.binaries.peer("udt_server")?;
            let cmd = libudt::server(&peer, lab.a(), (ADDR_A, port), buffers);
            (cmd, libudt::server_ready as ReadyLine)
        }
        Implementation::Utp => {
            let utp_perf = options.binaries.utp_perf()?;
            let cmd = utp::server(utp_perf, lab.a(), ADDR_A, port);
            (cmd, utp::server_ready as ReadyLine)
        }
        _ => (perf::server(udt, lab.a(), ADDR_A, port), perf::server_ready),
    })
}

/// Runs `cmd` at [`USER_SPACE_NICE`] if `implementation`'s protocol runs in user space.
/// Best effort: without the privilege to raise priority (the lab runs as root, so this is
/// not expected) the program runs at the lab's own niceness.
fn prioritise(cmd: &mut Command, implementation: &Implementation) {
    if !implementation.in_user_space() {
        return;
    }
    // SAFETY: the closure runs between fork and exec and makes one async-signal-safe
    // system call; threads the program starts inherit the niceness.
    unsafe {
        cmd.pre_exec(|| {
            libc::setpriority(libc::PRIO_PROCESS, 0, USER_SPACE_NICE);
            Ok(())
        });
    }
}

/// Starts flow `i`'s client at its offset and gathers both ends.
fn run_one(
    lab: &Lab,
    i: usize,
    p: Prepared<'_>,
    t0: Instant,
    options: &RunOptions,
) -> anyhow::Result<FlowResult> {
    let start = t0 + p.spec.start;
    std::thread::sleep(start.saturating_duration_since(Instant::now()));
    let expected = match p.spec.limit {
        FlowLimit::Duration(d) => d,
        // A file at a twentieth of the link rate: anything slower is a failure anyway.
        FlowLimit::Bytes(n) => {
            Duration::from_secs_f64(n as f64 * 8.0 / (lab.params().rate_bps as f64 / 20.0))
        }
    };
    let deadline = Instant::now() + expected + options.grace;
    let addr = (ADDR_A, p.port);
    let name = format!("flow {i} client ({})", p.spec.implementation);
    let mut client_cmd = match p.spec.implementation {
        Implementation::Libudt => {
            let peer = options.binaries.peer("udt_client")?;
            libudt::client(&peer, lab.b(), addr, p.spec, &p.buffers)
        }
        Implementation::Utp => {
            let utp_perf = options.binaries.utp_perf()?;
            utp::client(utp_perf, lab.b(), addr, p.spec, &p.buffers)?
        }
        _ => perf::client(&options.binaries.udt, lab.b(), addr, p.spec, &p.buffers),
    };
    prioritise(&mut client_cmd, &p.spec.implementation);
    let client = Running::spawn(client_cmd, name)?.finish(deadline)?;
    let server = p.server.finish(Instant::now() + SERVER_TAIL)?;
    let result = match p.spec.implementation {
        Implementation::Libudt => from_libudt(p.spec, &p.buffers, &server, &client, options),
        _ => from_perf(p.spec, &client.join("\n"), options),
    };
    result.with_context(|| format!("flow {i} ({})", p.spec.implementation))
}

fn from_perf(spec: &FlowSpec, stdout: &str, options: &RunOptions) -> anyhow::Result<FlowResult> {
    let r = perf::parse(stdout)?;
    let (series, interval_s) = (r.series(), r.interval_s());
    Ok(FlowResult {
        spec: spec.clone(),
        bytes: r.bytes,
        seconds: r.seconds,
        goodput_bps: r.goodput_bps,
        steady_goodput_bps: steady_rate(&series, &interval_s, options.warmup, r.goodput_bps),
        series,
        interval_s,
        sender_cpu_s: r.sender_cpu_seconds,
        receiver_cpu_s: r.receiver_cpu_seconds,
        rtt_ms: Some(r.rtt_ms).filter(|rtt| *rtt > 0.0),
        retransmissions: r.retransmitted_packets,
        losses: r.lost_packets,
        duplicates: r
            .duplicate_packets
            .filter(|_| matches!(spec.implementation, Implementation::Ours { .. })),
        udt: r.estimate(),
        actual_buffers: r.actual_buffers(),
    })
}

fn from_libudt(
    spec: &FlowSpec,
    buffers: &BufferSizes,
    server: &[String],
    client: &[String],
    options: &RunOptions,
) -> anyhow::Result<FlowResult> {
    let p = libudt::parse(server, client)?;
    let (r, s) = (&p.receiver, &p.sender);
    let goodput = if r.seconds > 0.0 {
        r.bytes as f64 * 8.0 / r.seconds
    } else {
        0.0
    };
    Ok(FlowResult {
        spec: spec.clone(),
        bytes: r.bytes,
        seconds: r.seconds,
        goodput_bps: goodput,
        steady_goodput_bps: steady_rate(&p.series, &p.interval_s, options.warmup, goodput),
        series: p.series.clone(),
        interval_s: p.interval_s.clone(),
        sender_cpu_s: s.cpu_user + s.cpu_sys,
        receiver_cpu_s: r.cpu_user + r.cpu_sys,
        rtt_ms: Some(s.rtt_ms).filter(|rtt| *rtt > 0.0),
        retransmissions: s.retrans,
        losses: p.losses(),
        duplicates: None,
        udt: Some(p.estimate()),
        actual_buffers: *buffers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::TcpCc;

    /// The niceness `implementation`'s programs start at: that of a `cut` started as
    /// the lab starts them, read from its `/proc/self/stat` (field 19).
    fn niceness_of(implementation: &Implementation) -> i32 {
        let mut cmd = Command::new("cut");
        cmd.args(["-d", " ", "-f", "19", "/proc/self/stat"]);
        prioritise(&mut cmd, implementation);
        let out = cmd.output().expect("running cut");
        assert!(out.status.success(), "cut failed: {out:?}");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("a niceness")
    }

    #[test]
    fn user_space_protocols_run_ahead_of_tcp_flows_processes() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: raising a priority needs root, as the lab does");
            return;
        }
        let ours = Implementation::Ours {
            cc: "model".to_string(),
        };
        for implementation in [ours, Implementation::Libudt, Implementation::Utp] {
            assert_eq!(
                niceness_of(&implementation),
                USER_SPACE_NICE,
                "{implementation}"
            );
        }
        let tcp = Implementation::Tcp { cc: TcpCc::Bbr };
        // SAFETY: getpriority has no preconditions; 0 is this process.
        let own = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        assert_eq!(niceness_of(&tcp), own);
    }
}
