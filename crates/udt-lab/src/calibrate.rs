//! How fast the emulator is here: for each candidate rate, a fresh lab, an idle RTT probe and a
//! UDP blast at 10% above the rate; the highest rate whose measured throughput stays within
//! 3% of the setting is the one experiments may use. The report is Markdown
//! (`docs/lab/calibration.md`).
//!
//! The probes run in this process beside the forwarder, as the experiments' endpoints will, so
//! the figure includes the CPU they take from the two forwarding threads.
//!
//! A blast shows the emulator can move the packets; a real flow also needs its ACKs carried
//! back in time and both ends' CPU beside the forwarder. So when the flows' binaries are at
//! hand, each rate also runs one kernel TCP BBR flow (tuned buffers) and one of ours
//! (`model`, default buffers) alone, and reports their steady goodput over the link's
//! payload capacity: a rate experiments may use should show both at 0.97 or more.

use std::fmt::Write as _;
use std::time::Duration;

use crate::flows::{
    self, payload_capacity_bps, Buffers, FlowSpec, Implementation, RunOptions, TcpCc,
};
use crate::host::HostWatch;
use crate::params::{format_rate, LinkParams};
use crate::probe::{self, BlastSpec};
use crate::Lab;

/// Share of the payload capacity a real flow must keep for the rate to be usable.
pub const FLOW_SHARE: f64 = 0.97;

/// Tolerance on the measured rate for a rate to count as sustained.
pub const RATE_TOLERANCE: f64 = 0.03;

/// Offered load relative to the link rate, so the queue never runs dry.
pub const OVERLOAD: f64 = 1.1;

/// Payload of the blast datagrams: 1500-byte IP packets, the TUN MTU.
const PAYLOAD: usize = 1472;

/// One candidate rate, measured `runs` times; the figures are medians over the runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationRow {
    /// The link rate set, bit/s.
    pub rate_bps: u64,
    /// Median measured receive rate on the wire, bit/s.
    pub measured_bps: f64,
    /// Lowest rate the blast sender achieved over the runs, bit/s.
    pub offered_bps: f64,
    /// Median idle RTT through the emulator ([`probe::echo_rtts`]: kernel-stamped, the
    /// echo's turnaround left out).
    pub idle_rtt: Duration,
    /// Median over runs of the mean lateness of forwarded packets (both directions).
    pub mean_late: Duration,
    /// Largest lateness over all runs.
    pub max_late: Duration,
    /// Median CPU share of the busy forwarding thread during a blast (1.0 = one core).
    pub forwarder_cpu: f64,
    /// Packets the blast lost beyond the link's own drop-tail (TUN queue or socket drops),
    /// summed over the runs.
    pub unexplained_loss: u64,
}

impl CalibrationRow {
    /// Measured rate over set rate.
    pub fn ratio(&self) -> f64 {
        self.measured_bps / self.rate_bps as f64
    }

    /// Whether the measured rate is within [`RATE_TOLERANCE`] of the setting.
    pub fn sustained(&self) -> bool {
        (self.ratio() - 1.0).abs() <= RATE_TOLERANCE
    }

    /// Whether the sender failed to offer more than the link rate in some run, so that the
    /// row measures the sender rather than the emulator.
    pub fn sender_limited(&self) -> bool {
        self.offered_bps < self.rate_bps as f64
    }
}

/// A whole calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The RTT of every link tried.
    pub rtt: Duration,
    /// Length of each blast.
    pub duration: Duration,
    /// Runs per rate.
    pub runs: usize,
    /// One row per rate, in the order tried.
    pub rows: Vec<CalibrationRow>,
    /// Real flows through the emulator, per rate and implementation (empty when not run).
    pub flows: Vec<FlowCheck>,
    /// The share of the CPUs' time the hypervisor took while it ran (steal, the median
    /// second; [`crate::host`]), if it could be read: a forwarder on a virtual CPU that the
    /// host takes away stalls whatever its priority.
    pub steal: Option<f64>,
}

/// One implementation's flows at one rate: medians over the runs.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowCheck {
    /// The link rate set, bit/s.
    pub rate_bps: u64,
    /// The implementation's label (`kernel TCP bbr`).
    pub implementation: String,
    /// Its protocol, for the payload capacity.
    pub protocol: String,
    /// Median steady goodput, payload bit/s; `None` when every run failed.
    pub goodput_bps: Option<f64>,
    /// Runs that failed, with the first error.
    pub failures: Vec<String>,
}

impl FlowCheck {
    /// Median goodput over the link's payload capacity for the protocol.
    pub fn share(&self) -> Option<f64> {
        Some(self.goodput_bps? / payload_capacity_bps(&self.protocol, self.rate_bps))
    }

    /// Whether the flows kept [`FLOW_SHARE`] of capacity.
    pub fn held(&self) -> bool {
        self.share().is_some_and(|s| s >= FLOW_SHARE)
    }
}

impl Calibration {
    /// The highest rate that held within tolerance such that every lower rate tried held
    /// too (a rate that passes above a failing one is taken as luck), if any.
    pub fn sustained_bps(&self) -> Option<u64> {
        let mut rows: Vec<&CalibrationRow> = self.rows.iter().collect();
        rows.sort_by_key(|r| r.rate_bps);
        rows.iter()
            .take_while(|r| r.sustained())
            .map(|r| r.rate_bps)
            .last()
    }

    /// The report, with `command` (the one that produced it) in it.
    pub fn to_markdown(&self, command: &str) -> String {
        let mut md = String::new();
        let _ = writeln!(md, "# Lab calibration\n");
        let _ = writeln!(md, "Made by `{command}`.\n");
        let stolen = self.steal.map_or(String::new(), |s| {
            format!(
                ", {:.0}% of the CPUs' time stolen by the hypervisor (the median second)",
                s * 100.0
            )
        });
        let _ = writeln!(md, "Machine: {}{stolen}.\n", machine());
        let _ = writeln!(
            md,
            "Each rate: a fresh lab at RTT {:?}, 20 idle UDP pings (the idle RTT is the median, \
             timed by the kernel's receive stamps less the echo's turnaround: the emulated path \
             without the probes' wake-ups), then {} run(s) of a {:?} UDP \
             blast of 1500-byte packets at {:.0}% of the rate from b to a; the rate is counted at \
             the receiver after a 300 ms warmup. Medians over runs. Lateness is how long after \
             its scheduled time the forwarder wrote a packet; forwarder CPU is the busy direction's \
             thread, in percent of one core.\n",
            self.rtt,
            self.runs,
            self.duration,
            OVERLOAD * 100.0
        );
        let _ = writeln!(
            md,
            "| rate | offered (min) | measured | ratio | idle RTT | mean late | max late | forwarder CPU | unexplained loss | sustained |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|");
        for r in &self.rows {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.3} | {:.2} ms | {} µs | {:.2} ms | {:.0}% | {} | {} |",
                format_rate(r.rate_bps),
                format_rate(r.offered_bps as u64),
                format_rate(r.measured_bps as u64),
                r.ratio(),
                r.idle_rtt.as_secs_f64() * 1e3,
                r.mean_late.as_micros(),
                r.max_late.as_secs_f64() * 1e3,
                r.forwarder_cpu * 100.0,
                r.unexplained_loss,
                if r.sustained() {
                    "yes"
                } else if r.sender_limited() {
                    "no (sender-limited)"
                } else {
                    "no"
                }
            );
        }
        if !self.flows.is_empty() {
            self.flows_markdown(&mut md);
        }
        let verdict = match self.sustained_bps() {
            Some(bps) => format!(
                "**Highest sustained rate: {}** (it and every lower rate tried measured within \
                 {:.0}% of the setting).",
                format_rate(bps),
                RATE_TOLERANCE * 100.0
            ),
            None => "**No rate tried was sustained.**".to_owned(),
        };
        let _ = writeln!(md, "\n{verdict}");
        if !self.flows.is_empty() {
            let flows = match self.flows_held_bps() {
                Some(bps) => format!(
                    "**Highest rate real flows held: {}** (at it and every lower rate tried, \
                     every flow kept {:.0}% of its payload capacity).",
                    format_rate(bps),
                    FLOW_SHARE * 100.0
                ),
                None => "**Real flows held no rate tried.**".to_owned(),
            };
            let _ = writeln!(md, "\n{flows}");
        }
        md
    }

    /// The highest rate at which every real flow held, such that every lower rate held too.
    pub fn flows_held_bps(&self) -> Option<u64> {
        let mut rates: Vec<u64> = self.flows.iter().map(|f| f.rate_bps).collect();
        rates.sort_unstable();
        rates.dedup();
        rates
            .into_iter()
            .take_while(|&r| {
                self.flows
                    .iter()
                    .filter(|f| f.rate_bps == r)
                    .all(FlowCheck::held)
            })
            .last()
    }

    /// The real flows' table.
    fn flows_markdown(&self, md: &mut String) {
        let _ = writeln!(
            md,
            "\nReal flows: each alone on a fresh lab at the same RTT, {} run(s) of {:?} each; \
             steady goodput (the first second left out), median over runs, over the link's \
             payload capacity (1448/1500 of the rate for TCP, 1456/1500 for UDT). A rate is \
             fit for experiments when both keep {:.0}% or more.\n",
            self.runs,
            self.duration,
            FLOW_SHARE * 100.0
        );
        let _ = writeln!(md, "| rate | flow | goodput | share of capacity | held |");
        let _ = writeln!(md, "|---|---|---|---|---|");
        for f in &self.flows {
            let goodput = f
                .goodput_bps
                .map_or("failed".to_owned(), |g| format_rate(g as u64));
            let share = f.share().map_or("-".to_owned(), |s| format!("{s:.3}"));
            let held = if f.held() { "yes" } else { "no" };
            let failures = if f.failures.is_empty() {
                String::new()
            } else {
                format!(" ({} run(s) failed: {})", f.failures.len(), f.failures[0])
            };
            let _ = writeln!(
                md,
                "| {} | {} | {goodput} | {share} | {held}{failures} |",
                format_rate(f.rate_bps),
                f.implementation
            );
        }
    }
}

/// Measures each of `rates` (bit/s) at `rtt`, `runs` blasts of `duration` each, printing a
/// line per run to stderr; with `flows`, also [`FlowCheck`]s of real flows that long
/// (plus the warm-up).
pub fn calibrate(
    rates: &[u64],
    rtt: Duration,
    duration: Duration,
    runs: usize,
    flows: Option<&RunOptions>,
) -> anyhow::Result<Calibration> {
    let runs = runs.max(1);
    let mut rows = Vec::new();
    let mut checks = Vec::new();
    let host = HostWatch::start();
    for &rate in rates {
        rows.push(measure_rate(rate, rtt, duration, runs)?);
        if let Some(options) = flows {
            for implementation in flow_implementations() {
                checks.push(check_flow(
                    rate,
                    rtt,
                    duration,
                    runs,
                    &implementation,
                    options,
                )?);
            }
        }
    }
    Ok(Calibration {
        rtt,
        duration,
        runs,
        rows,
        flows: checks,
        steal: host.finish().map(|load| load.steal),
    })
}

/// The flows a calibration runs: the strongest kernel TCP with its buffers tuned, and our
/// default between our peers.
fn flow_implementations() -> [(Implementation, Buffers); 2] {
    [
        (Implementation::Tcp { cc: TcpCc::Bbr }, Buffers::Tuned),
        (Implementation::ours("model"), Buffers::Default),
    ]
}

/// `runs` flows of `implementation` alone, each on a fresh lab.
fn check_flow(
    rate: u64,
    rtt: Duration,
    duration: Duration,
    runs: usize,
    (implementation, buffers): &(Implementation, Buffers),
    options: &RunOptions,
) -> anyhow::Result<FlowCheck> {
    let spec =
        FlowSpec::timed(implementation.clone(), duration + options.warmup).with_buffers(*buffers);
    let (mut goodputs, mut failures) = (Vec::new(), Vec::new());
    for run in 0..runs {
        let lab = Lab::start(LinkParams::new(rate, rtt))?;
        let result = flows::run_flows(&lab, std::slice::from_ref(&spec), options)?
            .pop()
            .unwrap_or_else(|| Err(anyhow::anyhow!("no result")));
        match result {
            Ok(r) => {
                eprintln!(
                    "udt lab calibrate: {} run {}: {implementation}: {} steady, {} retransmissions",
                    format_rate(rate),
                    run + 1,
                    format_rate(r.steady_goodput_bps as u64),
                    r.retransmissions
                );
                goodputs.push(r.steady_goodput_bps);
            }
            Err(e) => failures.push(format!("{e:#}")),
        }
    }
    goodputs.sort_by(f64::total_cmp);
    Ok(FlowCheck {
        rate_bps: rate,
        implementation: implementation.label(),
        protocol: implementation.protocol().to_owned(),
        goodput_bps: goodputs.get(goodputs.len() / 2).copied(),
        failures,
    })
}

fn measure_rate(
    rate: u64,
    rtt: Duration,
    duration: Duration,
    runs: usize,
) -> anyhow::Result<CalibrationRow> {
    let lab = Lab::start(LinkParams::new(rate, rtt))?;
    let idle_rtt = probe::median(&probe::echo_rtts(&lab, 20, Duration::from_millis(5))?);
    drop(lab);
    let (mut measured, mut late) = (Vec::new(), Vec::new());
    let (mut max_late, mut unexplained) = (Duration::ZERO, 0);
    let mut offered = f64::INFINITY;
    let mut cpu = Vec::new();
    for run in 0..runs {
        let lab = Lab::start(LinkParams::new(rate, rtt))?;
        let spec = BlastSpec::for_duration(PAYLOAD, (rate as f64 * OVERLOAD) as u64, duration);
        let started = std::time::Instant::now();
        let report = probe::blast(&lab, &spec)?;
        let elapsed = started.elapsed();
        let [ab, ba] = lab.stats();
        let stats = ba; // the blast goes b -> a
        let link_drops = stats.link.dropped();
        let intake_drops = lab.intake_drops().map_or("?".into(), |d| d[1].to_string());
        unexplained += report
            .sent
            .saturating_sub(report.received)
            .saturating_sub(link_drops);
        late.push(stats.mean_late());
        max_late = max_late.max(stats.max_late).max(ab.max_late);
        eprintln!(
            "udt lab calibrate: {} run {}: offered {}, measured {} ({:.3}), sent {} received {} link drops {} intake drops {} mean late {:?} max late {:?} forwarder cpu {:?} oversleep {:?}",
            format_rate(rate),
            run + 1,
            format_rate(report.offered_bps as u64),
            format_rate(report.wire_bps as u64),
            report.wire_bps / rate as f64,
            report.sent,
            report.received,
            link_drops,
            intake_drops,
            stats.mean_late(),
            stats.max_late,
            stats.cpu,
            stats.oversleep
        );
        measured.push(report.wire_bps);
        offered = offered.min(report.offered_bps);
        cpu.push(stats.cpu.as_secs_f64() / elapsed.as_secs_f64());
    }
    measured.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    Ok(CalibrationRow {
        rate_bps: rate,
        measured_bps: measured[measured.len() / 2],
        offered_bps: offered,
        forwarder_cpu: cpu[cpu.len() / 2],
        idle_rtt,
        mean_late: probe::median(&late),
        max_late,
        unexplained_loss: unexplained,
    })
}

/// CPU count, model and load average, so a reader can judge the figures.
fn machine() -> String {
    use crate::experiment::report;
    format!(
        "{}, load average {} at the end",
        report::machine(),
        report::load_average()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rate_bps: u64, measured_bps: f64) -> CalibrationRow {
        CalibrationRow {
            rate_bps,
            measured_bps,
            offered_bps: rate_bps as f64 * OVERLOAD,
            idle_rtt: Duration::from_millis(10),
            mean_late: Duration::ZERO,
            max_late: Duration::ZERO,
            forwarder_cpu: 0.5,
            unexplained_loss: 0,
        }
    }

    #[test]
    fn sustained_rate_needs_every_lower_rate_to_hold() {
        let mut c = Calibration {
            rtt: Duration::from_millis(10),
            duration: Duration::from_secs(3),
            runs: 1,
            rows: vec![
                row(100, 100.0),
                row(500, 300.0),
                row(200, 199.0),
                row(1000, 999.0),
            ],
            flows: Vec::new(),
            steal: Some(0.13),
        };
        assert_eq!(c.sustained_bps(), Some(200));
        let md = c.to_markdown("udt lab calibrate");
        assert!(md.contains("Highest sustained rate: 200 bit/s"), "{md}");
        assert!(
            md.contains("13% of the CPUs' time stolen by the hypervisor"),
            "{md}"
        );
        c.rows[0].measured_bps = 50.0;
        assert_eq!(c.sustained_bps(), None);
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;

    #[test]
    fn a_flow_holds_at_ninety_seven_percent_of_its_payload_capacity() {
        let check = |protocol: &str, goodput: Option<f64>| FlowCheck {
            rate_bps: 1_000_000_000,
            implementation: "x".into(),
            protocol: protocol.into(),
            goodput_bps: goodput,
            failures: Vec::new(),
        };
        // TCP's capacity is 965.3 Mbit/s, UDT's 970.7.
        assert!(check("TCP", Some(940e6)).held());
        assert!(!check("UDT", Some(940e6)).held());
        assert!(check("UDT", Some(942e6)).held());
        assert!(!check("UDT", None).held());
        let c = Calibration {
            rtt: Duration::from_millis(10),
            duration: Duration::from_secs(3),
            runs: 1,
            rows: Vec::new(),
            flows: vec![check("TCP", Some(940e6)), check("UDT", None)],
            steal: None,
        };
        let md = c.to_markdown("udt lab calibrate");
        assert!(
            md.contains("| 1 Gbit/s | x | 940 Mbit/s | 0.974 | yes |"),
            "{md}"
        );
        assert!(md.contains("| failed | - | no |"), "{md}");
        assert_eq!(c.flows_held_bps(), None, "one flow failed at the only rate");
        let held = Calibration {
            flows: vec![check("TCP", Some(940e6)), check("UDT", Some(950e6))],
            ..c
        };
        assert_eq!(held.flows_held_bps(), Some(1_000_000_000));
        assert!(held
            .to_markdown("x")
            .contains("Highest rate real flows held: 1 Gbit/s"));
    }
}
