//! Linux system calls behind the driver: batched datagram I/O (`recvmmsg`/`sendmmsg`), an
//! `eventfd` waker, a nanosecond-resolution wait (`ppoll`) and the I/O thread's timer slack.
//!
//! Batching is where the syscall cost per packet is won: at 1 Gbit/s a 1500-byte packet leaves
//! every 12 µs, and one syscall per datagram alone would use a large part of a core.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::null_mut;
use std::time::Duration;

use super::{sockaddr_from_std, sockaddr_to_std};

/// Datagrams per `recvmmsg` / `sendmmsg` call.
pub(crate) const BATCH: usize = 64;

/// Receive side: `BATCH` slots of `slot` bytes each, filled by one `recvmmsg`.
pub(crate) struct RecvBatch {
    bufs: Vec<u8>,
    slot: usize,
    addrs: Vec<libc::sockaddr_storage>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    /// Control-message space per slot (the `SCM_TIMESTAMPNS` arrival time); `u64`s for the
    /// alignment `cmsghdr` needs.
    ctrl: Vec<[u64; CTRL_WORDS]>,
    count: usize,
}

/// Room for one `cmsghdr` + `timespec` (32 bytes on 64-bit Linux), with slack.
const CTRL_WORDS: usize = 8;

impl RecvBatch {
    /// Slots of `slot` bytes: the largest datagram this multiplexer accepts (its MSS minus
    /// the IP/UDP header); longer ones are truncated and then refused by the parser.
    pub(crate) fn new(slot: usize) -> Self {
        // SAFETY: sockaddr_storage, iovec and mmsghdr are plain C structs; all-zero is valid.
        let (addr, iov, hdr) = unsafe { (zeroed(), zeroed(), zeroed()) };
        Self {
            bufs: vec![0; slot * BATCH],
            slot,
            addrs: vec![addr; BATCH],
            iovs: vec![iov; BATCH],
            hdrs: vec![hdr; BATCH],
            ctrl: vec![[0; CTRL_WORDS]; BATCH],
            count: 0,
        }
    }

    /// Read up to `BATCH` datagrams without blocking; returns how many (0 when none waits).
    pub(crate) fn recv(&mut self, fd: RawFd) -> io::Result<usize> {
        self.count = 0;
        for i in 0..BATCH {
            self.iovs[i] = libc::iovec {
                iov_base: self.bufs[i * self.slot..].as_mut_ptr().cast(),
                iov_len: self.slot,
            };
            let hdr = &mut self.hdrs[i].msg_hdr;
            hdr.msg_name = (&raw mut self.addrs[i]).cast();
            hdr.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            hdr.msg_iov = &raw mut self.iovs[i];
            hdr.msg_iovlen = 1;
            hdr.msg_control = self.ctrl[i].as_mut_ptr().cast();
            hdr.msg_controllen = size_of::<[u64; CTRL_WORDS]>() as _;
            hdr.msg_flags = 0;
            self.hdrs[i].msg_len = 0;
        }
        // SAFETY: every header points into buffers owned by `self` that outlive the call, with
        // lengths matching their allocations.
        let n = unsafe {
            libc::recvmmsg(
                fd,
                self.hdrs.as_mut_ptr(),
                BATCH as libc::c_uint,
                libc::MSG_DONTWAIT,
                null_mut(),
            )
        };
        if n < 0 {
            let err = io::Error::last_os_error();
            return match err.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(err),
            };
        }
        self.count = n as usize;
        Ok(self.count)
    }

    /// Datagram `i` of the last batch: its source and bytes (`None` for an unknown family).
    pub(crate) fn get(&self, i: usize) -> Option<(SocketAddr, &[u8])> {
        if i >= self.count {
            return None;
        }
        let len = (self.hdrs[i].msg_len as usize).min(self.slot);
        let from = sockaddr_to_std(&self.addrs[i])?;
        Some((from, &self.bufs[i * self.slot..i * self.slot + len]))
    }

    /// The kernel's arrival time of datagram `i` (`CLOCK_REALTIME`, since the Unix epoch), if
    /// the socket has `SO_TIMESTAMPNS` on.
    pub(crate) fn arrival(&self, i: usize) -> Option<Duration> {
        if i >= self.count {
            return None;
        }
        let hdr = &self.hdrs[i].msg_hdr;
        // SAFETY: `hdr` was filled by recvmmsg; its control pointer and length describe
        // `self.ctrl[i]`, and the CMSG macros stay within `msg_controllen`.
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
                    let secs = u64::try_from(ts.tv_sec).ok()?;
                    let nanos = u32::try_from(ts.tv_nsec)
                        .ok()
                        .filter(|&n| n < 1_000_000_000)?;
                    return Some(Duration::new(secs, nanos));
                }
                cmsg = libc::CMSG_NXTHDR(hdr, cmsg);
            }
        }
        None
    }
}

/// Ask the kernel to stamp each received datagram with its arrival time (`SO_TIMESTAMPNS`:
/// software, taken when the packet reaches the socket layer; on `CLOCK_REALTIME`, the only
/// clock socket timestamps use).
pub(crate) fn enable_rx_timestamps(fd: RawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: the option takes a c_int, passed by pointer with its size.
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

/// Send side: datagrams appended back to back into one buffer, flushed by `sendmmsg`.
pub(crate) struct SendBatch {
    buf: Vec<u8>,
    entries: Vec<(SocketAddr, usize, usize)>,
    addrs: Vec<libc::sockaddr_storage>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

impl SendBatch {
    pub(crate) fn new(slot: usize) -> Self {
        // SAFETY: plain C structs; all-zero is valid.
        let (addr, iov, hdr) = unsafe { (zeroed(), zeroed(), zeroed()) };
        Self {
            buf: Vec::with_capacity(slot * BATCH),
            entries: Vec::with_capacity(BATCH),
            addrs: vec![addr; BATCH],
            iovs: vec![iov; BATCH],
            hdrs: vec![hdr; BATCH],
        }
    }

    /// The buffer the next datagram's bytes are appended to.
    pub(crate) fn buf_mut(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Record that the last `size` bytes appended to the buffer go to `to`.
    pub(crate) fn commit(&mut self, to: SocketAddr, size: usize) {
        let start = self.buf.len() - size;
        self.entries.push((to, start, size));
    }

    pub(crate) fn is_full(&self) -> bool {
        self.entries.len() >= BATCH
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Send everything queued. Datagrams the kernel refuses (no route, full queue after a
    /// short wait) are dropped as a lossy network would; UDT recovers them.
    pub(crate) fn flush(&mut self, fd: RawFd) -> io::Result<()> {
        let n = self.entries.len();
        for (i, &(to, start, len)) in self.entries.iter().enumerate() {
            let addr_len = sockaddr_from_std(to, &mut self.addrs[i]);
            self.iovs[i] = libc::iovec {
                iov_base: self.buf[start..].as_mut_ptr().cast(),
                iov_len: len,
            };
            let hdr = &mut self.hdrs[i].msg_hdr;
            hdr.msg_name = (&raw mut self.addrs[i]).cast();
            hdr.msg_namelen = addr_len;
            hdr.msg_iov = &raw mut self.iovs[i];
            hdr.msg_iovlen = 1;
        }
        let mut sent = 0;
        let mut stalls = 0;
        while sent < n {
            // SAFETY: headers sent..n point into buffers owned by `self`.
            let r = unsafe {
                libc::sendmmsg(
                    fd,
                    self.hdrs[sent..].as_mut_ptr(),
                    (n - sent) as libc::c_uint,
                    0,
                )
            };
            if r > 0 {
                sent += r as usize;
                continue;
            }
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock if stalls < 10 => {
                    stalls += 1;
                    wait_writable(fd, Duration::from_millis(1))?;
                }
                _ => {
                    tracing::trace!(error = %err, "datagram dropped on send");
                    sent += 1;
                }
            }
        }
        self.buf.clear();
        self.entries.clear();
        Ok(())
    }
}

/// Wakes the I/O thread out of its wait (an `eventfd`).
pub(crate) struct Waker {
    fd: OwnedFd,
}

impl Waker {
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: plain syscall; the result is checked before use.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor we own.
        Ok(Self {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    pub(crate) fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64. A full counter (EAGAIN) already means "awake".
        unsafe { libc::write(self.fd.as_raw_fd(), (&raw const one).cast(), 8) };
    }

    /// Reset after a wake-up.
    pub(crate) fn drain(&self) {
        let mut value: u64 = 0;
        // SAFETY: reads 8 bytes into a live u64; EAGAIN (not woken) is fine.
        unsafe { libc::read(self.fd.as_raw_fd(), (&raw mut value).cast(), 8) };
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Block until `socket` is readable, the waker fires, or `timeout` passes (`None`: no limit).
/// `ppoll` takes a nanosecond timeout, and with a timer slack of 1 ns the kernel's hrtimer
/// wakes us within a few microseconds, unlike `poll`/`epoll_wait`'s milliseconds.
pub(crate) fn wait(socket: RawFd, waker: &Waker, timeout: Option<Duration>) -> io::Result<()> {
    let mut fds = [
        libc::pollfd {
            fd: socket,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: waker.fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let ts = timeout.map(timespec);
    let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
    // SAFETY: `fds` and `ts` are live for the call.
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, ts_ptr, std::ptr::null()) };
    if r < 0 {
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    if fds[1].revents != 0 {
        waker.drain();
    }
    Ok(())
}

fn wait_writable(fd: RawFd, timeout: Duration) -> io::Result<()> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    let ts = timespec(timeout);
    // SAFETY: `pfd` and `ts` are live for the call.
    let r = unsafe { libc::ppoll(&raw mut pfd, 1, &raw const ts, std::ptr::null()) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn timespec(d: Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    }
}

/// Ask for precise timer wake-ups on this thread (default slack is 50 µs, four packet slots
/// at 1 Gbit/s).
pub(crate) fn set_precise_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and affects only this thread.
    let r = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    if r != 0 {
        tracing::debug!(error = %io::Error::last_os_error(), "PR_SET_TIMERSLACK failed");
    }
}

/// Set a socket buffer option past `net.core.{r,w}mem_max` when we may (root), else normally.
pub(crate) fn force_buffer(socket: &socket2::Socket, recv: bool, bytes: usize) -> io::Result<()> {
    let opt = if recv {
        libc::SO_RCVBUFFORCE
    } else {
        libc::SO_SNDBUFFORCE
    };
    let value = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    // SAFETY: the option takes a c_int, passed by pointer with its size.
    let r = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            (&raw const value).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        return Ok(());
    }
    if recv {
        socket.set_recv_buffer_size(bytes)
    } else {
        socket.set_send_buffer_size(bytes)
    }
}

#[cfg(test)]
mod tests {
    use std::net::UdpSocket;
    use std::time::{SystemTime, UNIX_EPOCH};

    use super::*;

    #[test]
    fn received_datagrams_carry_kernel_timestamps() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        enable_rx_timestamps(rx.as_raw_fd()).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        for i in 0..3u8 {
            tx.send_to(&[i; 20], rx.local_addr().unwrap()).unwrap();
        }
        let after = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        let mut batch = RecvBatch::new(1500);
        let mut stamps = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while stamps.len() < 3 && std::time::Instant::now() < deadline {
            let n = batch.recv(rx.as_raw_fd()).unwrap();
            stamps.extend((0..n).map(|i| batch.arrival(i).expect("a timestamp")));
        }
        assert_eq!(stamps.len(), 3);
        assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{stamps:?}");
        // Realtime, so only roughly bounded (NTP may slew it meanwhile).
        let slop = Duration::from_millis(50);
        assert!(stamps[0] + slop >= before && stamps[2] <= after + slop);
    }
}
