//! [`Rate`] and [`parse_rate`]: link and sending rates, `100M`, `1.5gbit`, `10MB/s`.
//!
//! Bits unless a capital `B` says bytes, because links are quoted in bits (iperf3's `-b 100M`,
//! tc's `100mbit`) while buffers and files are counted in bytes. `bps` is bits (`100Mbps` is
//! 100 Mbit/s, as networking writes it; tc alone reads `mbps` as megabytes).

use std::fmt;
use std::str::FromStr;

use crate::number::{split_number, split_prefix};
use crate::ParseError;

/// A rate, held in bits per second: the unit links are quoted in. APIs that count bytes
/// (UDT_MAXBW, SO_MAX_PACING_RATE) take [`Self::bytes_per_sec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate {
    bits_per_sec: u64,
}

impl Rate {
    /// A rate of `bits_per_sec`.
    pub const fn from_bits_per_sec(bits_per_sec: u64) -> Self {
        Self { bits_per_sec }
    }

    /// The rate in bits per second.
    pub const fn bits_per_sec(self) -> u64 {
        self.bits_per_sec
    }

    /// The rate in bytes per second, rounded down but at least 1: byte-counting APIs read 0
    /// as "unlimited", the opposite of a tiny rate.
    pub const fn bytes_per_sec(self) -> u64 {
        let bytes = self.bits_per_sec / 8;
        if bytes == 0 {
            1
        } else {
            bytes
        }
    }

    /// The fastest rate [`parse_rate`] accepts, 1 Pbit/s (`1000T`): far above any link, and
    /// low enough that rate × time arithmetic in bits or nanoseconds cannot overflow.
    pub const MAX: Self = Self::from_bits_per_sec(1_000_000_000_000_000);
}

impl FromStr for Rate {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, ParseError> {
        parse_rate(text)
    }
}

impl fmt::Display for Rate {
    /// Plain bits per second (`1500000000 bit/s`): exact, and parses back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bit/s", self.bits_per_sec)
    }
}

/// Parses a rate: a decimal number, an optional SI prefix (`k`, `M`, `G`, `T`, any case,
/// powers of 1000) and a unit. Bits: none, `bit`, `bits`, `bit/s` (any case), `b`, `b/s`,
/// `bps`. Bytes: `B`, `B/s`, `Bps`, `byte`, `bytes`, `byte/s`. The rate must be at least
/// 1 bit/s and at most [`Rate::MAX`]; it is rounded to a whole bit per second.
pub fn parse_rate(text: &str) -> Result<Rate, ParseError> {
    let bad = || {
        ParseError::new(format!(
            "cannot read rate {text:?}: use e.g. 100M, 100mbit or 1.5Gbit/s (bits/s), or 10MB/s (bytes/s)"
        ))
    };
    let (number, rest) = split_number(text).ok_or_else(bad)?;
    let (power, unit) = split_prefix(rest);
    let bits_per_unit = bits_per_unit(unit).ok_or_else(bad)?;
    let bits = (number * 1000f64.powi(power) * bits_per_unit).round();
    if !(1.0..=Rate::MAX.bits_per_sec() as f64).contains(&bits) {
        return Err(ParseError::new(format!(
            "rate {text:?} is out of range: use 1 bit/s up to 1000T, e.g. 100M or 1G"
        )));
    }
    Ok(Rate::from_bits_per_sec(bits as u64))
}

/// Bits in one `unit` (after the prefix): 1 for bits, 8 for bytes, `None` if unknown. Only
/// the one-letter forms are case-sensitive, since there `b` and `B` are all that tells bits
/// from bytes.
fn bits_per_unit(unit: &str) -> Option<f64> {
    match unit {
        "" | "b" | "b/s" | "bps" => return Some(1.0),
        "B" | "B/s" | "Bps" => return Some(8.0),
        _ => {}
    }
    match unit.to_ascii_lowercase().as_str() {
        "bit" | "bits" | "bit/s" | "bits/s" => Some(1.0),
        "byte" | "bytes" | "byte/s" | "bytes/s" => Some(8.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(text: &str) -> u64 {
        parse_rate(text)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .bits_per_sec()
    }

    #[test]
    fn rates_are_bits_with_decimal_prefixes() {
        assert_eq!(bits("100M"), 100_000_000);
        assert_eq!(bits("1G"), 1_000_000_000);
        assert_eq!(bits("1.5G"), 1_500_000_000);
        assert_eq!(bits("45m"), 45_000_000);
        assert_eq!(bits("800k"), 800_000);
        assert_eq!(bits("64000"), 64_000);
        assert_eq!(bits("1"), 1);
        assert_eq!(bits("2T"), 2_000_000_000_000);
    }

    #[test]
    fn tc_and_iperf_spellings_agree() {
        for text in [
            "1.5gbit",
            "1.5Gbit",
            "1.5 Gbit/s",
            "1.5GBIT",
            "1.5gbits",
            "1.5Gb",
        ] {
            assert_eq!(bits(text), 1_500_000_000, "{text}");
        }
        for text in [
            "155mbit",
            "155Mbit/s",
            "155Mbps",
            "155mbps",
            "155Mb/s",
            "155M",
        ] {
            assert_eq!(bits(text), 155_000_000, "{text}");
        }
    }

    #[test]
    fn a_capital_b_means_bytes() {
        for text in ["10MB/s", "10MBps", "10MB", "10 Mbyte/s", "10mbytes"] {
            assert_eq!(bits(text), 80_000_000, "{text}");
        }
        assert_eq!(
            parse_rate("10MB/s").map(Rate::bytes_per_sec),
            Ok(10_000_000)
        );
    }

    #[test]
    fn bytes_per_sec_rounds_down_to_at_least_one() {
        assert_eq!(
            parse_rate("1.5gbit").map(Rate::bytes_per_sec),
            Ok(187_500_000)
        );
        assert_eq!(Rate::from_bits_per_sec(1).bytes_per_sec(), 1);
        assert_eq!(Rate::from_bits_per_sec(15).bytes_per_sec(), 1);
        assert_eq!(Rate::from_bits_per_sec(16).bytes_per_sec(), 2);
    }

    #[test]
    fn bad_rates_are_one_line_with_valid_forms() {
        let cases = [
            ("", "cannot read"),
            ("fast", "cannot read"),
            ("1X", "cannot read"),
            ("10 furlongs", "cannot read"),
            ("100MBPS", "cannot read"),
            ("-5M", "cannot read"),
            ("1.2.3G", "cannot read"),
            ("0", "out of range"),
            ("0M", "out of range"),
            ("0.4", "out of range"),
            ("1001T", "out of range"),
        ];
        for (text, want) in cases {
            let err = parse_rate(text).unwrap_err().to_string();
            assert!(err.contains(want) && err.contains("e.g."), "{text}: {err}");
            assert!(err.contains(&format!("{text:?}")), "{text}: {err}");
            assert!(!err.contains('\n'), "{text}: {err}");
        }
    }

    #[test]
    fn the_limits_are_accepted() {
        assert_eq!(parse_rate("1000T"), Ok(Rate::MAX));
        assert_eq!(
            parse_rate(&Rate::MAX.bits_per_sec().to_string()),
            Ok(Rate::MAX)
        );
        assert_eq!("1k".parse::<Rate>(), Ok(Rate::from_bits_per_sec(1000)));
    }
}
