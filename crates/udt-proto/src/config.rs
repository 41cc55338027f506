//! Connection and endpoint configuration, named after the UDT4 socket options they implement.
//!
//! Values are validated when set, so a connection never runs with an option outside the range
//! 4.11 accepts; the error names the option and the allowed range.
//!
//! Buffers size themselves unless set: UDT_SNDBUF, UDT_RCVBUF and UDT_FC left at their
//! defaults start at 4.11's values and grow to what the path needs, up to
//! [`ConnectionConfig::buffer_autotune_limit`] (see `connection/autotune.rs`). A value set
//! explicitly is kept fixed, as in 4.11: a user who sized a buffer meant that size.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::congestion::{ControllerFactory, NativeFactory};
use crate::protect::SessionKey;
use crate::wire::SocketType;

/// IP + UDP header bytes that UDT4 counts inside the MSS (it assumes 28 even for IPv6).
pub const IP_UDP_OVERHEAD: u32 = 28;
/// UDT header bytes in every packet.
pub const UDT_HEADER: u32 = 16;
/// Smallest MSS 4.11 accepts: room for the IP/UDP header and a 48-byte handshake body.
pub const MIN_MSS: u32 = 76;
/// Largest MSS we accept: a UDP datagram cannot carry more.
pub const MAX_MSS: u32 = 65_535;

/// Why a configuration value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A numeric option outside the range UDT4 allows.
    #[error("{option} = {value} is out of range: allowed {min}..={max}")]
    OutOfRange {
        /// UDT4 option name, e.g. `UDT_MSS`.
        option: &'static str,
        /// The refused value.
        value: u64,
        /// Smallest allowed value.
        min: u64,
        /// Largest allowed value.
        max: u64,
    },
}

/// Data mode of a connection (UDT4 `SOCK_STREAM` / `SOCK_DGRAM`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Reliable, ordered byte stream.
    #[default]
    Stream,
    /// Messages with boundaries, optional TTL and optional in-order delivery.
    Message,
}

impl Mode {
    /// The socket-type word of a 4.11 handshake for this mode.
    pub fn socket_type(self) -> SocketType {
        match self {
            Self::Stream => SocketType::STREAM,
            Self::Message => SocketType::DGRAM,
        }
    }

    /// The mode a handshake's socket-type word names, if any.
    pub fn from_socket_type(socket_type: SocketType) -> Option<Self> {
        match socket_type {
            SocketType::STREAM => Some(Self::Stream),
            SocketType::DGRAM => Some(Self::Message),
            _ => None,
        }
    }
}

/// Per-connection options. Defaults are UDT4's.
#[derive(Clone)]
pub struct ConnectionConfig {
    pub(crate) mode: Mode,
    pub(crate) mss: u32,
    pub(crate) flow_control_pkts: u32,
    pub(crate) send_buffer_pkts: u32,
    pub(crate) recv_buffer_pkts: u32,
    pub(crate) linger: Option<Duration>,
    pub(crate) max_bandwidth: Option<u64>,
    pub(crate) rendezvous: bool,
    pub(crate) connect_timeout: Option<Duration>,
    pub(crate) periodic_nak: bool,
    pub(crate) controller: Arc<dyn ControllerFactory>,
    pub(crate) session_key: Option<SessionKey>,
    pub(crate) protect_later: bool,
    /// Which of UDT_SNDBUF, UDT_RCVBUF and UDT_FC were set explicitly (then fixed).
    pub(crate) send_buffer_set: bool,
    pub(crate) recv_buffer_set: bool,
    pub(crate) flow_control_set: bool,
    pub(crate) autotune_limit_bytes: Option<u64>,
}

/// How far a buffer left at its default may grow: 256 MiB, two bandwidth-delay products of
/// a 5 Gbit/s × 200 ms path, or 1 Gbit/s × 200 ms with room for a second of repairs.
pub const DEFAULT_AUTOTUNE_LIMIT_BYTES: u64 = 256 << 20;

impl ConnectionConfig {
    /// UDT4 defaults in the given mode.
    pub fn new(mode: Mode) -> Self {
        Self {
            mode,
            ..Self::default()
        }
    }

    /// UDT_MSS: maximum packet size including 28 bytes of IP/UDP header (default 1500).
    pub fn mss(&mut self, mss: u32) -> Result<&mut Self, ConfigError> {
        check("UDT_MSS", mss.into(), MIN_MSS.into(), MAX_MSS.into())?;
        self.mss = mss;
        Ok(self)
    }

    /// UDT_FC: largest flow window in packets (default 25600; 4.11 raises values below 32
    /// to 32).
    pub fn flow_control_pkts(&mut self, pkts: u32) -> Result<&mut Self, ConfigError> {
        check("UDT_FC", pkts.into(), 1, u64::from(MAX_BUFFER_PKTS))?;
        self.flow_control_pkts = pkts.max(32);
        self.flow_control_set = true;
        Ok(self)
    }

    /// UDT_SNDBUF in packets (default 8192). Use [`Self::send_buffer_bytes`] for bytes.
    pub fn send_buffer_pkts(&mut self, pkts: u32) -> Result<&mut Self, ConfigError> {
        check("UDT_SNDBUF", pkts.into(), 32, u64::from(MAX_BUFFER_PKTS))?;
        self.send_buffer_pkts = pkts;
        self.send_buffer_set = true;
        Ok(self)
    }

    /// UDT_SNDBUF in bytes, stored (as 4.11 does) as whole packets of the current MSS.
    pub fn send_buffer_bytes(&mut self, bytes: u64) -> Result<&mut Self, ConfigError> {
        let pkts = bytes / u64::from(self.mss - IP_UDP_OVERHEAD);
        let pkts = u32::try_from(pkts).unwrap_or(u32::MAX);
        self.send_buffer_pkts(pkts.max(32))
    }

    /// UDT_RCVBUF in packets (default 8192, at least 32). The advertised flow window is
    /// min(receive buffer, UDT_FC).
    pub fn recv_buffer_pkts(&mut self, pkts: u32) -> Result<&mut Self, ConfigError> {
        check("UDT_RCVBUF", pkts.into(), 32, u64::from(MAX_BUFFER_PKTS))?;
        self.recv_buffer_pkts = pkts;
        self.recv_buffer_set = true;
        Ok(self)
    }

    /// UDT_RCVBUF in bytes, stored as whole packets of the current MSS.
    pub fn recv_buffer_bytes(&mut self, bytes: u64) -> Result<&mut Self, ConfigError> {
        let pkts = bytes / u64::from(self.mss - IP_UDP_OVERHEAD);
        let pkts = u32::try_from(pkts).unwrap_or(u32::MAX);
        self.recv_buffer_pkts(pkts.max(32))
    }

    /// How far UDT_SNDBUF, UDT_RCVBUF and UDT_FC may grow when left at their defaults
    /// (default [`DEFAULT_AUTOTUNE_LIMIT_BYTES`]); `None` keeps them at 4.11's fixed sizes.
    /// The buffers start at 4.11's sizes and grow while the path needs more (about two
    /// bandwidth-delay products), as Linux TCP's autotuning does; options set explicitly are
    /// never changed. Memory follows the data, not the limit: an idle connection holds
    /// almost nothing.
    pub fn buffer_autotune_limit(&mut self, bytes: Option<u64>) -> &mut Self {
        self.autotune_limit_bytes = bytes;
        self
    }

    /// The autotuning limit in bytes, if autotuning is on.
    pub fn buffer_autotune_limit_value(&self) -> Option<u64> {
        self.autotune_limit_bytes
    }

    /// UDT_LINGER: how long `close` waits for unsent data (default on, 180 s).
    pub fn linger(&mut self, linger: Option<Duration>) -> &mut Self {
        self.linger = linger;
        self
    }

    /// UDT_MAXBW: cap on the sending rate in bytes per second (default unlimited).
    pub fn max_bandwidth(&mut self, bytes_per_sec: Option<u64>) -> &mut Self {
        self.max_bandwidth = bytes_per_sec.filter(|&b| b > 0);
        self
    }

    /// UDT_RENDEZVOUS: both peers connect to each other (default false).
    pub fn rendezvous(&mut self, on: bool) -> &mut Self {
        self.rendezvous = on;
        self
    }

    /// How long a connection attempt may take (4.11: 3 s, rendezvous 30 s).
    pub fn connect_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Send NAKs for still-missing packets periodically (draft-gg-udt-03), not only once when
    /// a gap appears (4.11). Default on: it shortens recovery when a NAK or a retransmission is
    /// lost, and 4.11 senders accept such NAKs.
    pub fn periodic_nak(&mut self, on: bool) -> &mut Self {
        self.periodic_nak = on;
        self
    }

    /// UDT_CC: the congestion controller (default: UDT's native DAIMD).
    pub fn controller(&mut self, factory: Arc<dyn ControllerFactory>) -> &mut Self {
        self.controller = factory;
        self
    }

    /// Protect every packet after the handshake with this session key (both sides must hold
    /// it; see `crate::protect`). Required, not offered: plaintext from the peer is refused,
    /// so a peer without the key (a libudt 4.11 one included) cannot exchange data with this
    /// side. Default: none (plain UDT4).
    pub fn session_key(&mut self, key: Option<SessionKey>) -> &mut Self {
        self.session_key = key;
        self
    }

    /// Whether packets are protected from the start (a session key is set).
    pub fn is_protected(&self) -> bool {
        self.session_key.is_some()
    }

    /// Leave room in every data packet for protection that starts later, once connected
    /// (`Connection::start_protection`, after a key exchange over the connection itself), so
    /// that sealed packets still fit the MSS. Not needed with [`Self::session_key`].
    pub fn protect_later(&mut self, on: bool) -> &mut Self {
        self.protect_later = on;
        self
    }

    /// Whether data packets leave room for protection (now or later).
    pub fn reserves_protection(&self) -> bool {
        self.session_key.is_some() || self.protect_later
    }

    /// The data mode.
    pub fn mode_value(&self) -> Mode {
        self.mode
    }

    /// The UDT_MSS value.
    pub fn mss_value(&self) -> u32 {
        self.mss
    }

    /// The UDT_FC value, packets.
    pub fn flow_control_pkts_value(&self) -> u32 {
        self.flow_control_pkts
    }

    /// The UDT_SNDBUF value, packets.
    pub fn send_buffer_pkts_value(&self) -> u32 {
        self.send_buffer_pkts
    }

    /// The UDT_RCVBUF value, packets.
    pub fn recv_buffer_pkts_value(&self) -> u32 {
        self.recv_buffer_pkts
    }

    /// The UDT_LINGER value.
    pub fn linger_value(&self) -> Option<Duration> {
        self.linger
    }

    /// The UDT_MAXBW value, bytes per second (`None`: unlimited).
    pub fn max_bandwidth_value(&self) -> Option<u64> {
        self.max_bandwidth
    }

    /// The UDT_RENDEZVOUS value.
    pub fn is_rendezvous(&self) -> bool {
        self.rendezvous
    }

    /// The connect timeout, if set explicitly.
    pub fn connect_timeout_value(&self) -> Option<Duration> {
        self.connect_timeout
    }

    /// The UDT_CC value: the congestion-controller factory.
    pub fn controller_value(&self) -> &Arc<dyn ControllerFactory> {
        &self.controller
    }

    /// Payload bytes per data packet at this MSS (less the protection overhead when
    /// protected).
    pub fn payload_size(&self) -> usize {
        payload_size(self.mss, self.reserves_protection())
    }

    /// The flow window this side advertises in its handshake: min(receive buffer, UDT_FC),
    /// each at the most it may grow to. The ACKs then advertise what is free now.
    pub(crate) fn advertised_window(&self) -> u32 {
        self.recv_limit_pkts().min(self.flow_limit_pkts())
    }

    /// The autotuning limit in packets of this MSS, if autotuning is on.
    fn autotune_limit_pkts(&self) -> Option<u32> {
        let pkts = self.autotune_limit_bytes? / (self.payload_size().max(1) as u64);
        Some(
            u32::try_from(pkts)
                .unwrap_or(u32::MAX)
                .clamp(32, MAX_BUFFER_PKTS),
        )
    }

    /// The most a buffer of `pkts` may grow to: its own size if `set` explicitly or with
    /// autotuning off, else the autotuning limit (or its size, if larger).
    fn limit(&self, pkts: u32, set: bool) -> u32 {
        match self.autotune_limit_pkts() {
            Some(limit) if !set => pkts.max(limit),
            _ => pkts,
        }
    }

    /// The largest send buffer, packets: UDT_SNDBUF if set, else the autotuning limit.
    pub(crate) fn send_limit_pkts(&self) -> u32 {
        self.limit(self.send_buffer_pkts, self.send_buffer_set)
    }

    /// The largest receive buffer, packets.
    pub(crate) fn recv_limit_pkts(&self) -> u32 {
        self.limit(self.recv_buffer_pkts, self.recv_buffer_set)
    }

    /// The largest flow window, packets.
    pub(crate) fn flow_limit_pkts(&self) -> u32 {
        self.limit(self.flow_control_pkts, self.flow_control_set)
    }

    pub(crate) fn effective_connect_timeout(&self) -> Duration {
        self.connect_timeout.unwrap_or(if self.rendezvous {
            Duration::from_secs(30)
        } else {
            Duration::from_secs(3)
        })
    }
}

/// Upper bound on buffer sizes in packets: keeps every window far below the 2³⁰ sequence
/// comparison limit.
pub const MAX_BUFFER_PKTS: u32 = 1 << 24;

impl Default for ConnectionConfig {
    /// UDT4 4.11 defaults (`shared/udt-protocol.md` §8.1).
    fn default() -> Self {
        Self {
            mode: Mode::Stream,
            mss: 1500,
            flow_control_pkts: 25_600,
            send_buffer_pkts: 8192,
            recv_buffer_pkts: 8192,
            linger: Some(Duration::from_secs(180)),
            max_bandwidth: None,
            rendezvous: false,
            connect_timeout: None,
            periodic_nak: true,
            controller: Arc::new(NativeFactory::default()),
            session_key: None,
            protect_later: false,
            send_buffer_set: false,
            recv_buffer_set: false,
            flow_control_set: false,
            autotune_limit_bytes: Some(DEFAULT_AUTOTUNE_LIMIT_BYTES),
        }
    }
}

impl fmt::Debug for ConnectionConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectionConfig")
            .field("mode", &self.mode)
            .field("mss", &self.mss)
            .field("flow_control_pkts", &self.flow_control_pkts)
            .field("send_buffer_pkts", &self.send_buffer_pkts)
            .field("recv_buffer_pkts", &self.recv_buffer_pkts)
            .field("linger", &self.linger)
            .field("max_bandwidth", &self.max_bandwidth)
            .field("rendezvous", &self.rendezvous)
            .field("controller", &self.controller.name())
            .field("protected", &self.session_key.is_some())
            .field("protect_later", &self.protect_later)
            .field("autotune_limit_bytes", &self.autotune_limit_bytes)
            .finish()
    }
}

/// Payload bytes per data packet of a connection running at `mss`: what is left after the
/// IP/UDP and UDT headers and, if `protected`, the counter and tag.
pub(crate) fn payload_size(mss: u32, protected: bool) -> usize {
    let overhead = if protected {
        crate::protect::OVERHEAD
    } else {
        0
    };
    (mss - IP_UDP_OVERHEAD - UDT_HEADER) as usize - overhead
}

fn check(option: &'static str, value: u64, min: u64, max: u64) -> Result<(), ConfigError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(ConfigError::OutOfRange {
            option,
            value,
            min,
            max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_udt4() {
        let mut c = ConnectionConfig::default();
        assert_eq!(c.payload_size(), 1456);
        assert_eq!(c.effective_connect_timeout(), Duration::from_secs(3));
        c.buffer_autotune_limit(None);
        assert_eq!(c.advertised_window(), 8192);
        assert_eq!(c.send_limit_pkts(), 8192);
    }

    #[test]
    fn untouched_buffers_may_grow_to_the_limit_and_set_ones_stay() {
        let mut c = ConnectionConfig::default();
        let limit = (DEFAULT_AUTOTUNE_LIMIT_BYTES / 1456) as u32;
        assert_eq!(c.advertised_window(), limit);
        assert_eq!(c.send_limit_pkts(), limit);
        c.flow_control_pkts(25_600).unwrap();
        assert_eq!(
            c.advertised_window(),
            25_600,
            "UDT_FC set: the window stays"
        );
        c.recv_buffer_pkts(1000).unwrap();
        assert_eq!(c.advertised_window(), 1000);
        c.send_buffer_bytes(1 << 20).unwrap();
        assert_eq!(
            c.send_limit_pkts(),
            (1 << 20) / 1472,
            "4.11 counts MSS - 28"
        );
        // A limit below 4.11's default never shrinks the default.
        let mut small = ConnectionConfig::default();
        small.buffer_autotune_limit(Some(1 << 20));
        assert_eq!(small.send_limit_pkts(), 8192);
    }

    #[test]
    fn out_of_range_names_option_and_range() {
        let err = ConnectionConfig::default().mss(20).unwrap_err();
        assert_eq!(
            err.to_string(),
            "UDT_MSS = 20 is out of range: allowed 76..=65535"
        );
    }

    #[test]
    fn small_flow_window_is_raised_to_32() {
        let mut c = ConnectionConfig::default();
        c.flow_control_pkts(5).unwrap();
        assert_eq!(c.flow_control_pkts, 32);
    }

    #[test]
    fn buffer_bytes_become_packets() {
        let mut c = ConnectionConfig::default();
        c.recv_buffer_bytes(1472 * 100).unwrap();
        assert_eq!(c.recv_buffer_pkts, 100);
    }
}
