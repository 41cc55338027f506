//! ICMP errors about datagrams we sent, read from the socket's error queue (`IP_RECVERR` /
//! `IPV6_RECVERR`).
//!
//! Why: when a peer's process dies, its kernel answers our next datagram with an ICMP port
//! unreachable. Without `IP_RECVERR` Linux drops that on an unconnected UDP socket; with it,
//! each ICMP error is queued with the destination of the datagram that drew it, and the
//! driver hands "port unreachable" to the connections to that address as a hint
//! (`Connection::handle_unreachable`; the rule that keeps a forged ICMP harmless lives there).
//!
//! Side effect to handle: with `IP_RECVERR` on, Linux also reports a pending ICMP error once
//! through the *next* ordinary call on the socket (`recvmmsg` or `sendmmsg` fail with
//! `ECONNREFUSED`, `EHOSTUNREACH`, ...; that call did nothing else). [`is_icmp_report`] tells
//! those apart so the driver drains the queue and retries instead of treating the socket as
//! broken or dropping a batch. A non-empty queue also makes `ppoll` report `POLLERR`.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::SocketAddr;
use std::os::fd::RawFd;

use super::linux::set_int_option;
use super::sockaddr_to_std;

/// Queue entries read per [`ErrorQueue::drain`] call: the kernel bounds the queue by the
/// receive buffer, and a bounded loop keeps one drain short whatever arrives meanwhile.
const MAX_DRAIN: usize = 256;
/// Reports kept until the driver takes them (further ones are dropped: the
/// hint needs one report per peer, not every one).
const MAX_REPORTS: usize = 1024;
/// Control space: `cmsghdr` (16) + `sock_extended_err` (16) + the offender's `sockaddr_in6`
/// (28), padded, with room to spare.
const CTRL_WORDS: usize = 16;

/// What an ICMP error said about a destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IcmpKind {
    /// Nothing listens on that port (ICMP type 3 code 3; ICMPv6 type 1 code 4).
    PortUnreachable,
    /// Any other ICMP error (host or network unreachable, time exceeded, ...): not used.
    Other,
}

/// One ICMP error: the destination of the datagram that drew it, and what it said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IcmpReport {
    pub(crate) destination: SocketAddr,
    pub(crate) kind: IcmpKind,
}

/// Ask the kernel to queue ICMP errors for this socket. A v6 socket gets both options: v4
/// peers of a dual-stack socket draw ICMPv4 errors, which `IPV6_RECVERR` does not cover on
/// every kernel.
pub(crate) fn enable(fd: RawFd, v6: bool) -> io::Result<()> {
    if v6 {
        set_int_option(fd, libc::SOL_IPV6, libc::IPV6_RECVERR, 1)?;
        let _ = set_int_option(fd, libc::SOL_IP, libc::IP_RECVERR, 1);
        Ok(())
    } else {
        set_int_option(fd, libc::SOL_IP, libc::IP_RECVERR, 1)
    }
}

/// Whether a failed `recvmmsg`/`sendmmsg` is Linux reporting a pending ICMP error (the
/// errnos `icmp_err_convert` and `icmpv6_err_convert` produce) rather than a fault of the
/// call itself. Some of them can also be genuine send errors (EMSGSIZE, EACCES, a missing
/// route): the driver therefore retries a datagram only a few times.
pub(crate) fn is_icmp_report(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(
            libc::ECONNREFUSED
                | libc::EHOSTUNREACH
                | libc::ENETUNREACH
                | libc::EHOSTDOWN
                | libc::ENONET
                | libc::EPROTO
                | libc::ENOPROTOOPT
                | libc::EMSGSIZE
                | libc::EACCES
        )
    )
}

/// What an extended error from the queue is: `None` unless an ICMP message caused it (the
/// queue also carries local errors, e.g. an oversized datagram).
pub(crate) fn classify(origin: u8, icmp_type: u8, icmp_code: u8) -> Option<IcmpKind> {
    match (origin, icmp_type, icmp_code) {
        (libc::SO_EE_ORIGIN_ICMP, 3, 3) | (libc::SO_EE_ORIGIN_ICMP6, 1, 4) => {
            Some(IcmpKind::PortUnreachable)
        }
        (libc::SO_EE_ORIGIN_ICMP | libc::SO_EE_ORIGIN_ICMP6, _, _) => Some(IcmpKind::Other),
        _ => None,
    }
}

/// Reads the error queue and keeps the port-unreachable reports until the driver takes them.
pub(crate) struct ErrorQueue {
    reports: Vec<IcmpReport>,
    /// The returned copy of the offending datagram: only its presence matters, so a few
    /// bytes do (the rest is cut, `MSG_TRUNC`).
    payload: [u8; 64],
    ctrl: [u64; CTRL_WORDS],
}

impl ErrorQueue {
    pub(crate) fn new() -> Self {
        Self {
            reports: Vec::new(),
            payload: [0; 64],
            ctrl: [0; CTRL_WORDS],
        }
    }

    /// Read queued errors without blocking until the queue is empty (or `MAX_DRAIN` were
    /// read); returns how many entries were read.
    pub(crate) fn drain(&mut self, fd: RawFd) -> usize {
        for read in 0..MAX_DRAIN {
            match self.read_one(fd) {
                Some(Some(report)) => self.keep(report),
                Some(None) => {}
                None => return read,
            }
        }
        MAX_DRAIN
    }

    /// Whether reports wait for [`Self::take`].
    pub(crate) fn has_reports(&self) -> bool {
        !self.reports.is_empty()
    }

    /// The reports gathered since the last call.
    pub(crate) fn take(&mut self) -> std::vec::Drain<'_, IcmpReport> {
        self.reports.drain(..)
    }

    /// Keep port unreachables up to `MAX_REPORTS`; other ICMP errors are of no use here.
    fn keep(&mut self, report: IcmpReport) {
        if report.kind == IcmpKind::PortUnreachable && self.reports.len() < MAX_REPORTS {
            self.reports.push(report);
        }
    }

    /// One `recvmsg(MSG_ERRQUEUE)`: `None` when the queue is empty (or the call failed),
    /// `Some(None)` for an entry that is not an ICMP error about an IP destination.
    fn read_one(&mut self, fd: RawFd) -> Option<Option<IcmpReport>> {
        // SAFETY: all-zero is a valid sockaddr_storage / msghdr.
        let mut name: libc::sockaddr_storage = unsafe { zeroed() };
        let mut iov = libc::iovec {
            iov_base: self.payload.as_mut_ptr().cast(),
            iov_len: self.payload.len(),
        };
        // SAFETY: as above.
        let mut msg: libc::msghdr = unsafe { zeroed() };
        msg.msg_name = (&raw mut name).cast();
        msg.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = self.ctrl.as_mut_ptr().cast();
        msg.msg_controllen = size_of::<[u64; CTRL_WORDS]>() as _;
        // SAFETY: every pointer in `msg` refers to a live buffer of the stated length.
        let r = unsafe { libc::recvmsg(fd, &raw mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
        if r < 0 {
            return None;
        }
        // An entry read is gone from the queue even when it is not understood.
        let Some(ee) = extended_error(&msg) else {
            return Some(None);
        };
        let kind = classify(ee.ee_origin, ee.ee_type, ee.ee_code);
        let destination = (msg.msg_namelen > 0)
            .then(|| sockaddr_to_std(&name))
            .flatten();
        Some(
            kind.zip(destination)
                .map(|(kind, destination)| IcmpReport { destination, kind }),
        )
    }
}

/// The `sock_extended_err` among `msg`'s control messages, if the kernel put one there
/// whole (it always does for `IP_RECVERR` entries unless the control space was too short).
fn extended_error(msg: &libc::msghdr) -> Option<libc::sock_extended_err> {
    let want = size_of::<libc::sock_extended_err>();
    // SAFETY: `msg` was just filled by recvmsg; the CMSG macros stay within msg_controllen.
    let mut cmsg = unsafe { libc::CMSG_FIRSTHDR(msg) };
    while !cmsg.is_null() {
        // SAFETY: non-null headers from CMSG_FIRSTHDR/NXTHDR lie inside the control buffer.
        let hdr = unsafe { &*cmsg };
        let ours = matches!(
            (hdr.cmsg_level, hdr.cmsg_type),
            (libc::SOL_IP, libc::IP_RECVERR) | (libc::SOL_IPV6, libc::IPV6_RECVERR)
        );
        // SAFETY: CMSG_LEN is a pure size computation.
        let whole = hdr.cmsg_len as usize >= unsafe { libc::CMSG_LEN(want as u32) } as usize;
        if ours && whole {
            // SAFETY: the header says its data holds at least a sock_extended_err; the read
            // is unaligned-safe.
            return Some(unsafe {
                libc::CMSG_DATA(cmsg)
                    .cast::<libc::sock_extended_err>()
                    .read_unaligned()
            });
        }
        // SAFETY: as for CMSG_FIRSTHDR.
        cmsg = unsafe { libc::CMSG_NXTHDR(msg, cmsg) };
    }
    None
}

#[cfg(test)]
mod tests {
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn port_unreachable_is_told_apart_from_other_icmp_errors() {
        let (v4, v6) = (libc::SO_EE_ORIGIN_ICMP, libc::SO_EE_ORIGIN_ICMP6);
        assert_eq!(classify(v4, 3, 3), Some(IcmpKind::PortUnreachable));
        assert_eq!(classify(v6, 1, 4), Some(IcmpKind::PortUnreachable));
        assert_eq!(classify(v4, 3, 1), Some(IcmpKind::Other)); // host unreachable
        assert_eq!(classify(v6, 1, 3), Some(IcmpKind::Other)); // address unreachable
        assert_eq!(classify(v4, 11, 0), Some(IcmpKind::Other)); // time exceeded
        assert_eq!(classify(libc::SO_EE_ORIGIN_LOCAL, 0, 0), None);
        assert!(is_icmp_report(&io::Error::from_raw_os_error(
            libc::ECONNREFUSED
        )));
        assert!(!is_icmp_report(&io::Error::from_raw_os_error(libc::EAGAIN)));
        assert!(!is_icmp_report(&io::Error::from_raw_os_error(libc::EBADF)));
    }

    /// Send from a socket with the option on to a port nobody holds, and drain until the
    /// report arrives (loopback answers at once; 5 s is only a bound).
    fn unreachable_report(local: &str) -> Option<Vec<IcmpReport>> {
        let tx = UdpSocket::bind(local).ok()?;
        let closed = UdpSocket::bind(local).ok()?;
        let to = closed.local_addr().ok()?;
        drop(closed);
        enable(tx.as_raw_fd(), to.is_ipv6()).unwrap();
        tx.send_to(b"anyone?", to).unwrap();
        let mut q = ErrorQueue::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !q.has_reports() && Instant::now() < deadline {
            q.drain(tx.as_raw_fd());
            std::thread::sleep(Duration::from_millis(1));
        }
        let reports: Vec<IcmpReport> = q.take().collect();
        assert!(reports.iter().all(|r| r.destination == to), "{reports:?}");
        Some(reports)
    }

    #[test]
    fn a_closed_port_is_reported_with_its_address() {
        let reports = unreachable_report("127.0.0.1:0").expect("loopback");
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert_eq!(reports[0].kind, IcmpKind::PortUnreachable);
        match unreachable_report("[::1]:0") {
            Some(reports) => assert_eq!(reports.len(), 1, "{reports:?}"),
            None => eprintln!("no IPv6 loopback: v6 case skipped"),
        }
    }

    #[test]
    fn the_pending_error_also_fails_the_next_call_once() {
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let closed = UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = closed.local_addr().unwrap();
        drop(closed);
        enable(tx.as_raw_fd(), false).unwrap();
        tx.set_nonblocking(true).unwrap();
        tx.send_to(b"anyone?", to).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let err = tx.recv_from(&mut [0u8; 16]).unwrap_err();
        assert!(is_icmp_report(&err), "{err}");
        // Reported once: the next call just finds nothing; the queue still holds the entry.
        let again = tx.recv_from(&mut [0u8; 16]).unwrap_err();
        assert_eq!(again.kind(), io::ErrorKind::WouldBlock);
        let mut q = ErrorQueue::new();
        assert_eq!(q.drain(tx.as_raw_fd()), 1);
        assert_eq!(q.take().count(), 1);
    }
}
