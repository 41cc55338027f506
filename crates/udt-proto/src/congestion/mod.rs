//! Pluggable congestion control: the [`Controller`] hooks, their inputs, and the built-in
//! algorithms.
//!
//! This mirrors UDT4's CCC framework (`ccc.h`) without its inheritance: the connection owns a
//! `Box<dyn Controller>` built by a [`ControllerFactory`], calls the `on_*` hooks when 4.11
//! would call the matching CCC virtual, and after each hook reads the outputs
//! ([`Controller::window_pkts`], [`Controller::send_period`], and the optional ACK timer,
//! ACK interval and RTO). Controllers are sans-IO like the rest of the crate: time arrives as
//! `now`, randomness from [`ControllerInit::seed`].
//!
//! Hook order, as the connection drives it (protocol fact sheet §5.1):
//! 1. [`Controller::init`] once the handshake completes (MSS, peer window, ISN, RTT, rates).
//! 2. Then, in any order as events occur: [`Controller::on_packet_sent`] just before each data
//!    packet (new or retransmitted) leaves; [`Controller::on_packet_received`] for each
//!    arriving data packet before duplicate checks; [`Controller::on_ack`] for each numbered
//!    ACK that advanced the send buffer (after RTT / rate / bandwidth smoothing, §4.9);
//!    [`Controller::on_loss`] for each NAK; [`Controller::on_timeout`] on an EXP expiry with
//!    data in the send buffer; [`Controller::on_custom_message`] for control type 0x7FFF.
//!    After each hook, drain [`Controller::poll_custom_message`] and re-read the outputs.
//! 3. [`Controller::close`] once, when the application closes a connected socket, as the
//!    connection starts closing. Hooks can still follow while unsent data drains (up to the
//!    linger time); 4.11 calls `CCC::close` after that wait.
//!
//! What lives where: the trait and its input structs here; UDT's native DAIMD algorithm
//! (4.11 `CUDTCC`) in [`native`]; the fixed-rate "blast" controller in [`fixed_rate`]; the
//! BBR-like model-based controller (`--cc model`) in [`model`]; the LEDBAT scavenger for
//! background transfers (`--cc ledbat`) in [`ledbat`]; TCP's CUBIC (`--cc cubic`), the
//! simulator's stand-in for kernel TCP and the window arithmetic `model` uses beside
//! loss-based flows, in [`cubic`].
//!
//! Not done here: the `UDT_MAXBW` floor on the period (10⁶ · MSS / MAXBW µs) is applied by
//! the connection after reading [`Controller::send_period`], as 4.11 does it in
//! `CUDT::CCUpdate`, so every controller gets it for free.

use std::fmt;
use std::time::Duration;

use crate::seq::SeqNumber;
use crate::time::Instant;

pub mod cubic;
pub mod fixed_rate;
pub mod ledbat;
mod loss_tracker;
pub mod model;
pub mod native;
mod rtt_sample;
pub mod sparse_acks;
mod two_bucket;

#[cfg(test)]
mod tests;

pub use cubic::{Cubic, CubicConfig, CubicFactory};
pub use fixed_rate::{FixedRate, FixedRateFactory};
pub use ledbat::{Ledbat, LedbatConfig, LedbatFactory, LedbatPhase};
pub use model::{ModelBased, ModelConfig, ModelFactory, ModelMode};
pub use native::{Native, NativeConfig, NativeFactory};

/// UDT's synchronisation interval: 10 ms (4.11 `m_iSYNInterval`). The native controller's
/// rate-control interval and ACK timer, and the cap the connection puts on any
/// controller-requested ACK period.
pub const SYN: Duration = Duration::from_micros(10_000);

/// What a controller learns when the connection is established (4.11 sets these CCC members
/// just before calling `init()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControllerInit {
    /// Negotiated maximum segment size in bytes, *including* the 28 bytes of IP + UDP
    /// headers (4.11 `m_iMSS`, 1500 by default).
    pub mss: u32,
    /// The peer's advertised flow window in packets (4.11 `m_dMaxCWndSize`).
    pub max_window_pkts: u32,
    /// The first sequence number this side will send (the ISN). 4.11's `m_iSndCurrSeqNo` at
    /// `init()` time is `isn - 1`.
    pub isn: SeqNumber,
    /// The sender's RTT estimate (100 ms unless a cached value exists).
    pub rtt: Duration,
    /// Smoothed receive rate A in packets per second (starts at 16, §4.9).
    pub recv_rate_pkts: u32,
    /// Smoothed link capacity B in packets per second (starts at 1, §4.9).
    pub bandwidth_pkts: u32,
    /// Seed for any randomness the controller uses; same seed, same behaviour.
    pub seed: u64,
}

impl Default for ControllerInit {
    /// 4.11's starting values: MSS 1500, window 8192, RTT 100 ms, A = 16, B = 1.
    fn default() -> Self {
        Self {
            mss: 1500,
            max_window_pkts: 8192,
            isn: SeqNumber::new(0),
            rtt: Duration::from_micros(100_000),
            recv_rate_pkts: 16,
            bandwidth_pkts: 1,
            seed: 0,
        }
    }
}

/// Inputs of [`Controller::on_ack`]: a numbered ACK that advanced the send buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckInfo {
    /// The ACK number: the first sequence number the receiver has not got yet.
    pub ack: SeqNumber,
    /// The sender's smoothed RTT, already updated with this ACK's sample.
    pub rtt: Duration,
    /// Sender-smoothed receive rate A in packets per second.
    pub recv_rate_pkts: u32,
    /// Sender-smoothed link capacity B in packets per second.
    pub bandwidth_pkts: u32,
    /// The largest sequence number sent so far (4.11 `m_iSndCurrSeqNo`).
    pub largest_sent: SeqNumber,
    /// When the receiver got the newest data packet this ACK reports on, in microseconds of
    /// the receiver's own clock (wrapping): ours stamp it in the header's timestamp, 4.11
    /// sends 0 there (`None`). Differences between reports give the receiver's delivery
    /// spans, free of the delays the reports met on their way.
    pub receiver_time: Option<u32>,
}

/// One lost range of a NAK, inclusive: the wire type itself, so a NAK reaches the
/// controller without conversion.
pub use crate::wire::SeqRange as LossRange;

/// Inputs of [`Controller::on_loss`]: one NAK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossInfo<'a> {
    /// The first sequence number the NAK reports (4.11 `losslist[0] & 0x7FFFFFFF`), which
    /// is all the native algorithm looks at. Equals `ranges[0].first` when `ranges` is not
    /// empty.
    pub first_lost: SeqNumber,
    /// The decoded ranges, in NAK order, for controllers that want the whole report.
    pub ranges: &'a [LossRange],
    /// The largest sequence number sent so far (4.11 `m_iSndCurrSeqNo`).
    pub largest_sent: SeqNumber,
    /// The sender's smoothed RTT.
    pub rtt: Duration,
    /// Sender-smoothed receive rate A in packets per second.
    pub recv_rate_pkts: u32,
    /// Sender-smoothed link capacity B in packets per second.
    pub bandwidth_pkts: u32,
    /// As [`AckInfo::receiver_time`], for the data packet whose arrival showed the loss.
    pub receiver_time: Option<u32>,
}

/// Inputs of [`Controller::on_timeout`]: an EXP expiry while data was waiting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeoutInfo {
    /// The sender's smoothed RTT.
    pub rtt: Duration,
    /// Sender-smoothed receive rate A in packets per second.
    pub recv_rate_pkts: u32,
    /// The largest sequence number sent so far.
    pub largest_sent: SeqNumber,
}

/// Inputs of [`Controller::on_packet_sent`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentInfo {
    /// The packet's sequence number.
    pub seq: SeqNumber,
    /// UDT packet length in bytes (header + payload, without IP/UDP).
    pub len: usize,
    /// Whether this is a retransmission.
    pub retransmit: bool,
    /// Whether the sender has nothing more to send after this packet: no unsent data and no
    /// retransmission waiting. Rate samples taken over such packets measure the
    /// application's pace, not the path's (a handshake's request and reply, a trickle), and
    /// a controller should not read them as the path's capacity.
    pub app_limited: bool,
}

/// Inputs of [`Controller::on_packet_received`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceivedInfo {
    /// The packet's sequence number.
    pub seq: SeqNumber,
    /// UDT packet length in bytes (header + payload, without IP/UDP).
    pub len: usize,
}

/// A congestion controller: UDT4's CCC hooks plus the outputs the connection reads back.
///
/// Every hook has an empty default, so a controller implements only what it reacts to. The
/// outputs are read after each hook; the connection copies them into its pacing timer and
/// window exactly where 4.11's `CCUpdate` does.
#[allow(unused_variables)]
pub trait Controller: Send + fmt::Debug {
    /// The connection is established (4.11 `CCC::init`).
    fn init(&mut self, now: Instant, init: &ControllerInit) {}
    /// A numbered ACK advanced the send buffer (4.11 `onACK`).
    fn on_ack(&mut self, now: Instant, ack: &AckInfo) {}
    /// The receiver reported its front (a peer that announced
    /// [`Capabilities::ACK_FRONT`](crate::wire::Capabilities::ACK_FRONT)): everything before
    /// `front` has arrived or is in its loss list, though the ACK number stops at the first
    /// hole. Called after [`Controller::on_ack`] with the same `ack`, or alone when the ACK
    /// did not advance the send buffer (a hole holds it).
    fn on_front(&mut self, now: Instant, front: SeqNumber, ack: &AckInfo) {}
    /// A NAK arrived (4.11 `onLoss`).
    fn on_loss(&mut self, now: Instant, loss: &LossInfo<'_>) {}
    /// The EXP timer expired with data in the send buffer (4.11 `onTimeout`).
    fn on_timeout(&mut self, now: Instant, info: &TimeoutInfo) {}
    /// A data packet is about to be sent (4.11 `onPktSent`). Hot path: keep it O(1).
    fn on_packet_sent(&mut self, now: Instant, info: &SentInfo) {}
    /// A data packet arrived (4.11 `onPktReceived`). Hot path: keep it O(1).
    fn on_packet_received(&mut self, now: Instant, info: &ReceivedInfo) {}
    /// A user-defined control packet (type 0x7FFF) arrived (4.11 `processCustomMsg`);
    /// `ext_type` is the header's extended type, `body` the raw control body.
    fn on_custom_message(&mut self, now: Instant, ext_type: u16, body: &[u8]) {}
    /// A custom control message (type 0x7FFF) this controller wants sent to the peer, as
    /// `(ext_type, body)` (4.11 `sendCustomMsg`). The connection drains this after each hook.
    fn poll_custom_message(&mut self) -> Option<(u16, Vec<u8>)> {
        None
    }
    /// The application closed the connection, which now stops taking data and drains (4.11
    /// `CCC::close`). Called once; drain-time hooks may follow.
    fn close(&mut self) {}

    /// Congestion window in packets (4.11 `m_dCWndSize`). The connection sends at most
    /// min(this, flow window) unacknowledged packets.
    fn window_pkts(&self) -> f64;
    /// Interval between data packets (4.11 `m_dPktSndPeriod`). Always positive for the
    /// built-in controllers; the native one starts at 1 µs (window-limited, unpaced).
    fn send_period(&self) -> Duration;
    /// Whether this controller sizes its windows for ACKs up to [`sparse_acks::MAX_PERIOD`]
    /// apart (see [`sparse_acks`]): the connection then announces it, and a receiver of ours
    /// spaces its ACKs by the arrival speed. Read when the announcement goes out and when
    /// the peer's arrives; it should not change over a connection.
    fn sizes_for_sparse_acks(&self) -> bool {
        false
    }
    /// The peer's receiver spaces its ACKs for this controller ([`sparse_acks::period_at`]),
    /// or (`false`) acknowledges every [`SYN`] as UDT does. Told after [`Controller::init`]
    /// once the peer's announcement is known; only controllers that
    /// [`size for it`](Controller::sizes_for_sparse_acks) are ever told `true`.
    fn set_sparse_acks(&mut self, on: bool) {}
    /// ACK timer period wanted by the controller (4.11 `setACKTimer`; the connection caps it
    /// at [`SYN`]). `None` means the default, [`SYN`].
    fn ack_period(&self) -> Option<Duration> {
        None
    }
    /// Send a full ACK every this many received packets (4.11 `setACKInterval`); `None` for
    /// off.
    fn ack_interval_pkts(&self) -> Option<u32> {
        None
    }
    /// A fixed retransmission timeout replacing the EXP formula (4.11 `setRTO`), or `None`.
    fn rto(&self) -> Option<Duration> {
        None
    }
    /// A short name for logs and stats.
    fn name(&self) -> &'static str;
    /// Whether pacing trains should stay as short as for a peer that takes no GSO trains (at
    /// most 4 packets, within 1 ms; see `pacer`) instead of 16 packets or more where the
    /// path allows: a train reaches the bottleneck as one burst, and where other flows
    /// keep the queue full whatever they lose, a burst keeps its first packet or two and
    /// loses the rest. Long trains save wake-ups at both ends, so a controller asks for this
    /// only while it sends into such a queue.
    fn short_trains(&self) -> bool {
        false
    }
}

/// Builds one [`Controller`] per connection; shared by every connection of an endpoint.
pub trait ControllerFactory: Send + Sync + fmt::Debug {
    /// A fresh controller, to be [`Controller::init`]ed by the connection.
    fn build(&self) -> Box<dyn Controller>;
    /// The name of the controllers this factory builds.
    fn name(&self) -> &'static str;
}

/// Converts a period kept as `f64` microseconds (4.11's representation) into a `Duration`,
/// rounded to the nanosecond. A positive period never becomes zero (at least 1 ns), so the
/// connection never sees a zero interval from a controller that meant "very fast"; a
/// non-positive or NaN value becomes zero and a huge one saturates.
pub(crate) fn duration_from_micros_f64(micros: f64) -> Duration {
    if micros.is_nan() || micros <= 0.0 {
        return Duration::ZERO;
    }
    // `as` saturates at u64::MAX for huge (and infinite) values.
    let nanos = (micros * 1000.0).round().max(1.0) as u64;
    Duration::from_nanos(nanos)
}
