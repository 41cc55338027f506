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
use super::params::{Proto, TestParams};
use super::run::{Event, Run};
use super::sample::SideReport;
use super::stream::{DataStream, SETUP_TIMEOUT};
use super::units::{format_bytes, format_rate};

/// Where and how to serve.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Local address to listen on.
    pub bind: IpAddr,
    /// Port: TCP for control and TCP data, UDP for UDT data.
    pub port: u16,
    /// Serve one test, then exit with its outcome (`-1`).
    pub one_off: bool,
}

/// Serves tests until killed (or one, with `one_off`). A failed test is reported on stderr
/// and the server goes on, unless `one_off`.
pub fn serve(config: &ServerConfig, out: &mut dyn Write) -> anyhow::Result<()> {
    let addr = SocketAddr::new(config.bind, config.port);
    let listener =
        TcpListener::bind(addr).with_context(|| format!("cannot listen on TCP {addr}"))?;
    writeln!(
        out,
        "udt perf server on {addr}: control and TCP data on TCP port {0}, UDT data on UDP port {0}",
        config.port
    )?;
    out.flush()?;
    loop {
        let (control, peer) = listener
            .accept()
            .context("accepting a control connection")?;
        let outcome = serve_test(control, &listener, config, out)
            .with_context(|| format!("test from {peer}"));
        if config.one_off {
            return outcome;
        }
        if let Err(e) = outcome {
            eprintln!("udt: {e:#}");
        }
    }
}

/// One test, from `hello` to `done`.
fn serve_test(
    control: TcpStream,
    listener: &TcpListener,
    config: &ServerConfig,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let peer = control.peer_addr()?;
    let (mut reader, mut writer) = control::split(control)?;
    reader.set_timeout(Some(SETUP_TIMEOUT))?;
    let (cookie, params) = read_hello(&mut reader)?;
    let setup = open_streams(config, listener, &mut writer, &cookie, &params);
    let (streams, _udt_listener) = match setup {
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

/// Checks the test, listens for its streams, says `ready` and accepts them.
fn open_streams(
    config: &ServerConfig,
    listener: &TcpListener,
    writer: &mut ControlWriter,
    cookie: &str,
    params: &TestParams,
) -> anyhow::Result<(Vec<DataStream>, Option<UdtListener>)> {
    params.validate().map_err(anyhow::Error::msg)?;
    let udt_listener = match params.proto {
        Proto::Udt => {
            let options = params.udt_options().map_err(anyhow::Error::msg)?;
            let addr = SocketAddr::new(config.bind, config.port);
            let l = UdtListener::bind_with(addr, options)
                .with_context(|| format!("cannot listen for UDT on UDP {addr}"))?;
            Some(l)
        }
        Proto::Tcp => None,
    };
    writer.send(&Message::Ready)?;
    let deadline = Instant::now() + SETUP_TIMEOUT;
    let mut streams = Vec::new();
    while streams.len() < params.streams as usize {
        let (stream, their_cookie) = match &udt_listener {
            Some(l) => DataStream::accept_udt(l, deadline),
            None => DataStream::accept_tcp(listener, params, deadline),
        }
        .context("accepting data streams")?;
        // A stream from another client (or a stale one) is dropped.
        if their_cookie == cookie {
            streams.push(stream);
        }
    }
    Ok((streams, udt_listener))
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
