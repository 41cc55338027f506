//! `udt serve`: serve a directory to `udt cp` clients, and to classic UDT4 `recvfile`
//! clients, on one UDP port (the first 4 bytes of each connection tell the protocols apart;
//! see [`crate::transfer::protocol`]).
//!
//! One thread per connection, at most [`MAX_CONNECTIONS`] at once (more are closed at once),
//! each giving up after [`IDLE_TIMEOUT`] without progress in either direction. Clients may read and write anywhere under `--root` and
//! nowhere else; existing files are replaced only when the client asks (`--force`).
//! Prints `listening on ADDR` on stdout once ready, then one line per connection on stderr.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use anyhow::Context;
use udt::{UdtListener, UdtStream};

use crate::transfer::legacy::LegacyServed;
use crate::transfer::paths::Root;
use crate::transfer::session::{serve_connection, Served};

/// Connections served at once; each may hold 16 MiB of transfer buffers.
pub const MAX_CONNECTIONS: usize = 64;

/// How long a read or write may wait for the peer (a client that stalls or stops reading).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// Arguments of `udt serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The directory served: clients read and write only under it.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// The address to listen on.
    #[arg(short = 'l', long = "listen", default_value = "0.0.0.0")]
    pub listen: String,
    /// The UDP port (0: any free port, printed at start).
    #[arg(short = 'p', long, default_value_t = 9000)]
    pub port: u16,
    /// Congestion control when this side sends (downloads): `model` holds its rate through
    /// random loss and long round trips, `native` is UDT4's DAIMD as in libudt.
    #[arg(long, value_name = "NAME", default_value = super::cp::DEFAULT_CC,
          value_parser = super::cp::CC_NAMES)]
    pub cc: String,
}

/// Runs `udt serve` (until killed).
pub fn run(args: Args) -> anyhow::Result<()> {
    let root = Root::new(&args.root).with_context(|| format!("--root {}", args.root.display()))?;
    let options = super::cp::transfer_options(&args.cc)?;
    let listener = UdtListener::bind_with((args.listen.as_str(), args.port), options)
        .with_context(|| format!("listening on {}:{}", args.listen, args.port))?;
    let addr = listener.local_addr()?;
    let mut out = std::io::stdout();
    writeln!(out, "listening on {addr}, serving {}", root.dir().display())?;
    out.flush()?;
    let active = Arc::new(AtomicUsize::new(0));
    loop {
        let (stream, peer) = listener.accept().context("accepting a connection")?;
        if active.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            active.fetch_sub(1, Ordering::AcqRel);
            eprintln!("udt serve: {peer}: refused, {MAX_CONNECTIONS} connections already");
            stream.set_linger(None);
            continue; // dropping the stream closes it
        }
        let root = root.clone();
        let active = Arc::clone(&active);
        thread::spawn(move || {
            handle(stream, peer, &root);
            active.fetch_sub(1, Ordering::AcqRel);
        });
    }
}

/// Serve one connection and log what happened.
fn handle(stream: UdtStream, peer: std::net::SocketAddr, root: &Root) {
    // Cannot fail: both timeouts are non-zero.
    let _ = stream.set_read_timeout(Some(IDLE_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IDLE_TIMEOUT));
    let result = serve_connection(&stream, root);
    let line = match &result {
        Ok(Served::Sent(s)) => format!("sent {} entries, {} bytes", s.files, s.transferred),
        Ok(Served::Received(s)) => {
            format!("received {} entries, {} bytes", s.files, s.transferred)
        }
        Ok(Served::Legacy(LegacyServed::File { name, bytes })) => {
            format!("classic: sent {name} ({bytes} bytes)")
        }
        Ok(Served::Legacy(LegacyServed::Refused { name, reason })) => {
            format!("classic: refused {name:?}: {reason}")
        }
        Err(e) => format!("error: {e}"),
    };
    eprintln!("udt serve: {peer}: {line}");
    let _ = stream.close();
}
