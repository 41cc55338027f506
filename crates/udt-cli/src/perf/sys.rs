//! The few Linux calls `udt perf` needs that std and socket2 do not wrap: the process's CPU
//! time (getrusage), TCP_INFO and SO_MAX_PACING_RATE. All `unsafe` of the perf module lives
//! here.

use std::io;
use std::mem::{size_of, MaybeUninit};
use std::os::fd::AsRawFd;
use std::time::Duration;

/// CPU time the whole process has used so far (user and system, every thread: the UDT I/O
/// threads do most of the work).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTime {
    /// User time.
    pub user: Duration,
    /// System (kernel) time.
    pub system: Duration,
}

impl CpuTime {
    /// Now, for this process.
    pub fn now() -> Self {
        let mut usage = MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `usage` is a valid, writable rusage; getrusage only writes it.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
        if rc != 0 {
            return Self::default();
        }
        // SAFETY: zero-initialised and, on success, filled in by the kernel.
        let usage = unsafe { usage.assume_init() };
        let span = |t: libc::timeval| {
            Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
                + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
        };
        Self {
            user: span(usage.ru_utime),
            system: span(usage.ru_stime),
        }
    }

    /// The CPU time spent since `earlier`, in seconds.
    pub fn seconds_since(&self, earlier: &Self) -> f64 {
        let total = |c: &Self| (c.user + c.system).as_secs_f64();
        (total(self) - total(earlier)).max(0.0)
    }
}

/// The kernel's TCP_INFO for a connected TCP socket.
pub fn tcp_info(socket: &impl AsRawFd) -> io::Result<libc::tcp_info> {
    let mut info = MaybeUninit::<libc::tcp_info>::zeroed();
    let mut len = size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `info` is writable for `len` bytes; the kernel writes at most `len`.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: zero-initialised, then (partly) filled in by the kernel; all fields are ints.
    Ok(unsafe { info.assume_init() })
}

/// SO_MAX_PACING_RATE: cap a TCP socket's sending rate, bytes per second.
pub fn set_max_pacing_rate(socket: &impl AsRawFd, bytes_per_sec: u64) -> io::Result<()> {
    let rate: u64 = bytes_per_sec;
    // SAFETY: passes a valid u64 and its size; the kernel reads at most that.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            (&raw const rate).cast(),
            size_of::<u64>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_moves_forward() {
        let before = CpuTime::now();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let after = CpuTime::now();
        assert!(after.seconds_since(&before) >= 0.0);
        assert!(after.user + after.system > Duration::ZERO);
    }

    #[test]
    fn tcp_info_and_pacing_on_loopback() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let info = tcp_info(&client).unwrap();
        assert_eq!(info.tcpi_state, 1, "TCP_ESTABLISHED");
        set_max_pacing_rate(&client, 1_000_000).unwrap();
    }
}
