//! What one end measures: a [`Sample`] per interval (and one over the whole test), summed
//! over its streams; and [`SideReport`], its totals, sent to the client in the `result`
//! message. The client pairs the sender's and the receiver's samples into
//! [`super::report::Interval`]s.

use serde::{Deserialize, Serialize};

/// One end's measurements over a span of the test, all streams together.
///
/// Counters come from the transport: UDT's `perfmon` counters of the span, or the change in
/// TCP_INFO's cumulative counters. Gauges (RTT, period, window, estimate) are the mean over
/// streams of the value at the end of the span.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Span start, seconds since this end's test start.
    pub start_s: f64,
    /// Span end, seconds since this end's test start.
    pub end_s: f64,
    /// Application bytes this end wrote (sender) or read (receiver).
    pub bytes: u64,
    /// Data packets sent, retransmissions included (UDT only).
    pub packets_sent: u64,
    /// Retransmitted packets (UDT) or segments (TCP `tcpi_total_retrans`).
    pub retransmitted_packets: u64,
    /// UDT: sequence numbers the receiver found missing (its loss count); TCP: 0, the
    /// kernel only counts retransmissions.
    pub recv_loss_packets: u64,
    /// UDT: sequence numbers NAKs and timeouts put in the sender's loss list.
    pub send_loss_packets: u64,
    /// UDT: data packets the receiver already had: retransmissions of packets that had
    /// arrived (spurious), or copies the path duplicated. TCP: 0. Absent from an older
    /// peer's samples.
    #[serde(default)]
    pub duplicate_packets: u64,
    /// Smoothed RTT, milliseconds.
    pub rtt_ms: Option<f64>,
    /// RTT variation, milliseconds.
    pub rtt_var_ms: Option<f64>,
    /// UDT inter-packet sending period, microseconds.
    pub send_period_us: Option<f64>,
    /// Congestion window, packets (UDT) or segments (TCP).
    pub window_pkts: Option<f64>,
    /// UDT: the link-capacity estimate (the receiver's packet-pair estimate as the sender
    /// sees it), payload bits per second.
    pub bandwidth_estimate_bps: Option<f64>,
}

impl Sample {
    /// Adds another stream's sample of the same span: counters add up, gauges are summed
    /// here and divided by [`Self::average_gauges`].
    pub fn accumulate(&mut self, other: &Self) {
        self.bytes += other.bytes;
        self.packets_sent += other.packets_sent;
        self.retransmitted_packets += other.retransmitted_packets;
        self.recv_loss_packets += other.recv_loss_packets;
        self.send_loss_packets += other.send_loss_packets;
        self.duplicate_packets += other.duplicate_packets;
        add_gauge(&mut self.rtt_ms, other.rtt_ms);
        add_gauge(&mut self.rtt_var_ms, other.rtt_var_ms);
        add_gauge(&mut self.send_period_us, other.send_period_us);
        add_gauge(&mut self.window_pkts, other.window_pkts);
        add_gauge(
            &mut self.bandwidth_estimate_bps,
            other.bandwidth_estimate_bps,
        );
    }

    /// Turns the gauge sums of `streams` accumulated samples into means.
    pub fn average_gauges(&mut self, streams: usize) {
        let n = streams.max(1) as f64;
        for gauge in [
            &mut self.rtt_ms,
            &mut self.rtt_var_ms,
            &mut self.send_period_us,
            &mut self.window_pkts,
            &mut self.bandwidth_estimate_bps,
        ] {
            if let Some(v) = gauge.as_mut() {
                *v /= n;
            }
        }
    }

    /// Sums per-stream samples of one span into one.
    pub fn combine(start_s: f64, end_s: f64, streams: &[Self]) -> Self {
        let mut total = Self {
            start_s,
            end_s,
            ..Self::default()
        };
        for s in streams {
            total.accumulate(s);
        }
        total.average_gauges(streams.len());
        total
    }

    /// Payload bits per second over the span.
    pub fn bits_per_sec(&self) -> f64 {
        rate(self.bytes, self.end_s - self.start_s)
    }
}

fn add_gauge(sum: &mut Option<f64>, value: Option<f64>) {
    if let Some(v) = value {
        *sum = Some(sum.unwrap_or(0.0) + v);
    }
}

/// `bytes` over `seconds` as bits per second (0 for an empty span).
pub fn rate(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 * 8.0 / seconds
    } else {
        0.0
    }
}

/// Socket buffer sizes one end ended up with, bytes. TCP values are what the kernel reports
/// at the end of the test (Linux doubles what was asked, and autotunes when nothing was);
/// UDT values are UDT_SNDBUF / UDT_RCVBUF as kept (whole packets), and the UDP buffers as
/// asked (`None`: the library's automatic 8 MiB).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Buffers {
    /// UDT_SNDBUF or SO_SNDBUF.
    pub send_buffer_bytes: Option<u64>,
    /// UDT_RCVBUF or SO_RCVBUF.
    pub recv_buffer_bytes: Option<u64>,
    /// UDP_SNDBUF (UDT only).
    pub udp_send_buffer_bytes: Option<u64>,
    /// UDP_RCVBUF (UDT only).
    pub udp_recv_buffer_bytes: Option<u64>,
}

/// One end's account of a finished test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideReport {
    /// Whether this end sent.
    pub sender: bool,
    /// Application bytes moved (written or read).
    pub bytes: u64,
    /// Seconds from this end's start to its last stream finishing (for the receiver, the
    /// last byte; for the sender, everything acknowledged).
    pub seconds: f64,
    /// CPU seconds (user + system) the process used over the test.
    pub cpu_seconds: f64,
    /// Whole-test counters, and the gauges at the end.
    pub total: Sample,
    /// The congestion control actually in use (TCP: read back from the kernel).
    pub cc: String,
    /// Buffer sizes.
    pub buffers: Buffers,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combine_adds_counters_and_averages_gauges() {
        let a = Sample {
            bytes: 100,
            retransmitted_packets: 1,
            duplicate_packets: 5,
            rtt_ms: Some(2.0),
            ..Sample::default()
        };
        let b = Sample {
            bytes: 300,
            retransmitted_packets: 2,
            rtt_ms: Some(4.0),
            ..Sample::default()
        };
        let s = Sample::combine(1.0, 2.0, &[a, b]);
        assert_eq!(s.bytes, 400);
        assert_eq!(s.retransmitted_packets, 3);
        assert_eq!(s.duplicate_packets, 5);
        assert_eq!(s.rtt_ms, Some(3.0));
        assert_eq!(s.send_period_us, None);
        assert_eq!(s.bits_per_sec(), 3200.0);
        assert_eq!(rate(1, 0.0), 0.0);
    }

    /// A peer built before duplicates were counted sends samples without them.
    #[test]
    fn an_older_peers_sample_reads_no_duplicates() {
        let mut v = serde_json::to_value(Sample {
            duplicate_packets: 7,
            ..Sample::default()
        })
        .unwrap();
        v.as_object_mut().unwrap().remove("duplicate_packets");
        let s: Sample = serde_json::from_value(v).unwrap();
        assert_eq!(s.duplicate_packets, 0);
    }
}
