//! Flows of `udt perf` (ours and kernel TCP): the two command lines, and reading the
//! client's `--json` report.
//!
//! The report's types live in `udt-cli`, which depends on this crate, so the fields used
//! here are mirrored in [`PerfReport`] (unknown fields ignored, missing ones defaulted: an
//! older or newer `udt` still parses).

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::Command;

use anyhow::Context;
use serde::Deserialize;

use super::{BufferSizes, FlowLimit, FlowSpec, Implementation, UdtEstimate};
use crate::Namespace;

/// The subset of `udt perf --json` the lab reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(super) struct PerfReport {
    pub bytes: u64,
    pub seconds: f64,
    pub goodput_bps: f64,
    pub rtt_ms: f64,
    pub retransmitted_packets: u64,
    pub lost_packets: u64,
    /// `None` from a `udt` that does not report them.
    pub duplicate_packets: Option<u64>,
    pub sender_cpu_seconds: f64,
    pub receiver_cpu_seconds: f64,
    pub udt: Option<PerfUdt>,
    pub sender_buffers: PerfBuffers,
    pub receiver_buffers: PerfBuffers,
    pub intervals: Vec<PerfInterval>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(super) struct PerfUdt {
    pub bandwidth_estimate_bps: f64,
    pub rtt_ms: f64,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub(super) struct PerfBuffers {
    pub send_buffer_bytes: Option<u64>,
    pub recv_buffer_bytes: Option<u64>,
    pub udp_send_buffer_bytes: Option<u64>,
    pub udp_recv_buffer_bytes: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(super) struct PerfInterval {
    pub start_s: f64,
    pub end_s: f64,
    pub bytes: u64,
}

/// `udt perf -s -1` on `addr:port`, in `ns`.
pub(super) fn server(udt: &Path, ns: &Namespace, addr: Ipv4Addr, port: u16) -> Command {
    let mut cmd = ns.command(udt);
    cmd.args([
        "perf",
        "-s",
        "-1",
        "-B",
        &addr.to_string(),
        "-p",
        &port.to_string(),
    ]);
    cmd
}

/// Whether a server's stdout line says it listens.
pub(super) fn server_ready(line: &str) -> bool {
    line.starts_with("udt perf server on")
}

/// `udt perf -c addr -p port --json -i 1 ...` for `spec` (`-i` from [`FlowSpec::interval`]
/// when set), in `ns`.
pub(super) fn client(
    udt: &Path,
    ns: &Namespace,
    (addr, port): (Ipv4Addr, u16),
    spec: &FlowSpec,
    buffers: &BufferSizes,
) -> Command {
    let mut cmd = ns.command(udt);
    cmd.args(["perf", "-c", &addr.to_string(), "-p", &port.to_string()]);
    cmd.args(["--json", "-i", &interval_arg(spec)]);
    cmd.args(["-P", &spec.streams.max(1).to_string()]);
    match &spec.implementation {
        Implementation::Ours { cc } => cmd.args(["--proto", "udt", "--cc", cc]),
        Implementation::Tcp { cc } => cmd.args(["--proto", "tcp", "--cc", cc.name()]),
        Implementation::Libudt | Implementation::Utp | Implementation::UdpBlast => {
            unreachable!("libudt flows run the interop peers, uTP flows utp-perf, UDP blasts run in the lab process")
        }
    };
    match spec.limit {
        FlowLimit::Duration(d) => cmd.args(["-t", &format!("{:.3}", d.as_secs_f64())]),
        FlowLimit::Bytes(n) => cmd.args(["-n", &n.to_string()]),
    };
    let flags = [
        ("--sndbuf", buffers.sndbuf),
        ("--rcvbuf", buffers.rcvbuf),
        ("--udp-sndbuf", buffers.udp_sndbuf),
        ("--udp-rcvbuf", buffers.udp_rcvbuf),
    ];
    for (flag, value) in flags {
        if let Some(v) = value {
            cmd.args([flag, &v.to_string()]);
        }
    }
    cmd
}

/// `-i`'s value for `spec`: its interval in seconds, 1 by default.
fn interval_arg(spec: &FlowSpec) -> String {
    let secs = spec.interval.map_or(1.0, |i| i.as_secs_f64());
    format!("{secs}")
}

/// Parses the client's stdout (one JSON object).
pub(super) fn parse(stdout: &str) -> anyhow::Result<PerfReport> {
    let start = stdout
        .find('{')
        .context("no JSON report on udt perf's output")?;
    serde_json::from_str(stdout[start..].trim()).context("reading udt perf's JSON report")
}

impl PerfReport {
    /// The per-second receiver series.
    pub(super) fn series(&self) -> Vec<u64> {
        self.intervals.iter().map(|i| i.bytes).collect()
    }

    /// The length of each interval, seconds.
    pub(super) fn interval_s(&self) -> Vec<f64> {
        self.intervals.iter().map(|i| i.end_s - i.start_s).collect()
    }

    /// UDT's own estimates, if a UDT flow.
    pub(super) fn estimate(&self) -> Option<UdtEstimate> {
        self.udt.as_ref().map(|u| UdtEstimate {
            bandwidth_bps: Some(u.bandwidth_estimate_bps),
            rtt_ms: Some(u.rtt_ms),
        })
    }

    /// The buffers in force: the sender's send side, the receiver's receive side.
    pub(super) fn actual_buffers(&self) -> BufferSizes {
        BufferSizes {
            sndbuf: self.sender_buffers.send_buffer_bytes,
            rcvbuf: self.receiver_buffers.recv_buffer_bytes,
            udp_sndbuf: self.sender_buffers.udp_send_buffer_bytes,
            udp_rcvbuf: self.receiver_buffers.udp_recv_buffer_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_interval_is_a_second_unless_the_spec_says() {
        let spec = FlowSpec::timed(Implementation::ours("ledbat"), Duration::from_secs(3));
        assert_eq!(interval_arg(&spec), "1");
        let fine = spec.with_interval(Duration::from_millis(100));
        assert_eq!(interval_arg(&fine), "0.1");
    }

    #[test]
    fn parses_a_report_with_unknown_and_missing_fields() {
        let json = r#"{"protocol":"udt","bytes":1000,"seconds":2.0,"goodput_bps":4000.0,
            "rtt_ms":10.5,"udt":{"bandwidth_estimate_bps":9e8,"rtt_ms":10.1,"extra":1},
            "intervals":[{"bytes":400},{"bytes":600}],"new_field":[1,2]}"#;
        let r = parse(json).unwrap();
        assert_eq!((r.bytes, r.series()), (1000, vec![400, 600]));
        assert_eq!(r.estimate().unwrap().bandwidth_bps, Some(9e8));
        assert!(parse("no json").is_err());
        assert_eq!(
            r.duplicate_packets, None,
            "an older udt's report has no count"
        );
        let r = parse(r#"{"bytes":1,"duplicate_packets":12}"#).unwrap();
        assert_eq!(r.duplicate_packets, Some(12));
    }
}
