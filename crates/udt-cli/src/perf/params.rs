//! What a test is: [`TestParams`], checked once on the client (a bad value is a usage
//! error, exit 2) and sent to the server in the `hello` message, so both ends build their
//! sockets from the same values ([`TestParams::udt_options`], [`TestParams::apply_tcp`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The transport under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Proto {
    /// UDT over UDP (this project's library).
    Udt,
    /// Kernel TCP, for comparison.
    Tcp,
}

impl Proto {
    /// The lowercase name, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Udt => "udt",
            Self::Tcp => "tcp",
        }
    }
}

/// When the sender stops.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Send for this many seconds (`-t`).
    Seconds(f64),
    /// Send this many bytes in total over all streams (`-n`).
    Bytes(u64),
}

/// Everything both ends must agree on. Sent in the `hello` message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestParams {
    /// UDT or TCP.
    pub proto: Proto,
    /// Congestion control: one of `udt::SocketOptions::CONTROLLER_NAMES`, or a kernel TCP
    /// name (`cubic`, `bbr`). `None`: the default (the library's for UDT, the kernel's for
    /// TCP).
    pub cc: Option<String>,
    /// UDT MSS (packet size including 28 bytes of IP/UDP headers); for TCP, TCP_MAXSEG is
    /// set to this minus 40 (IPv4 + TCP headers) so both carry packets of the same size.
    pub mss: Option<u32>,
    /// Parallel streams (`-P`), aggregated.
    pub streams: u32,
    /// The server sends (`-R`).
    pub reverse: bool,
    /// When the sender stops.
    pub limit: Limit,
    /// Seconds between interval reports; 0 for none.
    pub interval_s: f64,
    /// UDT_SNDBUF or SO_SNDBUF, bytes.
    pub sndbuf: Option<u64>,
    /// UDT_RCVBUF or SO_RCVBUF, bytes.
    pub rcvbuf: Option<u64>,
    /// UDP_SNDBUF under UDT, bytes (UDT only).
    pub udp_sndbuf: Option<u64>,
    /// UDP_RCVBUF under UDT, bytes (UDT only).
    pub udp_rcvbuf: Option<u64>,
    /// Sending-rate cap, bytes per second: UDT_MAXBW (datagrams with headers), or
    /// SO_MAX_PACING_RATE for TCP.
    pub maxbw: Option<u64>,
}

/// The most parallel streams a test may ask for.
pub const MAX_STREAMS: u32 = 128;

impl TestParams {
    /// Checks the combination and builds the UDT options once, so a bad value is reported
    /// before any connection. Errors are one line naming the problem and the fix.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_STREAMS).contains(&self.streams) {
            return Err(format!(
                "-P {}: the number of streams must be 1..={MAX_STREAMS}",
                self.streams
            ));
        }
        match self.limit {
            Limit::Seconds(s) if !(s.is_finite() && s > 0.0 && s <= 86_400.0) => {
                return Err(format!(
                    "-t {s}: give a duration in seconds, 0 < t <= 86400"
                ))
            }
            Limit::Bytes(0) => return Err("-n 0: give a byte count above zero, e.g. -n 1G".into()),
            _ => {}
        }
        if !(self.interval_s == 0.0 || (0.1..=3600.0).contains(&self.interval_s)) {
            return Err(format!(
                "-i {}: the interval must be 0 (no interval reports) or 0.1..=3600 seconds",
                self.interval_s
            ));
        }
        match self.proto {
            Proto::Udt => self.udt_options().map(drop),
            Proto::Tcp => self.check_tcp(),
        }
    }

    fn check_tcp(&self) -> Result<(), String> {
        if self.udp_sndbuf.is_some() || self.udp_rcvbuf.is_some() {
            return Err("--udp-sndbuf/--udp-rcvbuf apply to UDT only: use --sndbuf/--rcvbuf with --proto tcp".into());
        }
        if let Some(mss) = self.mss.filter(|m| !(88..=65535).contains(m)) {
            return Err(format!(
                "--mss {mss}: with --proto tcp the packet size must be 88..=65535"
            ));
        }
        if let Some(cc) = &self.cc {
            let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
            if cc.is_empty() || cc.len() > 15 || !cc.chars().all(plain) {
                return Err(format!(
                    "--cc {cc:?}: not a kernel congestion control name; see /proc/sys/net/ipv4/tcp_available_congestion_control"
                ));
            }
        }
        Ok(())
    }

    /// The UDT socket options for this test (both ends use the same).
    pub fn udt_options(&self) -> Result<udt::SocketOptions, String> {
        let mut o = udt::SocketOptions::default();
        // A perf test must not block in close for 180 s if the peer vanished.
        o.set_linger(Some(Duration::from_secs(10)));
        let flag = |name: &str, value: u64, e: udt::OptionError| format!("{name} {value}: {e}");
        // UDP buffers first: the MSS is checked against them.
        if let Some(b) = self.udp_sndbuf {
            o.set_udp_send_buffer(Some(usize::try_from(b).unwrap_or(usize::MAX)))
                .map_err(|e| flag("--udp-sndbuf", b, e))?;
        }
        if let Some(b) = self.udp_rcvbuf {
            o.set_udp_recv_buffer(Some(usize::try_from(b).unwrap_or(usize::MAX)))
                .map_err(|e| flag("--udp-rcvbuf", b, e))?;
        }
        if let Some(mss) = self.mss {
            o.set_mss(mss).map_err(|e| flag("--mss", mss.into(), e))?;
        }
        // Buffers after the MSS: UDT keeps them as whole packets of it.
        if let Some(b) = self.sndbuf {
            o.set_send_buffer(b).map_err(|e| flag("--sndbuf", b, e))?;
        }
        if let Some(b) = self.rcvbuf {
            o.set_recv_buffer(b).map_err(|e| flag("--rcvbuf", b, e))?;
        }
        o.set_max_bandwidth(self.maxbw);
        if let Some(cc) = &self.cc {
            o.set_controller_named(cc, self.maxbw)
                .map_err(|e| match e {
                    udt::OptionError::ControllerNeedsRate => {
                        format!("--cc {cc} needs a rate: add --maxbw RATE (e.g. --maxbw 500M)")
                    }
                    e => format!("--cc {cc}: {e}"),
                })?;
        }
        Ok(o)
    }

    /// Sets this test's TCP options on a data socket: before `connect` on the client,
    /// right after `accept` on the server (where SO_RCVBUF can no longer change the window
    /// scale negotiated in the handshake; the kernel's default scale leaves room for
    /// buffers up to `tcp_rmem`'s maximum).
    pub fn apply_tcp(&self, socket: &socket2::Socket) -> std::io::Result<()> {
        socket.set_tcp_nodelay(true)?;
        if let Some(b) = self.sndbuf {
            socket.set_send_buffer_size(usize::try_from(b).unwrap_or(usize::MAX))?;
        }
        if let Some(b) = self.rcvbuf {
            socket.set_recv_buffer_size(usize::try_from(b).unwrap_or(usize::MAX))?;
        }
        if let Some(mss) = self.mss {
            socket.set_tcp_mss(mss.saturating_sub(40))?;
        }
        if let Some(cc) = &self.cc {
            socket.set_tcp_congestion(cc.as_bytes()).map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("TCP congestion control {cc:?} is not available here ({e}); see /proc/sys/net/ipv4/tcp_available_congestion_control"),
                )
            })?;
        }
        if let Some(rate) = self.maxbw {
            super::sys::set_max_pacing_rate(socket, rate)?;
        }
        Ok(())
    }

    /// One line for people: `udt (native), 2 streams, client sends for 10 s`.
    pub fn describe(&self) -> String {
        let limit = match self.limit {
            Limit::Seconds(s) => format!("for {s} s"),
            Limit::Bytes(b) => format!("{b} bytes"),
        };
        let direction = if self.reverse {
            "server sends"
        } else {
            "client sends"
        };
        let plural = if self.streams == 1 { "" } else { "s" };
        format!(
            "{} ({}), {} stream{plural}, {direction} {limit}",
            self.proto.name(),
            self.cc_name(),
            self.streams,
        )
    }

    /// The congestion control name to report when the kernel or library does not say.
    pub fn cc_name(&self) -> String {
        match (&self.cc, self.proto) {
            (Some(cc), _) => cc.clone(),
            (None, Proto::Udt) => udt::SocketOptions::default().controller().name().into(),
            (None, Proto::Tcp) => "default".into(),
        }
    }

    /// Bytes the sending stream `index` sends under a byte limit: the total split evenly,
    /// the remainder going to the first streams.
    pub fn stream_quota(&self, index: u32) -> Option<u64> {
        match self.limit {
            Limit::Seconds(_) => None,
            Limit::Bytes(total) => {
                let n = u64::from(self.streams.max(1));
                let extra = u64::from(u64::from(index) < total % n);
                Some(total / n + extra)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> TestParams {
        TestParams {
            proto: Proto::Udt,
            cc: None,
            mss: None,
            streams: 1,
            reverse: false,
            limit: Limit::Seconds(10.0),
            interval_s: 1.0,
            sndbuf: None,
            rcvbuf: None,
            udp_sndbuf: None,
            udp_rcvbuf: None,
            maxbw: None,
        }
    }

    #[test]
    fn defaults_are_valid() {
        assert_eq!(params().validate(), Ok(()));
        let tcp = TestParams {
            proto: Proto::Tcp,
            cc: Some("bbr".into()),
            ..params()
        };
        assert_eq!(tcp.validate(), Ok(()));
    }

    #[test]
    fn bad_values_name_the_flag() {
        let cases = [
            (
                TestParams {
                    streams: 0,
                    ..params()
                },
                "-P 0",
            ),
            (
                TestParams {
                    limit: Limit::Seconds(0.0),
                    ..params()
                },
                "-t 0",
            ),
            (
                TestParams {
                    limit: Limit::Bytes(0),
                    ..params()
                },
                "-n 0",
            ),
            (
                TestParams {
                    interval_s: 0.01,
                    ..params()
                },
                "-i 0.01",
            ),
            (
                TestParams {
                    mss: Some(20),
                    ..params()
                },
                "--mss 20",
            ),
            (
                TestParams {
                    cc: Some("reno".into()),
                    ..params()
                },
                "--cc reno",
            ),
            (
                TestParams {
                    cc: Some(udt_proto::congestion::FixedRateFactory::NAME.into()),
                    ..params()
                },
                "--maxbw",
            ),
            (
                TestParams {
                    proto: Proto::Tcp,
                    udp_sndbuf: Some(1),
                    ..params()
                },
                "UDT only",
            ),
            (
                TestParams {
                    proto: Proto::Tcp,
                    cc: Some("a b".into()),
                    ..params()
                },
                "--cc",
            ),
        ];
        for (p, want) in cases {
            let err = p.validate().unwrap_err();
            assert!(err.contains(want), "{err:?} should mention {want:?}");
            assert!(!err.contains('\n'));
        }
    }

    #[test]
    fn fixed_rate_takes_maxbw() {
        let p = TestParams {
            cc: Some(udt_proto::congestion::FixedRateFactory::NAME.into()),
            maxbw: Some(1_000_000),
            ..params()
        };
        let o = p.udt_options().unwrap();
        assert_eq!(
            o.controller().name(),
            udt_proto::congestion::FixedRateFactory::NAME
        );
        assert_eq!(o.max_bandwidth(), Some(1_000_000));
    }

    #[test]
    fn byte_limit_is_split_over_streams() {
        let p = TestParams {
            streams: 3,
            limit: Limit::Bytes(10),
            ..params()
        };
        let quotas: Vec<_> = (0..3).map(|i| p.stream_quota(i).unwrap()).collect();
        assert_eq!(quotas, [4, 3, 3]);
        assert_eq!(params().stream_quota(0), None);
    }
}
