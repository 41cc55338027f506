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
//! | UDT_CC | [`SocketOptions::set_controller`], or by name [`SocketOptions::set_controller_named`] | native DAIMD |
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
//! | UDT_REUSEADDR | [`SocketOptions::set_reuse_addr`]: sockets bound to one address share one multiplexer (UDP socket, I/O thread) | true |
//! | UDT_MAXBW | [`SocketOptions::set_max_bandwidth`], socket `set_max_bandwidth` | unlimited |
//! | UDT_STATE, UDT_EVENT, UDT_SNDDATA, UDT_RCVDATA | socket `state`, `events`, `send_data_pkts`, `recv_data_pkts` | read-only |

use std::io;
use std::sync::Arc;
use std::time::Duration;

use udt_proto::config::{IP_UDP_OVERHEAD, UDT_HEADER};
use udt_proto::congestion::{
    ControllerFactory, CubicFactory, FixedRateFactory, LedbatFactory, ModelFactory, NativeFactory,
};
use udt_proto::{ConfigError, ConnectionConfig, Mode, SessionKey};

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
    /// [`SocketOptions::set_controller_named`] got a name it does not know.
    #[error("unknown congestion controller {0:?}: use {names}", names = one_of(&SocketOptions::CONTROLLER_NAMES))]
    UnknownController(String),
    /// The fixed-rate controller was asked for without a rate.
    #[error("the fixed-rate congestion controller needs a rate (bytes per second)")]
    ControllerNeedsRate,
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

    /// UDT_CC by name, for command lines and configuration files: `native` (UDT's DAIMD,
    /// the default), `model` (the BBR-like model-based controller), `ledbat` (the LEDBAT
    /// scavenger for background transfers: it takes only capacity others leave idle), `cubic`
    /// (TCP's CUBIC, RFC 9438: exactly as aggressive as a Linux TCP flow) or `fixed-rate`
    /// (paces at
    /// `rate_bytes_per_sec`, which it then needs; it never backs off, so use it on dedicated
    /// links only). Other controllers ignore the rate. The names are
    /// [`Self::CONTROLLER_NAMES`], each the factory's own `NAME`, so the name chosen here is
    /// the one logs and stats show.
    pub fn set_controller_named(
        &mut self,
        name: &str,
        rate_bytes_per_sec: Option<u64>,
    ) -> Result<&mut Self, OptionError> {
        let factory: Arc<dyn ControllerFactory> = match name {
            NativeFactory::NAME => Arc::new(NativeFactory::default()),
            ModelFactory::NAME => Arc::new(ModelFactory::default()),
            LedbatFactory::NAME => Arc::new(LedbatFactory::default()),
            CubicFactory::NAME => Arc::new(CubicFactory::default()),
            FixedRateFactory::NAME => match rate_bytes_per_sec.filter(|&r| r > 0) {
                Some(rate) => Arc::new(FixedRateFactory::new(rate)),
                None => return Err(OptionError::ControllerNeedsRate),
            },
            _ => return Err(OptionError::UnknownController(name.to_owned())),
        };
        Ok(self.set_controller(factory))
    }

    /// The names [`Self::set_controller_named`] accepts, the default first. The one list of
    /// controller names: command lines offer and check these, and error messages list them.
    pub const CONTROLLER_NAMES: [&'static str; 5] = [
        NativeFactory::NAME,
        ModelFactory::NAME,
        LedbatFactory::NAME,
        CubicFactory::NAME,
        FixedRateFactory::NAME,
    ];

    /// Those of [`Self::CONTROLLER_NAMES`] that need no rate, in the same order: what a
    /// command line without a rate option (`udt cp`, `udt serve`, the lab's flows) offers.
    pub const RATELESS_CONTROLLER_NAMES: [&'static str; 4] = [
        NativeFactory::NAME,
        ModelFactory::NAME,
        LedbatFactory::NAME,
        CubicFactory::NAME,
    ];

    /// The scavenger among [`Self::RATELESS_CONTROLLER_NAMES`] (LEDBAT): it takes only
    /// capacity other traffic leaves idle, so comparisons of shares leave it out.
    pub const SCAVENGER_CONTROLLER_NAME: &'static str = LedbatFactory::NAME;

    /// The copy of TCP's CUBIC among [`Self::RATELESS_CONTROLLER_NAMES`]: a reference and
    /// the simulator's stand-in for kernel TCP, so comparisons against kernel TCP cubic
    /// leave it out.
    pub const REFERENCE_CONTROLLER_NAME: &'static str = CubicFactory::NAME;

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

    /// UDT_REUSEADDR (default true), by its 4.11 meaning: UDT sockets of this process bound
    /// to the same local address (a listener, [`crate::UdtStream::connect_from`], rendezvous)
    /// share one multiplexer, that is one UDP socket and one I/O thread, when both have it on
    /// and the same MSS; their connections are told apart by socket id. Off on either side,
    /// binding an address another UDT socket holds is `AddrInUse` saying that UDT_REUSEADDR
    /// is off. A socket that joins a multiplexer uses the UDP_SNDBUF / UDP_RCVBUF it was
    /// opened with (its first socket's). Port 0, or `connect` without a local address,
    /// always opens a new port. The kernel's SO_REUSEADDR is never set: it would split one
    /// port's datagrams between two kernel sockets, and UDP needs no help to rebind a port
    /// after a restart.
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

    /// Protect every packet after the handshake with this session key (AES-256-GCM; both
    /// sides must hold the same key, e.g. handed over SSH). Not a UDT4 option: a protected
    /// socket refuses plaintext, so it cannot exchange data with a libudt 4.11 peer or any
    /// peer without the key; such a connection ends with `AuthenticationFailed`.
    pub fn set_session_key(&mut self, key: Option<SessionKey>) -> &mut Self {
        self.config.session_key(key);
        self
    }

    /// Whether a session key is set.
    pub fn is_protected(&self) -> bool {
        self.config.is_protected()
    }

    /// Leave room in each data packet (24 bytes) for protection started later with the
    /// socket's `start_protection`, once a key has been agreed over the connection.
    pub fn set_protect_later(&mut self, on: bool) -> &mut Self {
        self.config.protect_later(on);
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

/// A UDT4 option by name and number (`UDTOpt`), for the generic
/// [`SocketOptions::set`] / `set_option` / `option` calls that code ported from UDT4 uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UdtOpt {
    /// UDT_MSS (0): int, bytes.
    Mss,
    /// UDT_SNDSYN (1): bool.
    SndSyn,
    /// UDT_RCVSYN (2): bool.
    RcvSyn,
    /// UDT_CC (3): use [`SocketOptions::set_controller`].
    Cc,
    /// UDT_FC (4): int, packets.
    Fc,
    /// UDT_SNDBUF (5): int, bytes.
    SndBuf,
    /// UDT_RCVBUF (6): int, bytes.
    RcvBuf,
    /// UDT_LINGER (7): linger.
    Linger,
    /// UDP_SNDBUF (8): int, bytes.
    UdpSndBuf,
    /// UDP_RCVBUF (9): int, bytes.
    UdpRcvBuf,
    /// UDT_MAXMSG (10): declared but unsupported by 4.11.
    MaxMsg,
    /// UDT_MSGTTL (11): declared but unsupported by 4.11.
    MsgTtl,
    /// UDT_RENDEZVOUS (12): bool.
    Rendezvous,
    /// UDT_SNDTIMEO (13): int, milliseconds, -1 for none.
    SndTimeo,
    /// UDT_RCVTIMEO (14): int, milliseconds, -1 for none.
    RcvTimeo,
    /// UDT_REUSEADDR (15): bool.
    ReuseAddr,
    /// UDT_MAXBW (16): int, bytes per second, -1 for unlimited.
    MaxBw,
    /// UDT_STATE (17): read-only.
    State,
    /// UDT_EVENT (18): read-only.
    Event,
    /// UDT_SNDDATA (19): read-only, packets.
    SndData,
    /// UDT_RCVDATA (20): read-only, packets.
    RcvData,
}

impl UdtOpt {
    /// Every option in `UDTOpt` order.
    pub const ALL: [Self; 21] = [
        Self::Mss,
        Self::SndSyn,
        Self::RcvSyn,
        Self::Cc,
        Self::Fc,
        Self::SndBuf,
        Self::RcvBuf,
        Self::Linger,
        Self::UdpSndBuf,
        Self::UdpRcvBuf,
        Self::MaxMsg,
        Self::MsgTtl,
        Self::Rendezvous,
        Self::SndTimeo,
        Self::RcvTimeo,
        Self::ReuseAddr,
        Self::MaxBw,
        Self::State,
        Self::Event,
        Self::SndData,
        Self::RcvData,
    ];

    /// The option's number in UDT4's `UDTOpt` enum.
    pub fn number(self) -> i32 {
        Self::ALL.iter().position(|&o| o == self).unwrap_or(0) as i32
    }

    /// The option with UDT4 number `n`.
    pub fn from_number(n: i32) -> Option<Self> {
        usize::try_from(n)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
    }

    /// The UDT4 name, e.g. `UDT_MSS`.
    pub fn name(self) -> &'static str {
        const NAMES: [&str; 21] = [
            "UDT_MSS",
            "UDT_SNDSYN",
            "UDT_RCVSYN",
            "UDT_CC",
            "UDT_FC",
            "UDT_SNDBUF",
            "UDT_RCVBUF",
            "UDT_LINGER",
            "UDP_SNDBUF",
            "UDP_RCVBUF",
            "UDT_MAXMSG",
            "UDT_MSGTTL",
            "UDT_RENDEZVOUS",
            "UDT_SNDTIMEO",
            "UDT_RCVTIMEO",
            "UDT_REUSEADDR",
            "UDT_MAXBW",
            "UDT_STATE",
            "UDT_EVENT",
            "UDT_SNDDATA",
            "UDT_RCVDATA",
        ];
        NAMES[self.number() as usize]
    }

    /// Whether the option may only be set before bind/connect (4.11's rules).
    pub fn before_connect_only(self) -> bool {
        matches!(
            self,
            Self::Mss
                | Self::Cc
                | Self::Fc
                | Self::SndBuf
                | Self::RcvBuf
                | Self::UdpSndBuf
                | Self::UdpRcvBuf
                | Self::Rendezvous
                | Self::ReuseAddr
        )
    }

    /// Whether the option is read-only or unsupported (never settable).
    pub fn not_settable(self) -> bool {
        matches!(
            self,
            Self::MaxMsg | Self::MsgTtl | Self::State | Self::Event | Self::SndData | Self::RcvData
        )
    }
}

/// A value for the generic option calls, typed as UDT4 types it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptValue {
    /// UDT_SNDSYN, UDT_RCVSYN, UDT_RENDEZVOUS, UDT_REUSEADDR.
    Bool(bool),
    /// Sizes, counts, UDT_SNDTIMEO / UDT_RCVTIMEO in ms and UDT_MAXBW (-1: none).
    Int(i64),
    /// UDT_LINGER (`None`: off).
    Linger(Option<Duration>),
    /// UDT_STATE.
    State(udt_proto::State),
    /// UDT_EVENT.
    Event(crate::Ready),
}

impl OptValue {
    pub(crate) fn as_bool(self, opt: UdtOpt) -> Result<bool, OptionError> {
        match self {
            Self::Bool(b) => Ok(b),
            _ => Err(OptionError::WrongType(opt.name(), "Bool")),
        }
    }

    pub(crate) fn as_int(self, opt: UdtOpt) -> Result<i64, OptionError> {
        match self {
            Self::Int(i) => Ok(i),
            _ => Err(OptionError::WrongType(opt.name(), "Int")),
        }
    }

    /// A UDT4 millisecond timeout: negative means none.
    pub(crate) fn as_timeout(self, opt: UdtOpt) -> Result<Option<Duration>, OptionError> {
        let ms = self.as_int(opt)?;
        let t = u64::try_from(ms).ok().map(Duration::from_millis);
        check_timeout(opt.name(), t)
    }

    /// A UDT4 bandwidth: negative or zero means unlimited.
    pub(crate) fn as_bandwidth(self, opt: UdtOpt) -> Result<Option<u64>, OptionError> {
        Ok(u64::try_from(self.as_int(opt)?).ok().filter(|&b| b > 0))
    }

    pub(crate) fn as_linger(self, opt: UdtOpt) -> Result<Option<Duration>, OptionError> {
        match self {
            Self::Linger(l) => Ok(l),
            _ => Err(OptionError::WrongType(opt.name(), "Linger")),
        }
    }

    /// A timeout as UDT4 reports it: milliseconds, -1 for none.
    pub(crate) fn timeout(t: Option<Duration>) -> Self {
        Self::Int(t.map_or(-1, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))
    }

    /// A bandwidth as UDT4 reports it: -1 for unlimited.
    pub(crate) fn bandwidth(b: Option<u64>) -> Self {
        Self::Int(b.map_or(-1, |b| i64::try_from(b).unwrap_or(i64::MAX)))
    }
}

impl SocketOptions {
    /// Set option `opt` the UDT4 way (`setsockopt`): the value typed as UDT4 types it (ints
    /// for sizes, milliseconds and bandwidth, -1 for "none"). Read-only and unsupported
    /// options give [`OptionError::NotSettable`], a mistyped value
    /// [`OptionError::WrongType`].
    pub fn set(&mut self, opt: UdtOpt, value: OptValue) -> Result<&mut Self, OptionError> {
        let int = |v: OptValue| -> Result<u64, OptionError> {
            let i = v.as_int(opt)?;
            u64::try_from(i).map_err(|_| out_of_range(opt.name(), 0, 0, i64::MAX as u64))
        };
        match opt {
            UdtOpt::Mss => self.set_mss(u32::try_from(int(value)?).unwrap_or(u32::MAX))?,
            UdtOpt::SndSyn => self.set_send_blocking(value.as_bool(opt)?),
            UdtOpt::RcvSyn => self.set_recv_blocking(value.as_bool(opt)?),
            UdtOpt::Cc => return Err(OptionError::WrongType(opt.name(), "controller factory")),
            UdtOpt::Fc => self.set_flow_window(u32::try_from(int(value)?).unwrap_or(u32::MAX))?,
            UdtOpt::SndBuf => self.set_send_buffer(int(value)?)?,
            UdtOpt::RcvBuf => self.set_recv_buffer(int(value)?)?,
            UdtOpt::Linger => self.set_linger(value.as_linger(opt)?),
            UdtOpt::UdpSndBuf => {
                let b = usize::try_from(int(value)?).unwrap_or(usize::MAX);
                self.set_udp_send_buffer(Some(b))?
            }
            UdtOpt::UdpRcvBuf => {
                let b = usize::try_from(int(value)?).unwrap_or(usize::MAX);
                self.set_udp_recv_buffer(Some(b))?
            }
            UdtOpt::Rendezvous => self.set_rendezvous(value.as_bool(opt)?),
            UdtOpt::SndTimeo => self.set_send_timeout(value.as_timeout(opt)?)?,
            UdtOpt::RcvTimeo => self.set_recv_timeout(value.as_timeout(opt)?)?,
            UdtOpt::ReuseAddr => self.set_reuse_addr(value.as_bool(opt)?),
            UdtOpt::MaxBw => self.set_max_bandwidth(value.as_bandwidth(opt)?),
            UdtOpt::MaxMsg
            | UdtOpt::MsgTtl
            | UdtOpt::State
            | UdtOpt::Event
            | UdtOpt::SndData
            | UdtOpt::RcvData => return Err(OptionError::NotSettable(opt.name())),
        };
        Ok(self)
    }
}

/// `a, b or c`: names as an error message offers them.
fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [only] => (*only).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controllers_by_name() {
        let mut o = SocketOptions::default();
        o.set_controller_named("fixed-rate", Some(1_000_000))
            .unwrap();
        assert_eq!(o.controller().name(), "fixed-rate");
        o.set_controller_named("native", None).unwrap();
        assert_eq!(o.controller().name(), "native");
        for name in SocketOptions::CONTROLLER_NAMES {
            assert!(o.set_controller_named(name, Some(1)).is_ok(), "{name}");
        }
        assert_eq!(
            o.set_controller_named("fixed-rate", None).unwrap_err(),
            OptionError::ControllerNeedsRate
        );
        assert_eq!(
            o.set_controller_named("fixed-rate", Some(0)).unwrap_err(),
            OptionError::ControllerNeedsRate
        );
        let err = o.set_controller_named("reno", None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown congestion controller \"reno\": use native, model, ledbat, cubic or \
             fixed-rate"
        );
    }

    #[test]
    fn every_name_builds_its_own_controller() {
        let mut o = SocketOptions::default();
        assert_eq!(o.controller().name(), SocketOptions::CONTROLLER_NAMES[0]);
        for name in SocketOptions::CONTROLLER_NAMES {
            o.set_controller_named(name, Some(1_000_000)).unwrap();
            assert_eq!(o.controller().name(), name);
            assert_eq!(o.controller().build().name(), name);
            let rateless = SocketOptions::RATELESS_CONTROLLER_NAMES.contains(&name);
            assert_eq!(
                o.set_controller_named(name, None).is_ok(),
                rateless,
                "{name}"
            );
        }
        assert!(SocketOptions::RATELESS_CONTROLLER_NAMES
            .iter()
            .all(|name| SocketOptions::CONTROLLER_NAMES.contains(name)));
        assert_eq!(one_of(&["a"]), "a");
        assert_eq!(one_of(&["a", "b"]), "a or b");
    }
}
