//! The client's known servers: each server's key, pinned the first time it is seen (as SSH's
//! known_hosts), so that a later change (another machine, or someone in the middle) is caught.
//!
//! ```text
//! # host:port key
//! data.example.org:9000 udt-x25519 3b1f...c9
//! ```

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::PublicKey;

/// What [`KnownServers::check`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pinned {
    /// The key matches the one pinned before.
    Known,
    /// First contact: the key was pinned now.
    New,
}

/// The known servers file.
#[derive(Debug, Clone)]
pub struct KnownServers {
    path: PathBuf,
}

impl KnownServers {
    /// The file at `path` (created when the first server is pinned).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Check `key` for `server` (`host:port` as the user named it): known, pinned now, or an
    /// error that says what changed and what to check.
    pub fn check(&self, server: &str, key: &PublicKey) -> anyhow::Result<Pinned> {
        let text = match fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e).with_context(|| format!("reading {}", self.path.display())),
        };
        for (n, line) in text.lines().enumerate() {
            let mut words = line.split_whitespace();
            if words.next() != Some(server) {
                continue;
            }
            match PublicKey::from_words(&mut words) {
                Some(pinned) if pinned == *key => return Ok(Pinned::Known),
                Some(pinned) => bail!(
                    "the key of server {server} has changed: it is now {key}, but {} line {} \
                     holds {pinned}. Someone may be intercepting the connection, or the server \
                     got a new key: ask its administrator for the fingerprint (`udt keygen \
                     --show` on the server) and, if it matches, delete that line",
                    self.path.display(),
                    n + 1
                ),
                None => bail!("{} line {}: not a udt key", self.path.display(), n + 1),
            }
        }
        self.pin(server, key)?;
        Ok(Pinned::New)
    }

    fn pin(&self, server: &str, key: &PublicKey) -> anyhow::Result<()> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .with_context(|| format!("writing {}", self.path.display()))?;
        writeln!(file, "{server} {}", key.to_line())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_contact_pins_and_a_change_is_refused_with_directions() {
        let dir = tempfile::tempdir().unwrap();
        let known = KnownServers::new(dir.path().join("sub/known_servers"));
        let (a, b) = (PublicKey([1; 32]), PublicKey([2; 32]));
        assert_eq!(known.check("h:9000", &a).unwrap(), Pinned::New);
        assert_eq!(known.check("h:9000", &a).unwrap(), Pinned::Known);
        assert_eq!(known.check("other:9000", &b).unwrap(), Pinned::New);
        let err = known.check("h:9000", &b).unwrap_err().to_string();
        assert!(
            err.contains("has changed") && err.contains("line 1"),
            "{err}"
        );
        assert!(
            err.contains(&a.fingerprint()) && err.contains(&b.fingerprint()),
            "{err}"
        );
    }
}
