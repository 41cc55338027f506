//! One module per command: an `Args` struct (clap derive) and `run(args) -> anyhow::Result<()>`.

pub mod cp;
pub mod keygen;
pub mod lab;
pub mod perf;
pub mod serve;
pub mod ssh_server;
