//! Text a peer chose (file names, its error messages), made safe for a terminal.

use std::fmt::Write as _;

/// `text` with every control character (C0, DEL, C1: escape sequences, carriage returns,
/// newlines) and every bidirectional override escaped as `\u{..}`, so that nothing a peer
/// sends can move the cursor, recolour, retitle, or reorder what the terminal shows.
pub fn terminal_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || is_bidi_control(c) {
            let _ = write!(out, "{}", c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// The Unicode bidirectional formatting characters (Trojan Source).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{061c}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_controls_do_not_reach_the_terminal() {
        let hostile = "f\x1b]0;owned\x07\x1b[2J\r\nudt: ok\u{9b}31m\u{202e}txt.exe\u{7f}";
        let safe = terminal_safe(hostile);
        assert!(
            !safe.chars().any(|c| c.is_control() || is_bidi_control(c)),
            "{safe:?}"
        );
        assert!(safe.starts_with("f\\u{1b}]0;owned\\u{7}"), "{safe}");
        assert_eq!(terminal_safe("plain ünï 文件"), "plain ünï 文件");
    }
}
