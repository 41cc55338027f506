//! Per-connection counters: UDT4's `perfmon` totals plus malformed-input counters by reason.
//!
//! Plain data, cheap to copy. The connection bumps counters on its hot paths; the runtime,
//! `udt perf` and the lab read snapshots and derive rates from the difference of two.

use std::time::Duration;

/// Cumulative counters of one connection (UDT4 `CPerfMon` "total" group and more).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnectionStats {
    /// Data packets sent, including retransmissions (pktSentTotal).
    pub packets_sent: u64,
    /// Data packets received, including duplicates (pktRecvTotal).
    pub packets_received: u64,
    /// Payload bytes sent, including retransmissions.
    pub bytes_sent: u64,
    /// Payload bytes received and accepted (no duplicates).
    pub bytes_received: u64,
    /// Payload bytes handed to the application.
    pub bytes_delivered: u64,
    /// Sequence numbers added to the sender loss list by NAKs and timeouts (pktSndLossTotal).
    pub send_loss: u64,
    /// Sequence numbers the receiver found missing (pktRcvLossTotal).
    pub recv_loss: u64,
    /// Retransmitted data packets (pktRetransTotal).
    pub retransmitted: u64,
    /// Data packets received that were already there (duplicates).
    pub duplicates: u64,
    /// Data packets dropped because they fell outside the receive window.
    pub out_of_window: u64,
    /// Messages dropped by TTL on the sending side.
    pub messages_dropped_send: u64,
    /// Packets of messages the peer asked us to drop.
    pub packets_dropped_recv: u64,
    /// Numbered ACKs sent (pktSentACKTotal).
    pub acks_sent: u64,
    /// Light ACKs sent.
    pub light_acks_sent: u64,
    /// Numbered ACKs received that advanced the send buffer (pktRecvACKTotal).
    pub acks_received: u64,
    /// NAK packets sent (pktSentNAKTotal).
    pub naks_sent: u64,
    /// NAK packets received (pktRecvNAKTotal).
    pub naks_received: u64,
    /// ACK2 packets sent.
    pub ack2s_sent: u64,
    /// Keep-alive packets sent.
    pub keepalives_sent: u64,
    /// EXP timer expiries (retransmission timeouts and keep-alive rounds).
    pub timeouts: u64,
    /// Datagrams dropped for failing to parse, by reason.
    pub malformed: MalformedCounters,
    /// Datagrams from an address other than the peer's.
    pub wrong_source: u64,
    /// Packets a protected connection dropped, by reason (all zero without protection).
    pub protection: crate::connection::ProtectionStats,
    /// Time the sender had data outstanding (usSndDurationTotal).
    pub send_duration: Duration,
}

impl ConnectionStats {
    /// The counts accumulated since `earlier`, a snapshot of the same connection (UDT4
    /// perfmon's "local" group). Counters never go backwards; a mismatched snapshot gives
    /// zeros rather than wrapping.
    pub fn since(&self, earlier: &Self) -> Self {
        Self {
            packets_sent: self.packets_sent.saturating_sub(earlier.packets_sent),
            packets_received: self
                .packets_received
                .saturating_sub(earlier.packets_received),
            bytes_sent: self.bytes_sent.saturating_sub(earlier.bytes_sent),
            bytes_received: self.bytes_received.saturating_sub(earlier.bytes_received),
            bytes_delivered: self.bytes_delivered.saturating_sub(earlier.bytes_delivered),
            send_loss: self.send_loss.saturating_sub(earlier.send_loss),
            recv_loss: self.recv_loss.saturating_sub(earlier.recv_loss),
            retransmitted: self.retransmitted.saturating_sub(earlier.retransmitted),
            duplicates: self.duplicates.saturating_sub(earlier.duplicates),
            out_of_window: self.out_of_window.saturating_sub(earlier.out_of_window),
            messages_dropped_send: self
                .messages_dropped_send
                .saturating_sub(earlier.messages_dropped_send),
            packets_dropped_recv: self
                .packets_dropped_recv
                .saturating_sub(earlier.packets_dropped_recv),
            acks_sent: self.acks_sent.saturating_sub(earlier.acks_sent),
            light_acks_sent: self.light_acks_sent.saturating_sub(earlier.light_acks_sent),
            acks_received: self.acks_received.saturating_sub(earlier.acks_received),
            naks_sent: self.naks_sent.saturating_sub(earlier.naks_sent),
            naks_received: self.naks_received.saturating_sub(earlier.naks_received),
            ack2s_sent: self.ack2s_sent.saturating_sub(earlier.ack2s_sent),
            keepalives_sent: self.keepalives_sent.saturating_sub(earlier.keepalives_sent),
            timeouts: self.timeouts.saturating_sub(earlier.timeouts),
            malformed: self.malformed.since(&earlier.malformed),
            wrong_source: self.wrong_source.saturating_sub(earlier.wrong_source),
            protection: self.protection.since(&earlier.protection),
            send_duration: self.send_duration.saturating_sub(earlier.send_duration),
        }
    }
}

/// Counters of datagrams rejected by the parser, one per [`crate::wire::Error`] reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MalformedCounters {
    /// Shorter than the packet type requires.
    pub truncated: u64,
    /// Unknown control type.
    pub unknown_type: u64,
    /// A body length the type does not allow.
    pub bad_length: u64,
    /// A malformed NAK loss list.
    pub bad_loss_list: u64,
    /// Anything else the parser refused, or a valid packet that breaks protocol rules
    /// (e.g. an ACK beyond what was sent).
    pub other: u64,
}

impl MalformedCounters {
    /// Count one parse failure.
    pub fn record(&mut self, error: crate::wire::Error) {
        use crate::wire::Error;
        let counter = match error {
            Error::Truncated => &mut self.truncated,
            Error::UnknownControlType(_) => &mut self.unknown_type,
            Error::BadLength => &mut self.bad_length,
            Error::BadLossList => &mut self.bad_loss_list,
            #[allow(unreachable_patterns)]
            _ => &mut self.other,
        };
        *counter += 1;
    }

    /// The counts accumulated since `earlier`.
    pub fn since(&self, earlier: &Self) -> Self {
        Self {
            truncated: self.truncated.saturating_sub(earlier.truncated),
            unknown_type: self.unknown_type.saturating_sub(earlier.unknown_type),
            bad_length: self.bad_length.saturating_sub(earlier.bad_length),
            bad_loss_list: self.bad_loss_list.saturating_sub(earlier.bad_loss_list),
            other: self.other.saturating_sub(earlier.other),
        }
    }

    /// Total malformed datagrams.
    pub fn total(&self) -> u64 {
        self.truncated + self.unknown_type + self.bad_length + self.bad_loss_list + self.other
    }
}

/// Instantaneous state (UDT4 perfmon "instant" group), read at the time of the call.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PathStats {
    /// Smoothed round-trip time.
    pub rtt: Duration,
    /// Round-trip time variation.
    pub rtt_var: Duration,
    /// Current inter-packet sending period (usPktSndPeriod).
    pub send_period: Duration,
    /// Flow window in packets (pktFlowWindow).
    pub flow_window_pkts: u32,
    /// Congestion window in packets (pktCongestionWindow).
    pub congestion_window_pkts: u32,
    /// Packets sent and not yet acknowledged (pktFlightSize).
    pub flight_pkts: u32,
    /// Peer's link-capacity estimate, packets per second (smoothed).
    pub bandwidth_pkts: u32,
    /// Peer's arrival-rate report, packets per second (smoothed).
    pub recv_rate_pkts: u32,
    /// Our own arrival-speed estimate of incoming data, packets per second.
    pub local_recv_rate_pkts: u32,
    /// Our own link-capacity estimate of the incoming path, packets per second.
    pub local_bandwidth_pkts: u32,
    /// Free send-buffer space, bytes.
    pub send_buffer_free_bytes: usize,
    /// Send-buffer capacity now, packets (it grows when autotuned).
    pub send_buffer_capacity_pkts: u32,
    /// Free receive-buffer slots, packets.
    pub recv_buffer_free_pkts: u32,
    /// Receive-buffer capacity now, packets (it grows when autotuned).
    pub recv_buffer_capacity_pkts: u32,
    /// Negotiated MSS.
    pub mss: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_subtracts_field_by_field() {
        let a = ConnectionStats {
            packets_sent: 10,
            malformed: MalformedCounters {
                truncated: 2,
                ..MalformedCounters::default()
            },
            send_duration: Duration::from_millis(5),
            ..ConnectionStats::default()
        };
        let mut b = a;
        b.packets_sent = 25;
        b.malformed.truncated = 3;
        b.send_duration = Duration::from_millis(9);
        let d = b.since(&a);
        assert_eq!(d.packets_sent, 15);
        assert_eq!(d.malformed.truncated, 1);
        assert_eq!(d.send_duration, Duration::from_millis(4));
        assert_eq!(a.since(&b).packets_sent, 0, "saturates");
    }
}
