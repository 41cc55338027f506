//! `udt serve`.

/// Arguments of `udt serve`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `udt serve`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`udt serve` is not built yet")
}
