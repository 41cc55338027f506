//! `udt keygen`: create (or show) this user's long-term key pair, which `udt cp` presents to
//! keyed `udt serve` daemons and a daemon presents to its clients.

use std::path::PathBuf;

use crate::secure::KeyPair;

/// Arguments of `udt keygen`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The private key file (its public half goes to FILE.pub). Default:
    /// $XDG_CONFIG_HOME/udt/id_udt, or ~/.config/udt/id_udt.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// A comment for the public key line (who or what the key is for).
    #[arg(short = 'C', long, default_value = "")]
    pub comment: String,
    /// Show the public key and fingerprint of an existing key instead of creating one.
    #[arg(long)]
    pub show: bool,
}

/// Runs `udt keygen`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let file = match args.file {
        Some(file) => file,
        None => default_key_file()?,
    };
    if args.show {
        let pair = KeyPair::load(&file)?;
        println!("{} {}", pair.public().to_line(), args.comment);
        println!("fingerprint: {}", pair.public().fingerprint());
        return Ok(());
    }
    let pair = KeyPair::generate()?;
    let public = pair.save(&file, &args.comment)?;
    println!("private key: {} (readable only by you)", file.display());
    println!("public key:  {}", public.display());
    println!("fingerprint: {}", pair.public().fingerprint());
    Ok(())
}

/// This user's key file: `$XDG_CONFIG_HOME/udt/id_udt` or `~/.config/udt/id_udt`.
pub fn default_key_file() -> anyhow::Result<PathBuf> {
    Ok(config_dir()?.join("id_udt"))
}

/// `$XDG_CONFIG_HOME/udt`, or `~/.config/udt`.
pub fn config_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir).join("udt"));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| anyhow::anyhow!("HOME is not set: name the key file with -f"))?;
    Ok(PathBuf::from(home).join(".config").join("udt"))
}
