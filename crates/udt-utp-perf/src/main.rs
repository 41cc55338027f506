//! The `utp-perf` binary: parse the line, run the server or the client on a tokio runtime,
//! print errors as `utp-perf: context: cause`. Exit 0 when the test ran, 1 when it failed,
//! 2 on a bad command line (clap's).

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use udt_utp_perf::cli::{Args, Mode};

fn main() -> ExitCode {
    let mode = match Args::parse().mode() {
        Ok(mode) => mode,
        Err(err) => {
            eprintln!("utp-perf: {err:#}");
            return ExitCode::from(2);
        }
    };
    match run(mode) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("utp-perf: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(mode: Mode) -> anyhow::Result<()> {
    // One thread: the uTP dispatcher and this program's reads or writes take turns, as a
    // single-threaded BitTorrent client's would, and the CPU figure is comparable.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    runtime.block_on(async {
        match mode {
            Mode::Server { addr, one_off } => udt_utp_perf::server::serve(addr, one_off).await,
            Mode::Client {
                server,
                limit,
                buffers,
                json,
            } => udt_utp_perf::client::run(server, limit, buffers, json)
                .await
                .map(drop),
        }
    })
}
