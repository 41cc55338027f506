//! The server end (`udt perf -s`): one TCP listener for control connections (and TCP data
//! streams), tests served one at a time. For a UDT test it binds a UDT listener on the UDP
//! port of the same number for the test's duration, with the test's options.

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context;
use udt::UdtListener;

use super::control::{self, ControlReader, ControlWriter, Message, PROTOCOL_VERSION};
use super::params::{Limit, Proto, TestParams};
use super::run::{Event, Run};
use super::sample::SideReport;
use super::stream::{DataStream, SETUP_TIMEOUT};
use super::units::{format_bytes, format_rate};

/// Where and how to serve.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Local address to listen on; `None`: `::` (both IPv6 and IPv4 where the system
    /// allows it), else `0.0.0.0`.
    pub bind: Option<IpAddr>,
    /// Port: TCP for control and TCP data, UDP for UDT data.
    pub port: u16,
    /// Serve one test, then exit with its outcome (`-1`).
    pub one_off: bool,
}

/// Serves tests until killed (or one, with `one_off`). A failed test is reported on stderr
/// and the server goes on, unless `one_off`.
pub fn serve(config: &ServerConfig, out: &mut dyn Write) -> anyhow::Result<()> {
    let (listener, addr) = listen_tcp(config)?;
    writeln!(
        out,
        "udt perf server on {addr}: control and TCP data on TCP port {0}, UDT data on UDP port {0}",
        config.port
    )?;
    out.flush()?;
    let mut server = Server {
        config,
        bind: addr.ip(),
        listener,
        udt: None,
    };
    loop {
        let (control, peer) = match server.listener.accept() {
            Ok(accepted) => accepted,
            Err(e) if config.one_off => return Err(e).context("accepting a control connection"),
            Err(e) => {
                // Transient (a connection reset in the backlog, out of descriptors): go on.
                eprintln!("udt: accepting a control connection: {e}");
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        let outcome = server
            .serve_test(control, out)
            .with_context(|| format!("test from {peer}"));
        if config.one_off {
            return outcome;
        }
        if let Err(e) = outcome {
            eprintln!("udt: {e:#}");
        }
    }
}

/// Binds the TCP listener: the configured address, or `::` falling back to `0.0.0.0` on
/// systems without IPv6.
fn listen_tcp(config: &ServerConfig) -> anyhow::Result<(TcpListener, SocketAddr)> {
    let bind = |ip: IpAddr| {
        let addr = SocketAddr::new(ip, config.port);
        TcpListener::bind(addr)
            .map(|l| (l, addr))
            .with_context(|| format!("cannot listen on TCP {addr}"))
    };
    match config.bind {
        Some(ip) => bind(ip),
        // On failure the error names the IPv4 address, the last one tried.
        None => bind(IpAddr::from(std::net::Ipv6Addr::UNSPECIFIED))
            .or_else(|_| bind(IpAddr::from(std::net::Ipv4Addr::UNSPECIFIED))),
    }
}

/// The server between tests: its TCP listener and the UDT listener of the last UDT test.
struct Server<'a> {
    config: &'a ServerConfig,
    /// The address actually listened on (UDT binds the same).
    bind: IpAddr,
    listener: TcpListener,
    udt: Option<UdtPort>,
}

/// A UDT listener kept from one test to the next while the options stay the same: a test
/// whose client died leaves connections that keep the UDP port bound until UDT gives up on
/// them (seconds), and the next test should not have to wait for that.
struct UdtPort {
    /// The test the listener's options came from, with what does not shape them cleared.
    options_of: TestParams,
    listener: UdtListener,
}

/// How long a UDT test waits for the previous test's port to be released.
const REBIND_TIMEOUT: Duration = Duration::from_secs(8);

impl Server<'_> {
    /// One test, from `hello` to `done`.
    fn serve_test(&mut self, control: TcpStream, out: &mut dyn Write) -> anyhow::Result<()> {
        let peer = control.peer_addr()?;
        let (mut reader, mut writer) = control::split(control)?;
        reader.set_timeout(Some(SETUP_TIMEOUT))?;
        let (cookie, params) = read_hello(&mut reader)?;
        let setup = self.open_streams(&mut writer, &cookie, &params);
        let streams = match setup {
            Ok(opened) => opened,
            Err(e) => {
                let _ = writer.send(&Message::Error {
                    message: format!("{e:#}"),
                });
                return Err(e);
            }
        };
        writeln!(out, "test from {peer}: {}", params.describe())?;
        writer.send(&Message::Start)?;
        let (tx, rx) = mpsc::channel();
        reader.spawn(tx.clone());
        let run = Run::start(streams, &params, params.reverse, &tx);
        let report = drive(run, &rx, &mut writer, &params)?;
        writer.send(&Message::Result {
            report: report.clone(),
        })?;
        wait_done(&rx);
        let verb = if report.sender { "sent" } else { "received" };
        writeln!(
            out,
            "  {verb} {} in {:.2} s: {}; CPU {:.2} s",
            format_bytes(report.bytes),
            report.seconds,
            format_rate(super::sample::rate(report.bytes, report.seconds)),
            report.cpu_seconds
        )?;
        out.flush()?;
        Ok(())
    }

    /// Checks the test, listens for its streams, says `ready` and accepts them.
    fn open_streams(
        &mut self,
        writer: &mut ControlWriter,
        cookie: &str,
        params: &TestParams,
    ) -> anyhow::Result<Vec<DataStream>> {
        params.validate().map_err(anyhow::Error::msg)?;
        if params.proto == Proto::Udt {
            self.listen_udt(params)?;
        }
        writer.send(&Message::Ready)?;
        let deadline = Instant::now() + SETUP_TIMEOUT;
        let mut streams = Vec::new();
        while streams.len() < params.streams as usize {
            let mut stream = match (params.proto, &self.udt) {
                (Proto::Udt, Some(port)) => DataStream::accept_udt(&port.listener, deadline),
                _ => DataStream::accept_tcp(&self.listener, params, deadline),
            }
            .context("accepting data streams")?;
            // A stream of another client, or left over from a dead one, is dropped.
            if stream.read_cookie().is_ok_and(|theirs| theirs == cookie) {
                streams.push(stream);
            }
        }
        Ok(streams)
    }

    /// Makes sure the UDT listener has this test's options, binding a new one if not.
    fn listen_udt(&mut self, params: &TestParams) -> anyhow::Result<()> {
        let options_of = TestParams {
            streams: 1,
            reverse: false,
            limit: Limit::Bytes(1),
            interval_s: 0.0,
            ..params.clone()
        };
        if self
            .udt
            .as_ref()
            .is_some_and(|p| p.options_of == options_of)
        {
            return Ok(());
        }
        self.udt = None;
        let options = params.udt_options().map_err(anyhow::Error::msg)?;
        let addr = SocketAddr::new(self.bind, self.config.port);
        let deadline = Instant::now() + REBIND_TIMEOUT;
        let listener = loop {
            match UdtListener::bind_with(addr, options.clone()) {
                Err(e)
                    if e.kind() == std::io::ErrorKind::AddrInUse && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(100));
                }
                bound => {
                    break bound.with_context(|| format!("cannot listen for UDT on UDP {addr}"))?
                }
            }
        };
        self.udt = Some(UdtPort {
            options_of,
            listener,
        });
        Ok(())
    }
}

fn read_hello(reader: &mut ControlReader) -> anyhow::Result<(String, TestParams)> {
    match reader.recv().context("waiting for the client's hello")? {
        Message::Hello {
            version: PROTOCOL_VERSION,
            cookie,
            params,
        } => Ok((cookie, params)),
        Message::Hello { version, .. } => {
            anyhow::bail!("client speaks control protocol {version}, this server {PROTOCOL_VERSION}: use the same udt version on both ends")
        }
        m => anyhow::bail!("expected a hello, got {m:?}"),
    }
}

/// Runs the server's half to its end, sending each interval sample as it is taken.
fn drive(
    mut run: Run,
    rx: &mpsc::Receiver<Event>,
    writer: &mut ControlWriter,
    params: &TestParams,
) -> anyhow::Result<SideReport> {
    loop {
        let failure = match run.wait(rx)? {
            None => {
                let sample = run.tick();
                writer
                    .send(&Message::Interval { sample })
                    .err()
                    .map(anyhow::Error::new)
            }
            Some(Event::Worker { index, at, result }) => match run.worker_done(index, at, result) {
                Ok(true) => break,
                Ok(false) => None,
                Err(e) => Some(e),
            },
            Some(Event::Control(Ok(Message::Error { message }))) => {
                Some(anyhow::anyhow!("{message}"))
            }
            Some(Event::Control(Ok(_))) => None,
            Some(Event::Control(Err(e))) => Some(e.context("the client went away")),
        };
        if let Some(e) = failure {
            run.abort();
            let _ = writer.send(&Message::Error {
                message: format!("server: {e:#}"),
            });
            let _ = run.finish(params);
            return Err(e);
        }
    }
    let (last, report) = run.finish(params);
    if let Some(sample) = last {
        writer.send(&Message::Interval { sample })?;
    }
    Ok(report)
}

/// Waits (a little) for the client's `done`, so the test's sockets outlive its last word.
fn wait_done(rx: &mpsc::Receiver<Event>) {
    let deadline = Instant::now() + SETUP_TIMEOUT;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left.max(Duration::from_millis(1))) {
            Ok(Event::Control(Ok(Message::Done) | Err(_))) | Err(_) => return,
            Ok(_) => {}
        }
    }
}
