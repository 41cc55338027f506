//! Human units in `udt perf`'s reports: rates in decimal bits per second (`941.3 Mbit/s`,
//! as iperf3 prints them) and byte counts with binary prefixes (`1.21 GiB`). Reading rates
//! and sizes from the command line is `udt_units`' job, shared with `udt lab`.

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
    fn formatting() {
        assert_eq!(format_rate(941_300_000.0), "941.3 Mbit/s");
        assert_eq!(format_rate(12.0), "12.0 bit/s");
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(3 << 29), "1.50 GiB");
    }
}
