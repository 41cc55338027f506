//! `udt lab`.

/// Arguments of `udt lab`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `udt lab`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`udt lab` is not built yet")
}
