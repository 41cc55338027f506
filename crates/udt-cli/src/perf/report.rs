//! The client's view of a finished test: [`Report`] (the `--json` object), built from both
//! ends' [`SideReport`]s and their interval [`Sample`]s paired into [`Interval`]s; and the
//! human lines (one per interval, then a summary).
//!
//! Each figure comes from the end that knows it: bytes and goodput from the receiver (what
//! arrived), RTT, retransmissions, sending period and the bandwidth estimate from the
//! sender, and the loss count from the UDT receiver (the sequence numbers it found
//! missing; TCP has none, so there it is the sender's retransmissions).

use serde::{Deserialize, Serialize};

use super::params::{Proto, TestParams};
use super::sample::{rate, Buffers, Sample, SideReport};
use super::units::{format_bytes, format_rate};

/// The `--json` object. Field meanings are in each doc; rates are payload bits per second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// `udt` or `tcp`.
    pub protocol: Proto,
    /// Congestion control in use (TCP: as the kernel reports it for the sender's socket).
    pub cc: String,
    /// Parallel streams.
    pub streams: u32,
    /// Whether the server sent (`-R`).
    pub reverse: bool,
    /// The server, as `host:port`.
    pub server: String,
    /// Payload bytes the receiver read.
    pub bytes: u64,
    /// Seconds from the receiver's start to its last byte.
    pub seconds: f64,
    /// `bytes * 8 / seconds`: payload bits per second at the receiver.
    pub goodput_bps: f64,
    /// Payload bytes the sender wrote.
    pub sender_bytes: u64,
    /// Seconds from the sender's start until everything was acknowledged.
    pub sender_seconds: f64,
    /// Mean over the intervals of the sender's smoothed RTT, milliseconds (its final value
    /// when there are no intervals).
    pub rtt_ms: f64,
    /// Packets (UDT) or segments (TCP) the sender retransmitted.
    pub retransmitted_packets: u64,
    /// UDT: sequence numbers the receiver found missing. TCP: segments retransmitted.
    pub lost_packets: u64,
    /// UDT data packets sent, retransmissions included (0 for TCP).
    pub sent_packets: u64,
    /// UDT: data packets the receiver got twice, retransmissions of packets that had
    /// arrived (spurious) among them; the rest of `retransmitted_packets` repaired real
    /// losses. 0 for TCP, and when the receiving end is a `udt` that did not count them.
    #[serde(default)]
    pub duplicate_packets: u64,
    /// CPU seconds (user + system) of the sending process over the test.
    pub sender_cpu_seconds: f64,
    /// CPU seconds of the receiving process over the test.
    pub receiver_cpu_seconds: f64,
    /// UDT's own view of the path at the end of the test (`null` for TCP).
    pub udt: Option<UdtView>,
    /// The sender's buffers.
    pub sender_buffers: Buffers,
    /// The receiver's buffers.
    pub receiver_buffers: Buffers,
    /// One entry per interval (`-i`), in order.
    pub intervals: Vec<Interval>,
}

/// What UDT itself estimated, read on the sending side at the end of the test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct UdtView {
    /// The link-capacity estimate (receiver's packet pairs), payload bits per second.
    pub bandwidth_estimate_bps: f64,
    /// Smoothed RTT, milliseconds.
    pub rtt_ms: f64,
    /// RTT variation, milliseconds.
    pub rtt_var_ms: f64,
    /// Inter-packet sending period, microseconds.
    pub send_period_us: f64,
    /// Congestion window, packets.
    pub congestion_window_pkts: f64,
}

/// One interval: the receiver's bytes beside the sender's path figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Start, seconds since the test started (receiver's clock).
    pub start_s: f64,
    /// End, seconds.
    pub end_s: f64,
    /// Payload bytes the receiver read.
    pub bytes: u64,
    /// Payload bits per second at the receiver.
    pub goodput_bps: f64,
    /// Payload bytes the sender wrote.
    pub sender_bytes: u64,
    /// The sender's smoothed RTT at the end of the interval, ms.
    pub rtt_ms: Option<f64>,
    /// Packets or segments the sender retransmitted.
    pub retransmitted_packets: u64,
    /// As [`Report::lost_packets`], over the interval.
    pub lost_packets: u64,
    /// UDT sending period at the end of the interval, µs.
    pub send_period_us: Option<f64>,
    /// Congestion window at the end of the interval.
    pub window_pkts: Option<f64>,
    /// UDT's link-capacity estimate at the end of the interval, bits per second.
    pub bandwidth_estimate_bps: Option<f64>,
}

impl Interval {
    /// Pairs the sender's and the receiver's sample of the same interval (either may be
    /// missing at the end, when one end ticked once more than the other).
    pub fn pair(proto: Proto, sender: Option<&Sample>, receiver: Option<&Sample>) -> Self {
        let none = Sample::default();
        let (s, r) = (sender.unwrap_or(&none), receiver.unwrap_or(&none));
        let clock = receiver.or(sender).unwrap_or(&none);
        Self {
            start_s: clock.start_s,
            end_s: clock.end_s,
            bytes: r.bytes,
            goodput_bps: rate(r.bytes, clock.end_s - clock.start_s),
            sender_bytes: s.bytes,
            rtt_ms: s.rtt_ms,
            retransmitted_packets: s.retransmitted_packets,
            lost_packets: lost(proto, s, r),
            send_period_us: s.send_period_us,
            window_pkts: s.window_pkts,
            bandwidth_estimate_bps: s.bandwidth_estimate_bps,
        }
    }

    /// Takes the gauges (RTT, period, window, capacity estimate) of `sender`, a sample of
    /// the sender's taken earlier, for an interval the sender did not sample.
    pub fn gauges_from(&mut self, sender: &Sample) {
        self.rtt_ms = sender.rtt_ms;
        self.send_period_us = sender.send_period_us;
        self.window_pkts = sender.window_pkts;
        self.bandwidth_estimate_bps = sender.bandwidth_estimate_bps;
    }

    /// The human line: `  0.00-1.00 s   941.3 Mbit/s  rtt 0.12 ms  lost 0  retr 0  period 12.1 us`.
    pub fn line(&self) -> String {
        let mut line = format!(
            "{:>15}  {:>14}  {:>10}",
            span(self.start_s, self.end_s),
            format_rate(self.goodput_bps),
            format_bytes(self.bytes),
        );
        if let Some(rtt) = self.rtt_ms {
            line += &format!("  rtt {rtt:.3} ms");
        }
        line += &format!(
            "  lost {}  retr {}",
            self.lost_packets, self.retransmitted_packets
        );
        if let Some(period) = self.send_period_us {
            line += &format!("  period {period:.2} us");
        }
        line
    }
}

/// `0.00-1.00 s`.
fn span(start_s: f64, end_s: f64) -> String {
    format!("{start_s:.2}-{end_s:.2} s")
}

fn lost(proto: Proto, sender: &Sample, receiver: &Sample) -> u64 {
    match proto {
        Proto::Udt => receiver.recv_loss_packets,
        Proto::Tcp => sender.retransmitted_packets,
    }
}

/// Both ends' results, and where the test ran.
#[derive(Debug)]
pub struct Outcome<'a> {
    /// The test.
    pub params: &'a TestParams,
    /// The server, `host:port`.
    pub server: String,
    /// The sender's account.
    pub sender: SideReport,
    /// The receiver's account.
    pub receiver: SideReport,
    /// The intervals, paired.
    pub intervals: Vec<Interval>,
}

impl Report {
    /// The report of a finished test.
    pub fn new(o: Outcome<'_>) -> Self {
        let (s, r) = (&o.sender.total, &o.receiver.total);
        let rtts: Vec<f64> = o.intervals.iter().filter_map(|i| i.rtt_ms).collect();
        let rtt_ms = if rtts.is_empty() {
            s.rtt_ms.unwrap_or(0.0)
        } else {
            rtts.iter().sum::<f64>() / rtts.len() as f64
        };
        let udt = (o.params.proto == Proto::Udt).then(|| UdtView {
            bandwidth_estimate_bps: s.bandwidth_estimate_bps.unwrap_or(0.0),
            rtt_ms: s.rtt_ms.unwrap_or(0.0),
            rtt_var_ms: s.rtt_var_ms.unwrap_or(0.0),
            send_period_us: s.send_period_us.unwrap_or(0.0),
            congestion_window_pkts: s.window_pkts.unwrap_or(0.0),
        });
        Self {
            protocol: o.params.proto,
            cc: o.sender.cc.clone(),
            streams: o.params.streams,
            reverse: o.params.reverse,
            server: o.server,
            bytes: o.receiver.bytes,
            seconds: o.receiver.seconds,
            goodput_bps: rate(o.receiver.bytes, o.receiver.seconds),
            sender_bytes: o.sender.bytes,
            sender_seconds: o.sender.seconds,
            rtt_ms,
            retransmitted_packets: s.retransmitted_packets,
            lost_packets: lost(o.params.proto, s, r),
            sent_packets: s.packets_sent,
            duplicate_packets: r.duplicate_packets,
            sender_cpu_seconds: o.sender.cpu_seconds,
            receiver_cpu_seconds: o.receiver.cpu_seconds,
            udt,
            sender_buffers: o.sender.buffers,
            receiver_buffers: o.receiver.buffers,
            intervals: o.intervals,
        }
    }

    /// The human summary lines (after the interval lines).
    pub fn summary(&self) -> Vec<String> {
        let cpu = |secs: f64, over: f64| {
            let pct = if over > 0.0 { secs / over * 100.0 } else { 0.0 };
            format!("{secs:.2} s ({pct:.0}% of one core)")
        };
        let mut lines = vec![
            "- - - - - - - - - - - - - - - - - - - - - - - - -".to_owned(),
            format!(
                "{:>15}  {:>14}  {:>10}  receiver",
                span(0.0, self.seconds),
                format_rate(self.goodput_bps),
                format_bytes(self.bytes)
            ),
            format!(
                "rtt {:.3} ms  lost {}  retransmitted {}  ({} {}, {} stream{})",
                self.rtt_ms,
                self.lost_packets,
                self.retransmitted_packets,
                self.protocol.name(),
                self.cc,
                self.streams,
                if self.streams == 1 { "" } else { "s" }
            ),
            format!(
                "CPU: sender {}, receiver {}",
                cpu(self.sender_cpu_seconds, self.sender_seconds),
                cpu(self.receiver_cpu_seconds, self.seconds)
            ),
        ];
        if let Some(u) = &self.udt {
            lines.push(format!(
                "UDT estimates: link capacity {}, rtt {:.3} ms",
                format_rate(u.bandwidth_estimate_bps),
                u.rtt_ms
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairing_takes_each_figure_from_the_end_that_knows_it() {
        let sender = Sample {
            start_s: 0.0,
            end_s: 1.0,
            bytes: 2000,
            retransmitted_packets: 3,
            rtt_ms: Some(10.0),
            send_period_us: Some(12.0),
            recv_loss_packets: 99,
            ..Sample::default()
        };
        let receiver = Sample {
            start_s: 0.0,
            end_s: 2.0,
            bytes: 1000,
            recv_loss_packets: 2,
            rtt_ms: Some(50.0),
            ..Sample::default()
        };
        let i = Interval::pair(Proto::Udt, Some(&sender), Some(&receiver));
        assert_eq!((i.bytes, i.sender_bytes), (1000, 2000));
        assert_eq!(i.goodput_bps, 4000.0);
        assert_eq!(i.rtt_ms, Some(10.0));
        assert_eq!((i.lost_packets, i.retransmitted_packets), (2, 3));
        let mut late = Interval::pair(Proto::Udt, None, Some(&receiver));
        assert_eq!((late.rtt_ms, late.send_period_us), (None, None));
        late.gauges_from(&sender);
        assert_eq!((late.rtt_ms, late.send_period_us), (Some(10.0), Some(12.0)));
        assert_eq!((late.bytes, late.sender_bytes), (1000, 0));
        let tcp = Interval::pair(Proto::Tcp, Some(&sender), None);
        assert_eq!((tcp.bytes, tcp.lost_packets, tcp.end_s), (0, 3, 1.0));
        assert!(i.line().contains("rtt 10.000 ms"), "{}", i.line());
    }
}
