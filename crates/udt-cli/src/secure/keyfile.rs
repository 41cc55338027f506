//! Long-term X25519 key pairs and their files.
//!
//! ```text
//! private key file (0600):  udt-private-key-v1 <64 hex digits>
//! public key file:          udt-x25519 <64 hex digits> [comment]
//! ```
//! A private key file that anyone but its owner can read is refused, as ssh does: the key
//! may already be someone else's.

use std::fmt;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use zeroize::Zeroizing;

/// The Noise protocol every udt session runs (see `super::handshake`).
pub const NOISE_PARAMS: &str = "Noise_XX_25519_ChaChaPoly_BLAKE2s";
const PRIVATE_TAG: &str = "udt-private-key-v1";
const PUBLIC_TAG: &str = "udt-x25519";

/// A public key: who a peer is.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PublicKey(pub [u8; 32]);

impl PublicKey {
    /// From 64 hexadecimal digits.
    pub fn from_hex(text: &str) -> Option<Self> {
        let bytes = hex_decode::<32>(text)?;
        Some(Self(*bytes))
    }

    /// A short form for people to compare: the first 16 bytes of the key's BLAKE3 hash, in
    /// groups of four hexadecimal digits (`udt:3b1f:...`).
    pub fn fingerprint(&self) -> String {
        let hash = blake3::hash(&self.0);
        let hex = hex(&hash.as_bytes()[..16]);
        let groups: Vec<&str> = (0..8).map(|i| &hex[4 * i..4 * i + 4]).collect();
        format!("udt:{}", groups.join(":"))
    }

    /// The line of a public key file (or of an authorized keys file, before the access).
    pub fn to_line(&self) -> String {
        format!("{PUBLIC_TAG} {}", hex(&self.0))
    }

    /// Parses `udt-x25519 <hex>` from the start of `words`.
    pub(crate) fn from_words<'a>(words: &mut impl Iterator<Item = &'a str>) -> Option<Self> {
        if words.next()? != PUBLIC_TAG {
            return None;
        }
        Self::from_hex(words.next()?)
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fingerprint())
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fingerprint())
    }
}

/// A long-term key pair (the private half wiped from memory when dropped).
pub struct KeyPair {
    private: Zeroizing<[u8; 32]>,
    public: PublicKey,
}

impl fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyPair")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

impl KeyPair {
    /// A fresh key pair from the operating system's random source.
    pub fn generate() -> anyhow::Result<Self> {
        let builder = snow::Builder::new(NOISE_PARAMS.parse()?);
        let pair = builder.generate_keypair()?;
        let mut private = Zeroizing::new([0u8; 32]);
        private.copy_from_slice(&pair.private);
        let mut public = [0u8; 32];
        public.copy_from_slice(&pair.public);
        Ok(Self {
            private,
            public: PublicKey(public),
        })
    }

    /// The public half.
    pub fn public(&self) -> PublicKey {
        self.public
    }

    pub(crate) fn private(&self) -> &[u8; 32] {
        &self.private
    }

    /// Write the private key to `path` (0600, never replacing a file) and the public key to
    /// `path.pub`.
    pub fn save(&self, path: &Path, comment: &str) -> anyhow::Result<PathBuf> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .with_context(|| {
                format!(
                    "{}: cannot create (remove it first to replace it)",
                    path.display()
                )
            })?;
        let line = Zeroizing::new(format!("{PRIVATE_TAG} {}\n", hex(&self.private[..])));
        file.write_all(line.as_bytes())?;
        let public_path = public_path(path);
        fs::write(
            &public_path,
            format!("{} {comment}\n", self.public.to_line()),
        )
        .with_context(|| format!("writing {}", public_path.display()))?;
        Ok(public_path)
    }

    /// Read a private key file, refusing one that others can read.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let meta = fs::metadata(path).with_context(|| {
            format!("{}: no key (create one with `udt keygen`)", path.display())
        })?;
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            bail!(
                "{}: private key is readable by others (mode {:o}); fix with `chmod 600 {}`",
                path.display(),
                mode & 0o777,
                path.display()
            );
        }
        let text = Zeroizing::new(
            fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?,
        );
        let mut words = text.split_whitespace();
        let private = match (words.next(), words.next()) {
            (Some(PRIVATE_TAG), Some(hex)) => hex_decode::<32>(hex),
            _ => None,
        };
        let Some(private) = private else {
            bail!("{}: not a udt private key file", path.display());
        };
        let public = x25519_public(&private)?;
        Ok(Self { private, public })
    }
}

/// `KEY.pub` beside `KEY`.
pub fn public_path(private: &Path) -> PathBuf {
    let mut name = private.as_os_str().to_owned();
    name.push(".pub");
    PathBuf::from(name)
}

/// The public key of an X25519 private key (a Noise handshake with ourselves would be
/// roundabout: snow derives it when given the private key).
fn x25519_public(private: &[u8; 32]) -> anyhow::Result<PublicKey> {
    // Run the first half of an XX handshake: the responder's second message reveals its
    // static public key, computed by snow from the private key.
    let params: snow::params::NoiseParams = NOISE_PARAMS.parse()?;
    // XX wants the initiator's static key up front, though this half never sends it.
    let throwaway = snow::Builder::new(params.clone()).generate_keypair()?;
    let mut initiator = snow::Builder::new(params.clone())
        .local_private_key(&throwaway.private)?
        .build_initiator()?;
    let mut responder = snow::Builder::new(params)
        .local_private_key(private)?
        .build_responder()?;
    let (mut a, mut b) = (vec![0u8; 256], vec![0u8; 256]);
    let n = initiator.write_message(&[], &mut a)?;
    responder.read_message(&a[..n], &mut b)?;
    let n = responder.write_message(&[], &mut a)?;
    initiator.read_message(&a[..n], &mut b)?;
    let remote = initiator
        .get_remote_static()
        .context("the handshake revealed no static key")?;
    let mut public = [0u8; 32];
    public.copy_from_slice(remote);
    Ok(PublicKey(public))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hex_decode<const N: usize>(text: &str) -> Option<Zeroizing<[u8; N]>> {
    if text.len() != 2 * N || !text.is_ascii() {
        return None;
    }
    let mut out = Zeroizing::new([0u8; N]);
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_key_loads_back_with_its_public_half() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("id_udt");
        let pair = KeyPair::generate().unwrap();
        let public_file = pair.save(&path, "test").unwrap();
        let loaded = KeyPair::load(&path).unwrap();
        assert_eq!(loaded.public(), pair.public());
        let line = fs::read_to_string(public_file).unwrap();
        let mut words = line.split_whitespace();
        assert_eq!(PublicKey::from_words(&mut words), Some(pair.public()));
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert!(pair.save(&path, "again").is_err(), "never replaces a key");
    }

    #[test]
    fn a_key_others_can_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("id_udt");
        KeyPair::generate().unwrap().save(&path, "").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let err = KeyPair::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("readable by others") && err.contains("chmod 600"),
            "{err}"
        );
    }

    #[test]
    fn fingerprints_are_short_and_stable() {
        let k = PublicKey([7; 32]);
        assert_eq!(k.fingerprint(), PublicKey([7; 32]).fingerprint());
        assert_ne!(k.fingerprint(), PublicKey([8; 32]).fingerprint());
        assert_eq!(k.fingerprint().len(), "udt:".len() + 8 * 4 + 7);
    }
}
