//! [`SocketOptions`]: every UDT4 socket option, by its UDT4 meaning and default.
//!
//! Options that shape the connection or its UDP port are set on a `SocketOptions` before
//! `bind_with` / `connect_with` / `rendezvous_with`; sockets expose setters only for what
//! UDT4 allows to change later (blocking modes, timeouts, MAXBW, LINGER), and getters for the
//! read-only ones. The generic [`crate::UdtStream::set_option`] path, for code ported from
//! UDT4, refuses the before-bind options with [`OptionError::TooLate`].
//!
//! | UDT4 option | Here | 4.11 default |
//! |---|---|---|
//! | UDT_MSS | [`SocketOptions::set_mss`] | 1500 |
//! | UDT_SNDSYN | [`SocketOptions::set_send_blocking`], socket `set_send_blocking` | true |
//! | UDT_RCVSYN | [`SocketOptions::set_recv_blocking`], socket `set_recv_blocking` | true |
//! | UDT_CC | [`SocketOptions::set_controller`] | native DAIMD |
//! | UDT_FC | [`SocketOptions::set_flow_window`] | 25600 packets |
//! | UDT_SNDBUF | [`SocketOptions::set_send_buffer`] | 8192 packets (12 058 624 B) |
//! | UDT_RCVBUF | [`SocketOptions::set_recv_buffer`] | 8192 packets (12 058 624 B) |
//! | UDT_LINGER | [`SocketOptions::set_linger`], socket `set_linger` | on, 180 s |
//! | UDP_SNDBUF | [`SocketOptions::set_udp_send_buffer`] | 64 KiB in 4.11; 8 MiB here |
//! | UDP_RCVBUF | [`SocketOptions::set_udp_recv_buffer`] | 12 288 000 in 4.11; 8 MiB here |
//! | UDT_MAXMSG, UDT_MSGTTL | unsupported, as in 4.11 (TTL is a `send_msg` argument) | — |
//! | UDT_RENDEZVOUS | [`SocketOptions::set_rendezvous`] (or the `rendezvous` constructors) | false |
//! | UDT_SNDTIMEO | [`SocketOptions::set_send_timeout`], socket `set_write_timeout` | none |
//! | UDT_RCVTIMEO | [`SocketOptions::set_recv_timeout`], socket `set_read_timeout` | none |
//! | UDT_REUSEADDR | [`SocketOptions::set_reuse_addr`] | true |
//! | UDT_MAXBW | [`SocketOptions::set_max_bandwidth`], socket `set_max_bandwidth` | unlimited |
//! | UDT_STATE, UDT_EVENT, UDT_SNDDATA, UDT_RCVDATA | socket `state`, `events`, `send_data_pkts`, `recv_data_pkts` | read-only |

use std::io;
use std::sync::Arc;
use std::time::Duration;

use udt_proto::config::{IP_UDP_OVERHEAD, UDT_HEADER};
use udt_proto::congestion::ControllerFactory;
use udt_proto::{ConfigError, ConnectionConfig, Mode};

use crate::sys::UdpOptions;

/// Why an option was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// A value outside the range UDT4 allows; the message names the option and the range.
    #[error(transparent)]
    OutOfRange(#[from] ConfigError),
    /// The option shapes the connection or its port, so it must be set before bind/connect.
    #[error("{0} can only be set before bind/connect")]
    TooLate(&'static str),
    /// The option cannot be set (read-only, or declared but unsupported as in 4.11).
    #[error("{0} cannot be set")]
    NotSettable(&'static str),
    /// A zero timeout: use `None` for "no limit", or non-blocking mode for "do not wait".
    #[error("{0} cannot be zero: use None for no limit, or non-blocking mode")]
    ZeroTimeout(&'static str),
    /// The value has the wrong type for the option (generic `set_option` only).
    #[error("{0} takes a {1} value")]
    WrongType(&'static str, &'static str),
}

impl From<OptionError> for io::Error {
    fn from(e: OptionError) -> Self {
        Self::new(io::ErrorKind::InvalidInput, e)
    }
}

/// UDT4 socket options for a socket about to bind or connect. Defaults are 4.11's, except
/// the UDP buffers (see [`Self::set_udp_send_buffer`]).
///
/// ```
/// use std::time::Duration;
/// let mut opts = udt::SocketOptions::default();
/// opts.set_mss(1400)?
///     .set_recv_timeout(Some(Duration::from_secs(5)))?
///     .set_max_bandwidth(Some(10_000_000));
/// assert_eq!(opts.mss(), 1400);
/// # Ok::<(), udt::OptionError>(())
/// ```
#[derive(Debug, Clone)]
pub struct SocketOptions {
    pub(crate) config: ConnectionConfig,
    pub(crate) runtime: RuntimeOptions,
    udp_send_buffer: Option<usize>,
    udp_recv_buffer: Option<usize>,
    reuse_addr: bool,
}

/// The options every socket keeps and may change after connecting; accepted sockets inherit
/// their listener's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RuntimeOptions {
    pub(crate) send_blocking: bool,
    pub(crate) recv_blocking: bool,
    pub(crate) send_timeout: Option<Duration>,
    pub(crate) recv_timeout: Option<Duration>,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        Self {
            send_blocking: true,
            recv_blocking: true,
            send_timeout: None,
            recv_timeout: None,
        }
    }
}

impl SocketOptions {
    /// 4.11 defaults for a socket of `mode` (UDT4 `SOCK_STREAM` or `SOCK_DGRAM`).
    pub fn new(mode: Mode) -> Self {
        Self::from_config(ConnectionConfig::new(mode))
    }

    /// Options around an existing protocol configuration (other options at their defaults).
    pub fn from_config(config: ConnectionConfig) -> Self {
        Self {
            config,
            runtime: RuntimeOptions::default(),
            udp_send_buffer: None,
            udp_recv_buffer: None,
            reuse_addr: true,
        }
    }

    /// The data mode.
    pub fn mode(&self) -> Mode {
        self.config.mode_value()
    }

    /// UDT_MSS: the largest packet, counting 28 bytes of IP/UDP header even for IPv6
    /// (default 1500; 76..=65535, and at most the UDP buffers). The two sides use the smaller
    /// of their values.
    pub fn set_mss(&mut self, mss: u32) -> Result<&mut Self, OptionError> {
        let udp_min = [self.udp_send_buffer, self.udp_recv_buffer]
            .into_iter()
            .flatten()
            .min();
        if let Some(limit) = udp_min.filter(|&l| (mss as usize) > l) {
            return Err(out_of_range("UDT_MSS", mss.into(), 76, limit as u64));
        }
        self.config.mss(mss)?;
        Ok(self)
    }

    /// The UDT_MSS value.
    pub fn mss(&self) -> u32 {
        self.config.mss_value()
    }

    /// UDT_SNDSYN: whether sends block (default true). Non-blocking sends fail with
    /// `WouldBlock` when the send buffer is full, and `close` then lingers in the background.
    pub fn set_send_blocking(&mut self, on: bool) -> &mut Self {
        self.runtime.send_blocking = on;
        self
    }

    /// The UDT_SNDSYN value.
    pub fn send_blocking(&self) -> bool {
        self.runtime.send_blocking
    }

    /// UDT_RCVSYN: whether receives, `accept` and `connect` block (default true).
    /// Non-blocking reads fail with `WouldBlock`; a non-blocking `connect` returns at once and
    /// the socket becomes writable (see [`crate::Poller`]) when the handshake completes.
    pub fn set_recv_blocking(&mut self, on: bool) -> &mut Self {
        self.runtime.recv_blocking = on;
        self
    }

    /// The UDT_RCVSYN value.
    pub fn recv_blocking(&self) -> bool {
        self.runtime.recv_blocking
    }

    /// UDT_CC: the congestion controller (default: UDT's native DAIMD).
    pub fn set_controller(&mut self, factory: Arc<dyn ControllerFactory>) -> &mut Self {
        self.config.controller(factory);
        self
    }

    /// The UDT_CC value.
    pub fn controller(&self) -> &Arc<dyn ControllerFactory> {
        self.config.controller_value()
    }

    /// UDT_FC: the largest flow window in packets (default 25600; 1..=2^24, values below 32
    /// become 32 as in 4.11).
    pub fn set_flow_window(&mut self, pkts: u32) -> Result<&mut Self, OptionError> {
        self.config.flow_control_pkts(pkts)?;
        Ok(self)
    }

    /// The UDT_FC value, packets.
    pub fn flow_window(&self) -> u32 {
        self.config.flow_control_pkts_value()
    }

    /// UDT_SNDBUF in bytes, kept (as in 4.11) as whole packets of the MSS set so far (default
    /// 8192 packets = 12 058 624 bytes; at least 32 packets).
    pub fn set_send_buffer(&mut self, bytes: u64) -> Result<&mut Self, OptionError> {
        self.config.send_buffer_bytes(bytes)?;
        Ok(self)
    }

    /// The UDT_SNDBUF value in bytes.
    pub fn send_buffer(&self) -> u64 {
        u64::from(self.config.send_buffer_pkts_value()) * self.packet_bytes()
    }

    /// UDT_RCVBUF in bytes, as whole packets of the MSS set so far (default 8192 packets =
    /// 12 058 624 bytes; at least 32 packets). The advertised window is also capped by
    /// UDT_FC.
    pub fn set_recv_buffer(&mut self, bytes: u64) -> Result<&mut Self, OptionError> {
        self.config.recv_buffer_bytes(bytes)?;
        Ok(self)
    }

    /// The UDT_RCVBUF value in bytes.
    pub fn recv_buffer(&self) -> u64 {
        u64::from(self.config.recv_buffer_pkts_value()) * self.packet_bytes()
    }

    /// UDT_LINGER: how long `close` waits for unsent data to be acknowledged before telling
    /// the peer (default on, 180 s). `None`: close at once, discarding unsent data.
    pub fn set_linger(&mut self, linger: Option<Duration>) -> &mut Self {
        self.config.linger(linger);
        self
    }

    /// The UDT_LINGER value.
    pub fn linger(&self) -> Option<Duration> {
        self.config.linger_value()
    }

    /// UDP_SNDBUF: the kernel send buffer of the UDP socket, bytes (at least the MSS).
    /// 4.11 defaults to 64 KiB per UDT socket; here one UDP socket serves every connection
    /// on the port at up to 10 Gbit/s, so `None` (the default) asks for 8 MiB and warns if
    /// the kernel caps it.
    pub fn set_udp_send_buffer(&mut self, bytes: Option<usize>) -> Result<&mut Self, OptionError> {
        self.udp_send_buffer = self.check_udp_buffer("UDP_SNDBUF", bytes)?;
        Ok(self)
    }

    /// The UDP_SNDBUF value (`None`: automatic).
    pub fn udp_send_buffer(&self) -> Option<usize> {
        self.udp_send_buffer
    }

    /// UDP_RCVBUF: the kernel receive buffer of the UDP socket, bytes (at least the MSS).
    /// 4.11 defaults to 12 288 000; `None` (the default) asks for 8 MiB.
    pub fn set_udp_recv_buffer(&mut self, bytes: Option<usize>) -> Result<&mut Self, OptionError> {
        self.udp_recv_buffer = self.check_udp_buffer("UDP_RCVBUF", bytes)?;
        Ok(self)
    }

    /// The UDP_RCVBUF value (`None`: automatic).
    pub fn udp_recv_buffer(&self) -> Option<usize> {
        self.udp_recv_buffer
    }

    /// UDT_RENDEZVOUS: both sides connect to each other instead of one listening (default
    /// false). The `rendezvous` constructors set it for you.
    pub fn set_rendezvous(&mut self, on: bool) -> &mut Self {
        self.config.rendezvous(on);
        self
    }

    /// The UDT_RENDEZVOUS value.
    pub fn rendezvous(&self) -> bool {
        self.config.is_rendezvous()
    }

    /// UDT_SNDTIMEO: how long a blocking send may wait (default `None`: no limit); expiry
    /// gives `TimedOut` (4.11 error 6003).
    pub fn set_send_timeout(&mut self, t: Option<Duration>) -> Result<&mut Self, OptionError> {
        self.runtime.send_timeout = check_timeout("UDT_SNDTIMEO", t)?;
        Ok(self)
    }

    /// The UDT_SNDTIMEO value.
    pub fn send_timeout(&self) -> Option<Duration> {
        self.runtime.send_timeout
    }

    /// UDT_RCVTIMEO: how long a blocking receive may wait (default `None`: no limit).
    pub fn set_recv_timeout(&mut self, t: Option<Duration>) -> Result<&mut Self, OptionError> {
        self.runtime.recv_timeout = check_timeout("UDT_RCVTIMEO", t)?;
        Ok(self)
    }

    /// The UDT_RCVTIMEO value.
    pub fn recv_timeout(&self) -> Option<Duration> {
        self.runtime.recv_timeout
    }

    /// UDT_REUSEADDR: let other sockets bind the same UDP port (SO_REUSEADDR; default true).
    pub fn set_reuse_addr(&mut self, on: bool) -> &mut Self {
        self.reuse_addr = on;
        self
    }

    /// The UDT_REUSEADDR value.
    pub fn reuse_addr(&self) -> bool {
        self.reuse_addr
    }

    /// UDT_MAXBW: cap on the sending rate in bytes per second (default `None`: unlimited;
    /// `Some(0)` also means unlimited). Can be changed while connected.
    pub fn set_max_bandwidth(&mut self, bytes_per_sec: Option<u64>) -> &mut Self {
        self.config.max_bandwidth(bytes_per_sec);
        self
    }

    /// The UDT_MAXBW value.
    pub fn max_bandwidth(&self) -> Option<u64> {
        self.config.max_bandwidth_value()
    }

    /// How long a connection attempt may take (not a UDT4 option; 4.11 fixes 3 s, or 30 s
    /// for rendezvous).
    pub fn set_connect_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.config.connect_timeout(timeout);
        self
    }

    /// The protocol configuration, for options `udt_proto` has that UDT4 does not.
    pub fn config_mut(&mut self) -> &mut ConnectionConfig {
        &mut self.config
    }

    /// Payload bytes per buffer slot: UDT4 converts buffer sizes with MSS − 28.
    fn packet_bytes(&self) -> u64 {
        u64::from(self.mss() - IP_UDP_OVERHEAD)
    }

    fn check_udp_buffer(
        &self,
        option: &'static str,
        bytes: Option<usize>,
    ) -> Result<Option<usize>, OptionError> {
        let max = i32::MAX as u64;
        match bytes {
            Some(b) if (b as u64) < u64::from(self.mss()) || b as u64 > max => {
                Err(out_of_range(option, b as u64, self.mss().into(), max))
            }
            _ => Ok(bytes),
        }
    }

    /// Largest UDP payload this socket's connections use.
    pub(crate) fn max_datagram(&self) -> usize {
        self.config.payload_size() + UDT_HEADER as usize
    }

    pub(crate) fn udp(&self) -> UdpOptions {
        UdpOptions {
            reuse_addr: self.reuse_addr,
            send_buffer: self.udp_send_buffer,
            recv_buffer: self.udp_recv_buffer,
        }
    }
}

impl Default for SocketOptions {
    /// 4.11 defaults, stream mode.
    fn default() -> Self {
        Self::new(Mode::Stream)
    }
}

impl From<ConnectionConfig> for SocketOptions {
    fn from(config: ConnectionConfig) -> Self {
        Self::from_config(config)
    }
}

pub(crate) fn check_timeout(
    option: &'static str,
    t: Option<Duration>,
) -> Result<Option<Duration>, OptionError> {
    match t {
        Some(d) if d.is_zero() => Err(OptionError::ZeroTimeout(option)),
        _ => Ok(t),
    }
}

fn out_of_range(option: &'static str, value: u64, min: u64, max: u64) -> OptionError {
    OptionError::OutOfRange(ConfigError::OutOfRange {
        option,
        value,
        min,
        max,
    })
}
