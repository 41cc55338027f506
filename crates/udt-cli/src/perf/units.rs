//! Human units for `udt perf`: parsing rates (`--maxbw 1.5gbit`) and sizes (`-n 1G`,
//! `--sndbuf 16M`), and printing rates and byte counts.
//!
//! Conventions follow iperf3: rates are decimal and in **bits** per second unless a capital
//! `B` says bytes (`100M` = 100 Mbit/s, `1.5gbit` = 1.5 Gbit/s, `10MB/s` = 10 megabytes per
//! second); sizes are **binary** bytes (`16M` = 16 MiB, `1G` = 1 GiB; `K`, `M`, `G`, `T`,
//! optionally followed by `B` or `iB`).

/// Parses a rate into **bytes** per second (rounded down, at least 1 for any positive
/// input). The error says what was wrong and shows valid forms.
pub fn parse_rate(text: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "cannot read rate {text:?}: use e.g. 100M, 1G, 1.5gbit (bits/s) or 10MB/s (bytes/s)"
        )
    };
    let (number, rest) = split_number(text).ok_or_else(bad)?;
    let (prefix, unit) = split_prefix(rest, 1000.0);
    let bits_per_unit = match unit {
        "" | "bit" | "bit/s" | "bits" | "bits/s" | "bps" | "b" | "b/s" => 1.0,
        "B" | "B/s" | "Bps" | "byte" | "bytes" | "byte/s" | "bytes/s" => 8.0,
        _ if unit.eq_ignore_ascii_case("bit") || unit.eq_ignore_ascii_case("bit/s") => 1.0,
        _ => return Err(bad()),
    };
    let bytes = number * prefix * bits_per_unit / 8.0;
    if !(bytes.is_finite() && bytes > 0.0 && bytes < u64::MAX as f64) {
        return Err(format!(
            "rate {text:?} is not a positive, finite rate: use e.g. 100M or 1G"
        ));
    }
    Ok((bytes as u64).max(1))
}

/// Parses a size in bytes with binary prefixes (`K` = 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "cannot read size {text:?}: use bytes with an optional K, M, G or T (binary), e.g. 16M"
        )
    };
    let (number, rest) = split_number(text).ok_or_else(bad)?;
    let (prefix, unit) = split_prefix(rest, 1024.0);
    if !matches!(unit, "" | "B" | "iB" | "b" | "ib") {
        return Err(bad());
    }
    let bytes = number * prefix;
    if !(bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64) {
        return Err(bad());
    }
    Ok(bytes.round() as u64)
}

/// Splits the leading decimal number (`1`, `1.5`, `.5`) from its unit.
fn split_number(text: &str) -> Option<(f64, &str)> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let number = text[..end].parse::<f64>().ok()?;
    Some((number, text[end..].trim_start()))
}

/// Splits an optional k/M/G/T prefix (any case) from the rest of the unit.
fn split_prefix(unit: &str, base: f64) -> (f64, &str) {
    let mut chars = unit.chars();
    let power = match chars.next().map(|c| c.to_ascii_lowercase()) {
        Some('k') => 1,
        Some('m') => 2,
        Some('g') => 3,
        Some('t') => 4,
        _ => return (1.0, unit),
    };
    (base.powi(power), chars.as_str())
}

/// A rate in bits per second as text with a decimal prefix: `941.3 Mbit/s`.
pub fn format_rate(bits_per_sec: f64) -> String {
    let (value, prefix) = scale(bits_per_sec, 1000.0, &["", "k", "M", "G", "T"]);
    format!("{value:.1} {prefix}bit/s")
}

/// A byte count as text with a binary prefix: `1.21 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    let (value, prefix) = scale(bytes as f64, 1024.0, &["", "Ki", "Mi", "Gi", "Ti"]);
    if prefix.is_empty() {
        format!("{bytes} B")
    } else {
        format!("{value:.2} {prefix}B")
    }
}

fn scale(mut value: f64, base: f64, prefixes: &[&'static str]) -> (f64, &'static str) {
    let mut index = 0;
    while value >= base && index + 1 < prefixes.len() {
        value /= base;
        index += 1;
    }
    (value, prefixes[index])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_bits_unless_capital_b() {
        assert_eq!(parse_rate("100M"), Ok(12_500_000));
        assert_eq!(parse_rate("1G"), Ok(125_000_000));
        assert_eq!(parse_rate("1.5gbit"), Ok(187_500_000));
        assert_eq!(parse_rate("1.5 Gbit/s"), Ok(187_500_000));
        assert_eq!(parse_rate("800k"), Ok(100_000));
        assert_eq!(parse_rate("8000"), Ok(1000));
        assert_eq!(parse_rate("10MB/s"), Ok(10_000_000));
        assert_eq!(parse_rate("10MBps"), Ok(10_000_000));
        assert_eq!(parse_rate("1"), Ok(1));
    }

    #[test]
    fn bad_rates_name_the_fix() {
        for bad in ["", "fast", "1X", "-5M", "1.2.3G", "0", "0M"] {
            let err = parse_rate(bad).unwrap_err();
            assert!(err.contains("e.g."), "{bad}: {err}");
            assert!(!err.contains('\n'));
        }
    }

    #[test]
    fn sizes_are_binary() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("16K"), Ok(16 * 1024));
        assert_eq!(parse_size("16KiB"), Ok(16 * 1024));
        assert_eq!(parse_size("1.5M"), Ok(1_572_864));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("2GB"), Ok(2 << 30));
        assert!(parse_size("1Q").is_err());
        assert!(parse_size("lots").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(format_rate(941_300_000.0), "941.3 Mbit/s");
        assert_eq!(format_rate(12.0), "12.0 bit/s");
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(3 << 29), "1.50 GiB");
    }
}
