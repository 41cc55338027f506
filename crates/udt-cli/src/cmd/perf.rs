//! `udt perf`.

/// Arguments of `udt perf`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `udt perf`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`udt perf` is not built yet")
}
