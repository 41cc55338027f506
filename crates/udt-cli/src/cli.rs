//! The command line: `udt cp | serve | keygen | perf | lab`, one `Args` struct per command in `cmd/`.

use clap::{Parser, Subcommand};

use crate::cmd;

/// Fast file transfer and measurement over UDT (UDP-based Data Transfer), wire-compatible
/// with libudt 4.11.
///
/// Exit codes: 0 success, 1 the transfer or test failed, 2 bad usage.
///
/// Diagnostics: UDT_LOG=FILTER prints the library's events on stderr, with RUST_LOG's syntax
/// (`UDT_LOG=udt_proto::congestion=debug udt perf -c HOST` shows each decision of the
/// congestion controller and why).
#[derive(Debug, Parser)]
#[command(name = "udt", version, propagate_version = true)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The `udt` commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Copy files and directories to or from another host: `[user@]host:path` over SSH (as
    /// scp), `udt://host[:port]/path` from a `udt serve` daemon.
    Cp(cmd::cp::Args),
    /// Serve a directory to `udt cp` clients (and classic UDT4 `recvfile` clients).
    Serve(cmd::serve::Args),
    /// Create this user's key pair for keyed `udt serve` daemons (or show it with --show).
    Keygen(cmd::keygen::Args),
    /// Measure a path iperf3-style, over UDT or kernel TCP.
    Perf(cmd::perf::Args),
    /// Emulate a wide-area link in network namespaces and run experiments across it.
    Lab(cmd::lab::Args),
    /// The remote end of `udt cp [user@]host:path`, started by `udt cp` over ssh: one
    /// connection that proves the session key, then exit.
    #[command(name = "__ssh-server", hide = true)]
    SshServer(cmd::ssh_server::Args),
}
