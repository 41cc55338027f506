//! The one line the remote side prints on the SSH channel once it listens:
//!
//! ```text
//! UDT-SSH-READY 1 port=60001 addr=192.0.2.7 cwd=2f726f6f74 key=<64 hex digits>
//! ```
//!
//! `addr` is the address the SSH connection reached (`-` if unknown), `cwd` the remote working
//! directory's bytes in hex (relative remote paths start there), `key` the session key.
//!
//! The line carries the key, so nothing here puts the line, or any part of it, into an error:
//! [`ReadyError`] names only the field that was wrong.

use std::net::IpAddr;

use udt::SessionKey;
use zeroize::Zeroizing;

/// The first word of the line: anything else on the channel (a login script's chatter) is
/// skipped.
pub const PREFIX: &str = "UDT-SSH-READY";

/// The version of this line and of the exchange behind it.
pub const VERSION: u32 = 1;

/// The contents of the ready line.
#[derive(Debug, Clone)]
pub struct Ready {
    /// The UDP port the remote side listens on.
    pub port: u16,
    /// The address the SSH connection reached, if the remote side knew it.
    pub addr: Option<IpAddr>,
    /// The remote working directory (relative remote paths start there).
    pub cwd: Vec<u8>,
    /// The session key (its `Debug` shows no bytes).
    pub key: SessionKey,
}

/// Why a ready line was refused (never with the line's contents: it holds the key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReadyError {
    /// Another version of udt on the remote side.
    #[error("the remote udt speaks another version of the SSH start-up (update one side)")]
    Version,
    /// A field is missing or malformed.
    #[error("malformed start-up line from the remote udt (field {0})")]
    Field(&'static str),
}

impl Ready {
    /// The line, with its newline (wiped when dropped).
    pub fn to_line(&self) -> Zeroizing<String> {
        let addr = self.addr.map_or_else(|| "-".to_string(), |a| a.to_string());
        let key = self.key.to_hex();
        let mut line = Zeroizing::new(String::with_capacity(200 + 2 * self.cwd.len()));
        line.push_str(&format!(
            "{PREFIX} {VERSION} port={} addr={addr} cwd={} key=",
            self.port,
            hex(&self.cwd)
        ));
        line.push_str(&key);
        line.push('\n');
        line
    }

    /// Parse a line that starts with [`PREFIX`] (trailing whitespace allowed).
    pub fn parse(line: &str) -> Result<Self, ReadyError> {
        let mut words = line.split_ascii_whitespace();
        if words.next() != Some(PREFIX) {
            return Err(ReadyError::Field("prefix"));
        }
        if words.next() != Some("1") {
            return Err(ReadyError::Version);
        }
        let mut field = |name: &'static str| {
            words
                .next()
                .and_then(|w| w.strip_prefix(name))
                .and_then(|w| w.strip_prefix('='))
                .ok_or(ReadyError::Field(name))
        };
        let port = field("port")?
            .parse::<u16>()
            .ok()
            .filter(|&p| p > 0)
            .ok_or(ReadyError::Field("port"))?;
        let addr = match field("addr")? {
            "-" => None,
            a => Some(a.parse().map_err(|_| ReadyError::Field("addr"))?),
        };
        let cwd = unhex(field("cwd")?).ok_or(ReadyError::Field("cwd"))?;
        let key = SessionKey::from_hex(field("key")?).map_err(|_| ReadyError::Field("key"))?;
        if words.next().is_some() {
            return Err(ReadyError::Field("end"));
        }
        Ok(Self {
            port,
            addr,
            cwd,
            key,
        })
    }
}

/// Lowercase hex of `bytes` (paths: not secret).
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of an even-length hex string.
fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Ready {
        Ready {
            port: 60001,
            addr: Some("192.0.2.7".parse().unwrap()),
            cwd: b"/home/\xffme".to_vec(),
            key: SessionKey::from_bytes([0xab; 32]),
        }
    }

    #[test]
    fn the_line_round_trips() {
        let line = sample().to_line();
        assert!(line.starts_with(
            "UDT-SSH-READY 1 port=60001 addr=192.0.2.7 cwd=2f686f6d652fff6d65 key=abab"
        ));
        let back = Ready::parse(&line).unwrap();
        assert_eq!((back.port, back.addr), (60001, sample().addr));
        assert_eq!(back.cwd, sample().cwd);
        assert_eq!(*back.key.to_hex(), "ab".repeat(32));
        let v6 = Ready {
            addr: Some("::1".parse().unwrap()),
            ..sample()
        };
        assert_eq!(Ready::parse(&v6.to_line()).unwrap().addr, v6.addr);
        let none = Ready {
            addr: None,
            cwd: Vec::new(),
            ..sample()
        };
        let back = Ready::parse(&none.to_line()).unwrap();
        assert_eq!((back.addr, back.cwd.len()), (None, 0));
    }

    #[test]
    fn errors_never_show_the_key() {
        let good = sample().to_line();
        let cases = [
            good.replace(" 1 ", " 2 "),
            good.replace("port=60001", "port=0"),
            good.replace("addr=192.0.2.7", "addr=nope"),
            good.replace("cwd=2f", "cwd=2"),
            good.replace("key=ab", "key=zz"),
            good.replace("key=", "key=00"),
            format!("{} extra", good.trim_end()),
        ];
        for bad in cases {
            let err = Ready::parse(&bad).unwrap_err();
            assert!(!err.to_string().contains("abab"), "{err}");
        }
        assert_eq!(
            Ready::parse(&good.replace(" 1 ", " 2 ")).unwrap_err(),
            ReadyError::Version
        );
        assert!(!format!("{:?}", sample()).contains("abab"));
    }
}
