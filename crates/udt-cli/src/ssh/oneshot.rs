//! The remote side's one-shot server: a fresh key, a port (in a range if asked), and exactly
//! one connection that proves the key.
//!
//! Anyone who can reach the port can complete a UDT handshake, so accepting is not enough:
//! an accepted connection is a *candidate* until its peer proves the session key (the
//! library refuses to deliver data before that and ends the connection with
//! `AuthenticationFailed` about 3 s after connecting). Candidates wait side by side, at most
//! [`MAX_CANDIDATES`] of them and each for at most [`PROOF_WAIT`], so a stranger that
//! connects first (without the key, or with a wrong one) does not take the slot from the
//! client that holds the key; the first candidate that proves it is served, the rest are
//! closed.

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::str::FromStr;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context;
use udt::{SessionKey, SocketOptions, UdtListener, UdtStream};
use zeroize::Zeroizing;

/// Connections waiting to prove the key at once; more are closed at once.
pub const MAX_CANDIDATES: usize = 16;

/// How long a candidate may take to prove the key (the library gives up after about 3 s).
pub const PROOF_WAIT: Duration = Duration::from_secs(5);

/// How often candidates are checked.
const POLL: Duration = Duration::from_millis(10);

/// UDP ports to choose from, inclusive: `60000-60100`, or one port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    /// The first port tried.
    pub first: u16,
    /// The last port tried.
    pub last: u16,
}

impl FromStr for PortRange {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (first, last) = text.split_once('-').unwrap_or((text, text));
        let port = |p: &str| p.trim().parse::<u16>().ok().filter(|&p| p > 0);
        match (port(first), port(last)) {
            (Some(first), Some(last)) if first <= last => Ok(Self { first, last }),
            _ => Err(format!(
                "{text:?}: expected FIRST-LAST, two ports 1-65535 in order (or one port)"
            )),
        }
    }
}

impl fmt::Display for PortRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.first, self.last)
    }
}

/// A fresh 256-bit session key from the operating system's generator (`getrandom`).
pub fn fresh_key() -> anyhow::Result<SessionKey> {
    let mut bytes = Zeroizing::new([0u8; 32]);
    getrandom::fill(&mut bytes[..])
        .map_err(|e| anyhow::anyhow!("drawing a session key from the system: {e}"))?;
    Ok(SessionKey::from_bytes(*bytes))
}

/// The local address the SSH connection reached: the third field of `SSH_CONNECTION`
/// (`client_ip client_port server_ip server_port`), which sshd sets for every session.
pub fn ssh_server_addr(ssh_connection: Option<&str>) -> Option<IpAddr> {
    ssh_connection?
        .split_ascii_whitespace()
        .nth(2)?
        .parse()
        .ok()
}

/// Listen on `ip` (all IPv4 addresses if `None`), on the first free port of `range`, or
/// on any free port.
pub fn bind(
    ip: Option<IpAddr>,
    range: Option<PortRange>,
    options: &SocketOptions,
) -> anyhow::Result<UdtListener> {
    let ip = ip.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    let Some(range) = range else {
        return UdtListener::bind_with((ip, 0), options.clone())
            .with_context(|| format!("listening on {ip}"));
    };
    for port in range.first..=range.last {
        match UdtListener::bind_with((ip, port), options.clone()) {
            Ok(listener) => return Ok(listener),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => continue,
            Err(e) => return Err(e).with_context(|| format!("listening on {ip} port {port}")),
        }
    }
    anyhow::bail!("listening on {ip}: every UDP port in {range} is in use")
}

/// The first connection whose peer proves the session key within `idle` of now.
pub fn await_proven(listener: UdtListener, idle: Duration) -> anyhow::Result<UdtStream> {
    let deadline = Instant::now() + idle;
    let (tx, rx) = mpsc::sync_channel::<UdtStream>(MAX_CANDIDATES);
    // Ends when a send fails (the receiver is gone: served, or given up) or accept fails.
    thread::spawn(move || {
        while let Ok((stream, _peer)) = listener.accept() {
            if tx.send(stream).is_err() {
                break;
            }
        }
    });
    let mut candidates: Vec<(UdtStream, Instant)> = Vec::new();
    loop {
        match rx.recv_timeout(POLL) {
            Ok(stream) if candidates.len() < MAX_CANDIDATES => {
                candidates.push((stream, Instant::now()));
            }
            Ok(stream) => stream.set_linger(None), // dropped: closed
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => anyhow::bail!("accepting connections failed"),
        }
        if let Some(i) = candidates
            .iter()
            .position(|(s, _)| s.is_peer_authenticated())
        {
            let (stream, _) = candidates.swap_remove(i);
            for (other, _) in candidates {
                other.set_linger(None);
            }
            return Ok(stream);
        }
        candidates.retain(|(stream, since)| {
            let waiting = since.elapsed() < PROOF_WAIT;
            if !waiting {
                stream.set_linger(None);
            }
            waiting
        });
        if Instant::now() >= deadline {
            anyhow::bail!(
                "no client proved the session key within {} s; giving up",
                idle.as_secs()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_ranges_parse() {
        let r = |a, b| PortRange { first: a, last: b };
        assert_eq!("60000-60100".parse(), Ok(r(60000, 60100)));
        assert_eq!("7".parse(), Ok(r(7, 7)));
        assert_eq!(r(1, 2).to_string(), "1-2");
        for bad in ["", "0-5", "5-4", "1-70000", "a-b", "-5"] {
            assert!(bad.parse::<PortRange>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_server_address_comes_from_ssh_connection() {
        let addr = ssh_server_addr(Some("198.51.100.4 50022 192.0.2.7 22"));
        assert_eq!(addr, Some("192.0.2.7".parse().unwrap()));
        let v6 = ssh_server_addr(Some("::1 5 2001:db8::7 22"));
        assert_eq!(v6, Some("2001:db8::7".parse().unwrap()));
        assert_eq!(ssh_server_addr(None), None);
        assert_eq!(ssh_server_addr(Some("garbage")), None);
    }

    #[test]
    fn keys_are_fresh() {
        let a = fresh_key().unwrap();
        let b = fresh_key().unwrap();
        assert_ne!(*a.to_hex(), *b.to_hex());
    }
}
