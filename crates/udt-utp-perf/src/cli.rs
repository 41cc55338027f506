//! The command line: `utp-perf -s` (receive) or `utp-perf -c HOST` (send), iperf3's shape.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Parser;

use crate::socket::Buffers;

/// The default port: TCP for control, UDP for uTP.
pub const DEFAULT_PORT: u16 = 5202;

/// The default test length.
const DEFAULT_SECONDS: f64 = 10.0;

/// Measure a bulk transfer over uTP (BEP 29, librqbit-utp).
///
/// The server (-s) listens on a TCP port for control and binds uTP on the UDP port of the
/// same number; the client (-c HOST) sends for -t seconds (or -n bytes) and prints the
/// receiver's rate every second and a summary, or with --json one object shaped like
/// `udt perf --json`'s.
///
/// Exit status: 0 when the test ran, 1 when it failed, 2 on a bad command line.
#[derive(Debug, Clone, Parser)]
#[command(name = "utp-perf", version)]
pub struct Args {
    /// Run the receiving server.
    #[arg(short = 's', long = "server", conflicts_with = "client")]
    pub server: bool,
    /// Run the sending client against the server at HOST.
    #[arg(short = 'c', long = "client", value_name = "HOST")]
    pub client: Option<IpAddr>,
    /// Server: the address to listen on.
    #[arg(short = 'B', long = "bind", value_name = "ADDR", default_value_t = IpAddr::V4(Ipv4Addr::UNSPECIFIED))]
    pub bind: IpAddr,
    /// The port: TCP for control, UDP for the uTP data.
    #[arg(short = 'p', long = "port", default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// Server: exit after one test.
    #[arg(short = '1', long = "one-off")]
    pub one_off: bool,
    /// Client: send for this many seconds.
    #[arg(
        short = 't',
        long = "time",
        value_name = "SECONDS",
        conflicts_with = "bytes"
    )]
    pub time: Option<f64>,
    /// Client: send this many bytes instead (e.g. 200MB, 1G).
    #[arg(short = 'n', long = "bytes", value_name = "BYTES", value_parser = udt_units::parse_size)]
    pub bytes: Option<u64>,
    /// Client: the send buffer of both ends (the cap on unacknowledged bytes; default 1 MiB).
    #[arg(long = "sndbuf", value_name = "BYTES", value_parser = udt_units::parse_size)]
    pub sndbuf: Option<u64>,
    /// Client: the receive buffer of both ends (the advertised window; default 1 MiB).
    #[arg(long = "rcvbuf", value_name = "BYTES", value_parser = udt_units::parse_size)]
    pub rcvbuf: Option<u64>,
    /// Client: print one JSON object instead of human lines.
    #[arg(long = "json")]
    pub json: bool,
}

/// When the client stops writing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// After this long.
    Time(Duration),
    /// After this many bytes.
    Bytes(u64),
}

/// What [`Args`] asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// Serve on this address (one test if `one_off`).
    Server {
        /// TCP and UDP address.
        addr: SocketAddr,
        /// Exit after one test.
        one_off: bool,
    },
    /// Send to this server.
    Client {
        /// The server's TCP and UDP address.
        server: SocketAddr,
        /// When to stop.
        limit: Limit,
        /// Both ends' buffers.
        buffers: Buffers,
        /// One JSON object instead of lines.
        json: bool,
    },
}

impl Args {
    /// The mode, or what is wrong with the line.
    pub fn mode(&self) -> anyhow::Result<Mode> {
        if self.server {
            return Ok(Mode::Server {
                addr: SocketAddr::new(self.bind, self.port),
                one_off: self.one_off,
            });
        }
        let Some(host) = self.client else {
            bail!("say -s to serve or -c HOST to send");
        };
        let limit = match (self.time, self.bytes) {
            (_, Some(0)) => bail!("-n: send at least one byte"),
            (_, Some(n)) => Limit::Bytes(n),
            (t, None) => {
                let t = t.unwrap_or(DEFAULT_SECONDS);
                Limit::Time(
                    Duration::try_from_secs_f64(t)
                        .ok()
                        .filter(|d| !d.is_zero())
                        .with_context(|| format!("-t {t}: give a positive number of seconds"))?,
                )
            }
        };
        let buffers = Buffers {
            send_buffer_bytes: self.sndbuf,
            recv_buffer_bytes: self.rcvbuf,
        };
        buffers.check()?;
        Ok(Mode::Client {
            server: SocketAddr::new(host, self.port),
            limit,
            buffers,
            json: self.json,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(line: &str) -> anyhow::Result<Mode> {
        let args =
            Args::try_parse_from(std::iter::once("utp-perf").chain(line.split_whitespace()))?;
        args.mode()
    }

    #[test]
    fn reads_both_modes_and_refuses_bad_lines() {
        let m = mode("-c 10.0.0.1 -p 7 -n 200MB --sndbuf 4M --json").unwrap();
        let Mode::Client {
            server,
            limit,
            buffers,
            json,
        } = m
        else {
            panic!("a client");
        };
        assert_eq!(server, "10.0.0.1:7".parse().unwrap());
        assert_eq!(limit, Limit::Bytes(200_000_000));
        assert_eq!(buffers.send_buffer_bytes, Some(4 << 20));
        assert!(json);
        assert_eq!(
            mode("-s -B 127.0.0.1 -1").unwrap(),
            Mode::Server {
                addr: "127.0.0.1:5202".parse().unwrap(),
                one_off: true
            }
        );
        let t = mode("-c ::1 -t 2.5").unwrap();
        assert!(
            matches!(t, Mode::Client { limit: Limit::Time(d), .. } if d == Duration::from_millis(2500))
        );
        for bad in [
            "",
            "-c 1.2.3.4 -t 0",
            "-c 1.2.3.4 -t -1",
            "-c 1.2.3.4 -n 0",
            "-c 1.2.3.4 --rcvbuf 10",
            "-s -c 1.2.3.4",
            "-c host",
        ] {
            assert!(mode(bad).is_err(), "{bad}");
        }
    }
}
