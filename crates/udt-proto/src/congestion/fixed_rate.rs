//! A fixed-rate ("blast") controller: paces at a configured byte rate and never backs off.
//!
//! This is what a UDT4 user got with `UDT_MAXBW` plus a CCC whose hooks do nothing: the
//! period is `MSS / rate` from the start, the window is the peer's whole flow window, and
//! losses and timeouts are ignored (retransmission still happens, it just is not slowed
//! down). Useful on dedicated links and as a baseline in the lab. It is not TCP-friendly.

use std::time::Duration;

use super::{duration_from_micros_f64, Controller, ControllerFactory, ControllerInit};
use crate::time::Instant;

/// Paces at `rate_bytes_per_sec` (counting whole MSS-sized datagrams, headers included, the
/// way 4.11's MAXBW does) and ignores congestion signals.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedRate {
    /// Target rate in bytes per second (at least 1).
    rate_bytes_per_sec: u64,
    /// Window override in packets; `None` means the peer's flow window.
    window_override_pkts: Option<u32>,
    mss: u32,
    window_pkts: f64,
}

impl FixedRate {
    /// The smallest window this controller reports, in packets (4.11's CCC default window).
    pub const MIN_WINDOW_PKTS: f64 = 16.0;

    /// A controller sending `rate_bytes_per_sec` (0 is treated as 1 B/s). Before
    /// [`Controller::init`] it assumes a 1500-byte MSS and an 8192-packet window.
    pub fn new(rate_bytes_per_sec: u64) -> Self {
        let mut fixed = Self {
            rate_bytes_per_sec: rate_bytes_per_sec.max(1),
            window_override_pkts: None,
            mss: 0,
            window_pkts: 0.0,
        };
        fixed.apply_init(&ControllerInit::default());
        fixed
    }

    /// Use `pkts` as the congestion window instead of the peer's flow window (still at
    /// least [`Self::MIN_WINDOW_PKTS`]).
    pub fn with_window_pkts(mut self, pkts: u32) -> Self {
        self.window_override_pkts = Some(pkts);
        self.apply_init(&ControllerInit {
            mss: self.mss,
            ..ControllerInit::default()
        });
        self
    }

    /// The target rate in bytes per second.
    pub fn rate_bytes_per_sec(&self) -> u64 {
        self.rate_bytes_per_sec
    }

    /// The inter-packet period in microseconds: `MSS · 10⁶ / rate`.
    pub fn period_us(&self) -> f64 {
        f64::from(self.mss) * 1_000_000.0 / self.rate_bytes_per_sec as f64
    }

    fn apply_init(&mut self, init: &ControllerInit) {
        self.mss = init.mss.max(1);
        let window = self.window_override_pkts.unwrap_or(init.max_window_pkts);
        self.window_pkts = f64::from(window).max(Self::MIN_WINDOW_PKTS);
    }
}

impl Controller for FixedRate {
    fn init(&mut self, _now: Instant, init: &ControllerInit) {
        self.apply_init(init);
    }

    fn window_pkts(&self) -> f64 {
        self.window_pkts
    }

    fn send_period(&self) -> Duration {
        duration_from_micros_f64(self.period_us())
    }

    fn name(&self) -> &'static str {
        FixedRateFactory::NAME
    }
}

/// Builds [`FixedRate`] controllers for one rate (and optional window override).
#[derive(Clone, Debug, PartialEq)]
pub struct FixedRateFactory {
    /// Target rate in bytes per second.
    pub rate_bytes_per_sec: u64,
    /// Window override in packets; `None` means the peer's flow window.
    pub window_pkts: Option<u32>,
}

impl FixedRateFactory {
    /// A factory for `rate_bytes_per_sec` with the peer's flow window as the window.
    pub fn new(rate_bytes_per_sec: u64) -> Self {
        Self {
            rate_bytes_per_sec,
            window_pkts: None,
        }
    }

    /// The controller's name in logs, stats and `--cc`.
    pub const NAME: &'static str = "fixed-rate";
}

impl ControllerFactory for FixedRateFactory {
    fn build(&self) -> Box<dyn Controller> {
        let fixed = FixedRate::new(self.rate_bytes_per_sec);
        Box::new(match self.window_pkts {
            Some(pkts) => fixed.with_window_pkts(pkts),
            None => fixed,
        })
    }

    fn name(&self) -> &'static str {
        Self::NAME
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::congestion::{LossInfo, LossRange, TimeoutInfo};
    use crate::seq::SeqNumber;

    #[test]
    fn period_is_mss_over_rate_and_ignores_congestion() {
        // 1 Gbit/s = 125 000 000 B/s; 1500 B per packet => 12 µs.
        let mut fixed = FixedRate::new(125_000_000);
        let init = ControllerInit {
            max_window_pkts: 25_600,
            ..ControllerInit::default()
        };
        fixed.init(Instant::ZERO, &init);
        assert_eq!(fixed.period_us(), 12.0);
        assert_eq!(fixed.send_period(), Duration::from_micros(12));
        assert_eq!(fixed.window_pkts(), 25_600.0);

        let ranges = [LossRange {
            first: SeqNumber::new(3),
            last: SeqNumber::new(9),
        }];
        let loss = LossInfo {
            first_lost: SeqNumber::new(3),
            ranges: &ranges,
            largest_sent: SeqNumber::new(20),
            rtt: Duration::from_millis(100),
            recv_rate_pkts: 10,
            bandwidth_pkts: 10,
            receiver_time: None,
        };
        fixed.on_loss(Instant::from_micros(5), &loss);
        let timeout = TimeoutInfo {
            rtt: Duration::from_millis(100),
            recv_rate_pkts: 10,
            largest_sent: SeqNumber::new(20),
        };
        fixed.on_timeout(Instant::from_micros(6), &timeout);
        assert_eq!(fixed.send_period(), Duration::from_micros(12));
        assert_eq!(fixed.window_pkts(), 25_600.0);
    }

    #[test]
    fn factory_applies_window_override_and_floors() {
        let factory = FixedRateFactory {
            rate_bytes_per_sec: 0,
            window_pkts: Some(4),
        };
        let mut fixed = factory.build();
        fixed.init(Instant::ZERO, &ControllerInit::default());
        assert_eq!(fixed.window_pkts(), FixedRate::MIN_WINDOW_PKTS);
        // Rate 0 is treated as 1 B/s: 1500 s per packet.
        assert_eq!(fixed.send_period(), Duration::from_secs(1500));
        assert_eq!(fixed.name(), "fixed-rate");
    }
}
