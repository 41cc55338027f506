//! The idle-RTT probe: a UDP echo in namespace a answering pings from namespace b, timed with
//! kernel receive timestamps so that a sample measures the emulated path rather than this
//! host's scheduler.
//!
//! **What a sample ([`EchoSample::rtt`]) includes:** from the pinger's clock read just before
//! its `send` to the kernel's arrival stamp of the reply (`SO_TIMESTAMPNS`, taken when the
//! forwarder's write to the TUN device hands the packet to the stack), less the echo's
//! turnaround. That is: both sends' system calls through the IP stack into a TUN device, the
//! forwarder waking up to read each packet, the emulated link (serialization, one-way delay,
//! queueing) and how late the forwarder wrote each packet. Left out: the wake-ups of the
//! pinger and of the echo after their packets arrived.
//!
//! **The turnaround** is measured by the echo itself, from the kernel's arrival stamp of the
//! ping to its clock read just before sending the reply, and carried back in the reply (as an
//! NTP server reports its processing time). Subtracting it is honest for this instrument: what
//! is tested is the delay the emulator adds, not how fast a thread of this process is scheduled.
//! A user's `ping` counts it; [`EchoSample::user_rtt`] is that figure, both ends timed in user
//! space, for comparison.
//!
//! Socket timestamps are on `CLOCK_REALTIME`. NTP slewing (at most 500 ppm) moves a 20 ms span
//! by 10 µs at worst; a sample whose realtime span disagrees with the monotonic one (the clock
//! was stepped meanwhile) falls back to the user-space figure. Every fallback errs high, never
//! below the truth.
//!
//! Measured on the 2-vCPU VM (20 ms set, medians of 40 pings): 0.15-0.25 ms above the setting
//! alone and beside a build with two busy loops, while the user-space figure read 0.19-0.43 ms
//! above; the remainder is each direction's send into a TUN device and the forwarder's wake-up
//! to read it, 50-100 µs each here.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::UdpSocket;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::Lab;

/// One ping's timing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EchoSample {
    /// The emulated path's round trip: kernel-stamped arrival of the reply less the send time,
    /// less the echo's turnaround (see the module doc).
    pub rtt: Duration,
    /// What a user-space ping sees: the monotonic clock from before the send to after the
    /// reply was read, turnaround and both wake-ups included.
    pub user_rtt: Duration,
    /// The echo's turnaround: from the ping's kernel arrival stamp to just before the reply's
    /// send (zero when the stamp was missing).
    pub turnaround: Duration,
}

/// The echo and the pinger run in `SCHED_FIFO` (when allowed) so that a busy machine does not
/// delay their sends, below the forwarder
/// ([`FORWARDER_PRIORITY`](crate::forward::FORWARDER_PRIORITY)), which their sends wake.
const PROBE_PRIORITY: i32 = 5;

/// Ping payload: the sequence number.
const PING_LEN: usize = 8;
/// Reply payload: the sequence number and the echo's turnaround in nanoseconds.
const REPLY_LEN: usize = 16;

/// Sends `count` pings from b to an echo in a, one every `gap`, and returns each one's timing
/// (lost ones are left out).
pub fn echo_samples(lab: &Lab, count: usize, gap: Duration) -> anyhow::Result<Vec<EchoSample>> {
    let server = lab.a().run(|| UdpSocket::bind((lab.a().addr(), 0)))??;
    let client = lab.b().run(|| UdpSocket::bind((lab.b().addr(), 0)))??;
    for s in [&server, &client] {
        enable_rx_timestamps(s.as_raw_fd()).context("enabling SO_TIMESTAMPNS")?;
    }
    server.connect(client.local_addr()?)?;
    client.connect(server.local_addr()?)?;
    // The echo blocks in `recv`; the timeout only bounds how long a stop request waits.
    server.set_read_timeout(Some(Duration::from_millis(20)))?;
    client.set_read_timeout(Some(lab.params().rtt * 2 + Duration::from_millis(500)))?;
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| echo(&server, &stop));
        let samples = s.spawn(|| ping(&client, count, gap)).join();
        stop.store(true, Ordering::Relaxed);
        samples.map_err(|_| anyhow::anyhow!("pinger panicked"))?
    })
}

/// The echo: answers each ping at once with its sequence number and the turnaround.
fn echo(server: &UdpSocket, stop: &AtomicBool) {
    crate::forward::set_realtime(PROBE_PRIORITY);
    let fd = server.as_raw_fd();
    let mut buf = [0u8; 64];
    let mut reply = [0u8; REPLY_LEN];
    while !stop.load(Ordering::Relaxed) {
        let Ok((n, arrival)) = recv_stamped(fd, &mut buf) else {
            continue;
        };
        if n != PING_LEN {
            continue;
        }
        // A missing stamp reports no turnaround: the sample then errs high.
        let turnaround = arrival.map_or(Duration::ZERO, |t| realtime_now().saturating_sub(t));
        let nanos = u64::try_from(turnaround.as_nanos()).unwrap_or(u64::MAX);
        reply[..PING_LEN].copy_from_slice(&buf[..PING_LEN]);
        reply[PING_LEN..].copy_from_slice(&nanos.to_be_bytes());
        let _ = server.send(&reply);
    }
}

fn ping(client: &UdpSocket, count: usize, gap: Duration) -> anyhow::Result<Vec<EchoSample>> {
    crate::forward::set_realtime(PROBE_PRIORITY);
    let fd = client.as_raw_fd();
    let mut samples = Vec::with_capacity(count);
    let mut buf = [0u8; 64];
    for i in 0..count as u64 {
        let (mono, real) = (Instant::now(), realtime_now());
        client.send(&i.to_be_bytes()).context("sending a ping")?;
        // Skip stale replies to earlier (timed-out) pings; a timeout ends the wait.
        while let Ok((n, arrival)) = recv_stamped(fd, &mut buf) {
            if n == REPLY_LEN && buf[..PING_LEN] == i.to_be_bytes() {
                let user_rtt = mono.elapsed();
                let mut nanos = [0u8; 8];
                nanos.copy_from_slice(&buf[PING_LEN..REPLY_LEN]);
                let turnaround = Duration::from_nanos(u64::from_be_bytes(nanos));
                samples.push(sample(real, arrival, user_rtt, turnaround));
                break;
            }
        }
        std::thread::sleep(gap);
    }
    Ok(samples)
}

/// One sample from the realtime send time, the reply's kernel stamp, the monotonic span and
/// the echo's turnaround, falling back to the user-space span when the stamps do not fit in
/// it (missing, or the realtime clock stepped).
fn sample(
    sent: Duration,
    arrival: Option<Duration>,
    user_rtt: Duration,
    turnaround: Duration,
) -> EchoSample {
    let wire = arrival
        .and_then(|t| t.checked_sub(sent))
        .filter(|&w| w <= user_rtt)
        .unwrap_or(user_rtt);
    // A turnaround longer than the span is inconsistent: keep the whole span (errs high).
    let turnaround = if turnaround <= wire {
        turnaround
    } else {
        Duration::ZERO
    };
    EchoSample {
        rtt: wire - turnaround,
        user_rtt,
        turnaround,
    }
}

/// Asks the kernel to stamp each received datagram with its arrival time (`CLOCK_REALTIME`).
fn enable_rx_timestamps(fd: RawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: SO_TIMESTAMPNS takes one c_int, passed by pointer with its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&raw const on).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Room for one `cmsghdr` + `timespec` (32 bytes), in `u64`s for `cmsghdr`'s alignment.
const CTRL_WORDS: usize = 8;

/// A blocking `recv` on a connected socket that also returns the kernel's arrival stamp
/// (`None` if the datagram came without one).
fn recv_stamped(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, Option<Duration>)> {
    let mut ctrl = [0u64; CTRL_WORDS];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: msghdr is a plain C struct; all-zero is valid (no name, no control yet).
    let mut hdr: libc::msghdr = unsafe { zeroed() };
    hdr.msg_iov = &raw mut iov;
    hdr.msg_iovlen = 1;
    hdr.msg_control = ctrl.as_mut_ptr().cast();
    hdr.msg_controllen = size_of::<[u64; CTRL_WORDS]>() as _;
    // SAFETY: `hdr` points at `iov` (describing `buf`) and `ctrl`, all alive for the call.
    let n = unsafe { libc::recvmsg(fd, &raw mut hdr, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((n as usize, arrival(&hdr)))
}

/// The `SCM_TIMESTAMPNS` control message of a received header, if any.
fn arrival(hdr: &libc::msghdr) -> Option<Duration> {
    // SAFETY: `hdr` was filled by recvmsg; its control pointer and length describe a live
    // buffer, and the CMSG macros stay within `msg_controllen`.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(hdr);
        while !cmsg.is_null() {
            let c = &*cmsg;
            if c.cmsg_level == libc::SOL_SOCKET
                && c.cmsg_type == libc::SCM_TIMESTAMPNS
                && c.cmsg_len as usize
                    >= libc::CMSG_LEN(size_of::<libc::timespec>() as u32) as usize
            {
                let ts = libc::CMSG_DATA(cmsg)
                    .cast::<libc::timespec>()
                    .read_unaligned();
                return timespec(ts);
            }
            cmsg = libc::CMSG_NXTHDR(hdr, cmsg);
        }
    }
    None
}

/// `CLOCK_REALTIME` now, the clock socket timestamps use.
fn realtime_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec to a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    timespec(ts).unwrap_or_default()
}

fn timespec(ts: libc::timespec) -> Option<Duration> {
    let secs = u64::try_from(ts.tv_sec).ok()?;
    let nanos = u32::try_from(ts.tv_nsec)
        .ok()
        .filter(|&n| n < 1_000_000_000)?;
    Some(Duration::new(secs, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_sample_subtracts_the_turnaround_from_the_stamped_span() {
        let s = sample(100 * MS, Some(121 * MS), 23 * MS, MS);
        assert_eq!(s.rtt, 20 * MS);
        assert_eq!((s.user_rtt, s.turnaround), (23 * MS, MS));
    }

    #[test]
    fn a_sample_falls_back_to_the_user_span_when_stamps_do_not_fit() {
        // Missing stamp, arrival before the send, span longer than the monotonic one.
        for arrival in [None, Some(90 * MS), Some(130 * MS)] {
            assert_eq!(sample(100 * MS, arrival, 23 * MS, MS).rtt, 22 * MS);
        }
        // A turnaround longer than the span is ignored rather than making it negative.
        assert_eq!(
            sample(100 * MS, Some(110 * MS), 23 * MS, 50 * MS).rtt,
            10 * MS
        );
    }
}
