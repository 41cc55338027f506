//! [`LinkConfig`]: the knobs of one link direction, with by-value builder setters.
//!
//! Kept apart from the link so scenario files (the lab's TOML) and tests can build configs
//! without touching the simulation state.

use std::time::Duration;

use crate::loss::LossModel;

/// Configuration of one link direction. [`Default`] is a perfect link: infinite rate, zero
/// delay, no loss or other impairment.
///
/// Probabilities outside `[0, 1]` are clamped when applied (NaN counts as 0).
///
/// ```
/// use std::time::Duration;
/// use udt_netsim::{LinkConfig, LossModel};
///
/// let wan = LinkConfig::new()
///     .rate_bps(1_000_000_000)
///     .delay(Duration::from_millis(50))
///     .queue_bytes(LinkConfig::bdp_bytes(1_000_000_000, Duration::from_millis(100)))
///     .loss(LossModel::bernoulli(0.01));
/// assert_eq!(wan.queue_bytes, 12_500_000);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    /// Link rate in bit/s; `None` = infinite (no serialization delay and no queue). A rate of 0
    /// is treated as 1 bit/s.
    pub rate_bps: Option<u64>,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Extra uniformly random delay in `[0, jitter]`, drawn per packet.
    pub jitter: Duration,
    /// If false (the default), jitter never reorders: a packet's delivery time is raised to the
    /// previous packet's, as on a real path where jitter comes from queues that stay FIFO. If
    /// true, packets may overtake each other.
    ///
    /// When packets are spaced much closer than `jitter`, the FIFO floor lifts most of them
    /// toward the top of the range, so the mean extra delay is then above `jitter / 2`.
    pub jitter_reorders: bool,
    /// Drop-tail limit on the bytes accepted but not yet serialized (the packet being
    /// serialized counts until it has departed). Ignored with an infinite rate.
    pub queue_bytes: usize,
    /// Random loss, applied to each packet on arrival, before the queue.
    pub loss: LossModel,
    /// Probability that a packet gets an extra `reorder_delay`, so later packets overtake it.
    pub reorder_prob: f64,
    /// The extra delay of a reordered packet.
    pub reorder_delay: Duration,
    /// Probability that a packet is delivered twice (the copy gets its own jitter, reordering
    /// and corruption draws).
    pub duplicate_prob: f64,
    /// Probability that one uniformly chosen bit of a packet is flipped.
    pub corrupt_prob: f64,
    /// Packets longer than this many bytes are dropped.
    pub mtu: usize,
    /// Stalls a second (a Poisson process; at or below 0, or NaN, none): the whole link
    /// stops for a while, as a preempted forwarder does, then takes in what arrived and
    /// delivers what fell due meanwhile at once (see the `stall` module).
    pub stall_rate: f64,
    /// The longest stall; lengths are uniform in (0, `stall_max`]. Zero means no stalls.
    pub stall_max: Duration,
}

impl LinkConfig {
    /// A perfect link (same as [`Default`]); chain the setters below to impair it.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bandwidth-delay product in bytes, `rate_bps * rtt / 8`: the classic queue size that
    /// lets one loss-based flow keep the link busy. Saturates at `usize::MAX`.
    pub fn bdp_bytes(rate_bps: u64, rtt: Duration) -> usize {
        u128::from(rate_bps)
            .checked_mul(rtt.as_nanos())
            .map(|bits_ns| bits_ns / (8 * 1_000_000_000))
            .and_then(|bytes| usize::try_from(bytes).ok())
            .unwrap_or(usize::MAX)
    }

    /// Sets a finite link rate in bit/s.
    #[must_use]
    pub fn rate_bps(mut self, rate_bps: u64) -> Self {
        self.rate_bps = Some(rate_bps);
        self
    }

    /// Removes the rate limit (infinite rate, no queue).
    #[must_use]
    pub fn unlimited_rate(mut self) -> Self {
        self.rate_bps = None;
        self
    }

    /// Sets the one-way propagation delay.
    #[must_use]
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Sets the maximum extra random delay.
    #[must_use]
    pub fn jitter(mut self, jitter: Duration) -> Self {
        self.jitter = jitter;
        self
    }

    /// Lets jitter reorder packets (see [`LinkConfig::jitter_reorders`]).
    #[must_use]
    pub fn jitter_reorders(mut self, reorders: bool) -> Self {
        self.jitter_reorders = reorders;
        self
    }

    /// Sets the drop-tail queue limit in bytes.
    #[must_use]
    pub fn queue_bytes(mut self, queue_bytes: usize) -> Self {
        self.queue_bytes = queue_bytes;
        self
    }

    /// Sets the random loss model.
    #[must_use]
    pub fn loss(mut self, loss: LossModel) -> Self {
        self.loss = loss;
        self
    }

    /// Delays a fraction `prob` of packets by an extra `delay`, so later ones overtake them.
    #[must_use]
    pub fn reorder(mut self, prob: f64, delay: Duration) -> Self {
        self.reorder_prob = prob;
        self.reorder_delay = delay;
        self
    }

    /// Sets the duplication probability.
    #[must_use]
    pub fn duplicate(mut self, prob: f64) -> Self {
        self.duplicate_prob = prob;
        self
    }

    /// Sets the single-bit corruption probability.
    #[must_use]
    pub fn corrupt(mut self, prob: f64) -> Self {
        self.corrupt_prob = prob;
        self
    }

    /// Stops the link `rate` times a second on average, each time for up to `max`.
    #[must_use]
    pub fn stalls(mut self, rate: f64, max: Duration) -> Self {
        self.stall_rate = rate;
        self.stall_max = max;
        self
    }

    /// Sets the largest packet the link carries, in bytes.
    #[must_use]
    pub fn mtu(mut self, mtu: usize) -> Self {
        self.mtu = mtu;
        self
    }

    /// Default drop-tail limit: 1 MiB.
    pub const DEFAULT_QUEUE_BYTES: usize = 1 << 20;

    /// Default MTU: 65 535 bytes, the largest IPv4 datagram, so nothing realistic is dropped.
    pub const DEFAULT_MTU: usize = 65_535;
}

impl Default for LinkConfig {
    fn default() -> Self {
        Self {
            rate_bps: None,
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            jitter_reorders: false,
            queue_bytes: Self::DEFAULT_QUEUE_BYTES,
            loss: LossModel::None,
            reorder_prob: 0.0,
            reorder_delay: Duration::ZERO,
            duplicate_prob: 0.0,
            corrupt_prob: 0.0,
            mtu: Self::DEFAULT_MTU,
            stall_rate: 0.0,
            stall_max: Duration::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bdp() {
        let rtt = Duration::from_millis(100);
        assert_eq!(LinkConfig::bdp_bytes(1_000_000_000, rtt), 12_500_000);
        assert_eq!(LinkConfig::bdp_bytes(0, rtt), 0);
        assert_eq!(LinkConfig::bdp_bytes(u64::MAX, Duration::MAX), usize::MAX);
    }

    #[test]
    fn builder_sets_fields() {
        let c = LinkConfig::new()
            .rate_bps(10)
            .delay(Duration::from_millis(1))
            .jitter(Duration::from_millis(2))
            .jitter_reorders(true)
            .queue_bytes(3)
            .loss(LossModel::bernoulli(0.5))
            .reorder(0.25, Duration::from_millis(4))
            .duplicate(0.125)
            .corrupt(0.0625)
            .stalls(50.0, Duration::from_millis(3))
            .mtu(1500);
        assert_eq!(c.rate_bps, Some(10));
        assert_eq!(c.jitter, Duration::from_millis(2));
        assert!(c.jitter_reorders);
        assert_eq!((c.queue_bytes, c.mtu), (3, 1500));
        assert_eq!(
            (c.reorder_prob, c.duplicate_prob, c.corrupt_prob),
            (0.25, 0.125, 0.0625)
        );
        assert_eq!(
            (c.stall_rate, c.stall_max),
            (50.0, Duration::from_millis(3))
        );
        assert_eq!(c.unlimited_rate().rate_bps, None);
    }
}
