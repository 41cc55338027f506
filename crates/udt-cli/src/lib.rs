//! The testable logic behind the `udt` command. `main.rs` only parses and prints.
//!
//! Exit codes: 0 success, 1 the operation failed (network, remote, disk, verification),
//! 2 bad usage (clap's own code for unparsable arguments, and ours for invalid values).

pub mod cli;
pub mod cmd;
pub mod copy;
#[cfg(any(fuzzing, test))]
#[doc(hidden)]
pub mod fuzzing;
pub mod log;
pub mod perf;
pub mod secure;
pub mod ssh;
pub mod text;
pub mod transfer;

use cli::{Cli, Command};

/// Runs one parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Cp(args) => cmd::cp::run(args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Keygen(args) => cmd::keygen::run(args),
        Command::Perf(args) => cmd::perf::run(args),
        Command::Lab(args) => cmd::lab::run(args),
        Command::SshServer(args) => cmd::ssh_server::run(args),
    }
}

/// A usage error found after parsing (a value clap could not check): exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The process exit code for an error: 2 for usage, 1 for everything else.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    if err.chain().any(|cause| cause.is::<UsageError>()) {
        2
    } else {
        1
    }
}

/// Writing to a closed pipe (`udt perf ... | head`) is not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
