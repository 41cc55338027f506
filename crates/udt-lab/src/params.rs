//! [`LinkParams`]: what the user asks of the emulated link, and the parsers for the
//! command-line spellings only the lab has (`100ms`, `0.1%`, `1000` packets). Rates (`1gbit`)
//! and sizes (`4MiB`) are `udt_units`', shared with `udt perf`, so a spelling means the same
//! in both.
//!
//! Kept apart from the forwarder so the CLI, the tests and the experiment runner build the
//! same parameters, and so the translation into `udt-netsim` terms (one direction gets half the
//! RTT, the queue defaults to one BDP) is stated once.

use std::fmt;
use std::time::Duration;

use udt_netsim::{LinkConfig, LossModel};

/// A value on the command line that could not be parsed: the one error type of the
/// command line's values, rates and sizes included.
pub use udt_units::ParseError;

/// The drop-tail queue limit of each direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueLimit {
    /// This many full-size (MTU) packets.
    Packets(usize),
    /// This many bytes of IP packets.
    Bytes(usize),
}

/// The emulated link, the same in both directions.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkParams {
    /// Bottleneck rate in bit/s, counted on IP packets (headers included).
    pub rate_bps: u64,
    /// Round-trip propagation delay; each direction gets half.
    pub rtt: Duration,
    /// Random independent loss probability per packet, each direction.
    pub loss: f64,
    /// Extra uniform delay in `[0, jitter]` per packet, each direction, never reordering.
    pub jitter: Duration,
    /// Queue limit; `None` = one bandwidth-delay product (at least [`Self::MIN_QUEUE_PACKETS`]).
    pub queue: Option<QueueLimit>,
    /// MTU of the TUN devices, so the largest IP packet crossing the link.
    pub mtu: u32,
    /// Seed of the random draws (loss, jitter); the two directions derive their own.
    pub seed: u64,
}

impl LinkParams {
    /// A lossless link of `rate_bps` and `rtt` with the default queue, MTU 1500 and seed 1.
    pub fn new(rate_bps: u64, rtt: Duration) -> Self {
        Self {
            rate_bps,
            rtt,
            loss: 0.0,
            jitter: Duration::ZERO,
            queue: None,
            mtu: Self::DEFAULT_MTU,
            seed: 1,
        }
    }

    /// The queue limit of each direction in bytes.
    pub fn queue_bytes(&self) -> usize {
        let mtu = self.mtu as usize;
        match self.queue {
            Some(QueueLimit::Packets(n)) => n.saturating_mul(mtu),
            Some(QueueLimit::Bytes(n)) => n,
            None => LinkConfig::bdp_bytes(self.rate_bps, self.rtt)
                .max(Self::MIN_QUEUE_PACKETS.saturating_mul(mtu)),
        }
    }

    /// The `udt-netsim` configuration of one direction: half the RTT as delay.
    pub fn link_config(&self) -> LinkConfig {
        let loss = if self.loss > 0.0 {
            LossModel::bernoulli(self.loss)
        } else {
            LossModel::None
        };
        LinkConfig::new()
            .rate_bps(self.rate_bps)
            .delay(self.rtt / 2)
            .jitter(self.jitter)
            .queue_bytes(self.queue_bytes())
            .loss(loss)
            .mtu(self.mtu as usize)
    }

    /// The MTU of the TUN devices unless told otherwise: Ethernet's.
    pub const DEFAULT_MTU: u32 = 1500;

    /// Floor of the default queue, so a link with a tiny BDP (RTT 0) still absorbs a burst.
    pub const MIN_QUEUE_PACKETS: usize = 64;
}

impl fmt::Display for LinkParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| trim(d.as_secs_f64() * 1e3);
        write!(
            f,
            "rate {}, rtt {} ms, loss {}%, jitter {} ms, queue {} bytes ({} packets), mtu {}",
            format_rate(self.rate_bps),
            ms(self.rtt),
            trim(self.loss * 100.0),
            ms(self.jitter),
            self.queue_bytes(),
            self.queue_bytes() / self.mtu.max(1) as usize,
            self.mtu
        )
    }
}

/// `1000000000` → `1 Gbit/s`, `45000000` → `45 Mbit/s` (SI units, as rates are quoted).
pub fn format_rate(bps: u64) -> String {
    let units = [(1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")];
    for (scale, unit) in units {
        if bps as f64 >= scale {
            return format!("{} {unit}", trim(bps as f64 / scale));
        }
    }
    format!("{bps} bit/s")
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Parses a duration: `100ms`, `250us`, `1.5s`, `0` (a bare number is milliseconds).
pub fn parse_duration(s: &str) -> Result<Duration, ParseError> {
    let lower = s.trim().to_ascii_lowercase();
    let (number, suffix) = split_number(&lower);
    let scale = match suffix {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" | "" => 1e-3,
        "s" => 1.0,
        _ => {
            return Err(ParseError::new(format!(
                "unknown time unit in {s:?} (use us, ms, s)"
            )))
        }
    };
    let secs = parse_f64(number, s)? * scale;
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| *d <= Duration::from_secs(3600))
        .ok_or_else(|| ParseError::new(format!("duration {s:?} is out of range")))
}

/// Parses a loss probability: `0.1%` or a fraction `0.001`.
pub fn parse_loss(s: &str) -> Result<f64, ParseError> {
    let t = s.trim();
    let p = match t.strip_suffix('%') {
        Some(pct) => parse_f64(pct, s)? / 100.0,
        None => parse_f64(t, s)?,
    };
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(ParseError::new(format!(
            "loss {s:?} is not between 0 and 100%"
        )))
    }
}

/// Parses a queue limit: a bare number is packets (of the MTU); with a unit it is bytes, as
/// [`udt_units::parse_size`] reads them (`4MiB` and `4M` binary, `64KB` decimal).
pub fn parse_queue(s: &str) -> Result<QueueLimit, ParseError> {
    let (number, suffix) = split_number(s.trim());
    match suffix.to_ascii_lowercase().as_str() {
        "" | "p" | "pkt" | "pkts" | "packets" => {
            Ok(QueueLimit::Packets(parse_f64(number, s)? as usize))
        }
        _ => {
            let bytes = udt_units::parse_size(s).map_err(|_| {
                ParseError::new(format!(
                    "cannot read queue {s:?}: give packets (1000) or bytes with a unit, e.g. 4MiB or 64KB"
                ))
            })?;
            Ok(QueueLimit::Bytes(
                usize::try_from(bytes).unwrap_or(usize::MAX),
            ))
        }
    }
}

/// Splits `"100ms"` into `("100", "ms")`.
fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

fn parse_f64(number: &str, whole: &str) -> Result<f64, ParseError> {
    number
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| ParseError::new(format!("not a number: {whole:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_formatting() {
        assert_eq!(format_rate(1_000_000_000), "1 Gbit/s");
        assert_eq!(format_rate(155_520_000), "155.52 Mbit/s");
    }

    #[test]
    fn durations_losses_queues() {
        assert_eq!(parse_duration("100ms"), Ok(Duration::from_millis(100)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert!(parse_duration("5h").is_err());
        assert_eq!(parse_loss("0.1%"), Ok(0.001));
        assert_eq!(parse_loss("0.02"), Ok(0.02));
        assert!(parse_loss("120%").is_err());
        assert_eq!(parse_queue("1000"), Ok(QueueLimit::Packets(1000)));
        assert_eq!(parse_queue("4MiB"), Ok(QueueLimit::Bytes(4 << 20)));
        assert_eq!(parse_queue("64KB"), Ok(QueueLimit::Bytes(64_000)));
        assert_eq!(parse_queue("2M"), Ok(QueueLimit::Bytes(2 << 20)));
        assert_eq!(parse_queue("50 pkts"), Ok(QueueLimit::Packets(50)));
        let err = parse_queue("3 bananas").unwrap_err().to_string();
        assert!(err.contains("e.g. 4MiB") && !err.contains('\n'), "{err}");
    }

    #[test]
    fn default_queue_is_one_bdp_with_a_floor() {
        let p = LinkParams::new(1_000_000_000, Duration::from_millis(100));
        assert_eq!(p.queue_bytes(), 12_500_000);
        let c = p.link_config();
        assert_eq!(c.delay, Duration::from_millis(50));
        let p = LinkParams::new(1_000_000_000, Duration::ZERO);
        assert_eq!(p.queue_bytes(), 64 * 1500);
        let p = LinkParams {
            queue: Some(QueueLimit::Packets(10)),
            ..p
        };
        assert_eq!(p.queue_bytes(), 15_000);
    }
}
