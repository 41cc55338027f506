//! The sending end: hello over TCP, one uTP stream written for `-t` seconds or `-n` bytes,
//! then the receiver's intervals and result, printed as lines or one JSON object.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use anyhow::{bail, Context};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::{timeout, timeout_at, Instant};

use crate::cli::Limit;
use crate::control::{self, Message, DRAIN_LIMIT, PROTOCOL_VERSION};
use crate::cpu::CpuTime;
use crate::report::{Interval, Report, SideReport};
use crate::socket::{Buffers, Socket};

/// How long the control connection, the server's `ready` and the uTP connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the stream may take to drain its send buffer and close after the last write
/// (a full buffer at a window-limited rate drains slowly).
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(120);

/// How long the server may take to send its result once the stream closed.
const RESULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The write size.
const WRITE_CHUNK: usize = 64 << 10;

/// Runs one test against `server` and prints its report (`json`: one object).
pub async fn run(
    server: SocketAddr,
    limit: Limit,
    buffers: Buffers,
    json: bool,
) -> anyhow::Result<Report> {
    let control = timeout(CONNECT_TIMEOUT, TcpStream::connect(server))
        .await
        .with_context(|| {
            format!("no answer from {server} (TCP) in time: is `utp-perf -s` running there?")
        })?
        .with_context(|| {
            format!("connecting to {server} (TCP): is `utp-perf -s` running there?")
        })?;
    let (read, mut write) = control.into_split();
    let mut reader = control::Reader::new(read);
    let hello = Message::Hello {
        version: PROTOCOL_VERSION,
        buffers,
    };
    control::send(&mut write, &hello).await?;
    match timeout(CONNECT_TIMEOUT, reader.next())
        .await
        .context("the server did not answer the hello in time")??
    {
        Message::Ready => {}
        Message::Error { message } => bail!("the server refused the test: {message}"),
        other => bail!("the server answered {other:?}, not ready"),
    }
    let unspecified = match server.ip() {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    };
    let socket = Socket::bind(SocketAddr::new(unspecified, 0), &buffers).await?;
    let stream = timeout(CONNECT_TIMEOUT, socket.utp().connect(server))
        .await
        .with_context(|| format!("no uTP answer from UDP {server} in time"))?
        .with_context(|| format!("connecting over uTP to UDP {server}"))?;
    let mut messages = spawn_reader(reader, json);
    let cpu = CpuTime::now();
    let start = Instant::now();
    let (bytes, drained) = send_data(stream, limit).await?;
    if !drained {
        control::send(&mut write, &Message::Stop).await?;
    }
    let sender = SideReport {
        bytes,
        seconds: start.elapsed().as_secs_f64(),
        cpu_seconds: CpuTime::now().seconds_since(&cpu),
        buffers: buffers.in_force(),
    };
    let (receiver, intervals) = gather(&mut messages).await?;
    let report = Report::new(server.to_string(), &sender, &receiver, intervals);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).context("encoding the report")?
        );
    } else {
        println!("{}", report.summary());
    }
    Ok(report)
}

/// Reads the server's messages on a task (they arrive while this end writes), printing
/// each interval unless `json`; the channel ends after a result, an error or a failure.
fn spawn_reader(
    mut reader: control::Reader<tokio::net::tcp::OwnedReadHalf>,
    json: bool,
) -> mpsc::UnboundedReceiver<anyhow::Result<Message>> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let message = reader.next().await;
            if let (false, Ok(Message::Interval { interval })) = (json, &message) {
                println!("{}", interval.line());
            }
            let last = !matches!(message, Ok(Message::Interval { .. }));
            if tx.send(message).is_err() || last {
                break;
            }
        }
    });
    rx
}

/// The receiver's intervals and result, once the stream has closed.
async fn gather(
    messages: &mut mpsc::UnboundedReceiver<anyhow::Result<Message>>,
) -> anyhow::Result<(SideReport, Vec<Interval>)> {
    let mut intervals = Vec::new();
    loop {
        let message = timeout(RESULT_TIMEOUT, messages.recv())
            .await
            .context("the server sent no result in time")?
            .context("the control connection ended without a result")??;
        match message {
            Message::Interval { interval } => intervals.push(interval),
            Message::Result { report } => return Ok((report, intervals)),
            Message::Error { message } => bail!("the server failed: {message}"),
            other => bail!("the server sent {other:?} during the test"),
        }
    }
}

/// Writes until `limit`, then shuts the stream down (every byte acknowledged, FIN sent);
/// returns the bytes written and whether the stream drained: a timed test gives up after
/// [`DRAIN_LIMIT`] (the caller then stops the test), a sized one after [`SHUTDOWN_TIMEOUT`]
/// (an error).
async fn send_data<S: AsyncWrite + Unpin>(
    mut stream: S,
    limit: Limit,
) -> anyhow::Result<(u64, bool)> {
    let chunk = vec![0x5a_u8; WRITE_CHUNK];
    let start = Instant::now();
    let mut sent = 0u64;
    loop {
        let want = match limit {
            Limit::Time(d) if start.elapsed() >= d => break,
            Limit::Time(_) => chunk.len(),
            Limit::Bytes(n) if sent >= n => break,
            Limit::Bytes(n) => {
                usize::try_from(n - sent).map_or(chunk.len(), |left| left.min(chunk.len()))
            }
        };
        let write = stream.write(&chunk[..want]);
        let written = match limit {
            // A write pending at the deadline wrote nothing (poll_write is all or nothing).
            Limit::Time(d) => match timeout_at(start + d, write).await {
                Ok(written) => written,
                Err(_) => break,
            },
            Limit::Bytes(_) => write.await,
        }
        .context("writing to the uTP stream")?;
        if written == 0 {
            bail!("the uTP stream took no more data");
        }
        sent += written as u64;
    }
    let drain = match limit {
        Limit::Time(_) => DRAIN_LIMIT,
        Limit::Bytes(_) => SHUTDOWN_TIMEOUT,
    };
    match timeout(drain, stream.shutdown()).await {
        Ok(closed) => closed.context("closing the uTP stream")?,
        Err(_) if matches!(limit, Limit::Time(_)) => return Ok((sent, false)),
        Err(_) => bail!("the uTP stream did not drain and close in time"),
    }
    Ok((sent, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sends_exactly_the_bytes_asked_for() {
        let (tx, mut rx) = tokio::io::duplex(1 << 20);
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut rx, &mut got)
                .await
                .map(|_| got.len())
        });
        let sent = send_data(tx, Limit::Bytes(200_001)).await.unwrap();
        assert_eq!(sent, (200_001, true));
        assert_eq!(reader.await.unwrap().unwrap(), 200_001);
    }

    #[tokio::test(start_paused = true)]
    async fn a_timed_send_stops_at_its_deadline() {
        let (tx, mut rx) = tokio::io::duplex(1 << 16);
        let reader = tokio::spawn(async move {
            let mut buf = vec![0u8; 1 << 16];
            let mut total = 0;
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                match tokio::io::AsyncReadExt::read(&mut rx, &mut buf).await {
                    Ok(0) | Err(_) => return total,
                    Ok(n) => total += n,
                }
            }
        });
        let start = Instant::now();
        let (sent, drained) = send_data(tx, Limit::Time(Duration::from_secs(2)))
            .await
            .unwrap();
        assert!(drained);
        assert!(start.elapsed() >= Duration::from_secs(2));
        assert!(start.elapsed() < Duration::from_secs(3));
        assert_eq!(reader.await.unwrap() as u64, sent);
    }

    /// A stream that takes 1 MB, then nothing, and never finishes closing.
    #[derive(Default)]
    struct Stuck(usize);

    impl AsyncWrite for Stuck {
        fn poll_write(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            if self.0 >= 1_000_000 {
                return std::task::Poll::Pending;
            }
            self.0 += buf.len();
            std::task::Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }

        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Pending
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_undrained_timed_send_gives_up_and_a_sized_one_fails() {
        let (sent, drained) = send_data(Stuck::default(), Limit::Time(Duration::from_secs(1)))
            .await
            .unwrap();
        assert!(sent > 0 && !drained);
        let sized = send_data(Stuck::default(), Limit::Bytes(10)).await;
        assert!(sized.unwrap_err().to_string().contains("did not drain"));
    }
}
