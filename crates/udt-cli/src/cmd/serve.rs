//! `udt serve`: serve a directory to `udt cp` clients, and to classic UDT4 `recvfile`
//! clients, on one UDP port (the first 4 bytes of each connection tell the protocols apart;
//! see [`crate::transfer::protocol`]).
//!
//! One thread per connection. Clients may read and write anywhere under `--root` and
//! nowhere else; existing files are replaced only when the client asks (`--force`).
//! Prints `listening on ADDR` on stdout once ready, then one line per connection on stderr.

use std::io::Write;
use std::path::PathBuf;
use std::thread;

use anyhow::Context;
use udt::{UdtListener, UdtStream};

use crate::transfer::legacy::LegacyServed;
use crate::transfer::paths::Root;
use crate::transfer::session::{serve_connection, Served};

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
}

/// Runs `udt serve` (until killed).
pub fn run(args: Args) -> anyhow::Result<()> {
    let root = Root::new(&args.root).with_context(|| format!("--root {}", args.root.display()))?;
    let listener = UdtListener::bind((args.listen.as_str(), args.port))
        .with_context(|| format!("listening on {}:{}", args.listen, args.port))?;
    let addr = listener.local_addr()?;
    let mut out = std::io::stdout();
    writeln!(out, "listening on {addr}, serving {}", root.dir().display())?;
    out.flush()?;
    loop {
        let (stream, peer) = listener.accept().context("accepting a connection")?;
        let root = root.clone();
        thread::spawn(move || handle(stream, peer, &root));
    }
}

/// Serve one connection and log what happened.
fn handle(stream: UdtStream, peer: std::net::SocketAddr, root: &Root) {
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
