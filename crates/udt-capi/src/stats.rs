//! [`UdtcStats`]: a connection's counters and path state as a plain C struct, filled by
//! `udtc_stats` from the runtime's `perfmon` report.

use crate::error::{status, Error};
use crate::socket::{stream_ref, UdtcStream};

/// A snapshot of one connection (UDT4's `perfmon` totals and instantaneous values).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct UdtcStats {
    /// Milliseconds since the socket was opened (msTimeStamp).
    pub elapsed_ms: u64,
    /// Data packets sent, retransmissions included (pktSentTotal).
    pub packets_sent: u64,
    /// Data packets received, duplicates included (pktRecvTotal).
    pub packets_received: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Payload bytes received (no duplicates).
    pub bytes_received: u64,
    /// Payload bytes handed to the application.
    pub bytes_delivered: u64,
    /// Packets the sender learnt were lost (pktSndLossTotal).
    pub send_loss: u64,
    /// Packets the receiver found missing (pktRcvLossTotal).
    pub recv_loss: u64,
    /// Retransmitted packets (pktRetransTotal).
    pub retransmitted: u64,
    /// ACKs sent (pktSentACKTotal).
    pub acks_sent: u64,
    /// ACKs received (pktRecvACKTotal).
    pub acks_received: u64,
    /// NAKs sent (pktSentNAKTotal).
    pub naks_sent: u64,
    /// NAKs received (pktRecvNAKTotal).
    pub naks_received: u64,
    /// Smoothed round-trip time, microseconds (msRTT x 1000).
    pub rtt_us: u64,
    /// Inter-packet sending period, microseconds (usPktSndPeriod).
    pub send_period_us: f64,
    /// Flow window, packets (pktFlowWindow).
    pub flow_window_pkts: u32,
    /// Congestion window, packets (pktCongestionWindow).
    pub congestion_window_pkts: u32,
    /// Packets in flight (pktFlightSize).
    pub flight_pkts: u32,
    /// Negotiated maximum packet size, bytes.
    pub mss: u32,
    /// Sending rate since the socket opened, Mbit/s (mbpsSendRate).
    pub send_rate_mbps: f64,
    /// Receiving rate since the socket opened, Mbit/s (mbpsRecvRate).
    pub recv_rate_mbps: f64,
    /// The peer's link-capacity estimate, Mbit/s (mbpsBandwidth).
    pub bandwidth_mbps: f64,
}

impl UdtcStats {
    /// The snapshot of a perfmon report.
    pub fn from_perfmon(p: &udt::Perfmon) -> Self {
        let t = &p.total;
        Self {
            elapsed_ms: u64::try_from(p.elapsed.as_millis()).unwrap_or(u64::MAX),
            packets_sent: t.packets_sent,
            packets_received: t.packets_received,
            bytes_sent: t.bytes_sent,
            bytes_received: t.bytes_received,
            bytes_delivered: t.bytes_delivered,
            send_loss: t.send_loss,
            recv_loss: t.recv_loss,
            retransmitted: t.retransmitted,
            acks_sent: t.acks_sent,
            acks_received: t.acks_received,
            naks_sent: t.naks_sent,
            naks_received: t.naks_received,
            rtt_us: u64::try_from(p.instant.rtt.as_micros()).unwrap_or(u64::MAX),
            send_period_us: p.instant.send_period.as_secs_f64() * 1e6,
            flow_window_pkts: p.instant.flow_window_pkts,
            congestion_window_pkts: p.instant.congestion_window_pkts,
            flight_pkts: p.instant.flight_pkts,
            mss: p.instant.mss,
            send_rate_mbps: p.send_rate_mbps,
            recv_rate_mbps: p.recv_rate_mbps,
            bandwidth_mbps: p.bandwidth_mbps,
        }
    }
}

/// Fill `*out` with the stream's statistics. Returns `UDTC_OK` or `UDTC_ERR_INVALID`.
///
/// # Safety
/// `stream` is NULL or a live stream; `out` is NULL or valid for writing a `UdtcStats`.
#[no_mangle]
pub unsafe extern "C" fn udtc_stats(stream: *const UdtcStream, out: *mut UdtcStats) -> i32 {
    status(|| {
        // SAFETY: as promised by our caller.
        let stream = unsafe { stream_ref(stream) }?;
        // SAFETY: as promised by our caller.
        let out = unsafe { out.as_mut() }.ok_or_else(|| Error::invalid("out is NULL"))?;
        *out = UdtcStats::from_perfmon(&stream.perfmon(false));
        Ok(())
    })
}
