//! The part rates and sizes share: a decimal number, then an optional SI letter (`k`, `M`,
//! `G`, `T`, any case), then a unit the caller interprets.

/// Splits the leading decimal number (`1`, `1.5`, `.5`) from what follows, trimming spaces
/// around both. `None` if there is no number, or a negative or malformed one (`-5`, `1.2.3`).
pub(crate) fn split_number(text: &str) -> Option<(f64, &str)> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let number = text[..end].parse::<f64>().ok()?;
    Some((number, text[end..].trim()))
}

/// Splits an optional `k`/`M`/`G`/`T` (any case) from the rest of the unit, giving the
/// prefix's power of 1000 or 1024 (0 without a prefix).
pub(crate) fn split_prefix(unit: &str) -> (i32, &str) {
    let mut chars = unit.chars();
    let power = match chars.next().map(|c| c.to_ascii_lowercase()) {
        Some('k') => 1,
        Some('m') => 2,
        Some('g') => 3,
        Some('t') => 4,
        _ => return (0, unit),
    };
    (power, chars.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_prefixes() {
        assert_eq!(split_number(" 1.5 Gbit/s "), Some((1.5, "Gbit/s")));
        assert_eq!(split_number(".5M"), Some((0.5, "M")));
        assert_eq!(split_number("-5M"), None);
        assert_eq!(split_number("1.2.3G"), None);
        assert_eq!(split_number("fast"), None);
        assert_eq!(split_prefix("Gbit"), (3, "bit"));
        assert_eq!(split_prefix("kiB"), (1, "iB"));
        assert_eq!(split_prefix("bit"), (0, "bit"));
        assert_eq!(split_prefix(""), (0, ""));
    }
}
