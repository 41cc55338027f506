//! Runtime tests over real loopback sockets: one integration binary (see `shared/style.md`).

mod api;
mod errors;
mod interop;
mod loopback;
mod many;
mod options;
mod poller;
mod port;
mod protected;
mod shared_port;
#[cfg(feature = "tokio")]
mod tokio_api;

use std::io::{self, Read, Write};
use std::time::Duration;

use udt::{UdtListener, UdtStream};

/// The byte at stream offset `i`: varies with both low and high bits, so a shifted, dropped
/// or duplicated chunk shows up.
fn pattern(i: u64) -> u8 {
    (i ^ (i >> 8) ^ (i >> 17)).wrapping_mul(31) as u8
}

fn fill_pattern(offset: u64, buf: &mut [u8]) {
    for (k, b) in buf.iter_mut().enumerate() {
        *b = pattern(offset + k as u64);
    }
}

/// Write `len` pattern bytes in `chunk`-sized writes, then wait until all are acknowledged.
fn send_pattern(stream: &mut UdtStream, len: u64, chunk: usize) -> io::Result<()> {
    let mut buf = vec![0u8; chunk];
    let mut sent = 0u64;
    while sent < len {
        let n = chunk.min((len - sent) as usize);
        fill_pattern(sent, &mut buf[..n]);
        stream.write_all(&buf[..n])?;
        sent += n as u64;
    }
    stream.flush()
}

/// Read to end of stream, checking every byte against the pattern; returns the count.
fn recv_pattern(stream: &mut UdtStream) -> io::Result<u64> {
    recv_pattern_upto(stream, u64::MAX)
}

/// Read up to `limit` bytes (or to end of stream), checking them against the pattern.
fn recv_pattern_upto(stream: &mut UdtStream, limit: u64) -> io::Result<u64> {
    let mut buf = vec![0u8; 256 << 10];
    let mut got = 0u64;
    while got < limit {
        let want = buf
            .len()
            .min(usize::try_from(limit - got).unwrap_or(usize::MAX));
        let n = stream.read(&mut buf[..want])?;
        if n == 0 {
            return Ok(got);
        }
        for (k, &b) in buf[..n].iter().enumerate() {
            let at = got + k as u64;
            if b != pattern(at) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("byte {at}: got {b}, expected {}", pattern(at)),
                ));
            }
        }
        got += n as u64;
    }
    Ok(got)
}

/// A listener on an ephemeral loopback port.
fn listener() -> UdtListener {
    UdtListener::bind("127.0.0.1:0").expect("bind listener")
}

/// Generous upper bound for anything that should finish (a hang fails instead of blocking
/// CI); never a performance assertion.
const PATIENCE: Duration = Duration::from_secs(60);
