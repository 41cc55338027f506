//! Operating-system glue: opening the UDP socket with large buffers and the offloads the
//! kernel has (receive timestamps, UDP GSO/GRO), and address conversion for the raw batched
//! calls. The batched I/O, the waker and the precise wait are in [`linux`]; the pure halves
//! of GSO/GRO (planning trains, splitting them) in [`segments`]; ICMP errors from the
//! socket's error queue in [`errqueue`]. Linux only for now.

#[cfg(not(target_os = "linux"))]
compile_error!("the udt runtime currently supports Linux only");

mod errqueue;
mod lending;
mod linux;
mod segments;

use std::io;
use std::mem::size_of;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::AsRawFd;

use socket2::{Domain, Protocol, Socket, Type};

pub(crate) use errqueue::{is_icmp_report, ErrorQueue};
pub(crate) use linux::{set_precise_timers, wait, RecvBatch, SendBatch, Waker};
pub(crate) use segments::Datagram;

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

/// What the kernel granted one multiplexer's socket: offloads and buffer sizes. Read it with
/// `UdtStream::socket_info` (or the listener's), e.g. to see whether the kernel capped the
/// buffers asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketInfo {
    /// Kernel receive timestamps (`SO_TIMESTAMPNS`) feed the arrival-time estimators.
    pub rx_timestamps: bool,
    /// UDP segmentation offload (`UDP_SEGMENT`) is available for sending to peers that
    /// announced it.
    pub gso: bool,
    /// UDP receive coalescing (`UDP_GRO`) is on.
    pub gro: bool,
    /// ICMP errors are read (`IP_RECVERR` / `IPV6_RECVERR`): a peer whose port closed is
    /// noticed within about a second instead of 4.11's ~46 s.
    pub icmp_errors: bool,
    /// `SO_SNDBUF`.
    pub send_buffer: BufferSize,
    /// `SO_RCVBUF`.
    pub recv_buffer: BufferSize,
}

/// A socket buffer size asked for and granted, in bytes of payload (Linux reports twice the
/// value set, bookkeeping included; this is half of what it reports).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferSize {
    /// What the runtime (or UDP_SNDBUF / UDP_RCVBUF) asked for.
    pub asked: usize,
    /// What the kernel granted.
    pub granted: usize,
}

impl BufferSize {
    /// The kernel granted less than asked (raise `net.core.rmem_max` / `wmem_max`, or run
    /// with CAP_NET_ADMIN so the runtime can force it).
    pub fn is_capped(&self) -> bool {
        self.granted < self.asked
    }
}

/// A non-blocking UDP socket bound to `addr`, with socket buffers raised as far as the kernel
/// lets us (or as `opts` says), receive timestamps and the UDP offloads the kernel offers.
///
/// No `SO_REUSEADDR`, whatever `opts.reuse_addr` says: on a UDP socket it lets a second socket
/// bind the same port, and the kernel then delivers each datagram to only one of them. Worse,
/// two sockets that both set it may be handed the *same ephemeral port* for a bind to port 0:
/// with a thousand clients connecting at once, ~2% of them shared a port and lost their
/// handshake responses (and later their control packets) to the other socket. UDT_REUSEADDR's
/// meaning in 4.11 is sharing a multiplexer inside the process, which is the multiplexer
/// registry's business (`ports.rs`), not the kernel's.
pub(crate) fn bind_udp(addr: SocketAddr, opts: &UdpOptions) -> io::Result<(UdpSocket, SocketInfo)> {
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        // Dual-stack where the system allows it: one port serves both families, as 4.11
        // does not, but it is harmless and what applications expect from `[::]`.
        let _ = socket.set_only_v6(false);
    }
    let (send_buffer, recv_buffer) = (
        raise_buffer(&socket, opts, false),
        raise_buffer(&socket, opts, true),
    );
    socket.bind(&addr.into())?;
    configure(socket, addr, send_buffer, recv_buffer)
}

/// An application's bound UDP socket made ready for a multiplexer, as [`bind_udp`] makes its
/// own (4.11 `bind2`: the application hands UDT a socket it bound, e.g. after NAT traversal).
/// `InvalidInput` unless it is a bound UDP socket.
pub(crate) fn adopt_udp(
    socket: UdpSocket,
    opts: &UdpOptions,
) -> io::Result<(UdpSocket, SocketInfo)> {
    let socket = Socket::from(socket);
    if socket.r#type()? != Type::DGRAM {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the socket handed over is not a datagram (UDP) socket",
        ));
    }
    let addr = socket
        .local_addr()?
        .as_socket()
        .filter(|a| a.port() != 0)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "the UDP socket handed over is not bound to an IP address and port",
            )
        })?;
    let (send_buffer, recv_buffer) = (
        raise_buffer(&socket, opts, false),
        raise_buffer(&socket, opts, true),
    );
    configure(socket, addr, send_buffer, recv_buffer)
}

/// The steps after binding: non-blocking, and the offloads the kernel offers.
fn configure(
    socket: Socket,
    addr: SocketAddr,
    send_buffer: BufferSize,
    recv_buffer: BufferSize,
) -> io::Result<(UdpSocket, SocketInfo)> {
    socket.set_nonblocking(true)?;
    let fd = socket.as_raw_fd();
    let mut info = SocketInfo {
        send_buffer,
        recv_buffer,
        ..SocketInfo::default()
    };
    if env_switch("UDT_RX_TIMESTAMPS") {
        match linux::enable_rx_timestamps(fd) {
            Ok(()) => info.rx_timestamps = true,
            Err(e) => tracing::warn!(error = %e, "no kernel receive timestamps (SO_TIMESTAMPNS)"),
        }
    }
    if env_switch("UDT_RECVERR") {
        match errqueue::enable(fd, addr.is_ipv6()) {
            Ok(()) => info.icmp_errors = true,
            Err(e) => tracing::warn!(error = %e, "no ICMP errors (IP_RECVERR)"),
        }
    }
    if env_switch("UDT_OFFLOAD") && env_switch("UDT_GSO") {
        info.gso = linux::gso_supported(fd);
    }
    if env_switch("UDT_OFFLOAD") && env_switch("UDT_GRO") {
        match linux::enable_gro(fd) {
            Ok(()) => info.gro = true,
            Err(e) => tracing::debug!(error = %e, "no UDP GRO"),
        }
    }
    Ok((socket.into(), info))
}

/// Diagnostic switches, on unless the variable is set to `0`: `UDT_RX_TIMESTAMPS` (kernel
/// receive timestamps, to compare the estimators with and without them), `UDT_OFFLOAD`
/// (UDP GSO and GRO, to measure what they bring; `UDT_GSO` and `UDT_GRO` for each alone)
/// and `UDT_RECVERR` (ICMP errors; off, a dead peer is noticed by 4.11's EXP rule alone).
fn env_switch(name: &str) -> bool {
    std::env::var_os(name).is_none_or(|v| v != "0")
}

/// Set one socket buffer (forced past `net.core.*mem_max` when we may) and report what the
/// kernel granted, with a warning when it capped the request.
fn raise_buffer(socket: &Socket, opts: &UdpOptions, recv: bool) -> BufferSize {
    let (name, asked) = if recv {
        ("SO_RCVBUF", opts.recv_buffer)
    } else {
        ("SO_SNDBUF", opts.send_buffer)
    };
    let asked = asked.unwrap_or(SOCKET_BUFFER_BYTES);
    if let Err(e) = linux::force_buffer(socket, recv, asked) {
        tracing::warn!(error = %e, "cannot set {name}");
    }
    let got = if recv {
        socket.recv_buffer_size()
    } else {
        socket.send_buffer_size()
    };
    // Linux reports twice the value set (bookkeeping overhead included).
    let granted = got.map_or(0, |n| n / 2);
    let size = BufferSize { asked, granted };
    if size.is_capped() {
        tracing::warn!(
            asked,
            granted,
            "{name} capped by the kernel (raise net.core.{}mem_max or run with CAP_NET_ADMIN)",
            if recv { "r" } else { "w" }
        );
    }
    size
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
