//! [`parse_size`]: byte counts and buffer sizes, `16M`, `4MiB`, `64KB`.
//!
//! A bare prefix is binary, as iperf3 reads `-n 1G` and as buffers are sized; an explicit
//! `B` after the prefix is the SI unit, so `MB` means 10⁶ bytes here exactly as it does in a
//! rate (`10MB/s`), and `MiB` is there for 2²⁰.

use crate::number::{split_number, split_prefix};
use crate::ParseError;

/// Parses a size in bytes: a decimal number, then optionally `K`, `M`, `G` or `T` (any case)
/// alone or with `iB` (binary: `16M` = `16MiB` = 16 × 2²⁰) or with `B` (decimal: `16MB` =
/// 16 × 10⁶); a plain `B` is bytes. Rounded to a whole byte.
pub fn parse_size(text: &str) -> Result<u64, ParseError> {
    let bad = || {
        ParseError::new(format!(
            "cannot read size {text:?}: use bytes with an optional K, M, G or T, e.g. 16M or 16MiB (binary) or 16MB (decimal)"
        ))
    };
    let (number, rest) = split_number(text).ok_or_else(bad)?;
    let (power, unit) = split_prefix(rest);
    let base: f64 = match (power, unit.to_ascii_lowercase().as_str()) {
        (_, "") | (1.., "ib") => 1024.0,
        (_, "b") => 1000.0,
        _ => return Err(bad()),
    };
    let bytes = (number * base.powi(power)).round();
    // `u64::MAX as f64` rounds up to 2^64, itself out of range; an endless digit string
    // parses as infinity, which this also refuses.
    if bytes >= u64::MAX as f64 {
        return Err(ParseError::new(format!(
            "size {text:?} is out of range: use e.g. 16M or 1G"
        )));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_prefixes_and_ib_are_binary() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("1000B"), Ok(1000));
        assert_eq!(parse_size("16K"), Ok(16 << 10));
        assert_eq!(parse_size("16KiB"), Ok(16 << 10));
        assert_eq!(parse_size("16kib"), Ok(16 << 10));
        assert_eq!(parse_size("1.5M"), Ok(1_572_864));
        assert_eq!(parse_size("4MiB"), Ok(4 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("2 GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1T"), Ok(1 << 40));
        assert_eq!(parse_size("0"), Ok(0));
    }

    #[test]
    fn a_prefix_with_b_is_decimal() {
        assert_eq!(parse_size("64KB"), Ok(64_000));
        assert_eq!(parse_size("64kB"), Ok(64_000));
        assert_eq!(parse_size("2GB"), Ok(2_000_000_000));
        assert_eq!(parse_size("16mb"), Ok(16_000_000));
    }

    #[test]
    fn bad_sizes_are_one_line_with_valid_forms() {
        for text in [
            "",
            "lots",
            "1Q",
            "5iB",
            "-1K",
            "1.2.3M",
            "16 MiBs",
            "99999999999T",
        ] {
            let err = parse_size(text).unwrap_err().to_string();
            assert!(err.contains("e.g. 16M"), "{text}: {err}");
            assert!(err.contains(&format!("{text:?}")), "{text}: {err}");
            assert!(!err.contains('\n'), "{text}: {err}");
        }
    }
}
