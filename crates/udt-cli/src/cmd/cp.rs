//! `udt cp`.

/// Arguments of `udt cp`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `udt cp`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`udt cp` is not built yet")
}
