//! The `udt` binary: parse the command line, run one command, print errors the ripgrep way.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = udt_cli::cli::Cli::parse();
    if let Err(err) = udt_cli::log::init_from_env() {
        eprintln!("udt: {err:#}");
        return ExitCode::from(udt_cli::exit_code(&err));
    }
    match udt_cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if udt_cli::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // Messages may carry what a peer sent (names, its errors): escaped.
            eprintln!("udt: {}", udt_cli::text::terminal_safe(&format!("{err:#}")));
            ExitCode::from(udt_cli::exit_code(&err))
        }
    }
}
