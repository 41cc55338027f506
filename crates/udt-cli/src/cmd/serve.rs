//! `udt serve`: serve a directory to `udt cp` clients, and to classic UDT4 `recvfile`
//! clients, on one UDP port (the first 4 bytes of each connection tell the protocols apart;
//! see [`crate::transfer::protocol`]).
//!
//! Secure by default, until connections are authenticated: without keys it listens only on
//! loopback unless `--insecure-public` is given, and is then read-only unless
//! `--allow-writes` is given too; `--read-only` refuses every upload. Classic clients can
//! only download. Existing files are replaced only with `--allow-overwrite` *and* a client
//! that asks (`udt cp --force`). Clients stay under `--root`.
//!
//! One thread per connection, at most [`MAX_CONNECTIONS`] at once and `--max-per-address`
//! from one IP address (more are closed at once); each connection's slot is released by a
//! guard, even if its thread panics. Each connection has a deadline for its progress (see
//! [`crate::transfer::watchdog`]) besides [`IDLE_TIMEOUT`] per read or write.
//! Prints `listening on ADDR` on stdout once ready, then one line per connection on stderr,
//! with anything the peer chose (names, messages) escaped.

mod slots;

use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use anyhow::Context;
use udt::{UdtListener, UdtStream};

use crate::secure::{handshake, AuthorizedKeys, KeyPair};
use crate::text::terminal_safe;
use crate::transfer::error::{ErrorCode, TransferError};
use crate::transfer::legacy::LegacyServed;
use crate::transfer::paths::{umask, Root};
use crate::transfer::protocol::is_magic;
use crate::transfer::session::{read_first, refuse, serve_after, serve_connection, Policy, Served};
use crate::UsageError;
pub use slots::{Slot, Slots};
use udt_units::parse_size;

/// Connections served at once; each may hold 16 MiB of transfer buffers and 64 MiB of
/// manifest.
pub const MAX_CONNECTIONS: usize = 64;

/// Default for `--max-per-address`.
pub const MAX_PER_ADDRESS: u32 = 8;

/// How long a read or write may wait for the peer (a client that stalls or stops reading).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// Arguments of `udt serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The directory served: clients read and write only under it.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// The address to listen on. Anything but loopback needs --insecure-public.
    #[arg(short = 'l', long = "listen", default_value = "127.0.0.1")]
    pub listen: String,
    /// The UDP port (0: any free port, printed at start).
    #[arg(short = 'p', long, default_value_t = 9000)]
    pub port: u16,
    /// Listen on a non-loopback address although connections are not authenticated:
    /// anyone who can reach the port can read every file under --root. Read-only unless
    /// --allow-writes is given too.
    #[arg(long)]
    pub insecure_public: bool,
    /// With --insecure-public: let anyone who can reach the port upload files.
    #[arg(long, conflicts_with = "read_only")]
    pub allow_writes: bool,
    /// Refuse every upload.
    #[arg(long)]
    pub read_only: bool,
    /// Replace existing files when a client asks (udt cp --force). Without it, uploads never
    /// replace a file (resuming a partial file is not replacing).
    #[arg(long)]
    pub allow_overwrite: bool,
    /// Largest file a client may upload (bytes, or with K, M, G, T). Default: no limit
    /// beyond the free space, which is checked before an upload starts.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_file_size: Option<u64>,
    /// Connections at once from one IP address.
    #[arg(long, value_name = "N", default_value_t = MAX_PER_ADDRESS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_per_address: u32,
    /// Admit clients by key: each line of FILE is a client's public key (from its `udt
    /// keygen`) and its access, `read-only` or `read-write`, optionally `:DIR` to confine it
    /// to a sub-directory. Sessions are then authenticated and encrypted, and the server may
    /// listen on any address; clients without a key are held to the rules without keys.
    #[arg(long, value_name = "FILE")]
    pub authorized_keys: Option<PathBuf>,
    /// The server's private key, which clients pin on first contact (with
    /// --authorized-keys; create it with `udt keygen -f FILE`). Default: the user's
    /// $XDG_CONFIG_HOME/udt/id_udt or ~/.config/udt/id_udt.
    #[arg(long, value_name = "FILE", requires = "authorized_keys")]
    pub key: Option<PathBuf>,
    /// Congestion control when this side sends (downloads): `model` holds its rate through
    /// random loss and long round trips, `native` is UDT4's DAIMD as in libudt, `ledbat` is
    /// the background scavenger, which uses only capacity other traffic leaves idle (as
    /// `udt cp --priority background`).
    #[arg(long, value_name = "NAME", default_value = super::cp::DEFAULT_CC,
          value_parser = super::cp::CC_NAMES)]
    pub cc: String,
    /// Cap each connection's sending rate (downloads; UDT_MAXBW): bits per second with
    /// decimal prefixes (100M, 1G, 1.5gbit), or bytes per second with a capital B (10MB/s).
    /// It counts whole packets with their headers, so file data moves about 3% slower.
    #[arg(long, value_name = "RATE")]
    pub maxbw: Option<String>,
}

/// Runs `udt serve` (until killed).
pub fn run(args: Args) -> anyhow::Result<()> {
    let keys = ServerKeys::load(&args)?.map(Arc::new);
    let plain = policy(&args, keys.is_some())?;
    let policy = plain.unwrap_or(Policy {
        read_only: args.read_only,
        allow_overwrite: args.allow_overwrite,
        max_file_size: args.max_file_size,
    });
    let root = Root::new(&args.root).with_context(|| format!("--root {}", args.root.display()))?;
    let maxbw = super::cp::parse_maxbw(args.maxbw.as_deref())?;
    let mut options = super::cp::transfer_options(&args.cc, maxbw)?;
    // Keyed sessions switch protection on after their handshake: leave room for it.
    options.set_protect_later(keys.is_some());
    umask(); // read once before any thread starts
    let listener = UdtListener::bind_with((args.listen.as_str(), args.port), options)
        .with_context(|| format!("listening on {}:{}", args.listen, args.port))?;
    let addr = listener.local_addr()?;
    let mut out = std::io::stdout();
    let access = if policy.read_only {
        "read-only"
    } else {
        "read-write"
    };
    let who = match (&keys, plain) {
        (Some(k), Some(_)) => format!(
            ", {} client keys, and clients without keys",
            k.authorized.len()
        ),
        (Some(k), None) => format!(", only {} client keys", k.authorized.len()),
        (None, _) => String::new(),
    };
    writeln!(
        out,
        "listening on {addr}, serving {} ({access}{who})",
        root.dir().display()
    )?;
    if let Some(k) = &keys {
        // On stderr with the log: stdout's one line is what scripts read (and may close).
        eprintln!(
            "udt serve: server key fingerprint {}",
            k.pair.public().fingerprint()
        );
    }
    out.flush()?;
    let slots = Arc::new(Slots::new(MAX_CONNECTIONS, args.max_per_address as usize));
    loop {
        let (stream, peer) = listener.accept().context("accepting a connection")?;
        let slot = match slots.acquire(peer.ip()) {
            Ok(slot) => slot,
            Err(why) => {
                eprintln!("udt serve: {peer}: refused, {why}");
                stream.set_linger(None);
                continue; // dropping the stream closes it
            }
        };
        let root = root.clone();
        let keys = keys.clone();
        thread::spawn(move || {
            let _slot = slot; // released when this thread ends, even by a panic
            let rules = Rules {
                plain,
                keyed: policy,
                keys: keys.as_deref(),
            };
            handle(stream, peer, &root, rules);
        });
    }
}

/// What the flags allow clients without keys: `None` when they are refused (a keyed server on
/// a public address without --insecure-public), or a usage error when the address is public,
/// not acknowledged, and there are no keys either.
fn policy(args: &Args, keyed: bool) -> anyhow::Result<Option<Policy>> {
    let addrs: Vec<SocketAddr> = (args.listen.as_str(), args.port)
        .to_socket_addrs()
        .with_context(|| format!("--listen {}", args.listen))?
        .collect();
    let public = addrs.iter().any(|a| !a.ip().is_loopback());
    if public && !args.insecure_public {
        if keyed {
            return Ok(None);
        }
        return Err(UsageError(format!(
            "refusing to listen on {} without keys: anyone who can reach it could read the files \
             under --root; listen on loopback (-l 127.0.0.1), admit clients by key \
             (--authorized-keys FILE), or pass --insecure-public (read-only unless --allow-writes)",
            args.listen
        ))
        .into());
    }
    Ok(Some(Policy {
        read_only: args.read_only || (public && !args.allow_writes),
        allow_overwrite: args.allow_overwrite,
        max_file_size: args.max_file_size,
    }))
}

/// The server's key pair and the clients it admits.
struct ServerKeys {
    pair: KeyPair,
    authorized: AuthorizedKeys,
}

impl ServerKeys {
    fn load(args: &Args) -> anyhow::Result<Option<Self>> {
        let Some(file) = &args.authorized_keys else {
            return Ok(None);
        };
        let authorized = AuthorizedKeys::load(file).context("--authorized-keys")?;
        let key_file = match &args.key {
            Some(k) => k.clone(),
            None => super::keygen::default_key_file()?,
        };
        let pair = KeyPair::load(&key_file).context("--key (the server's private key)")?;
        Ok(Some(Self { pair, authorized }))
    }
}

/// How one connection may be served.
#[derive(Clone, Copy)]
struct Rules<'a> {
    /// For clients without a key (`None`: refused).
    plain: Option<Policy>,
    /// The flags' limits for keyed clients (their access narrows it further).
    keyed: Policy,
    keys: Option<&'a ServerKeys>,
}

/// Serve one connection and log what happened.
fn handle(stream: UdtStream, peer: SocketAddr, root: &Root, rules: Rules<'_>) {
    // Cannot fail: both timeouts are non-zero.
    let _ = stream.set_read_timeout(Some(IDLE_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IDLE_TIMEOUT));
    let result = serve(&stream, root, rules);
    let line = match &result {
        Ok((who, Served::Sent(s))) => {
            format!("{who}sent {} entries, {} bytes", s.files, s.transferred)
        }
        Ok((who, Served::Received(s))) => {
            format!("{who}received {} entries, {} bytes", s.files, s.transferred)
        }
        Ok((_, Served::Legacy(LegacyServed::File { name, bytes }))) => {
            format!("classic: sent {name} ({bytes} bytes)")
        }
        Ok((_, Served::Legacy(LegacyServed::Refused { name, reason }))) => {
            format!("classic: refused {name:?}: {reason}")
        }
        Err(e) => format!("error: {e:#}"),
    };
    let stats = stream.stats();
    let refused = stats.protection.forged + stats.protection.replayed + stats.protection.plaintext;
    eprintln!(
        "udt serve: {peer}: {} ({} packets sent, {} retransmitted, {} received, {refused} refused)",
        terminal_safe(&line),
        stats.packets_sent,
        stats.retransmitted,
        stats.packets_received
    );
    let _ = stream.close();
}

/// Serve one connection by its first bytes: a keyed session (authenticated, then the file
/// protocol under the client's access), or a client without a key where the rules allow one.
/// Returns who it was (for the log) and what was served.
fn serve(stream: &UdtStream, root: &Root, rules: Rules<'_>) -> anyhow::Result<(String, Served)> {
    let first = read_first(stream)?;
    if first == handshake::MAGIC {
        let Some(keys) = rules.keys else {
            anyhow::bail!("a keyed client, but this server has no keys (--authorized-keys)");
        };
        let client = handshake::server(stream, &keys.pair).context("key exchange")?;
        let Some(access) = keys.authorized.access(&client) else {
            let _ = handshake::refuse(stream, "your key is not in the server's authorized keys");
            anyhow::bail!("refused key {client}: not authorized");
        };
        let root = match &access.subdir {
            None => root.clone(),
            Some(dir) => match Root::new(&root.dir().join(dir.as_path())) {
                Ok(sub) => sub,
                Err(e) => {
                    let _ = handshake::refuse(stream, "your directory is missing on the server");
                    anyhow::bail!("key {client}: directory {}: {e}", dir.display());
                }
            },
        };
        handshake::admit(stream)?;
        let policy = Policy {
            read_only: rules.keyed.read_only || !access.writable,
            ..rules.keyed
        };
        let served = serve_connection(stream, &root, policy)?;
        return Ok((format!("key {client}: "), served));
    }
    match rules.plain {
        Some(policy) => Ok((String::new(), serve_after(stream, first, root, policy)?)),
        None if is_magic(first) => {
            let err = refuse(
                stream,
                TransferError::new(
                    ErrorCode::PermissionDenied,
                    "this server admits clients by key only: create one with `udt keygen` and \
                     send its .pub line to the server's administrator",
                ),
            );
            Err(err.into())
        }
        None => anyhow::bail!("a classic client, refused: this server admits clients by key only"),
    }
}
