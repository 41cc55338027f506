//! The cost floor of moving bytes over UDP on this machine, with no protocol at all: a
//! sender that paces 64 KiB GSO trains (`UDP_SEGMENT`, 1472-byte datagrams) at a fixed rate
//! and a receiver that reads GRO trains with `recvmmsg` whenever `poll` says so (or, with a
//! hold, sleeps that long after each read instead of waking per arrival); no ACKs, no
//! retransmission, no second thread. Each end prints its bytes and its CPU time (getrusage),
//! so a script can set UDT's and TCP's CPU per GiB against what the kernel's UDP path alone
//! costs at the same paced rate (`scripts/bench-paced.sh`'s `udp-floor` flow).
//!
//!   udp_floor recv BIND_ADDR SECONDS [HOLD_MS]
//!   udp_floor send PEER_ADDR SECONDS RATE_MBIT
//!
//! Linux only; the sender's datagrams are the payload size of a 1500-byte MTU.

#[cfg(target_os = "linux")]
fn main() {
    if let Err(e) = linux::run(std::env::args().skip(1).collect()) {
        eprintln!("udp_floor: {e}");
        std::process::exit(2);
    }
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("udp_floor: Linux only (UDP GSO/GRO)");
    std::process::exit(2);
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io;
    use std::net::{SocketAddr, UdpSocket};
    use std::os::fd::AsRawFd;
    use std::time::{Duration, Instant};

    const DATAGRAM: usize = 1472;
    const TRAIN: usize = 44;
    const SLOTS: usize = 8;
    const SLOT_BYTES: usize = 65535;
    const SOL_UDP: libc::c_int = 17;
    const UDP_SEGMENT: libc::c_int = 103;
    const UDP_GRO: libc::c_int = 104;

    pub(super) fn run(args: Vec<String>) -> Result<(), String> {
        let usage =
            "usage: udp_floor recv BIND SECONDS [HOLD_MS] | udp_floor send PEER SECONDS RATE_MBIT";
        let addr = |s: &String| s.parse::<SocketAddr>().map_err(|e| format!("{s}: {e}"));
        let secs = |s: &String| {
            s.parse::<f64>()
                .map(Duration::from_secs_f64)
                .map_err(|e| format!("{s}: {e}"))
        };
        let (bytes, took) = match args.as_slice() {
            [m, a, t] if m == "recv" => receive(addr(a)?, secs(t)?, Duration::ZERO),
            [m, a, t, h] if m == "recv" => {
                let hold: f64 = h.parse().map_err(|e| format!("{h}: {e}"))?;
                receive(addr(a)?, secs(t)?, Duration::from_secs_f64(hold / 1e3))
            }
            [m, a, t, r] if m == "send" => {
                let rate: f64 = r.parse().map_err(|e| format!("{r}: {e}"))?;
                send(addr(a)?, secs(t)?, rate * 1e6)
            }
            _ => return Err(usage.into()),
        }
        .map_err(|e| e.to_string())?;
        println!(
            "{{\"bytes\": {bytes}, \"seconds\": {:.6}, \"cpu_seconds\": {:.6}}}",
            took.as_secs_f64(),
            cpu_seconds()
        );
        Ok(())
    }

    fn setsockopt(
        fd: i32,
        level: libc::c_int,
        name: libc::c_int,
        value: libc::c_int,
    ) -> io::Result<()> {
        // SAFETY: the option value is a c_int that outlives the call.
        let r = unsafe {
            libc::setsockopt(
                fd,
                level,
                name,
                (&value as *const libc::c_int).cast(),
                size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Read until `span` has passed since the first datagram (or 2 s of silence after it),
    /// sleeping `hold` after each read that found data.
    fn receive(bind: SocketAddr, span: Duration, hold: Duration) -> io::Result<(u64, Duration)> {
        let sock = UdpSocket::bind(bind)?;
        let fd = sock.as_raw_fd();
        setsockopt(fd, SOL_UDP, UDP_GRO, 1)?;
        setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 16 << 20).ok();
        sock.set_nonblocking(true)?;
        let mut batch = Batch::new();
        let mut bytes = 0u64;
        let mut first = None;
        let mut last = None;
        loop {
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let n = unsafe { libc::poll(&mut pfd, 1, 2000) };
            if n == 0 && first.is_some() {
                break;
            }
            let mut read = 0;
            loop {
                let got = batch.recv(fd)?;
                if got == 0 {
                    break;
                }
                first.get_or_insert_with(Instant::now);
                read += got;
            }
            bytes += read;
            if read > 0 {
                last = Some(Instant::now());
            }
            if read > 0 && !hold.is_zero() {
                std::thread::sleep(hold);
            }
            if first.is_some_and(|t: Instant| t.elapsed() >= span) {
                break;
            }
        }
        // From the first datagram to the last (not to the silence that ended the loop).
        let took = first.zip(last).map_or(Duration::ZERO, |(a, b)| b - a);
        Ok((bytes, took))
    }

    /// The receive slots and the headers that point into them, built once.
    struct Batch {
        /// Owned only to stay alive: the headers point into them.
        _bufs: Vec<[u8; SLOT_BYTES]>,
        _iovs: Vec<libc::iovec>,
        ctrl: Vec<[u64; 8]>,
        msgs: Vec<libc::mmsghdr>,
    }

    impl Batch {
        fn new() -> Self {
            let mut bufs = vec![[0u8; SLOT_BYTES]; SLOTS];
            let mut iovs: Vec<libc::iovec> = bufs
                .iter_mut()
                .map(|b| libc::iovec {
                    iov_base: b.as_mut_ptr().cast(),
                    iov_len: b.len(),
                })
                .collect();
            let mut ctrl = vec![[0u64; 8]; SLOTS];
            // SAFETY: mmsghdr is plain data; its pointers are set below.
            let mut msgs: Vec<libc::mmsghdr> = vec![unsafe { std::mem::zeroed() }; SLOTS];
            // The vectors are never resized, so their heap buffers (which moving `Self`
            // leaves where they are) stay where the headers point.
            for ((m, iov), c) in msgs.iter_mut().zip(iovs.iter_mut()).zip(ctrl.iter_mut()) {
                m.msg_hdr.msg_iov = iov;
                m.msg_hdr.msg_iovlen = 1;
                m.msg_hdr.msg_control = c.as_mut_ptr().cast();
            }
            Self {
                _bufs: bufs,
                _iovs: iovs,
                ctrl,
                msgs,
            }
        }

        /// One `recvmmsg` into the slots: the bytes read (0 when nothing waits).
        fn recv(&mut self, fd: i32) -> io::Result<u64> {
            let Self { ctrl, msgs, .. } = self;
            // The kernel shortens each control length to what it wrote.
            for (m, c) in msgs.iter_mut().zip(ctrl.iter()) {
                m.msg_hdr.msg_controllen = size_of_val(c);
            }
            // SAFETY: msgs holds SLOTS headers whose buffers live in self.
            let n = unsafe {
                libc::recvmmsg(
                    fd,
                    msgs.as_mut_ptr(),
                    msgs.len() as libc::c_uint,
                    libc::MSG_DONTWAIT,
                    std::ptr::null_mut(),
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                return if e.kind() == io::ErrorKind::WouldBlock {
                    Ok(0)
                } else {
                    Err(e)
                };
            }
            Ok(msgs[..n as usize]
                .iter()
                .map(|m| u64::from(m.msg_len))
                .sum())
        }
    }

    /// Send 64 KiB GSO trains to `peer` for `span`, one train per `TRAIN` datagrams' time
    /// at `rate_bps` (sleeping between trains; late trains catch up).
    fn send(peer: SocketAddr, span: Duration, rate_bps: f64) -> io::Result<(u64, Duration)> {
        let local: SocketAddr = if peer.is_ipv4() {
            "0.0.0.0:0".parse().unwrap()
        } else {
            "[::]:0".parse().unwrap()
        };
        let sock = UdpSocket::bind(local)?;
        sock.connect(peer)?;
        let fd = sock.as_raw_fd();
        setsockopt(fd, SOL_UDP, UDP_SEGMENT, DATAGRAM as libc::c_int)?;
        setsockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, 16 << 20).ok();
        let train = vec![0x5au8; DATAGRAM * TRAIN];
        // Wire bytes per train: payload plus UDP/IP headers.
        let wire_bits = ((DATAGRAM + 28) * TRAIN * 8) as f64;
        let interval = Duration::from_secs_f64(wire_bits / rate_bps);
        let start = Instant::now();
        let mut next = start;
        let mut bytes = 0u64;
        while start.elapsed() < span {
            match sock.send(&train) {
                Ok(n) => bytes += n as u64,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {}
                Err(e) => return Err(e),
            }
            next += interval;
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            }
        }
        Ok((bytes, start.elapsed()))
    }

    /// This process's user + system CPU seconds.
    fn cpu_seconds() -> f64 {
        // SAFETY: getrusage fills the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        tv(u.ru_utime) + tv(u.ru_stime)
    }
}
