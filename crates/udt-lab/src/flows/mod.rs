//! Running flows across a [`Lab`] and measuring each: the instrument every experiment uses.
//!
//! A flow is one bulk transfer by a real program: this project's `udt perf` (UDT with one of
//! its congestion controllers, or kernel TCP with cubic or bbr), libudt 4.11 through the
//! interop peers (`interop/udt_server`, `udt_client`), or uTP through `utp-perf`
//! (librqbit-utp, crate `udt-utp-perf`). [`run_flows`] runs a set of them on
//! one lab, concurrently, each from its own start offset, and returns one [`FlowResult`] per
//! [`FlowSpec`], in order.
//!
//! **Shape:** every flow's *server* runs in namespace a (`10.201.0.1`) and *receives*; its
//! *client* runs in namespace b (`10.201.0.2`) and *sends*. So the data crosses the a←b
//! direction of the link and the acknowledgements a→b. Each flow gets its own port
//! ([`BASE_PORT`] + index), TCP and UDP, so any mix can share the link (fairness runs 1-4
//! UDT flows beside 10-50 TCP flows).
//!
//! **Timing:** all servers are started and seen listening first; then the set's clock
//! starts and each client is spawned at its [`FlowSpec::start`]. A flow's
//! [`FlowResult::steady_goodput_bps`] leaves out the first [`RunOptions::warmup`] seconds of
//! its per-second series (slow start, the handshake), [`FlowResult::goodput_bps`] does not.
//!
//! **Binaries:** see [`Binaries::locate`]: the `udt` next to the running executable (or
//! `$UDT_LAB_UDT`), the interop peers in `<target>/interop` (or `$UDT_LAB_INTEROP`), built
//! with `make` on first use, and `utp-perf` beside `udt` (or `$UDT_LAB_UTP_PERF`), built with
//! cargo when missing.
//!
//! **Buffers:** [`Buffers::Tuned`] follows the usual host-tuning advice for the link at hand
//! ([`tuned`]): UDT buffers of at least two bandwidth-delay products; for kernel TCP, the
//! autotuning limits (`net.ipv4.tcp_rmem`/`tcp_wmem` maxima) raised to four BDPs in the
//! lab's namespaces (they are per namespace, so the host is untouched). Setting `SO_RCVBUF`
//! instead would switch autotuning off and be clamped to `net.core.rmem_max`, which is global.
//! As those limits are namespace-wide, one set cannot mix default and tuned TCP flows:
//! [`run_flows`] refuses.

mod binaries;
mod libudt;
mod perf;
mod process;
pub mod tuned;
mod udp;
mod utp;

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Lab;

pub use binaries::{Binaries, ENV_INTEROP, ENV_UDT, ENV_UTP_PERF};

/// The first port; flow `i` of a set uses `BASE_PORT + i` (TCP and UDP).
pub const BASE_PORT: u16 = 20_000;

/// Which program moves the bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Implementation {
    /// This project's UDT (`udt perf --proto udt --cc CC`); `cc` is one of
    /// `udt::SocketOptions::RATELESS_CONTROLLER_NAMES` (not `fixed-rate`, which needs a rate).
    Ours {
        /// The congestion controller's name.
        cc: String,
    },
    /// libudt 4.11 (Debian's), through the interop peers, native congestion control.
    Libudt,
    /// Kernel TCP through `udt perf --proto tcp`.
    Tcp {
        /// The kernel congestion control.
        cc: TcpCc,
    },
    /// uTP (BEP 29, BitTorrent's transport) through `utp-perf` over librqbit-utp 0.7, whose
    /// congestion control is CUBIC (it has no LEDBAT yet). One stream; its buffers are
    /// librqbit-utp's send and receive buffers.
    Utp,
    /// Raw UDP paced at the link rate, no congestion control ([`probe::blast`](crate::probe::blast)):
    /// the ceiling of any protocol. Runs alone, for a duration; CPU is not measured.
    UdpBlast,
}

/// Kernel TCP congestion controls the experiments compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TcpCc {
    /// CUBIC, Linux's default.
    Cubic,
    /// BBR (v1 in mainline Linux).
    Bbr,
}

impl TcpCc {
    /// The kernel's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cubic => "cubic",
            Self::Bbr => "bbr",
        }
    }
}

impl Implementation {
    /// Ours with the given controller.
    pub fn ours(cc: &str) -> Self {
        Self::Ours { cc: cc.to_owned() }
    }

    /// `UDT`, `TCP`, `uTP` or `UDP`.
    pub fn protocol(&self) -> &'static str {
        match self {
            Self::Ours { .. } | Self::Libudt => "UDT",
            Self::Tcp { .. } => "TCP",
            Self::Utp => "uTP",
            Self::UdpBlast => "UDP",
        }
    }

    /// Payload bytes this protocol carries in one 1500-byte IP packet, the lab's MTU:
    /// UDT 1456 (20 IP + 8 UDP + 16 UDT), TCP 1448 (20 IP + 20 TCP + 12 of timestamps),
    /// UDP 1472. A link's payload capacity is its rate times this over 1500.
    pub fn payload_per_packet(&self) -> u32 {
        payload_per_packet(self.protocol())
    }

    /// Whether the protocol runs in a user-space process (its ACKs wait for that process to
    /// be scheduled) rather than in the kernel. UDP blasts run in the lab process itself.
    pub fn in_user_space(&self) -> bool {
        match self {
            Self::Ours { .. } | Self::Libudt | Self::Utp => true,
            Self::Tcp { .. } | Self::UdpBlast => false,
        }
    }

    /// Whether the flow is UDT (so has UDT's own estimates).
    pub fn is_udt(&self) -> bool {
        self.protocol() == "UDT"
    }

    /// The implementation as a report names it: `ours (native)`, `libudt 4.11`,
    /// `kernel TCP cubic`, `uTP (librqbit-utp)`.
    pub fn label(&self) -> String {
        match self {
            Self::Ours { cc } => format!("ours ({cc})"),
            Self::Libudt => "libudt 4.11".to_owned(),
            Self::Tcp { cc } => format!("kernel TCP {}", cc.name()),
            Self::Utp => "uTP (librqbit-utp)".to_owned(),
            Self::UdpBlast => "raw UDP blast".to_owned(),
        }
    }

    /// Ours with every controller that needs no parameter and competes for its share
    /// (`udt::SocketOptions::RATELESS_CONTROLLER_NAMES`, in that order, but not `fixed-rate`,
    /// which needs a rate, nor the `ledbat` scavenger, which the grids of utilisation and
    /// fairness would only show giving way: its experiment is the yield time beside others;
    /// [`Self::ours`]`("ledbat")` runs it as a flow; nor `cubic`, a copy of what kernel TCP
    /// cubic already shows in every grid).
    pub fn ours_all() -> Vec<Self> {
        udt::SocketOptions::RATELESS_CONTROLLER_NAMES
            .iter()
            .filter(|&&name| {
                name != udt::SocketOptions::SCAVENGER_CONTROLLER_NAME
                    && name != udt::SocketOptions::REFERENCE_CONTROLLER_NAME
            })
            .map(|name| Self::ours(name))
            .collect()
    }

    /// [`Self::ours_all`], libudt, TCP cubic and bbr: the usual comparison set.
    pub fn all() -> Vec<Self> {
        let mut all = Self::ours_all();
        all.push(Self::Libudt);
        all.push(Self::Tcp { cc: TcpCc::Cubic });
        all.push(Self::Tcp { cc: TcpCc::Bbr });
        all
    }
}

impl fmt::Display for Implementation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// [`Implementation::payload_per_packet`] from a protocol's name (`UDT`, `TCP`, `UDP`), as
/// rows of a report record it.
pub fn payload_per_packet(protocol: &str) -> u32 {
    match protocol {
        "TCP" => 1448,
        "UDP" => 1472,
        _ => 1456,
    }
}

/// The payload rate, bit/s, a `rate_bps` link of 1500-byte packets carries for `protocol`.
pub fn payload_capacity_bps(protocol: &str, rate_bps: u64) -> f64 {
    rate_bps as f64 * f64::from(payload_per_packet(protocol)) / 1500.0
}

/// Buffer sizes of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Buffers {
    /// Each program's defaults (UDT: 8192-packet buffers; TCP: kernel autotuning with this
    /// host's limits).
    #[default]
    Default,
    /// Sized from the link's bandwidth-delay product ([`tuned`]).
    Tuned,
    /// Exactly these.
    Explicit(BufferSizes),
}

impl Buffers {
    /// `default`, `tuned` or `explicit`.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Tuned => "tuned",
            Self::Explicit(_) => "explicit",
        }
    }
}

/// Explicit buffer sizes in bytes; `None` leaves one at its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BufferSizes {
    /// UDT_SNDBUF, or SO_SNDBUF for TCP, or uTP's send buffer (the cap on unacknowledged
    /// bytes).
    pub sndbuf: Option<u64>,
    /// UDT_RCVBUF (libudt: also UDT_FC in packets), or SO_RCVBUF for TCP, or uTP's receive
    /// buffer (the advertised window).
    pub rcvbuf: Option<u64>,
    /// UDT only: the UDP socket's SO_SNDBUF.
    pub udp_sndbuf: Option<u64>,
    /// UDT only: the UDP socket's SO_RCVBUF.
    pub udp_rcvbuf: Option<u64>,
}

/// When a flow ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowLimit {
    /// The sender sends for this long.
    Duration(Duration),
    /// The sender sends this many bytes (a file transfer).
    Bytes(u64),
}

/// One flow to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowSpec {
    /// The program.
    pub implementation: Implementation,
    /// Its buffers.
    pub buffers: Buffers,
    /// When it stops.
    pub limit: FlowLimit,
    /// When its client starts, after the set's clock started.
    pub start: Duration,
    /// Parallel streams inside this one flow (`udt perf -P`), aggregated; libudt: 1 only.
    pub streams: u32,
    /// How often the receiver's series is sampled (`udt perf -i`); `None` is once a second.
    /// Only `udt perf` flows (ours and kernel TCP) honour it; the others report per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Duration>,
}

impl FlowSpec {
    /// One stream of `implementation` with default buffers, for `seconds`, from the start.
    pub fn timed(implementation: Implementation, duration: Duration) -> Self {
        Self {
            implementation,
            buffers: Buffers::Default,
            limit: FlowLimit::Duration(duration),
            start: Duration::ZERO,
            streams: 1,
            interval: None,
        }
    }

    /// The same with the receiver's series sampled every `interval` (`udt perf -i`, at
    /// least 0.1 s) instead of every second.
    pub fn with_interval(mut self, interval: Duration) -> Self {
        self.interval = Some(interval);
        self
    }

    /// The same with other buffers.
    pub fn with_buffers(mut self, buffers: Buffers) -> Self {
        self.buffers = buffers;
        self
    }

    /// The same, starting `start` after the set's clock.
    pub fn starting_at(mut self, start: Duration) -> Self {
        self.start = start;
        self
    }
}

/// UDT's own view of the path, read from the flow's UDT sockets at the end.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct UdtEstimate {
    /// The link-capacity estimate (packet pairs), bits per second; `None` when the
    /// implementation does not expose it.
    pub bandwidth_bps: Option<f64>,
    /// UDT's smoothed RTT, milliseconds.
    pub rtt_ms: Option<f64>,
}

/// What one flow measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowResult {
    /// The flow as asked.
    pub spec: FlowSpec,
    /// Payload bytes the receiver got.
    pub bytes: u64,
    /// Receiver's seconds from its start to the last byte.
    pub seconds: f64,
    /// `bytes * 8 / seconds`, payload bits per second, start-up included.
    pub goodput_bps: f64,
    /// Payload bits per second over the per-second series after the warm-up (the whole
    /// flow's goodput when the series is too short to leave anything out).
    pub steady_goodput_bps: f64,
    /// Payload bytes received in each successive interval, 1 s unless
    /// [`FlowSpec::interval`] says otherwise (the last may be partial).
    pub series: Vec<u64>,
    /// The measured length of each interval of `series`, seconds (about 1 s or
    /// [`FlowSpec::interval`]; the last may be shorter).
    pub interval_s: Vec<f64>,
    /// CPU seconds (user + system) of the sending process.
    pub sender_cpu_s: f64,
    /// CPU seconds of the receiving process.
    pub receiver_cpu_s: f64,
    /// The sender's smoothed RTT (TCP: from TCP_INFO), milliseconds; mean over the flow
    /// where the program reports intervals.
    pub rtt_ms: Option<f64>,
    /// Packets (UDT) or segments (TCP) the sender retransmitted.
    pub retransmissions: u64,
    /// UDT: sequence numbers the receiver found missing; TCP: retransmitted segments.
    pub losses: u64,
    /// Ours only: data packets the receiver got twice, retransmissions of packets that had
    /// arrived among them (`None` where the implementation does not count them, and in
    /// reports made before they were counted).
    #[serde(default)]
    pub duplicates: Option<u64>,
    /// UDT only: the protocol's own estimates.
    pub udt: Option<UdtEstimate>,
    /// The buffer sizes actually in force (as the sockets report them), where known.
    pub actual_buffers: BufferSizes,
}

impl FlowResult {
    /// CPU seconds (sender + receiver) per GiB moved; `None` when nothing moved.
    pub fn cpu_s_per_gib(&self) -> Option<f64> {
        (self.bytes > 0).then(|| {
            (self.sender_cpu_s + self.receiver_cpu_s) / (self.bytes as f64 / (1u64 << 30) as f64)
        })
    }
}

/// How a set is run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The programs.
    pub binaries: Binaries,
    /// Seconds of each flow's series left out of [`FlowResult::steady_goodput_bps`].
    pub warmup: Duration,
    /// A flow still running this long after its limit should have ended it (for byte limits:
    /// after its start) is killed and reported as failed.
    pub grace: Duration,
}

impl RunOptions {
    /// Located binaries, a 1 s warm-up and a 60 s grace (a UDT sender at 1% loss may
    /// take tens of seconds to drain its 12 MB default buffer after its time is up).
    pub fn new() -> anyhow::Result<Self> {
        Ok(Self {
            binaries: Binaries::locate()?,
            warmup: Duration::from_secs(1),
            grace: Duration::from_secs(60),
        })
    }
}

/// Runs `flows` concurrently across `lab` (servers in a, senders in b) and measures each.
/// The outer error is a setup failure of the whole set (a server that never listened, a
/// mix of default and tuned TCP); the inner ones are flows that failed on their own.
pub fn run_flows(
    lab: &Lab,
    flows: &[FlowSpec],
    options: &RunOptions,
) -> anyhow::Result<Vec<anyhow::Result<FlowResult>>> {
    if flows
        .iter()
        .any(|f| f.implementation == Implementation::UdpBlast)
    {
        anyhow::ensure!(flows.len() == 1, "a UDP blast runs alone on the link");
        return Ok(vec![udp::run(lab, &flows[0], options.warmup)]);
    }
    tuned::apply_tcp_limits(lab, flows)?;
    process::run_set(lab, flows, options)
}

/// The mean rate of `series` (bytes per interval of `interval_s` seconds; 1 s where
/// missing) after the intervals that end within `warmup`, in bit/s; `fallback_bps` when
/// nothing is left. A last interval shorter than [`MIN_TAIL_S`] is left out (its rate is
/// mostly sampling noise); a longer one counts, so that bytes held back by the receiver
/// (TCP's out-of-order queue, a descheduled reader) and delivered late still fall inside
/// the measured span.
pub fn steady_rate(series: &[u64], interval_s: &[f64], warmup: Duration, fallback_bps: f64) -> f64 {
    let len = |i: usize| {
        interval_s
            .get(i)
            .copied()
            .filter(|l| *l > 0.0)
            .unwrap_or(1.0)
    };
    let (mut t, mut bytes, mut secs) = (0.0, 0u64, 0.0);
    for (i, b) in series.iter().enumerate() {
        t += len(i);
        let short_tail = i + 1 == series.len() && i > 0 && len(i) < MIN_TAIL_S;
        if t > warmup.as_secs_f64() + 1e-3 && !short_tail {
            bytes += b;
            secs += len(i);
        }
    }
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        fallback_bps
    }
}

/// Shortest last interval [`steady_rate`] keeps, seconds.
pub const MIN_TAIL_S: f64 = 0.25;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_rate_skips_warmup_and_a_short_tail() {
        let s = [100, 1000, 1000, 10];
        // Without lengths every interval is 1 s, the tail included.
        assert_eq!(
            steady_rate(&s, &[], Duration::from_secs(1), 1.0),
            2010.0 * 8.0 / 3.0
        );
        assert_eq!(steady_rate(&s, &[], Duration::from_secs(4), 1.0), 1.0);
        assert_eq!(steady_rate(&[], &[], Duration::ZERO, 5.0), 5.0);
        let lens = [1.0, 1.25, 0.75, 0.1];
        assert_eq!(steady_rate(&s, &lens, Duration::from_secs(1), 1.0), 8000.0);
        let lens = [1.0, 1.0, 1.0, 0.5];
        assert_eq!(
            steady_rate(&[0, 100, 100, 50], &lens, Duration::from_secs(1), 1.0),
            800.0
        );
    }

    #[test]
    fn labels_and_all() {
        assert_eq!(Implementation::ours("native").label(), "ours (native)");
        assert_eq!(
            Implementation::Tcp { cc: TcpCc::Bbr }.label(),
            "kernel TCP bbr"
        );
        let all = Implementation::all();
        assert!(all.contains(&Implementation::ours("native")));
        assert!(!all.contains(&Implementation::ours("fixed-rate")));
        assert!(!all.contains(&Implementation::ours("ledbat")));
        assert!(!all.contains(&Implementation::ours("cubic")));
        assert_eq!(all.iter().filter(|i| !i.is_udt()).count(), 2);
        assert!(!all.contains(&Implementation::Utp));
        assert_eq!(Implementation::Utp.label(), "uTP (librqbit-utp)");
        assert_eq!(Implementation::Utp.protocol(), "uTP");
        assert!(!Implementation::Utp.is_udt());
    }

    #[test]
    fn cpu_per_gib() {
        let r = FlowResult {
            spec: FlowSpec::timed(Implementation::Libudt, Duration::from_secs(1)),
            bytes: 1 << 29,
            seconds: 1.0,
            goodput_bps: 0.0,
            steady_goodput_bps: 0.0,
            series: vec![],
            interval_s: vec![],
            sender_cpu_s: 1.0,
            receiver_cpu_s: 0.5,
            rtt_ms: None,
            retransmissions: 0,
            losses: 0,
            duplicates: None,
            udt: None,
            actual_buffers: BufferSizes::default(),
        };
        assert_eq!(r.cpu_s_per_gib(), Some(3.0));
    }
}
