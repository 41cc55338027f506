//! `udt __ssh-server` (hidden): the remote end of `udt cp [user@]host:path`, started by
//! `udt cp` over `ssh` as the logged-in user; see [`crate::ssh`] for the whole exchange.
//!
//! stdin and stdout are the SSH channel. It prints one ready line on stdout (the key in it:
//! nothing else is ever written there), serves exactly one connection that proves the key,
//! and exits when that is done, when stdin closes (the SSH session ended) before a client
//! proved the key, or after `--idle-timeout` without one. Its errors go to stderr, which ssh
//! hands to the client.
//!
//! Once a transfer runs, a hang-up does not stop it: the SSH connection sits idle meanwhile,
//! and a firewall that forgets idle TCP connections must not cut a long transfer short. The
//! UDT connection has its own liveness (a vanished peer ends it within seconds) and every
//! read and write its idle timeout, so the process still ends.

use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};
use std::thread;
use std::time::Duration;

use anyhow::Context;

use crate::ssh::oneshot::{await_proven, bind, fresh_key, ssh_server_addr};
use crate::ssh::ready::Ready;
use crate::ssh::PortRange;
use crate::transfer::paths::Root;
use crate::transfer::session::{serve_connection, Policy};

/// Default for `--idle-timeout`: how long to wait for the client that holds the key.
pub const IDLE_SECS: u64 = 30;

/// Where the one-shot server is, for the hang-up watcher: [`WAITING`], [`SERVING`], [`DONE`].
static STAGE: AtomicU8 = AtomicU8::new(WAITING);
/// No client has proved the key yet: a hang-up ends the process.
const WAITING: u8 = 0;
/// A transfer runs: a hang-up is ignored.
const SERVING: u8 = 1;
/// Served well: a hang-up is a clean end.
const DONE: u8 = 2;

/// Arguments of `udt __ssh-server`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The UDP ports to choose from (default: any free port).
    #[arg(long, value_name = "FIRST-LAST")]
    pub port_range: Option<PortRange>,
    /// Congestion control when this side sends (downloads).
    #[arg(long, value_name = "NAME", default_value = super::cp::DEFAULT_CC,
          value_parser = super::cp::CC_NAMES)]
    pub cc: String,
    /// Cap on the sending rate (downloads), as `udt cp --maxbw`.
    #[arg(long, value_name = "RATE")]
    pub maxbw: Option<String>,
    /// Give up after this many seconds without a client that proves the key.
    #[arg(long, value_name = "SECONDS", default_value_t = IDLE_SECS)]
    pub idle_timeout: u64,
}

/// Runs `udt __ssh-server`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let key = fresh_key()?;
    let addr = ssh_server_addr(std::env::var("SSH_CONNECTION").ok().as_deref());
    let maxbw = super::cp::parse_maxbw(args.maxbw.as_deref())?;
    let mut options = super::cp::transfer_options(&args.cc, maxbw)?;
    options.set_session_key(Some(key.clone()));
    let listener = bind(addr, args.port_range, &options)?;
    let cwd = std::env::current_dir().context("the working directory")?;
    let ready = Ready {
        port: listener.local_addr()?.port(),
        addr,
        cwd: cwd.as_os_str().as_bytes().to_vec(),
        key,
    };
    let mut out = io::stdout().lock();
    out.write_all(ready.to_line().as_bytes())
        .and_then(|()| out.flush())
        .context("writing to the SSH channel")?;
    drop((out, ready));
    exit_on_hangup();
    let stream = await_proven(listener, Duration::from_secs(args.idle_timeout))?;
    STAGE.store(SERVING, Ordering::Release);
    // Cannot fail: both timeouts are non-zero.
    let _ = stream.set_read_timeout(Some(super::serve::IDLE_TIMEOUT));
    let _ = stream.set_write_timeout(Some(super::serve::IDLE_TIMEOUT));
    // The remote user's own permissions are the limit: serve the whole file system.
    let root = Root::new(Path::new("/")).context("opening /")?;
    // The user asked for this transfer over their own login: their --force decides.
    let policy = Policy {
        allow_overwrite: true,
        ..Policy::default()
    };
    let served = serve_connection(&stream, &root, policy);
    if served.is_ok() {
        STAGE.store(DONE, Ordering::Release);
    }
    let closed = stream.close();
    served?;
    closed.context("closing the connection")
}

/// When stdin closes (the client is done with us, or the SSH session died), exit unless a
/// transfer runs.
fn exit_on_hangup() {
    thread::spawn(|| {
        let _ = io::copy(&mut io::stdin().lock(), &mut io::sink());
        match STAGE.load(Ordering::Acquire) {
            WAITING => std::process::exit(1),
            DONE => std::process::exit(0),
            _ => {} // the transfer ends by itself (module doc)
        }
    });
}
