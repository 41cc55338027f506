//! Flows of libudt 4.11: the interop peers' command lines and their JSON lines.
//!
//! `udt_server --bind A --port P --recv --bench --interval 1` receives in namespace a and
//! prints `{"event":"interval","bytes":N,...}` every second, then its result line;
//! `udt_client --connect A:P --send --bench --seconds S` (or `--bytes N`) sends from b. The
//! CPU figures, retransmissions and RTT come from each end's result line (its own
//! `getrusage` and `UDT::perfmon`); the capacity estimate is the sender's `mbpsBandwidth`
//! (the receiver's packet-pair estimate, carried in ACKs), as ours reports.

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context};
use serde::Deserialize;

use super::{BufferSizes, FlowLimit, FlowSpec, UdtEstimate};
use crate::Namespace;

/// Payload bytes per packet at the default MSS (1500 - 28 - 16).
const PAYLOAD: u64 = 1456;

/// One JSON line of a peer; only the fields the lab reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(super) struct PeerLine {
    pub event: String,
    pub ok: bool,
    pub t: f64,
    pub bytes: u64,
    pub seconds: f64,
    pub cpu_user: f64,
    pub cpu_sys: f64,
    pub retrans: u64,
    pub rtt_ms: f64,
    pub bandwidth_mbps: Option<f64>,
    pub loss_pkts: Option<u64>,
    pub end: String,
    pub error: String,
}

/// The buffer flags both ends get (`--fc` follows the receive buffer: 4.11 caps UDT_RCVBUF
/// at the flow window).
fn buffer_args(cmd: &mut Command, buffers: &BufferSizes) {
    let flags = [
        ("--sndbuf", buffers.sndbuf),
        ("--rcvbuf", buffers.rcvbuf),
        ("--udp-sndbuf", buffers.udp_sndbuf),
        ("--udp-rcvbuf", buffers.udp_rcvbuf),
        (
            "--fc",
            buffers.rcvbuf.map(|b| b.div_ceil(PAYLOAD).max(25_600)),
        ),
    ];
    for (flag, value) in flags {
        if let Some(v) = value {
            cmd.args([flag, &v.to_string()]);
        }
    }
}

/// The receiving server in `ns`.
pub(super) fn server(
    peer: &Path,
    ns: &Namespace,
    (addr, port): (Ipv4Addr, u16),
    buffers: &BufferSizes,
) -> Command {
    let mut cmd = ns.command(peer);
    cmd.args(["--bind", &addr.to_string(), "--port", &port.to_string()]);
    cmd.args(["--recv", "--bench", "--interval", "1"]);
    buffer_args(&mut cmd, buffers);
    cmd
}

/// Whether a server's stdout line says it listens.
pub(super) fn server_ready(line: &str) -> bool {
    line.contains("\"event\":\"listening\"")
}

/// The sending client in `ns`.
pub(super) fn client(
    peer: &Path,
    ns: &Namespace,
    (addr, port): (Ipv4Addr, u16),
    spec: &FlowSpec,
    buffers: &BufferSizes,
) -> Command {
    let mut cmd = ns.command(peer);
    cmd.args(["--connect", &format!("{addr}:{port}"), "--send", "--bench"]);
    match spec.limit {
        FlowLimit::Duration(d) => cmd.args(["--seconds", &format!("{:.3}", d.as_secs_f64())]),
        FlowLimit::Bytes(n) => cmd.args(["--bytes", &n.to_string()]),
    };
    buffer_args(&mut cmd, buffers);
    cmd
}

/// What the two ends printed, read.
#[derive(Debug, Clone, Default)]
pub(super) struct Parsed {
    pub receiver: PeerLine,
    pub sender: PeerLine,
    pub series: Vec<u64>,
    pub interval_s: Vec<f64>,
    /// The receiver's loss count at its last interval (its final `perfmon` fails once the
    /// sender has closed, so the result line may say 0).
    pub interval_losses: u64,
}

impl Parsed {
    /// Packets the receiver found missing.
    pub(super) fn losses(&self) -> u64 {
        self.receiver
            .loss_pkts
            .unwrap_or(0)
            .max(self.interval_losses)
    }

    /// UDT's estimates from the sender's result.
    pub(super) fn estimate(&self) -> UdtEstimate {
        UdtEstimate {
            bandwidth_bps: self.sender.bandwidth_mbps.map(|m| m * 1e6),
            rtt_ms: Some(self.sender.rtt_ms),
        }
    }
}

/// Reads the server's lines (intervals, result) and the client's (result).
pub(super) fn parse(server: &[String], client: &[String]) -> anyhow::Result<Parsed> {
    let read = |line: &String| serde_json::from_str::<PeerLine>(line).ok();
    let server: Vec<PeerLine> = server.iter().filter_map(read).collect();
    let result = |lines: &[PeerLine], who: &str| -> anyhow::Result<PeerLine> {
        let r = lines
            .iter()
            .rev()
            .find(|l| l.event == "result")
            .cloned()
            .with_context(|| format!("the libudt {who} printed no result"))?;
        if !r.ok && r.bytes == 0 {
            bail!("the libudt {who} failed: {}{}", r.error, r.end);
        }
        Ok(r)
    };
    let client: Vec<PeerLine> = client.iter().filter_map(read).collect();
    let intervals: Vec<&PeerLine> = server.iter().filter(|l| l.event == "interval").collect();
    let mut last_t = 0.0;
    let interval_s = intervals
        .iter()
        .map(|l| {
            let len = l.t - last_t;
            last_t = l.t;
            len
        })
        .collect();
    Ok(Parsed {
        receiver: result(&server, "receiver")?,
        sender: result(&client, "sender")?,
        series: intervals.iter().map(|l| l.bytes).collect(),
        interval_s,
        interval_losses: intervals
            .iter()
            .filter_map(|l| l.loss_pkts)
            .max()
            .unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_ends() {
        let server = [
            r#"{"event":"listening","port":20001}"#.to_owned(),
            r#"{"event":"interval","t":1.0,"bytes":100}"#.to_owned(),
            r#"{"event":"interval","t":2.5,"bytes":300,"loss_pkts":7}"#.to_owned(),
            r#"{"event":"result","ok":true,"bytes":400,"seconds":2.0,"cpu_user":0.5,"loss_pkts":3}"#.to_owned(),
        ];
        let client = [
            r#"{"event":"connected","seconds":0.01}"#.to_owned(),
            r#"{"event":"result","ok":true,"bytes":400,"retrans":4,"rtt_ms":20.5,"bandwidth_mbps":99.5}"#.to_owned(),
        ];
        let p = parse(&server, &client).unwrap();
        assert_eq!(p.series, vec![100, 300]);
        assert_eq!(p.interval_s, vec![1.0, 1.5]);
        assert_eq!(p.losses(), 7);
        assert_eq!(p.estimate().bandwidth_bps, Some(99.5e6));
        assert!(parse(&server[..2], &client).is_err());
    }
}
