//! The receiving end: a TCP control listener, and per test a uTP socket on the UDP port of
//! the same number, read to the end while the bytes of each second go to the client.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Context};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{timeout, Instant};

use crate::control::{self, Message, PROTOCOL_VERSION};
use crate::cpu::CpuTime;
use crate::report::{Interval, SideReport};
use crate::socket::{Buffers, Socket};

/// How long a client gets to say hello, and to connect over uTP once told `ready`.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The read size.
const READ_CHUNK: usize = 256 << 10;

/// The interval between `interval` messages.
const INTERVAL: Duration = Duration::from_secs(1);

/// The first line on stdout, which tells a launcher (the lab) the server listens.
pub const READY_PREFIX: &str = "utp-perf server on";

/// Serves tests on `addr` (TCP control, UDP uTP) until an error of the listener, or after
/// one test when `one_off` (then its error is the result).
pub async fn serve(addr: SocketAddr, one_off: bool) -> anyhow::Result<()> {
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("listening on TCP {addr}"))?;
    println!("{READY_PREFIX} {addr} (TCP control, uTP over UDP)");
    loop {
        let (control, peer) = listener.accept().await.context("accepting a client")?;
        let outcome = test(control, addr).await;
        if one_off {
            return outcome.with_context(|| format!("the test from {peer}"));
        }
        if let Err(err) = outcome {
            eprintln!("utp-perf: the test from {peer}: {err:#}");
        }
    }
}

/// One test on one control connection; an error also goes to the client.
async fn test(control: TcpStream, addr: SocketAddr) -> anyhow::Result<()> {
    let (read, mut write) = control.into_split();
    let mut reader = control::Reader::new(read);
    let outcome = async {
        let hello = timeout(HANDSHAKE_TIMEOUT, reader.next())
            .await
            .context("the client sent no hello in time")??;
        let buffers = match hello {
            Message::Hello { version, buffers } if version == PROTOCOL_VERSION => buffers,
            Message::Hello { version, .. } => {
                bail!("the client speaks control version {version}, this server {PROTOCOL_VERSION}: use the same utp-perf on both ends")
            }
            other => bail!("the client opened with {other:?}, not a hello"),
        };
        receive(addr, &buffers, &mut reader, &mut write).await
    }
    .await;
    if let Err(err) = &outcome {
        let message = format!("{err:#}");
        let _ = control::send(&mut write, &Message::Error { message }).await;
    }
    outcome
}

/// Binds the uTP socket, accepts the client's stream, reads it to the end (or the client's
/// `stop`) and sends the intervals and the result.
async fn receive<R, W>(
    addr: SocketAddr,
    buffers: &Buffers,
    reader: &mut control::Reader<R>,
    control: &mut W,
) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let socket = Socket::bind(addr, buffers).await?;
    control::send(control, &Message::Ready).await?;
    let stream = timeout(HANDSHAKE_TIMEOUT, socket.utp().accept())
        .await
        .context("the client did not connect over uTP in time")?
        .context("accepting the uTP stream")?;
    let cpu = CpuTime::now();
    let (bytes, seconds) = read_to_end(stream, reader, control).await?;
    let report = SideReport {
        bytes,
        seconds,
        cpu_seconds: CpuTime::now().seconds_since(&cpu),
        buffers: buffers.in_force(),
    };
    control::send(control, &Message::Result { report }).await
}

/// Reads `stream` to its end or until the client's `stop`, sending an `interval` every
/// second and the last partial one; returns the bytes and the seconds from the start to the
/// last byte.
async fn read_to_end<S, R, W>(
    mut stream: S,
    reader: &mut control::Reader<R>,
    control: &mut W,
) -> anyhow::Result<(u64, f64)>
where
    S: AsyncRead + Unpin,
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let start = Instant::now();
    let mut ticks = tokio::time::interval_at(start + INTERVAL, INTERVAL);
    let mut buf = vec![0u8; READ_CHUNK];
    let (mut total, mut pending, mut from_s, mut last_byte) = (0u64, 0u64, 0.0, start);
    loop {
        tokio::select! {
            read = stream.read(&mut buf) => {
                let n = read.context("reading the uTP stream")?;
                if n == 0 {
                    break;
                }
                total += n as u64;
                pending += n as u64;
                last_byte = Instant::now();
            }
            message = reader.next() => match message? {
                Message::Stop => break,
                other => bail!("the client sent {other:?} during the test"),
            },
            _ = ticks.tick() => {
                let to_s = start.elapsed().as_secs_f64();
                let interval = Interval::new(from_s, to_s, std::mem::take(&mut pending));
                control::send(control, &Message::Interval { interval }).await?;
                from_s = to_s;
            }
        }
    }
    let seconds = last_byte.duration_since(start).as_secs_f64();
    if pending > 0 {
        let interval = Interval::new(from_s, seconds.max(from_s), pending);
        control::send(control, &Message::Interval { interval }).await?;
    }
    Ok((total, seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn reading_reports_every_byte_in_intervals() {
        let (mut tx, rx) = tokio::io::duplex(1 << 16);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            for _ in 0..5 {
                tx.write_all(&[7u8; 1000]).await.unwrap();
                tokio::time::sleep(Duration::from_millis(600)).await;
            }
        });
        let mut wire = Vec::new();
        let (_client, quiet) = tokio::io::duplex(64);
        let mut reader = control::Reader::new(quiet);
        let (bytes, _) = read_to_end(rx, &mut reader, &mut wire).await.unwrap();
        writer.await.unwrap();
        assert_eq!(bytes, 5000);
        let mut reader = control::Reader::new(wire.as_slice());
        let mut sum = 0;
        while let Ok(Message::Interval { interval }) = reader.next().await {
            assert!(interval.end_s >= interval.start_s);
            sum += interval.bytes;
        }
        assert_eq!(sum, 5000);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stop_ends_the_reading_with_what_arrived() {
        let (mut tx, rx) = tokio::io::duplex(1 << 16);
        let (mut client, server) = tokio::io::duplex(1 << 10);
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            tx.write_all(&[1u8; 700]).await.unwrap();
            tokio::time::sleep(Duration::from_millis(1500)).await;
            control::send(&mut client, &Message::Stop).await.unwrap();
            // The data stream stays open: only the stop ends the test.
            tokio::time::sleep(Duration::from_secs(60)).await;
            drop(tx);
        });
        let mut wire = Vec::new();
        let mut reader = control::Reader::new(server);
        let (bytes, _) = read_to_end(rx, &mut reader, &mut wire).await.unwrap();
        assert_eq!(bytes, 700);
    }
}
