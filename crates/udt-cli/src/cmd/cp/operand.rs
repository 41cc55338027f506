//! `udt cp`'s operands: a local path, `[user@]host:path` (over SSH, as scp), or
//! `udt://host[:port]/path` (a `udt serve` daemon).
//!
//! The scp form means SSH because that is what it means everywhere else (scp, rsync, mosh,
//! ascp); the daemon, which before meant `host:path`, has the URL form. With `--legacy` (a
//! classic UDT4 `sendfile` server, never reached over SSH) `host:path` still names the daemon.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::UsageError;

/// The daemon URL scheme.
const SCHEME: &[u8] = b"udt://";

/// One side of the copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// A local path.
    Local(PathBuf),
    /// `udt://host[:port]/path` (or `host:path` with `--legacy`): a `udt serve` daemon.
    Remote {
        /// Host name or address.
        host: String,
        /// The port, if the operand names one (else `-P`, else 9000).
        port: Option<u16>,
        /// Path under the server's root, as typed.
        path: Vec<u8>,
    },
    /// `[user@]host:path`: a path on `host`, reached by logging in with `ssh`.
    Ssh(SshOperand),
}

/// `[user@]host:path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshOperand {
    /// What `ssh` is given: `user@host` or `host` (a `~/.ssh/config` alias works).
    pub destination: String,
    /// The host without the user (the UDT connection's fallback address).
    pub host: String,
    /// The remote path as typed (relative to the login directory unless absolute).
    pub path: Vec<u8>,
}

impl Operand {
    /// Parse one operand: `udt://` is a daemon URL; otherwise scp's rule, a `:` before any
    /// `/` makes a remote operand (`[addr]:` for IPv6); `legacy` makes that a daemon too.
    pub fn parse(arg: &OsStr, legacy: bool) -> Result<Self, UsageError> {
        let bytes = arg.as_bytes();
        if let Some(rest) = bytes.strip_prefix(SCHEME) {
            return parse_url(rest);
        }
        let Some((login, path)) = split_scp(bytes) else {
            return Ok(Self::Local(PathBuf::from(arg)));
        };
        let login = std::str::from_utf8(login).map_err(|_| {
            UsageError(format!(
                "{}: host names must be UTF-8",
                String::from_utf8_lossy(bytes)
            ))
        })?;
        let (user, host) = match login.rsplit_once('@') {
            Some((user, host)) => (Some(user), host),
            None => (None, login),
        };
        let host = unbracket(host);
        if host.is_empty() || host.starts_with('-') || user.is_some_and(|u| u.starts_with('-')) {
            return Err(UsageError(format!("{login}: not a valid [user@]host")));
        }
        if legacy {
            if user.is_some() {
                return Err(UsageError(
                    "--legacy talks to a classic server: no user@ (and no SSH)".into(),
                ));
            }
            return Ok(Self::Remote {
                host: host.to_string(),
                port: None,
                path: path.to_vec(),
            });
        }
        let destination = match user {
            Some(user) => format!("{user}@{host}"),
            None => host.to_string(),
        };
        Ok(Self::Ssh(SshOperand {
            destination,
            host: host.to_string(),
            path: path.to_vec(),
        }))
    }

    /// Whether this operand is reached over SSH.
    pub fn is_ssh(&self) -> bool {
        matches!(self, Self::Ssh(_))
    }
}

/// `[user@]host:path` split at the colon (brackets protect an IPv6 address's colons), or
/// `None` for a local path (no colon before the first `/`, or nothing before the colon).
fn split_scp(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut in_brackets = false;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'[' => in_brackets = true,
            b']' => in_brackets = false,
            b'/' if !in_brackets => return None,
            b':' if !in_brackets => return (i > 0).then(|| (&bytes[..i], &bytes[i + 1..])),
            _ => {}
        }
    }
    None
}

/// `[::1]` → `::1`.
fn unbracket(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

/// After `udt://`: `host[:port][/path]`, `[v6addr][:port][/path]`.
fn parse_url(rest: &[u8]) -> Result<Operand, UsageError> {
    let slash = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(slash);
    let path = path.strip_prefix(b"/").unwrap_or(path);
    let bad = || {
        UsageError(format!(
            "udt://{}: expected udt://host[:port]/path",
            String::from_utf8_lossy(authority)
        ))
    };
    let authority = std::str::from_utf8(authority).map_err(|_| bad())?;
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or_else(bad)?;
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':').ok_or_else(bad)?)),
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = port
        .map(|p| p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(bad))
        .transpose()?;
    if host.is_empty() {
        return Err(bad());
    }
    Ok(Operand::Remote {
        host: host.to_string(),
        port,
        path: path.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(s: &str) -> Operand {
        Operand::parse(OsStr::new(s), false).unwrap()
    }

    fn ssh(destination: &str, host: &str, path: &str) -> Operand {
        Operand::Ssh(SshOperand {
            destination: destination.into(),
            host: host.into(),
            path: path.as_bytes().to_vec(),
        })
    }

    fn daemon(host: &str, port: Option<u16>, path: &str) -> Operand {
        Operand::Remote {
            host: host.into(),
            port,
            path: path.as_bytes().to_vec(),
        }
    }

    #[test]
    fn scp_operands_mean_ssh() {
        assert_eq!(op("host:a/b"), ssh("host", "host", "a/b"));
        assert_eq!(op("host:"), ssh("host", "host", ""));
        assert_eq!(op("me@host:/etc/x"), ssh("me@host", "host", "/etc/x"));
        assert_eq!(op("a@b@host:f"), ssh("a@b@host", "host", "f"));
        assert_eq!(op("[::1]:f"), ssh("::1", "::1", "f"));
        assert_eq!(op("me@[fe80::1]:x:y"), ssh("me@fe80::1", "fe80::1", "x:y"));
        assert_eq!(op("./a:b"), Operand::Local("./a:b".into()));
        assert_eq!(op("dir/x:y"), Operand::Local("dir/x:y".into()));
        assert_eq!(op(":x"), Operand::Local(":x".into()));
        assert_eq!(op("plain"), Operand::Local("plain".into()));
    }

    #[test]
    fn option_lookalikes_are_refused() {
        for bad in ["-oProxyCommand=x:f", "-x@h:f", "@:f", "[]:f"] {
            assert!(Operand::parse(OsStr::new(bad), false).is_err(), "{bad}");
        }
    }

    #[test]
    fn urls_name_the_daemon() {
        assert_eq!(op("udt://h/a/b"), daemon("h", None, "a/b"));
        assert_eq!(op("udt://h:9001/a"), daemon("h", Some(9001), "a"));
        assert_eq!(op("udt://h"), daemon("h", None, ""));
        assert_eq!(op("udt://h/"), daemon("h", None, ""));
        assert_eq!(op("udt://[::1]:7/f"), daemon("::1", Some(7), "f"));
        assert_eq!(op("udt://[::1]/f"), daemon("::1", None, "f"));
        for bad in [
            "udt://",
            "udt://:9/x",
            "udt://h:x/f",
            "udt://h:0/f",
            "udt://[::1/f",
        ] {
            assert!(Operand::parse(OsStr::new(bad), false).is_err(), "{bad}");
        }
    }

    #[test]
    fn legacy_keeps_host_colon_path_for_the_daemon() {
        let parse = |s: &str| Operand::parse(OsStr::new(s), true);
        assert_eq!(parse("h:f").unwrap(), daemon("h", None, "f"));
        assert_eq!(parse("udt://h:5/f").unwrap(), daemon("h", Some(5), "f"));
        assert!(parse("me@h:f").is_err());
    }
}
