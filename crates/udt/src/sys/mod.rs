//! Operating-system glue: opening the UDP socket with large buffers, and address conversion
//! for the raw batched calls. The batched I/O, the waker and the precise wait are in
//! [`linux`]; this phase supports Linux only.

#[cfg(not(target_os = "linux"))]
compile_error!("the udt runtime currently supports Linux only");

mod linux;

use std::io;
use std::mem::size_of;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::AsRawFd;

use socket2::{Domain, Protocol, Socket, Type};

pub(crate) use linux::{set_precise_timers, wait, RecvBatch, SendBatch, Waker, BATCH};

/// Kernel socket buffer we ask for in each direction: about 5 ms at 10 Gbit/s, enough to ride
/// out the I/O thread being descheduled for a moment.
const SOCKET_BUFFER_BYTES: usize = 8 << 20;

/// The UDP-level options of a multiplexer's socket (UDT_REUSEADDR, UDP_SNDBUF, UDP_RCVBUF).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UdpOptions {
    /// UDT_REUSEADDR (default on). Never set as the kernel option; see [`bind_udp`].
    pub(crate) reuse_addr: bool,
    /// SO_SNDBUF in bytes; `None`: [`SOCKET_BUFFER_BYTES`].
    pub(crate) send_buffer: Option<usize>,
    /// SO_RCVBUF in bytes; `None`: [`SOCKET_BUFFER_BYTES`].
    pub(crate) recv_buffer: Option<usize>,
}

impl Default for UdpOptions {
    fn default() -> Self {
        Self {
            reuse_addr: true,
            send_buffer: None,
            recv_buffer: None,
        }
    }
}

/// A non-blocking UDP socket bound to `addr`, with socket buffers raised as far as the kernel
/// lets us (or as `opts` says).
///
/// No `SO_REUSEADDR`, whatever `opts.reuse_addr` says: on a UDP socket it lets a second socket
/// bind the same port, and the kernel then delivers each datagram to only one of them. Worse,
/// two sockets that both set it may be handed the *same ephemeral port* for a bind to port 0:
/// with a thousand clients connecting at once, ~2% of them shared a port and lost their
/// handshake responses (and later their control packets) to the other socket. UDT_REUSEADDR's
/// meaning in 4.11 is sharing a multiplexer inside the process, which is the multiplexer
/// layer's business, not the kernel's.
pub(crate) fn bind_udp(addr: SocketAddr, opts: &UdpOptions) -> io::Result<UdpSocket> {
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        // Dual-stack where the system allows it: one port serves both families, as 4.11
        // does not, but it is harmless and what applications expect from `[::]`.
        let _ = socket.set_only_v6(false);
    }
    raise_buffers(&socket, opts);
    socket.bind(&addr.into())?;
    socket.set_nonblocking(true)?;
    if rx_timestamps_wanted() {
        if let Err(e) = linux::enable_rx_timestamps(socket.as_raw_fd()) {
            tracing::warn!(error = %e, "no kernel receive timestamps (SO_TIMESTAMPNS)");
        }
    }
    Ok(socket.into())
}

/// Kernel receive timestamps are on unless `UDT_RX_TIMESTAMPS=0` is set in the environment
/// (a diagnostic switch, to compare the estimators with and without them).
fn rx_timestamps_wanted() -> bool {
    static WANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WANTED.get_or_init(|| std::env::var_os("UDT_RX_TIMESTAMPS").is_none_or(|v| v != "0"))
}

fn raise_buffers(socket: &Socket, opts: &UdpOptions) {
    for recv in [true, false] {
        let name = if recv { "SO_RCVBUF" } else { "SO_SNDBUF" };
        let asked = if recv {
            opts.recv_buffer
        } else {
            opts.send_buffer
        };
        let asked = asked.unwrap_or(SOCKET_BUFFER_BYTES);
        if let Err(e) = linux::force_buffer(socket, recv, asked) {
            tracing::warn!(error = %e, "cannot set {name}");
            continue;
        }
        let got = if recv {
            socket.recv_buffer_size()
        } else {
            socket.send_buffer_size()
        };
        // Linux reports twice the value set (bookkeeping overhead included).
        match got {
            Ok(n) if n < asked => tracing::warn!(
                asked,
                got = n,
                "{name} capped by the kernel (raise net.core.{}mem_max)",
                if recv { "r" } else { "w" }
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "cannot read {name}"),
        }
    }
}

/// Write `addr` into `storage`; returns the length to pass to the kernel.
fn sockaddr_from_std(addr: SocketAddr, storage: &mut libc::sockaddr_storage) -> libc::socklen_t {
    match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from(*a.ip()).to_be(),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            unsafe { (&raw mut *storage).cast::<libc::sockaddr_in>().write(sin) };
            size_of::<libc::sockaddr_in>() as libc::socklen_t
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            unsafe { (&raw mut *storage).cast::<libc::sockaddr_in6>().write(sin6) };
            size_of::<libc::sockaddr_in6>() as libc::socklen_t
        }
    }
}

/// The address the kernel wrote into `storage`, if it is IPv4 or IPv6. (IPv4 peers of a
/// dual-stack socket appear IPv4-mapped, and are answered the same way.)
fn sockaddr_to_std(storage: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match i32::from(storage.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let sin = unsafe { &*(&raw const *storage).cast::<libc::sockaddr_in>() };
            let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            Some(SocketAddr::V4(SocketAddrV4::new(
                ip,
                u16::from_be(sin.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6.
            let sin6 = unsafe { &*(&raw const *storage).cast::<libc::sockaddr_in6>() };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            let port = u16::from_be(sin6.sin6_port);
            Some(SocketAddr::V6(SocketAddrV6::new(
                ip,
                port,
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}
