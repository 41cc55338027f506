//! The client end (`udt perf -c HOST`): sends the test over the control connection, opens
//! the data streams, runs its half, prints interval lines as both ends' samples of an
//! interval arrive, and builds the [`Report`].

use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::mpsc;

use anyhow::Context;

use super::control::{self, ControlReader, ControlWriter, Message, PROTOCOL_VERSION};
use super::params::TestParams;
use super::report::{Interval, Outcome, Report};
use super::run::{Event, Run};
use super::sample::{Sample, SideReport};
use super::stream::{DataStream, SETUP_TIMEOUT};

/// A client run: where, what, and how to print.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Server host name or address.
    pub host: String,
    /// Server port (TCP for control, and the data port of either protocol).
    pub port: u16,
    /// The test (already validated).
    pub params: TestParams,
    /// Print only the JSON report at the end.
    pub json: bool,
}

/// Runs one test against a `udt perf -s` server, printing to `out` as it goes; returns the
/// report (already printed).
pub fn run_client(config: &ClientConfig, out: &mut dyn Write) -> anyhow::Result<Report> {
    let params = &config.params;
    let (reader, mut writer, data_addr, streams) = open_test(config)?;
    if !config.json {
        print_header(out, config, data_addr)?;
    }
    let (tx, rx) = mpsc::channel();
    reader.spawn(tx.clone());
    let run = Run::start(streams, params, !params.reverse, &tx);
    let mut session = Session {
        params,
        out,
        json: config.json,
        local: Vec::new(),
        remote: Vec::new(),
        printed: 0,
    };
    let result = session.drive(run, &rx);
    if let Err(e) = &result {
        let _ = writer.send(&Message::Error {
            message: format!("client: {e:#}"),
        });
    }
    let (local, remote) = result?;
    let _ = writer.send(&Message::Done);
    session.print_pairs(true)?;
    let (sender, receiver) = if params.reverse {
        (remote, local)
    } else {
        (local, remote)
    };
    let intervals = session.pairs(0);
    let report = Report::new(Outcome {
        params,
        server: format!("{}:{}", config.host, config.port),
        sender,
        receiver,
        intervals,
    });
    print_report(out, &report, config.json)?;
    Ok(report)
}

/// Sends the test, opens the data streams and waits for the server's `start`.
fn open_test(
    config: &ClientConfig,
) -> anyhow::Result<(ControlReader, ControlWriter, SocketAddr, Vec<DataStream>)> {
    let params = &config.params;
    let (mut reader, mut writer, data_addr) = connect_control(config)?;
    let cookie = new_cookie();
    writer.send(&Message::Hello {
        version: PROTOCOL_VERSION,
        cookie: cookie.clone(),
        params: params.clone(),
    })?;
    expect(&mut reader, "ready", |m| matches!(m, Message::Ready))?;
    let streams = (0..params.streams)
        .map(|i| {
            DataStream::connect(params, data_addr, &cookie).with_context(|| {
                let proto = params.proto.name();
                format!("cannot open {proto} data stream {} to {data_addr}", i + 1)
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    expect(&mut reader, "start", |m| matches!(m, Message::Start))?;
    Ok((reader, writer, data_addr, streams))
}

fn connect_control(
    config: &ClientConfig,
) -> anyhow::Result<(ControlReader, ControlWriter, SocketAddr)> {
    let target = format!("{}:{}", config.host, config.port);
    let addrs: Vec<SocketAddr> = (config.host.as_str(), config.port)
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {}", config.host))?
        .collect();
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, SETUP_TIMEOUT) {
            Ok(stream) => {
                let (reader, writer) = control::split(stream)?;
                reader.set_timeout(Some(SETUP_TIMEOUT))?;
                return Ok((reader, writer, addr));
            }
            Err(e) => last = Some(e),
        }
    }
    let err = last.unwrap_or_else(|| std::io::Error::other("no address"));
    Err(anyhow::Error::new(err).context(format!(
        "cannot connect to {target} (is `udt perf -s` running there?)"
    )))
}

/// Reads the next control message, which must be `what`; a server error is reported as is.
fn expect(
    reader: &mut ControlReader,
    what: &str,
    ok: impl Fn(&Message) -> bool,
) -> anyhow::Result<()> {
    let message = reader
        .recv()
        .with_context(|| format!("waiting for the server's {what:?}"))?;
    match message {
        m if ok(&m) => Ok(()),
        Message::Error { message } => anyhow::bail!("the server refused the test: {message}"),
        m => anyhow::bail!("the server sent {m:?} instead of {what:?}"),
    }
}

/// The client's half in progress: its samples, the server's, and how far it printed.
struct Session<'a> {
    params: &'a TestParams,
    out: &'a mut dyn Write,
    json: bool,
    local: Vec<Sample>,
    remote: Vec<Sample>,
    printed: usize,
}

impl Session<'_> {
    /// Until both ends reported: this end's report, then the server's.
    fn drive(
        &mut self,
        run: Run,
        rx: &mpsc::Receiver<Event>,
    ) -> anyhow::Result<(SideReport, SideReport)> {
        let mut run = Some(run);
        let (mut local, mut remote) = (None, None);
        while local.is_none() || remote.is_none() {
            let event = match &run {
                Some(r) => r.wait(rx)?,
                None => Some(rx.recv().context("internal error: event channel closed")?),
            };
            match event {
                None => {
                    let sample = run.as_mut().map(Run::tick);
                    self.local.extend(sample);
                }
                Some(Event::Worker { index, at, result }) => {
                    let Some(r) = run.as_mut() else { continue };
                    if r.worker_done(index, at, result)? {
                        let (last, report) = run.take().map(|r| r.finish(self.params)).unzip();
                        self.local.extend(last.flatten());
                        local = report;
                    }
                }
                Some(Event::Control(message)) => {
                    let message = message.context("the server ended the test early")?;
                    remote = remote.or(self.handle(message)?);
                }
            }
            self.print_pairs(false)?;
        }
        Ok((local.unwrap_or_default(), remote.unwrap_or_default()))
    }

    fn handle(&mut self, message: Message) -> anyhow::Result<Option<SideReport>> {
        match message {
            Message::Interval { sample } => self.remote.push(sample),
            Message::Result { report } => return Ok(Some(report)),
            Message::Error { message } => anyhow::bail!("the server failed: {message}"),
            m => anyhow::bail!("unexpected control message from the server: {m:?}"),
        }
        Ok(None)
    }

    /// The intervals from `from` on that both ends sampled (or, at the end, either).
    fn pairs(&self, from: usize) -> Vec<Interval> {
        let (sender, receiver) = if self.params.reverse {
            (&self.remote, &self.local)
        } else {
            (&self.local, &self.remote)
        };
        let n = sender.len().max(receiver.len());
        (from..n)
            .map(|i| {
                let mut interval =
                    Interval::pair(self.params.proto, sender.get(i), receiver.get(i));
                // The receiver can end a few milliseconds after the sender and sample one
                // more short interval; the sender's state then is what it ended with.
                if let (None, Some(last)) = (sender.get(i), sender.last()) {
                    interval.gauges_from(last);
                }
                interval
            })
            .collect()
    }

    /// Prints interval lines not printed yet: those both ends sampled, or all at the end.
    fn print_pairs(&mut self, all: bool) -> anyhow::Result<()> {
        let ready = if all {
            self.local.len().max(self.remote.len())
        } else {
            self.local.len().min(self.remote.len())
        };
        if ready <= self.printed {
            return Ok(());
        }
        let lines = self.pairs(self.printed);
        for interval in lines.iter().take(ready - self.printed) {
            if !self.json {
                writeln!(self.out, "{}", interval.line())?;
            }
        }
        self.printed = ready;
        Ok(())
    }
}

fn print_header(
    out: &mut dyn Write,
    config: &ClientConfig,
    data_addr: SocketAddr,
) -> anyhow::Result<()> {
    writeln!(out, "udt perf to {data_addr}: {}", config.params.describe())?;
    Ok(())
}

fn print_report(out: &mut dyn Write, report: &Report, json: bool) -> anyhow::Result<()> {
    if json {
        serde_json::to_writer_pretty(&mut *out, report)?;
        writeln!(out)?;
    } else {
        for line in report.summary() {
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// A random 16-hex-digit cookie (std's per-process random hasher keys, plus time and pid).
fn new_cookie() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(nanos);
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}
