//! Opening a TUN device: the one ioctl the lab needs, kept in one place.
//!
//! The device is created non-persistent (no `TUNSETPERSIST`), so the kernel removes it when the
//! last fd closes: a crashed lab leaves no device behind. It is a layer-3 device without the
//! packet-information header (`IFF_TUN | IFF_NO_PI`): each `read` returns one whole IP packet
//! and each `write` injects one. No offloads (`IFF_VNET_HDR`) are enabled on purpose: with TSO
//! the kernel would hand over 64 KiB super-packets, and the link model would then serialize,
//! delay and lose them as one unit, which no real path does.
//!
//! The fd is opened non-blocking: the forwarder drains it until `EAGAIN` and sleeps in `ppoll`.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

/// Opens `/dev/net/tun` and attaches it to a new TUN device `name` in the calling thread's
/// network namespace.
pub(crate) fn open(name: &str) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open("/dev/net/tun")?;
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    let bytes = name.as_bytes();
    if bytes.len() >= req.ifr_name.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "tun name too long",
        ));
    }
    for (dst, src) in req.ifr_name.iter_mut().zip(bytes) {
        *dst = *src as libc::c_char;
    }
    req.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
    // SAFETY: TUNSETIFF reads and writes one `struct ifreq`, which `req` is.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), libc::TUNSETIFF, &mut req) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}
