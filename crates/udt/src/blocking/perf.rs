//! [`Perfmon`]: UDT4's `perfmon` report (`TRACEINFO`): totals, the counts since the last
//! clearing call, and the instantaneous path state, built from `udt_proto`'s counters.
//!
//! Each socket keeps the snapshot taken at the last clearing call; a report subtracts it
//! ([`ConnectionStats::since`]) and derives the interval's rates.

use std::time::{Duration, Instant as StdInstant};

use udt_proto::config::{IP_UDP_OVERHEAD, UDT_HEADER};
use udt_proto::{ConnectionStats, PathStats};

/// One `perfmon` report. Field names follow Rust; the UDT4 name is in each doc.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Perfmon {
    /// Time since the socket was opened (msTimeStamp).
    pub elapsed: Duration,
    /// Counters since the connection started (the "global" group: pktSentTotal, ...).
    pub total: ConnectionStats,
    /// Time covered by `interval`: since the last clearing call, or since opening.
    pub interval_duration: Duration,
    /// Counters over `interval_duration` (the "local" group: pktSent, pktRecv, ...).
    pub interval: ConnectionStats,
    /// Payload sending rate over the interval, Mbit/s, retransmissions included
    /// (mbpsSendRate).
    pub send_rate_mbps: f64,
    /// Payload receiving rate over the interval, Mbit/s (mbpsRecvRate).
    pub recv_rate_mbps: f64,
    /// The instantaneous group: RTT (msRTT), sending period (usPktSndPeriod), flow and
    /// congestion windows, flight size, free buffers, rate and capacity estimates.
    pub instant: PathStats,
    /// The peer's link-capacity estimate in Mbit/s of payload (mbpsBandwidth).
    pub bandwidth_mbps: f64,
}

/// What a socket remembers between `perfmon` calls.
#[derive(Debug)]
pub(crate) struct PerfSnapshot {
    opened: StdInstant,
    cleared_at: StdInstant,
    cleared: ConnectionStats,
}

impl PerfSnapshot {
    pub(crate) fn new(now: StdInstant) -> Self {
        Self {
            opened: now,
            cleared_at: now,
            cleared: ConnectionStats::default(),
        }
    }

    /// A report for counters `total` and path state `instant`; `clear` starts a new
    /// interval.
    pub(crate) fn report(
        &mut self,
        now: StdInstant,
        total: ConnectionStats,
        instant: PathStats,
        clear: bool,
    ) -> Perfmon {
        let interval_duration = now.saturating_duration_since(self.cleared_at);
        let interval = total.since(&self.cleared);
        let secs = interval_duration.as_secs_f64();
        let mbps = |bytes: u64| {
            if secs > 0.0 {
                bytes as f64 * 8.0 / secs / 1e6
            } else {
                0.0
            }
        };
        let payload = instant.mss.saturating_sub(IP_UDP_OVERHEAD + UDT_HEADER);
        let report = Perfmon {
            elapsed: now.saturating_duration_since(self.opened),
            total,
            interval_duration,
            interval,
            send_rate_mbps: mbps(interval.bytes_sent),
            recv_rate_mbps: mbps(interval.bytes_received),
            instant,
            bandwidth_mbps: f64::from(instant.bandwidth_pkts) * f64::from(payload) * 8.0 / 1e6,
        };
        if clear {
            self.cleared_at = now;
            self.cleared = total;
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clearing_starts_a_new_interval() {
        let t0 = StdInstant::now();
        let mut snap = PerfSnapshot::new(t0);
        let path = PathStats {
            mss: 1500,
            bandwidth_pkts: 1000,
            ..PathStats::default()
        };
        let mut total = ConnectionStats {
            bytes_sent: 1_000_000,
            packets_sent: 700,
            ..ConnectionStats::default()
        };
        let r = snap.report(t0 + Duration::from_secs(1), total, path, true);
        assert_eq!(r.interval.packets_sent, 700);
        assert!((r.send_rate_mbps - 8.0).abs() < 1e-9);
        assert!((r.bandwidth_mbps - 1000.0 * 1456.0 * 8.0 / 1e6).abs() < 1e-9);
        total.bytes_sent += 500_000;
        total.packets_sent += 350;
        let r = snap.report(t0 + Duration::from_secs(3), total, path, false);
        assert_eq!(r.interval.packets_sent, 350);
        assert_eq!(r.total.packets_sent, 1050);
        assert_eq!(r.interval_duration, Duration::from_secs(2));
        assert!((r.send_rate_mbps - 2.0).abs() < 1e-9);
        assert_eq!(r.elapsed, Duration::from_secs(3));
    }
}
