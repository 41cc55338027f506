//! `udt cp [user@]host:path`: the transfer bootstrapped over SSH, as scp, mosh and ascp do.
//!
//! 1. The client ([`client`]) runs the system's `ssh` ([`session`]), so the user's keys,
//!    agent, `~/.ssh/config` and `known_hosts` decide who logs in where, and starts
//!    `udt __ssh-server` there as that user (`cmd::ssh_server`, [`oneshot`]).
//! 2. The remote side draws a fresh 256-bit session key from the operating system, binds a UDP
//!    port (in `--port-range` if given) on the address the SSH connection reached (from
//!    `SSH_CONNECTION`, so `~/.ssh/config` aliases work), and prints one [`ready`] line on its
//!    stdout, which only the SSH channel reads: port, that address, its working directory,
//!    the key.
//! 3. The client connects over UDT with that key. Every packet after the handshake is sealed
//!    with AES-256-GCM, and a peer without the key gets no data and ends with
//!    `AuthenticationFailed`; the server keeps accepting until one connection proves the key,
//!    serves that one under `/` with the remote user's own permissions (no daemon, no root),
//!    and exits. It also exits when the SSH session ends (its stdin closes) or when nobody
//!    proves the key within its idle time.
//!
//! The key lives only in the SSH channel and in memory (wiped on drop where the types allow):
//! it is never on a command line, in a log line, a `--json` event or an error message.
//!
//! Integrity: the file protocol's per-file BLAKE3 digest stays unkeyed here. The session key
//! authenticates every byte on the wire, so an attacker cannot change data or digest; the
//! digest is left to catch what happens off the wire (a disk, memory, a bug), for which a
//! plain hash suffices.

pub mod client;
pub mod oneshot;
pub mod paths;
pub mod ready;
pub mod session;

use std::path::PathBuf;

pub use oneshot::PortRange;

/// The hidden subcommand that `udt cp` runs on the remote host.
pub const SERVER_SUBCOMMAND: &str = "__ssh-server";

/// `udt cp`'s options for `host:path` operands (scp's names where scp has one; `-P` is in
/// `cmd::cp::Args`, shared with the daemon form).
#[derive(Debug, Clone, clap::Args)]
pub struct SshArgs {
    /// ssh: the identity (private key) file, as `ssh -i`.
    #[arg(short = 'i', value_name = "FILE")]
    pub identity: Option<PathBuf>,
    /// ssh: an option in ssh_config form, as `ssh -o` (repeatable).
    #[arg(short = 'o', value_name = "OPTION")]
    pub ssh_option: Vec<String>,
    /// ssh: the per-user configuration file, as `ssh -F`.
    #[arg(short = 'F', value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,
    /// The ssh command, split as a shell would (`--ssh 'ssh -F cfg'`).
    #[arg(long = "ssh", value_name = "CMD", default_value = "ssh")]
    pub ssh_command: String,
    /// The udt on the remote host, as its shell runs it (like rsync's --rsync-path):
    /// `--remote-udt ~/bin/udt`.
    #[arg(long, value_name = "PATH", default_value = "udt")]
    pub remote_udt: String,
    /// The remote side's UDP ports to choose from (for a firewall): `60000-60100`.
    /// Default: any free port.
    #[arg(long, value_name = "FIRST-LAST")]
    pub port_range: Option<PortRange>,
}
