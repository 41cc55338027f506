//! `udt perf`: the command line (iperf3's flags) and its checks. Values are taken as text
//! and parsed here, so that every bad value gives one line naming the flag and the fix
//! (exit 2) rather than clap's multi-line report. The test itself is in [`crate::perf`].

use std::net::IpAddr;

use udt::SocketOptions;
use udt_units::Rate;

use crate::perf::{self, ClientConfig, Limit, Proto, ServerConfig, TestParams};
use crate::UsageError;

/// Measure a path iperf3-style: `udt perf -s` on one host, `udt perf -c HOST` on the other.
///
/// The server listens on TCP port 5201 (control and TCP data) and, during a UDT test, on UDP
/// port 5201 (UDT data); `-p` changes both. Rates and sizes are read by `udt_units`, as
/// `udt lab` reads them: rates are bits per second with decimal prefixes unless a capital B
/// says bytes (100M, 1G, 1.5gbit, 10MB/s); sizes are bytes with binary prefixes (64K, 16M,
/// 1G), or decimal ones with a B (16MB).
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Ports: the server listens on TCP port 5201 (control, and TCP data) and, during a UDT test,
on UDP port 5201 (UDT data); -p changes both.
Rates (--maxbw): bits per second with decimal prefixes (100M, 1G, 1.5gbit, 100Mbps), or
bytes per second with a capital B (10MB/s). Sizes (-n, buffers): bytes with binary prefixes
(64K, 16M, 1G, 16MiB), or decimal ones with a B (16MB).

Examples:
  udt perf -s
  udt perf -c host -t 30 -P 4
  udt perf -c host --proto tcp --cc bbr --json

Exit codes: 0 success, 1 the test failed, 2 bad usage.")]
pub struct Args {
    /// Run as a server.
    #[arg(short = 's', long = "server")]
    pub server: bool,
    /// Run as a client, testing against the server at HOST.
    #[arg(short = 'c', long = "client", value_name = "HOST")]
    pub client: Option<String>,
    /// Port: TCP for control and TCP data, UDP for UDT data [default: 5201].
    #[arg(short = 'p', long = "port", value_name = "PORT")]
    pub port: Option<String>,
    /// Server: handle one test, then exit with its outcome.
    #[arg(short = '1', long = "one-off")]
    pub one_off: bool,
    /// Server: the local address to listen on [default: ::, or 0.0.0.0 without IPv6].
    #[arg(short = 'B', long = "bind", value_name = "ADDR")]
    pub bind: Option<String>,
    /// The client's test flags (boxed: they are most of the command line's size).
    #[command(flatten)]
    pub test: Box<TestFlags>,
}

/// The flags that describe a test: given to the client, which sends them to the server.
#[derive(Debug, clap::Args)]
pub struct TestFlags {
    /// Seconds to send [default: 10].
    #[arg(short = 't', long = "time", value_name = "SECS")]
    pub time: Option<String>,
    /// Bytes to send in total instead of a duration (e.g. 1G).
    #[arg(short = 'n', long = "bytes", value_name = "BYTES")]
    pub bytes: Option<String>,
    /// Parallel streams, aggregated [default: 1].
    #[arg(short = 'P', long = "parallel", value_name = "STREAMS")]
    pub parallel: Option<String>,
    /// Reverse: the server sends, the client receives.
    #[arg(short = 'R', long = "reverse")]
    pub reverse: bool,
    /// Seconds between interval reports; 0 for none [default: 1].
    #[arg(short = 'i', long = "interval", value_name = "SECS")]
    pub interval: Option<String>,
    /// Transport: udt or tcp (kernel TCP, for comparison) [default: udt].
    #[arg(long = "proto", value_name = "udt|tcp")]
    pub proto: Option<String>,
    /// Congestion control: for UDT one of `udt::SocketOptions::CONTROLLER_NAMES`, for TCP a
    /// kernel name (the help text is `cc_help`'s, built from that list).
    #[arg(long = "cc", value_name = "NAME", help = cc_help())]
    pub cc: Option<String>,
    /// Packet size including IP/UDP headers (UDT_MSS, default 1500); for TCP, TCP_MAXSEG is
    /// set to this minus 40.
    #[arg(long = "mss", value_name = "N")]
    pub mss: Option<String>,
    /// Send buffer: UDT_SNDBUF, or SO_SNDBUF for TCP. Unset, both size themselves (UDT:
    /// from 12 MB up to 256 MiB as the path needs; TCP: the kernel's autotuning); set, the
    /// size is fixed.
    #[arg(long = "sndbuf", value_name = "BYTES")]
    pub sndbuf: Option<String>,
    /// Receive buffer: UDT_RCVBUF, or SO_RCVBUF for TCP. Unset, both size themselves; set,
    /// the size is fixed.
    #[arg(long = "rcvbuf", value_name = "BYTES")]
    pub rcvbuf: Option<String>,
    /// UDT only: the UDP socket's send buffer (UDP_SNDBUF).
    #[arg(long = "udp-sndbuf", value_name = "BYTES")]
    pub udp_sndbuf: Option<String>,
    /// UDT only: the UDP socket's receive buffer (UDP_RCVBUF).
    #[arg(long = "udp-rcvbuf", value_name = "BYTES")]
    pub udp_rcvbuf: Option<String>,
    /// Cap the sending rate: UDT_MAXBW (datagrams, headers included), or
    /// SO_MAX_PACING_RATE for TCP.
    #[arg(long = "maxbw", value_name = "RATE")]
    pub maxbw: Option<String>,
    /// Print one JSON object at the end instead of text.
    #[arg(long = "json")]
    pub json: bool,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Mode {
    /// `-s`.
    Server(ServerConfig),
    /// `-c HOST`.
    Client(ClientConfig),
}

/// Runs `udt perf`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match args.into_mode()? {
        Mode::Server(config) => perf::serve(&config, &mut out),
        Mode::Client(config) => perf::run_client(&config, &mut out).map(drop),
    }
}

impl Args {
    /// Checks the flags and builds the server or client configuration.
    pub fn into_mode(self) -> Result<Mode, UsageError> {
        let port = match &self.port {
            Some(p) => parse_port(p)?,
            None => perf::DEFAULT_PORT,
        };
        match (self.server, self.client.clone()) {
            (true, Some(_)) => {
                usage("-s and -c both given: run the server with -s and the client with -c HOST")
            }
            (false, None) => usage("give -s to run a server, or -c HOST to test against one"),
            (true, None) => self.server_mode(port),
            (false, Some(host)) => self.client_mode(host, port),
        }
    }

    fn server_mode(self, port: u16) -> Result<Mode, UsageError> {
        let client_only = [
            ("-t", self.test.time.is_some()),
            ("-n", self.test.bytes.is_some()),
            ("-P", self.test.parallel.is_some()),
            ("-R", self.test.reverse),
            ("-i", self.test.interval.is_some()),
            ("--proto", self.test.proto.is_some()),
            ("--cc", self.test.cc.is_some()),
            ("--mss", self.test.mss.is_some()),
            ("--sndbuf", self.test.sndbuf.is_some()),
            ("--rcvbuf", self.test.rcvbuf.is_some()),
            ("--udp-sndbuf", self.test.udp_sndbuf.is_some()),
            ("--udp-rcvbuf", self.test.udp_rcvbuf.is_some()),
            ("--maxbw", self.test.maxbw.is_some()),
            ("--json", self.test.json),
        ];
        if let Some((flag, _)) = client_only.iter().find(|(_, given)| *given) {
            return usage(format!("{flag} is a client option: give it to `udt perf -c HOST`, which sends the test to the server"));
        }
        let bind = match &self.bind {
            Some(b) => Some(b.parse::<IpAddr>().map_err(|_| {
                UsageError(format!(
                    "-B {b:?}: not an IP address; give a local address such as 0.0.0.0 or ::1"
                ))
            })?),
            None => None,
        };
        Ok(Mode::Server(ServerConfig {
            bind,
            port,
            one_off: self.one_off,
        }))
    }

    fn client_mode(self, host: String, port: u16) -> Result<Mode, UsageError> {
        if self.one_off || self.bind.is_some() {
            return usage("-1 and -B are server options: give them to `udt perf -s`");
        }
        let params = self.test.params()?;
        params.validate().map_err(UsageError)?;
        Ok(Mode::Client(ClientConfig {
            host,
            port,
            params,
            json: self.test.json,
        }))
    }
}

impl TestFlags {
    fn params(&self) -> Result<TestParams, UsageError> {
        let limit =
            match (&self.time, &self.bytes) {
                (Some(_), Some(_)) => return usage(
                    "-t and -n both given: use -t SECS for a duration or -n BYTES for an amount",
                ),
                (_, Some(n)) => Limit::Bytes(size("-n", n)?),
                (Some(t), None) => {
                    Limit::Seconds(number("-t", t, "a duration in seconds, e.g. -t 10")?)
                }
                (None, None) => Limit::Seconds(10.0),
            };
        let proto = match self.proto.as_deref() {
            None | Some("udt") => Proto::Udt,
            Some("tcp") => Proto::Tcp,
            Some(other) => {
                return usage(format!("--proto {other:?}: use --proto udt or --proto tcp"))
            }
        };
        let streams = match &self.parallel {
            Some(p) => p.trim().parse::<u32>().map_err(|_| {
                UsageError(format!(
                    "-P {p:?}: give a number of streams, 1..={}",
                    perf::params::MAX_STREAMS
                ))
            })?,
            None => 1,
        };
        let interval_s = match &self.interval {
            Some(i) => number("-i", i, "seconds between reports, or 0 for none")?,
            None => 1.0,
        };
        let mss = match &self.mss {
            Some(m) => Some(m.trim().parse::<u32>().map_err(|_| {
                UsageError(format!(
                    "--mss {m:?}: give a packet size in bytes, e.g. --mss 1500"
                ))
            })?),
            None => None,
        };
        let optional_size =
            |flag: &str, v: &Option<String>| v.as_deref().map(|v| size(flag, v)).transpose();
        Ok(TestParams {
            proto,
            cc: self.cc.clone(),
            mss,
            streams,
            reverse: self.reverse,
            limit,
            interval_s,
            sndbuf: optional_size("--sndbuf", &self.sndbuf)?,
            rcvbuf: optional_size("--rcvbuf", &self.rcvbuf)?,
            udp_sndbuf: optional_size("--udp-sndbuf", &self.udp_sndbuf)?,
            udp_rcvbuf: optional_size("--udp-rcvbuf", &self.udp_rcvbuf)?,
            maxbw: self
                .maxbw
                .as_deref()
                .map(|r| {
                    udt_units::parse_rate(r)
                        .map(Rate::bytes_per_sec)
                        .map_err(|e| UsageError(format!("--maxbw: {e}")))
                })
                .transpose()?,
        })
    }
}

/// `--cc`'s help: UDT's controllers as the library lists them, saying which need a rate.
fn cc_help() -> String {
    let udt: Vec<String> = SocketOptions::CONTROLLER_NAMES
        .iter()
        .map(|&name| {
            if SocketOptions::RATELESS_CONTROLLER_NAMES.contains(&name) {
                name.to_owned()
            } else {
                format!("{name} (needs --maxbw)")
            }
        })
        .collect();
    format!(
        "Congestion control: for UDT {}; for TCP a kernel name such as cubic or bbr",
        udt.join(", ")
    )
}

fn usage<T>(message: impl Into<String>) -> Result<T, UsageError> {
    Err(UsageError(message.into()))
}

fn parse_port(text: &str) -> Result<u16, UsageError> {
    match text.trim().parse::<u16>() {
        Ok(p) if p > 0 => Ok(p),
        _ => usage(format!("-p {text:?}: give a port number, 1..=65535")),
    }
}

fn number(flag: &str, text: &str, what: &str) -> Result<f64, UsageError> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| UsageError(format!("{flag} {text:?}: give {what}")))
}

fn size(flag: &str, text: &str) -> Result<u64, UsageError> {
    udt_units::parse_size(text).map_err(|e| UsageError(format!("{flag}: {e}")))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn mode(line: &str) -> Result<Mode, UsageError> {
        let argv = std::iter::once("udt").chain(line.split_whitespace());
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Perf(args) => args.into_mode(),
            _ => unreachable!("a perf command line"),
        }
    }

    #[test]
    fn defaults() {
        let Ok(Mode::Client(c)) = mode("perf -c example.org") else {
            panic!()
        };
        assert_eq!(c.port, 5201);
        assert_eq!(c.params.limit, Limit::Seconds(10.0));
        assert_eq!((c.params.streams, c.params.interval_s), (1, 1.0));
        assert_eq!(c.params.proto, Proto::Udt);
        let Ok(Mode::Server(s)) = mode("perf -s -p 6000 -1") else {
            panic!()
        };
        assert_eq!((s.port, s.one_off), (6000, true));
    }

    #[test]
    fn every_flag_reaches_the_params() {
        let line = "perf -c h -n 1G -P 4 -R -i 0.5 --proto tcp --cc bbr --mss 9000 --sndbuf 4M --rcvbuf 8M --maxbw 1.5gbit --json";
        let Ok(Mode::Client(c)) = mode(line) else {
            panic!()
        };
        let p = &c.params;
        assert_eq!(p.limit, Limit::Bytes(1 << 30));
        assert_eq!((p.streams, p.reverse, p.interval_s), (4, true, 0.5));
        assert_eq!(
            (p.proto, p.cc.as_deref(), p.mss),
            (Proto::Tcp, Some("bbr"), Some(9000))
        );
        assert_eq!((p.sndbuf, p.rcvbuf), (Some(4 << 20), Some(8 << 20)));
        assert_eq!(p.maxbw, Some(187_500_000));
        assert!(c.json);
    }

    #[test]
    fn rates_and_sizes_read_as_the_lab_reads_them() {
        let maxbw = |rate: &str| {
            let Ok(Mode::Client(c)) = mode(&format!("perf -c h --maxbw {rate}")) else {
                panic!("{rate}")
            };
            c.params.maxbw
        };
        // Bits unless a capital B: 100 Mbit/s is 12.5 MB/s, UDT_MAXBW's unit.
        for rate in ["100M", "100mbit", "100Mbps", "100mbps", "100Mbit/s"] {
            assert_eq!(maxbw(rate), Some(12_500_000), "{rate}");
        }
        assert_eq!(maxbw("10MB/s"), Some(10_000_000));
        let Ok(Mode::Client(c)) = mode("perf -c h -n 16MB --sndbuf 16MiB") else {
            panic!()
        };
        assert_eq!(c.params.limit, Limit::Bytes(16_000_000));
        assert_eq!(c.params.sndbuf, Some(16 << 20));
    }

    #[test]
    fn cc_help_lists_the_library_names() {
        let help = cc_help();
        for name in SocketOptions::CONTROLLER_NAMES {
            assert!(help.contains(name), "{help}");
        }
        assert!(help.contains("fixed-rate (needs --maxbw)"), "{help}");
        let Err(err) = mode("perf -c h --cc reno") else {
            panic!("reno is no UDT controller")
        };
        for name in SocketOptions::CONTROLLER_NAMES {
            assert!(err.0.contains(name), "{}", err.0);
        }
    }

    #[test]
    fn bad_usage_is_one_line_naming_the_flag() {
        let cases = [
            ("perf", "-s"),
            ("perf -s -c h", "-s and -c"),
            ("perf -c h -t 1 -n 5", "-t and -n"),
            ("perf -c h -P many", "-P"),
            ("perf -c h -t soon", "-t"),
            ("perf -c h --proto quic", "--proto"),
            ("perf -c h --maxbw fast", "--maxbw"),
            ("perf -c h -p 0", "-p"),
            ("perf -s -t 5", "-t is a client option"),
            ("perf -c h -1", "-1"),
            ("perf -c h --cc reno", "--cc"),
            ("perf -c h --sndbuf 1Q", "--sndbuf"),
            ("perf -c h --maxbw 0", "--maxbw: rate \"0\" is out of range"),
            ("perf -c h --maxbw 100MBPS", "e.g. 100M"),
        ];
        for (line, want) in cases {
            let err = mode(line).unwrap_err().0;
            assert!(err.contains(want), "{line}: {err}");
            assert!(!err.contains('\n'), "{line}: {err}");
        }
    }
}
