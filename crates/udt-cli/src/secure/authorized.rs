//! The server's authorized keys: which client keys are admitted, and with what permission.
//!
//! ```text
//! # one client per line: key, access, optional comment
//! udt-x25519 3b1f...c9 read-only            alice's laptop
//! udt-x25519 77aa...01 read-write:incoming  the lab's uploader
//! ```
//! Access is `read-only` or `read-write`, either optionally limited to a sub-directory of the
//! served root (`:DIR`, a relative path without `..`). An unknown key is refused.

use std::fs;
use std::path::Path;

use anyhow::{bail, Context};

use super::PublicKey;
use crate::transfer::paths::RelPath;

/// What an admitted client may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// It may upload (create files and directories).
    pub writable: bool,
    /// It sees only this sub-directory of the root (`None`: the whole root).
    pub subdir: Option<RelPath>,
}

/// The parsed authorized keys file.
#[derive(Debug, Clone, Default)]
pub struct AuthorizedKeys {
    entries: Vec<(PublicKey, Access)>,
}

impl AuthorizedKeys {
    /// Read `path`; a line that does not parse is an error naming the line.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text =
            fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        Self::parse(&text).with_context(|| path.display().to_string())
    }

    /// Parse the file's text.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let mut entries = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            let Some(key) = PublicKey::from_words(&mut words) else {
                bail!(
                    "line {}: expected `udt-x25519 <64 hex digits> <access>`",
                    n + 1
                );
            };
            let access = match words.next().map(parse_access) {
                Some(Ok(access)) => access,
                Some(Err(e)) => bail!("line {}: {e}", n + 1),
                None => bail!("line {}: missing access (read-only or read-write)", n + 1),
            };
            if entries.iter().any(|(k, _)| *k == key) {
                bail!("line {}: key listed twice", n + 1);
            }
            entries.push((key, access));
        }
        Ok(Self { entries })
    }

    /// The access of `key`, if it is admitted.
    pub fn access(&self, key: &PublicKey) -> Option<&Access> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, a)| a)
    }

    /// How many keys are admitted.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key is admitted.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn parse_access(word: &str) -> Result<Access, String> {
    let (kind, subdir) = match word.split_once(':') {
        Some((kind, dir)) => (kind, Some(dir)),
        None => (word, None),
    };
    let writable = match kind {
        "read-only" => false,
        "read-write" => true,
        other => {
            return Err(format!(
                "unknown access {other:?}: use read-only or read-write"
            ))
        }
    };
    let subdir = match subdir {
        None => None,
        Some(dir) => Some(
            RelPath::parse(dir.as_bytes())
                .map_err(|e| format!("sub-directory {dir:?}: {}", e.message))?,
        ),
    };
    Ok(Access { writable, subdir })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> PublicKey {
        PublicKey([b; 32])
    }

    #[test]
    fn keys_get_their_access_and_strangers_none() {
        let text = format!(
            "# comment\n\n{} read-only alice\n{} read-write:in/box uploader\n",
            key(1).to_line(),
            key(2).to_line()
        );
        let auth = AuthorizedKeys::parse(&text).unwrap();
        assert_eq!(auth.len(), 2);
        assert_eq!(
            auth.access(&key(1)),
            Some(&Access {
                writable: false,
                subdir: None
            })
        );
        let a2 = auth.access(&key(2)).unwrap();
        assert!(a2.writable);
        assert_eq!(a2.subdir.as_ref().unwrap().display(), "in/box");
        assert_eq!(auth.access(&key(3)), None);
    }

    #[test]
    fn bad_lines_are_refused_with_their_number() {
        for (text, want) in [
            ("udt-x25519 zz read-only".to_string(), "line 1"),
            (format!("{} admin", key(1).to_line()), "unknown access"),
            (key(1).to_line(), "missing access"),
            (
                format!("{} read-write:../etc", key(1).to_line()),
                "sub-directory",
            ),
            (
                format!("{0} read-only\n{0} read-write", key(1).to_line()),
                "line 2: key listed twice",
            ),
        ] {
            let err = format!("{:#}", AuthorizedKeys::parse(&text).unwrap_err());
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}
