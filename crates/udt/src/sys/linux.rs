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

use bytes::BytesMut;

use super::errqueue::{is_icmp_report, ErrorQueue};
use super::lending::Lending;
use super::segments::{plan, Cut, Datagram, Queued, Run};
use super::{sockaddr_from_std, sockaddr_to_std};

/// Datagrams (or GRO trains) per `recvmmsg` call.
pub(crate) const BATCH: usize = 64;
/// Queued datagrams per `sendmmsg`: a few GSO trains (of at most 44 full-size datagrams,
/// 64 KiB), so that the trains a pacer releases together after a wake-up leave in one call.
/// At 64 a 1 Gbit/s sender made about four calls a wake-up, one per train.
const SEND_BATCH: usize = 256;
/// Receive slots when GRO is on: each slot takes a whole train of up to 64 KiB.
const GRO_SLOTS: usize = 32;
/// A receive slot that holds any GRO train (the largest UDP payload).
const GRO_SLOT_BYTES: usize = 65_535;

/// `SOL_UDP` options (linux/udp.h; not in every libc flavour).
const UDP_SEGMENT: libc::c_int = 103;
const UDP_GRO: libc::c_int = 104;

/// Receive side: slots filled by one `recvmmsg`. Without GRO a slot holds one datagram; with
/// GRO a slot may hold a train of equal-size datagrams, cut apart by the segment size that
/// [`RecvBatch::info`] reports, and a well-filled train may be lent to the connections
/// ([`RecvBatch::lend_trains`]). [`RecvBatch::datagrams`] hands out every datagram mutable,
/// so that a connection opens a protected one where the kernel wrote it.
pub(crate) struct RecvBatch {
    /// One buffer per slot, of `slot` bytes' capacity; its length is what the last call read.
    bufs: Vec<BytesMut>,
    /// Slots of the last batch lent out: the slot's bytes, to be cut into datagrams that own
    /// their parts (`bufs[i]` is then a fresh buffer for the next call).
    lent: Vec<Option<BytesMut>>,
    /// Where lent buffers come back (GRO only).
    lending: Option<Lending>,
    slot: usize,
    addrs: Vec<libc::sockaddr_storage>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    /// Control-message space per slot (the `SCM_TIMESTAMPNS` arrival time and the
    /// `UDP_GRO` segment size); `u64`s for the alignment `cmsghdr` needs.
    ctrl: Vec<[u64; CTRL_WORDS]>,
    count: usize,
    /// Leading slots the last call filled (or, after an unusual error, all): only these need
    /// their buffer and header set again. A sender reads a few ACKs per call, and re-arming
    /// all the slots each time was a percent of its CPU at 1 Gbit/s.
    stale: usize,
}

/// A train is lent only if it holds this many datagrams (a quarter of a full slot or
/// more at the usual packet size), so a held packet pins at most a few times its size.
const LEND_MIN_SEGMENTS: usize = 11;

/// Room for `cmsghdr` + `timespec` (32 bytes) and `cmsghdr` + `int` (24 bytes), with slack.
const CTRL_WORDS: usize = 12;

/// What the kernel said about one received slot besides its bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SlotInfo {
    /// Arrival time (`CLOCK_REALTIME`, since the Unix epoch), if `SO_TIMESTAMPNS` is on.
    pub(crate) arrival: Option<Duration>,
    /// Segment size of a GRO train (`None`: one datagram).
    pub(crate) segment: Option<usize>,
}

impl RecvBatch {
    /// Slots of `slot` bytes (the largest datagram this multiplexer accepts: its MSS minus
    /// the IP/UDP header; longer ones come back flagged `MSG_TRUNC` and are dropped), or
    /// 64 KiB slots for whole trains when the socket has `UDP_GRO` on.
    pub(crate) fn new(slot: usize, gro: bool) -> Self {
        let (slot, slots) = if gro {
            (GRO_SLOT_BYTES, GRO_SLOTS)
        } else {
            (slot, BATCH)
        };
        // SAFETY: sockaddr_storage, iovec and mmsghdr are plain C structs; all-zero is valid.
        let (addr, iov, hdr) = unsafe { (zeroed(), zeroed(), zeroed()) };
        Self {
            bufs: (0..slots).map(|_| BytesMut::with_capacity(slot)).collect(),
            lent: vec![None; slots],
            lending: gro.then(|| Lending::new(slot)),
            slot,
            addrs: vec![addr; slots],
            iovs: vec![iov; slots],
            hdrs: vec![hdr; slots],
            ctrl: vec![[0; CTRL_WORDS]; slots],
            count: 0,
            stale: slots,
        }
    }

    /// Slots per call: a call that fills them all may have left more waiting.
    pub(crate) fn capacity(&self) -> usize {
        self.hdrs.len()
    }

    /// Read up to [`Self::capacity`] slots without blocking; returns how many (0 when none
    /// waits).
    pub(crate) fn recv(&mut self, fd: RawFd) -> io::Result<usize> {
        self.count = 0;
        for i in 0..self.stale {
            self.lent[i] = None;
            let buf = &mut self.bufs[i];
            buf.clear();
            buf.reserve(self.slot);
            self.iovs[i] = libc::iovec {
                iov_base: buf.spare_capacity_mut().as_mut_ptr().cast(),
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
                self.hdrs.len() as libc::c_uint,
                libc::MSG_DONTWAIT,
                null_mut(),
            )
        };
        if n < 0 {
            let err = io::Error::last_os_error();
            return match err.kind() {
                // The kernel writes a header back only for a datagram it returns; an empty
                // socket is the usual end of a read.
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => {
                    self.stale = 0;
                    Ok(0)
                }
                _ => {
                    self.stale = self.hdrs.len();
                    Err(err)
                }
            };
        }
        self.count = n as usize;
        self.stale = self.count;
        for i in 0..self.count {
            let len = (self.hdrs[i].msg_len as usize).min(self.slot);
            // SAFETY: the kernel wrote the slot's first `len` bytes (at most the `slot`
            // bytes of spare capacity its iovec described).
            unsafe { self.bufs[i].set_len(len) };
        }
        Ok(self.count)
    }

    /// Lends each GRO train of the last batch that holds enough datagrams, while the bound
    /// on buffers out allows: [`Self::datagrams`] then hands out its datagrams as handles
    /// on the train's allocation.
    pub(crate) fn lend_trains(&mut self) {
        // Taken out for the loop, which also reads the slots' control messages.
        let Some(mut lending) = self.lending.take() else {
            return;
        };
        for i in 0..self.count {
            if truncated(&self.hdrs[i]) {
                continue;
            }
            let segments = match self.info(i).segment {
                Some(seg) => self.bufs[i].len() / seg,
                None => 1,
            };
            if segments < LEND_MIN_SEGMENTS || !lending.can_lend() {
                continue;
            }
            let buf = std::mem::replace(&mut self.bufs[i], lending.fresh());
            self.lent[i] = Some(lending.lend(buf));
        }
        self.lending = Some(lending);
    }

    /// Slot `i`'s bytes, if [`Self::lend_trains`] lent it and [`Self::datagrams`] has not
    /// cut it yet.
    #[cfg(test)]
    pub(crate) fn lent(&self, i: usize) -> Option<&BytesMut> {
        self.lent.get(i)?.as_ref()
    }

    /// Slot `i` of the last batch: its source and bytes (`None` for an unknown family, or a
    /// datagram longer than the slot: its tail is gone, and a cut data packet would otherwise
    /// parse as a shorter, wrong one).
    #[cfg(test)]
    pub(crate) fn get(&self, i: usize) -> Option<(SocketAddr, &[u8])> {
        if i >= self.count || truncated(&self.hdrs[i]) {
            return None;
        }
        let from = sockaddr_to_std(&self.addrs[i])?;
        let bytes = match &self.lent[i] {
            Some(lent) => &lent[..],
            None => &self.bufs[i][..],
        };
        Some((from, bytes))
    }

    /// Every datagram of the last batch, slot by slot, GRO trains cut apart: its slot's
    /// arrival stamp and GRO segment size, its source, and its bytes (a lent train's as
    /// handles on the train, the others in the batch's slots). A slot the kernel cut short
    /// (`MSG_TRUNC`: a longer datagram would parse as a shorter, wrong one) or from an
    /// unknown address family is skipped. A lent train's datagrams are handed out once.
    pub(crate) fn datagrams(
        &mut self,
    ) -> impl Iterator<Item = (SlotInfo, SocketAddr, Datagram<'_>)> + '_ {
        let Self {
            bufs,
            lent,
            hdrs,
            addrs,
            count,
            ..
        } = self;
        let slots = bufs.iter_mut().zip(lent.iter_mut());
        let heads = hdrs.iter().zip(addrs.iter());
        slots
            .zip(heads)
            .take(*count)
            .filter_map(|((buf, lent), (hdr, addr))| {
                if truncated(hdr) {
                    return None;
                }
                let from = sockaddr_to_std(addr)?;
                let info = slot_info(&hdr.msg_hdr);
                let cut = match lent.take() {
                    Some(train) => Cut::train(train, info.segment),
                    None => Cut::slot(&mut buf[..], info.segment),
                };
                Some(cut.map(move |d| (info, from, d)))
            })
            .flatten()
    }

    /// The kernel's arrival time and GRO segment size of slot `i`.
    pub(crate) fn info(&self, i: usize) -> SlotInfo {
        if i >= self.count {
            return SlotInfo::default();
        }
        slot_info(&self.hdrs[i].msg_hdr)
    }
}

/// Whether the kernel cut the slot's datagram short (longer than the slot).
fn truncated(hdr: &libc::mmsghdr) -> bool {
    hdr.msg_hdr.msg_flags & libc::MSG_TRUNC != 0
}

/// What a received slot's control messages say: arrival time and GRO segment size.
fn slot_info(hdr: &libc::msghdr) -> SlotInfo {
    let mut info = SlotInfo::default();
    // SAFETY: a batch's headers are all-zero (no control messages) or were filled by
    // recvmmsg; their control pointer and length then describe the slot's entry in the
    // batch's `ctrl`, which is never reallocated, and the CMSG macros stay within
    // `msg_controllen`.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(hdr);
        while !cmsg.is_null() {
            let c = &*cmsg;
            let len = c.cmsg_len as usize;
            let data = libc::CMSG_DATA(cmsg);
            if c.cmsg_level == libc::SOL_SOCKET
                && c.cmsg_type == libc::SCM_TIMESTAMPNS
                && len >= libc::CMSG_LEN(size_of::<libc::timespec>() as u32) as usize
            {
                info.arrival = timestamp(data.cast::<libc::timespec>().read_unaligned());
            } else if c.cmsg_level == libc::SOL_UDP
                && c.cmsg_type == UDP_GRO
                && len >= libc::CMSG_LEN(size_of::<libc::c_int>() as u32) as usize
            {
                let seg = data.cast::<libc::c_int>().read_unaligned();
                info.segment = usize::try_from(seg).ok().filter(|&s| s > 0);
            }
            cmsg = libc::CMSG_NXTHDR(hdr, cmsg);
        }
    }
    info
}

fn timestamp(ts: libc::timespec) -> Option<Duration> {
    let secs = u64::try_from(ts.tv_sec).ok()?;
    let nanos = u32::try_from(ts.tv_nsec)
        .ok()
        .filter(|&n| n < 1_000_000_000)?;
    Some(Duration::new(secs, nanos))
}

pub(super) fn set_int_option(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: i32,
) -> io::Result<()> {
    let value: libc::c_int = value;
    // SAFETY: the option takes a c_int, passed by pointer with its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&raw const value).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Ask the kernel to stamp each received datagram with its arrival time (`SO_TIMESTAMPNS`:
/// software, taken when the packet reaches the socket layer; on `CLOCK_REALTIME`, the only
/// clock socket timestamps use). A GRO train carries one stamp for all its datagrams.
pub(crate) fn enable_rx_timestamps(fd: RawFd) -> io::Result<()> {
    set_int_option(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)
}

/// Receive trains of coalesced datagrams (`UDP_GRO`, Linux 5.0).
pub(crate) fn enable_gro(fd: RawFd) -> io::Result<()> {
    set_int_option(fd, libc::SOL_UDP, UDP_GRO, 1)
}

/// Whether the kernel knows `UDP_SEGMENT` (Linux 4.18): reading the option succeeds.
pub(crate) fn gso_supported(fd: RawFd) -> bool {
    let mut value: libc::c_int = 0;
    let mut len = size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `value`.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_UDP,
            UDP_SEGMENT,
            (&raw mut value).cast(),
            &raw mut len,
        )
    };
    r == 0
}

/// Resends of one flush's datagrams after a call failed only to report an ICMP error: one
/// would do (the report clears the pending error), more cover ICMPs arriving meanwhile, and
/// a bound keeps a send that genuinely fails with such an errno from looping.
const MAX_REPORTED_RETRIES: u32 = 8;

/// Control-message space for one `UDP_SEGMENT` (`cmsghdr` + `u16`, padded: 24 bytes).
const GSO_CTRL_WORDS: usize = 4;

/// Send side: datagrams appended back to back into one buffer, flushed by `sendmmsg`; runs
/// of equal-size datagrams to a peer that asked for it go as one GSO send each. A data
/// packet may instead have only its header in the buffer and its payload where the
/// connection keeps it ([`SendBatch::commit_lent`]): the kernel then gathers the two with an
/// `iovec` each, and the payload is copied once (into the kernel) instead of twice.
pub(crate) struct SendBatch {
    buf: Vec<u8>,
    queued: Vec<Queued>,
    /// Where each queued datagram's lent part starts (null where it has none).
    lent: Vec<*const u8>,
    runs: Vec<Run>,
    addrs: Vec<libc::sockaddr_storage>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    ctrl: Vec<[u64; GSO_CTRL_WORDS]>,
    /// GSO may be used (the kernel has it and has not refused it yet).
    gso: bool,
}

impl SendBatch {
    pub(crate) fn new(slot: usize, gso: bool) -> Self {
        // SAFETY: plain C structs; all-zero is valid.
        let (addr, iov, hdr) = unsafe { (zeroed(), zeroed(), zeroed()) };
        Self {
            buf: Vec::with_capacity(slot * SEND_BATCH),
            queued: Vec::with_capacity(SEND_BATCH),
            lent: Vec::with_capacity(SEND_BATCH),
            runs: Vec::with_capacity(SEND_BATCH),
            addrs: vec![addr; SEND_BATCH],
            // At most two per datagram: its part in the buffer and its lent part.
            iovs: vec![iov; 2 * SEND_BATCH],
            hdrs: vec![hdr; SEND_BATCH],
            ctrl: vec![[0; GSO_CTRL_WORDS]; SEND_BATCH],
            gso,
        }
    }

    /// Whether GSO sends are still in use (the kernel may refuse them at the first try).
    pub(crate) fn gso(&self) -> bool {
        self.gso
    }

    /// The buffer the next datagram's bytes are appended to.
    pub(crate) fn buf_mut(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Record that the last `size` bytes appended to the buffer go to `to`; `gso`: the
    /// destination accepts GSO trains.
    pub(crate) fn commit(&mut self, to: SocketAddr, size: usize, gso: bool) {
        let start = self.buf.len() - size;
        self.queued.push(Queued {
            to,
            start,
            len: size,
            lent: 0,
            gso,
        });
        self.lent.push(std::ptr::null());
    }

    /// Record that the last `header` bytes appended to the buffer, followed by `payload`,
    /// are one datagram for `to`. Only a pointer to `payload` is kept.
    ///
    /// # Safety
    /// `payload` must stay allocated and unchanged until the next [`SendBatch::flush`]
    /// returns.
    pub(crate) unsafe fn commit_lent(
        &mut self,
        to: SocketAddr,
        header: usize,
        payload: &[u8],
        gso: bool,
    ) {
        let start = self.buf.len() - header;
        self.queued.push(Queued {
            to,
            start,
            len: header,
            lent: payload.len(),
            gso,
        });
        self.lent.push(payload.as_ptr());
    }

    pub(crate) fn is_full(&self) -> bool {
        self.queued.len() >= SEND_BATCH
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queued.is_empty()
    }

    /// Send everything queued. Datagrams the kernel refuses (no route, full queue after a
    /// short wait) are dropped as a lossy network would; UDT recovers them. A GSO send the
    /// kernel refuses (EIO: no checksum offload on the route; EINVAL) turns GSO off for good
    /// and its datagrams go again one by one. A call that failed only to report a pending
    /// ICMP error sent nothing: the error queue is drained into `errq` and the same datagram
    /// goes again (a few times at most, as some of those errnos can be the send's own).
    ///
    /// The batch is empty afterwards even when an error is returned: what was not sent is
    /// dropped, so no pointer to a lent payload outlives the flush.
    pub(crate) fn flush(&mut self, fd: RawFd, errq: &mut ErrorQueue) -> io::Result<()> {
        let mut from = 0;
        let mut result = Ok(());
        while from < self.queued.len() {
            match self.flush_from(fd, from, errq) {
                Ok(next) => from = next,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.buf.clear();
        self.queued.clear();
        self.lent.clear();
        result
    }

    /// Plan and send the datagrams from index `from` on; returns the index to go on from
    /// (the end, or the start of a refused GSO run to resend without GSO).
    fn flush_from(&mut self, fd: RawFd, from: usize, errq: &mut ErrorQueue) -> io::Result<usize> {
        self.runs.clear();
        plan(&self.queued[from..], self.gso, &mut self.runs);
        let mut iov = 0;
        for m in 0..self.runs.len() {
            self.runs[m].first += from;
            iov = self.fill_header(m, self.runs[m], iov);
        }
        let n = self.runs.len();
        let mut sent = 0;
        let (mut stalls, mut reports) = (0, 0);
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
            let run = self.runs[sent];
            match err.raw_os_error() {
                Some(libc::EINTR) => {}
                _ if is_icmp_report(&err) && reports < MAX_REPORTED_RETRIES => {
                    reports += 1;
                    errq.drain(fd);
                }
                Some(libc::EAGAIN) if stalls < 10 => {
                    stalls += 1;
                    wait_writable(fd, Duration::from_millis(1))?;
                }
                Some(libc::EIO | libc::EINVAL) if run.count > 1 => {
                    tracing::warn!(error = %err, "UDP GSO refused; sending datagrams one by one");
                    self.gso = false;
                    return Ok(run.first);
                }
                _ => {
                    tracing::trace!(error = %err, datagrams = run.count, "dropped on send");
                    sent += 1;
                }
            }
        }
        Ok(self.queued.len())
    }

    /// Point message header `m` at `run`'s bytes and destination (with a `UDP_SEGMENT`
    /// control message when the run holds more than one datagram), using the `iovec`s from
    /// index `iov` on; returns the index after them. A run's bytes in the buffer are
    /// adjacent, so without lent parts one `iovec` covers them; with them, each datagram
    /// takes one for its header and one for its payload.
    fn fill_header(&mut self, m: usize, run: Run, iov: usize) -> usize {
        let datagrams = run.first..run.first + run.count;
        let first = self.queued[run.first];
        let mut next = iov;
        if self.lent[datagrams.clone()].iter().all(|p| p.is_null()) {
            let last = self.queued[datagrams.end - 1];
            self.iovs[next] = libc::iovec {
                iov_base: self.buf[first.start..].as_mut_ptr().cast(),
                iov_len: last.start + last.len - first.start,
            };
            next += 1;
        } else {
            for d in datagrams {
                let q = self.queued[d];
                self.iovs[next] = libc::iovec {
                    iov_base: self.buf[q.start..].as_mut_ptr().cast(),
                    iov_len: q.len,
                };
                next += 1;
                if q.lent > 0 {
                    // The kernel only reads through it (`sendmmsg` takes `iovec`s, which
                    // have mutable pointers, for sending and receiving alike).
                    self.iovs[next] = libc::iovec {
                        iov_base: self.lent[d].cast_mut().cast(),
                        iov_len: q.lent,
                    };
                    next += 1;
                }
            }
        }
        let addr_len = sockaddr_from_std(first.to, &mut self.addrs[m]);
        let hdr = &mut self.hdrs[m].msg_hdr;
        hdr.msg_name = (&raw mut self.addrs[m]).cast();
        hdr.msg_namelen = addr_len;
        hdr.msg_iov = &raw mut self.iovs[iov];
        hdr.msg_iovlen = next - iov;
        if run.count > 1 {
            hdr.msg_control = self.ctrl[m].as_mut_ptr().cast();
            // SAFETY: CMSG_SPACE is a pure size computation.
            hdr.msg_controllen = unsafe { libc::CMSG_SPACE(size_of::<u16>() as u32) } as _;
            // The planner caps runs at 64 KiB, so a segment size fits in u16.
            let seg = u16::try_from(run.seg).unwrap_or(u16::MAX);
            // SAFETY: the header's control buffer is `self.ctrl[m]` (32 bytes), larger than
            // CMSG_SPACE(2); CMSG_FIRSTHDR is non-null for a non-empty buffer.
            unsafe {
                let cmsg = libc::CMSG_FIRSTHDR(hdr);
                (*cmsg).cmsg_level = libc::SOL_UDP;
                (*cmsg).cmsg_type = UDP_SEGMENT;
                (*cmsg).cmsg_len = libc::CMSG_LEN(size_of::<u16>() as u32) as _;
                libc::CMSG_DATA(cmsg).cast::<u16>().write_unaligned(seg);
            }
        } else {
            hdr.msg_control = null_mut();
            hdr.msg_controllen = 0;
        }
        next
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

/// What ended a [`wait`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Woken {
    /// The socket has datagrams to read (a wait that timed out says not, and the caller can
    /// skip a `recvmmsg` that would only fail with `EAGAIN`).
    pub(crate) readable: bool,
    /// The socket reported `POLLERR`: its error queue holds entries (ICMP errors), which
    /// must be drained or every later wait returns at once.
    pub(crate) error: bool,
}

/// Block until `socket` is readable (if given), the waker fires, or `timeout` passes (`None`:
/// no limit). `ppoll` takes a nanosecond timeout, and with a timer slack of 1 ns the kernel's
/// hrtimer wakes us within a few microseconds, unlike `poll`/`epoll_wait`'s milliseconds.
pub(crate) fn wait(
    socket: Option<RawFd>,
    waker: &Waker,
    timeout: Option<Duration>,
) -> io::Result<Woken> {
    let mut fds = [
        libc::pollfd {
            // ppoll skips a negative descriptor.
            fd: socket.unwrap_or(-1),
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
    Ok(Woken {
        // Interrupted (r < 0 here) says nothing: look.
        readable: r < 0 || fds[0].revents & libc::POLLIN != 0,
        error: fds[0].revents & libc::POLLERR != 0,
    })
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
        let mut batch = RecvBatch::new(1500, false);
        let mut stamps = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while stamps.len() < 3 && std::time::Instant::now() < deadline {
            let n = batch.recv(rx.as_raw_fd()).unwrap();
            stamps.extend((0..n).map(|i| batch.info(i).arrival.expect("a timestamp")));
        }
        assert_eq!(stamps.len(), 3);
        assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{stamps:?}");
        // Realtime, so only roughly bounded (NTP may slew it meanwhile).
        let slop = Duration::from_millis(50);
        assert!(stamps[0] + slop >= before && stamps[2] <= after + slop);
    }

    #[test]
    fn datagrams_longer_than_a_slot_are_dropped_not_cut() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_nonblocking(true).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = rx.local_addr().unwrap();
        tx.send_to(&[7; 200], to).unwrap();
        tx.send_to(&[8; 100], to).unwrap();
        let mut batch = RecvBatch::new(100, false);
        let mut kept = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let mut slots = 0;
        while slots < 2 && std::time::Instant::now() < deadline {
            let n = batch.recv(rx.as_raw_fd()).unwrap();
            slots += n;
            kept.extend((0..n).filter_map(|i| batch.get(i).map(|(_, b)| b.to_vec())));
        }
        assert_eq!(slots, 2);
        assert_eq!(
            kept,
            vec![vec![8; 100]],
            "the 200-byte datagram is refused whole"
        );
    }

    /// Datagrams from `rx` until `want` arrived (or 5 s passed), cut apart as the driver
    /// does; also how many receive slots they came in.
    fn receive_all(rx: &UdpSocket, gro: bool, want: usize) -> (Vec<Vec<u8>>, usize) {
        let mut batch = RecvBatch::new(1500, gro);
        let (mut got, mut slots) = (Vec::new(), 0);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while got.len() < want && std::time::Instant::now() < deadline {
            slots += batch.recv(rx.as_raw_fd()).unwrap();
            batch.lend_trains();
            got.extend(batch.datagrams().map(|(_, _, d)| d.bytes().to_vec()));
        }
        (got, slots)
    }

    #[test]
    fn gso_trains_arrive_whole_with_gro_and_cut_without() {
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        if !gso_supported(tx.as_raw_fd()) {
            eprintln!("no UDP GSO on this kernel: skipped");
            return;
        }
        let sizes = [1000, 1000, 1000, 1000, 1000, 300];
        for gro in [true, false] {
            let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
            rx.set_nonblocking(true).unwrap();
            if gro {
                enable_gro(rx.as_raw_fd()).unwrap();
            }
            let to = rx.local_addr().unwrap();
            let mut batch = SendBatch::new(1500, true);
            for (i, &len) in sizes.iter().enumerate() {
                batch.buf_mut().extend(std::iter::repeat_n(i as u8, len));
                batch.commit(to, len, true);
            }
            batch.flush(tx.as_raw_fd(), &mut ErrorQueue::new()).unwrap();
            assert!(batch.gso(), "loopback takes GSO sends");
            let (got, slots) = receive_all(&rx, gro, sizes.len());
            let expect: Vec<Vec<u8>> = sizes
                .iter()
                .enumerate()
                .map(|(i, &len)| vec![i as u8; len])
                .collect();
            assert_eq!(got, expect, "gro={gro}");
            assert_eq!(slots, if gro { 1 } else { sizes.len() }, "gro={gro}");
        }
    }

    /// A sender and a non-blocking receiver with `UDP_GRO` on, on loopback; `None` (the test
    /// skipped) where the kernel has no UDP GSO.
    fn gro_pair() -> Option<(UdpSocket, UdpSocket)> {
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        if !gso_supported(tx.as_raw_fd()) {
            eprintln!("no UDP GSO on this kernel: skipped");
            return None;
        }
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_nonblocking(true).unwrap();
        enable_gro(rx.as_raw_fd()).unwrap();
        Some((tx, rx))
    }

    /// One GSO send from `tx` to `rx` of 1000-byte datagrams, each filled with its byte of
    /// `fills`.
    fn send_train(tx: &UdpSocket, rx: &UdpSocket, fills: impl IntoIterator<Item = u8>) {
        let to = rx.local_addr().unwrap();
        let mut send = SendBatch::new(1500, true);
        for fill in fills {
            send.buf_mut().extend(std::iter::repeat_n(fill, 1000));
            send.commit(to, 1000, true);
        }
        send.flush(tx.as_raw_fd(), &mut ErrorQueue::new()).unwrap();
    }

    /// A GRO train of many datagrams is lent whole (its bytes unchanged); a short one stays
    /// in the batch to be copied.
    #[test]
    fn long_gro_trains_are_lent_and_short_ones_kept() {
        let Some((tx, rx)) = gro_pair() else { return };
        let mut batch = RecvBatch::new(1500, true);
        for train in [LEND_MIN_SEGMENTS, LEND_MIN_SEGMENTS - 1] {
            send_train(&tx, &rx, (0..train).map(|i| i as u8));
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            let mut n = 0;
            while n == 0 && std::time::Instant::now() < deadline {
                n = batch.recv(rx.as_raw_fd()).unwrap();
            }
            assert_eq!(n, 1, "one train in one slot");
            batch.lend_trains();
            let (_, bytes) = batch.get(0).unwrap();
            let expect: Vec<u8> = (0..train).flat_map(|i| [i as u8; 1000]).collect();
            assert_eq!(bytes, &expect[..]);
            match batch.lent(0) {
                Some(lent) => {
                    assert_eq!(train, LEND_MIN_SEGMENTS);
                    assert_eq!(lent.as_ptr(), bytes.as_ptr(), "get reads the lent buffer");
                }
                None => assert!(train < LEND_MIN_SEGMENTS),
            }
            let lent = batch.lent(0).is_some();
            let cut: Vec<(bool, Vec<u8>)> = batch
                .datagrams()
                .map(|(_, _, d)| (matches!(d, Datagram::Lent(_)), d.bytes().to_vec()))
                .collect();
            let expect: Vec<(bool, Vec<u8>)> =
                (0..train).map(|i| (lent, vec![i as u8; 1000])).collect();
            assert_eq!(cut, expect, "cut into its datagrams, lent ones as handles");
            assert!(batch.lent(0).is_none(), "a lent train is handed out once");
        }
    }

    /// Each call sets up again only the slots the call before filled: a slot whose train was
    /// lent gets a fresh buffer, and the lent bytes stay as they were while the slot takes
    /// the next trains (with empty reads between, and short trains that are not lent).
    #[test]
    fn a_lent_train_keeps_its_bytes_while_its_slot_takes_the_next() {
        let Some((tx, rx)) = gro_pair() else { return };
        let mut batch = RecvBatch::new(1500, true);
        let mut kept: Vec<(u8, BytesMut)> = Vec::new();
        let trains = [
            LEND_MIN_SEGMENTS,
            2,
            LEND_MIN_SEGMENTS + 3,
            1,
            LEND_MIN_SEGMENTS,
        ];
        for (round, &train) in trains.iter().enumerate() {
            let fill = round as u8 + 1;
            send_train(&tx, &rx, std::iter::repeat_n(fill, train));
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            let mut got = Vec::new();
            while got.len() < train && std::time::Instant::now() < deadline {
                batch.recv(rx.as_raw_fd()).unwrap();
                batch.lend_trains();
                for (_, _, d) in batch.datagrams() {
                    got.push(d.bytes().to_vec());
                    if let Datagram::Lent(bytes) = d {
                        kept.push((fill, bytes));
                    }
                }
            }
            assert_eq!(got, vec![vec![fill; 1000]; train], "round {round}");
            assert_eq!(batch.recv(rx.as_raw_fd()).unwrap(), 0, "nothing left");
            for (fill, bytes) in &kept {
                assert!(
                    bytes.iter().all(|b| b == fill),
                    "round {round}: lent bytes changed"
                );
            }
        }
        let lent_trains = trains.iter().filter(|&&t| t >= LEND_MIN_SEGMENTS);
        assert_eq!(
            kept.len(),
            lent_trains.sum::<usize>(),
            "the long trains were lent"
        );
    }

    /// Datagrams whose payloads are lent (a header in the batch, the rest elsewhere) arrive
    /// as header then payload, whether they go as one GSO train, mixed with copied ones, or
    /// one by one.
    #[test]
    fn lent_payloads_follow_their_headers_on_the_wire() {
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let gso = gso_supported(tx.as_raw_fd());
        let payloads: Vec<Vec<u8>> = (0..6u8).map(|i| vec![100 + i; 984]).collect();
        for with_gso in [true, false] {
            let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
            rx.set_nonblocking(true).unwrap();
            let to = rx.local_addr().unwrap();
            let mut batch = SendBatch::new(1500, gso && with_gso);
            let mut expect = Vec::new();
            for (i, payload) in payloads.iter().enumerate() {
                let header = [i as u8; 16];
                batch.buf_mut().extend_from_slice(&header);
                let mut whole = header.to_vec();
                if i == 3 {
                    // A copied datagram of the same size in the middle of the train.
                    batch.buf_mut().extend_from_slice(payload);
                    batch.commit(to, 1000, with_gso);
                } else {
                    // SAFETY: `payloads` outlives the flush below.
                    unsafe { batch.commit_lent(to, header.len(), payload, with_gso) };
                }
                whole.extend_from_slice(payload);
                expect.push(whole);
            }
            batch.flush(tx.as_raw_fd(), &mut ErrorQueue::new()).unwrap();
            assert!(batch.is_empty());
            let (got, _) = receive_all(&rx, false, expect.len());
            assert_eq!(got, expect, "gso={with_gso}");
        }
    }
}
