//! Flows of uTP (BitTorrent's transport, BEP 29) through `utp-perf` (crate `udt-utp-perf`,
//! over librqbit-utp): the two command lines. Its `--json` report uses `udt perf --json`'s
//! names, so [`perf::parse`](super::perf::parse) reads it; what librqbit-utp does not expose
//! (RTT, retransmissions, losses) is absent there and so `None` or 0 in the result.
//!
//! librqbit-utp's congestion control is CUBIC (0.7 has no LEDBAT): this row is BEP 29's
//! framing, selective ACKs and windows under a loss-based controller, not uTP's scavenger.

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::Command;

use anyhow::bail;

use super::{BufferSizes, FlowLimit, FlowSpec};
use crate::Namespace;

/// `utp-perf -s -1` on `addr:port` (TCP control, UDP data), in `ns`.
pub(super) fn server(utp_perf: &Path, ns: &Namespace, addr: Ipv4Addr, port: u16) -> Command {
    let mut cmd = ns.command(utp_perf);
    cmd.args(["-s", "-1", "-B", &addr.to_string(), "-p", &port.to_string()]);
    cmd
}

/// Whether a server's stdout line says it listens.
pub(super) fn server_ready(line: &str) -> bool {
    line.starts_with("utp-perf server on")
}

/// `utp-perf -c addr -p port --json ...` for `spec`, in `ns`; an error for what uTP flows
/// cannot do (parallel streams, UDP socket buffers).
pub(super) fn client(
    utp_perf: &Path,
    ns: &Namespace,
    (addr, port): (Ipv4Addr, u16),
    spec: &FlowSpec,
    buffers: &BufferSizes,
) -> anyhow::Result<Command> {
    if spec.streams > 1 {
        bail!("uTP flows have one stream each: use several flows");
    }
    if buffers.udp_sndbuf.is_some() || buffers.udp_rcvbuf.is_some() {
        bail!("utp-perf does not set UDP socket buffers (librqbit-utp sizes its own)");
    }
    let mut cmd = ns.command(utp_perf);
    cmd.args(["-c", &addr.to_string(), "-p", &port.to_string(), "--json"]);
    match spec.limit {
        FlowLimit::Duration(d) => cmd.args(["-t", &format!("{:.3}", d.as_secs_f64())]),
        FlowLimit::Bytes(n) => cmd.args(["-n", &n.to_string()]),
    };
    for (flag, value) in [("--sndbuf", buffers.sndbuf), ("--rcvbuf", buffers.rcvbuf)] {
        if let Some(v) = value {
            cmd.args([flag, &v.to_string()]);
        }
    }
    Ok(cmd)
}

#[cfg(test)]
mod tests {
    use super::super::perf;

    /// What `utp-perf -c ... --json` printed for a 20 MB transfer on loopback.
    const REPORT: &str = r#"{
      "protocol": "utp", "cc": "cubic", "implementation": "librqbit-utp 0.7", "streams": 1,
      "server": "127.0.0.1:47311", "bytes": 20000000, "seconds": 0.439003777,
      "goodput_bps": 364461556.7851937, "sender_bytes": 20000000,
      "sender_seconds": 0.640263549, "sender_cpu_seconds": 0.088062,
      "receiver_cpu_seconds": 0.073902,
      "sender_buffers": { "send_buffer_bytes": 65536, "recv_buffer_bytes": 65536 },
      "receiver_buffers": { "send_buffer_bytes": 65536, "recv_buffer_bytes": 131072 },
      "intervals": [
        { "start_s": 0.0, "end_s": 1.0, "bytes": 15000000, "goodput_bps": 1.2e8 },
        { "start_s": 1.0, "end_s": 1.439003777, "bytes": 5000000, "goodput_bps": 9.1e7 }
      ]
    }"#;

    #[test]
    fn the_utp_perf_report_reads_as_a_perf_report() {
        let r = perf::parse(REPORT).unwrap();
        assert_eq!(
            (r.bytes, r.series()),
            (20_000_000, vec![15_000_000, 5_000_000])
        );
        assert_eq!(r.goodput_bps, 364461556.7851937);
        assert_eq!(
            (r.sender_cpu_seconds, r.receiver_cpu_seconds),
            (0.088062, 0.073902)
        );
        let lens = r.interval_s();
        assert!((lens[1] - 0.439003777).abs() < 1e-9, "{lens:?}");
        let b = r.actual_buffers();
        assert_eq!(
            (b.sndbuf, b.rcvbuf, b.udp_rcvbuf),
            (Some(65536), Some(131072), None)
        );
        // No RTT, no UDT estimates, no loss counters: absent, so zero or none.
        assert_eq!(
            (r.rtt_ms, r.retransmitted_packets, r.lost_packets),
            (0.0, 0, 0)
        );
        assert!(r.estimate().is_none());
        assert!(perf::parse(&REPORT[..REPORT.len() / 2]).is_err());
    }
}
