//! Partial files and resumption.
//!
//! Data is written to a partial file beside the destination (mode 0600) and renamed to
//! `NAME` only once its BLAKE3 digest matched: `.NAME.TAG.udt-part`, unique to the
//! transfer, or with `--resume` `.NAME.udt-part`, locked while written. With `--resume` a failed or interrupted transfer leaves
//! that partial file in place; the next `--resume` run has the receiver announce its length
//! and the BLAKE3 of its content (`Resume` frame). The sender hashes the same prefix of its
//! file: if the digests agree it sends only the rest, and both ends carry on hashing from
//! that prefix, so the final whole-file digest check still covers every byte; if they differ
//! it starts again from byte 0.

use std::ffi::{CString, OsString};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::paths::MAX_NAME_BYTES;
use super::protocol::{DataBuf, Digest};

/// Suffix of partial files.
pub const PART_SUFFIX: &str = ".udt-part";

/// The partial file for `target` with `--resume`: `.NAME.udt-part` in the same directory,
/// or, when that would exceed the 255-byte name limit, a name made from the BLAKE3 of
/// `NAME`. Writers lock it (`flock`), so two resumable uploads of one file never mix.
pub fn part_path(target: &Path) -> PathBuf {
    part_name(target, None)
}

/// A partial file for `target` that no other transfer uses: `.NAME.TAG.udt-part`, created
/// with `O_EXCL` (without `--resume`, every upload writes its own).
pub fn unique_part_path(target: &Path, tag: u64) -> PathBuf {
    part_name(target, Some(tag))
}

fn part_name(target: &Path, tag: Option<u64>) -> PathBuf {
    let name = target.file_name().map_or(&[][..], |n| n.as_bytes());
    let tag = tag.map(|t| format!(".{t:016x}")).unwrap_or_default();
    let mut part = Vec::with_capacity(name.len() + 12);
    if name.len() + 1 + tag.len() + PART_SUFFIX.len() <= MAX_NAME_BYTES {
        part.push(b'.');
        part.extend_from_slice(name);
    } else {
        part.extend_from_slice(b".long-");
        part.extend_from_slice(blake3::hash(name).to_hex()[..32].as_bytes());
    }
    part.extend_from_slice(tag.as_bytes());
    part.extend_from_slice(PART_SUFFIX.as_bytes());
    target.with_file_name(OsString::from_vec(part))
}

/// What a receiver holds of one file: the prefix length and the hasher that has consumed it.
#[derive(Debug, Clone)]
pub struct Prefix {
    /// Bytes held.
    pub len: u64,
    /// BLAKE3 state after those bytes.
    pub hasher: blake3::Hasher,
    /// The partial file hashed (device, inode): the writer checks it is still the same.
    pub file: (u64, u64),
}

impl Prefix {
    /// The digest of the prefix, as announced in a `Resume` frame.
    pub fn digest(&self) -> Digest {
        *self.hasher.finalize().as_bytes()
    }
}

/// Look at `target`'s partial file: if it is a regular file (not a link) with data, hash up
/// to `size` bytes of it. `None` when there is nothing to resume.
pub fn existing_prefix(target: &Path, size: u64) -> io::Result<Option<Prefix>> {
    let part = part_path(target);
    let meta = match fs::symlink_metadata(&part) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !meta.is_file() || meta.len() == 0 || size == 0 {
        return Ok(None);
    }
    let file = super::paths::open_regular(&part)?;
    let len = meta.len().min(size);
    let hasher = hash_prefix(&file, len)?;
    let meta = file.metadata()?;
    Ok(Some(Prefix {
        len,
        hasher,
        file: (meta.dev(), meta.ino()),
    }))
}

/// BLAKE3 state after the first `len` bytes of `file` (`UnexpectedEof` if it is shorter).
/// Read through a [`DataBuf`]'s page-aligned space, where the kernel's copy runs at full
/// speed.
pub fn hash_prefix(file: &File, len: u64) -> io::Result<blake3::Hasher> {
    let mut hasher = blake3::Hasher::new();
    let mut chunk = DataBuf::new();
    let buf = chunk.space();
    let mut at = 0u64;
    while at < len {
        let want = buf
            .len()
            .min(usize::try_from(len - at).unwrap_or(buf.len()));
        let n = file.read_at(&mut buf[..want], at)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "file shorter than the prefix to hash",
            ));
        }
        hasher.update(&buf[..n]);
        at += n as u64;
    }
    Ok(hasher)
}

/// Create a partial file for `target` that is ours alone: a fresh name, `O_EXCL`, mode 0600.
pub fn create_unique_part(target: &Path) -> io::Result<(PathBuf, File)> {
    let mut tries = 0;
    loop {
        let part = unique_part_path(target, random_tag());
        let opened = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&part);
        match opened {
            Ok(file) => return Ok((part, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < 8 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Rename `from` to `to` unless `to` exists (`AlreadyExists`), atomically:
/// `renameat2(RENAME_NOREPLACE)`, or where the file system lacks it a hard link (which
/// never replaces) and the removal of `from`.
pub fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a path"))
    };
    let (cfrom, cto) = (c(from)?, c(to)?);
    // SAFETY: valid NUL-terminated paths; AT_FDCWD resolves them like rename(2).
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            cfrom.as_ptr(),
            libc::AT_FDCWD,
            cto.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP) => {
            fs::hard_link(from, to)?;
            fs::remove_file(from)
        }
        _ => Err(err),
    }
}

/// 64 unpredictable bits for a partial file's name (`getrandom`, else time and pid).
fn random_tag() -> u64 {
    let mut bytes = [0u8; 8];
    // SAFETY: writes at most 8 bytes into `bytes`.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), libc::GRND_NONBLOCK) };
    if n == 8 {
        return u64::from_le_bytes(bytes);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    now ^ u64::from(std::process::id()).rotate_left(32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_names_stay_within_the_name_limit() {
        assert_eq!(
            part_path(Path::new("/d/file.bin")),
            Path::new("/d/.file.bin.udt-part")
        );
        let long = "x".repeat(250);
        let p = part_path(&Path::new("/d").join(&long));
        assert!(p.file_name().unwrap().len() <= MAX_NAME_BYTES);
        assert!(p.to_string_lossy().ends_with(PART_SUFFIX));
        let u = unique_part_path(&Path::new("/d").join(&long), 7);
        assert!(u.file_name().unwrap().len() <= MAX_NAME_BYTES);
        assert_ne!(u, p);
        assert_eq!(
            unique_part_path(Path::new("/d/f"), 0xab),
            Path::new("/d/.f.00000000000000ab.udt-part")
        );
    }

    #[test]
    fn prefix_digest_matches_the_senders_hash() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("f");
        fs::write(part_path(&target), b"hello wor").unwrap();
        let p = existing_prefix(&target, 5).unwrap().unwrap();
        assert_eq!(p.len, 5);
        assert_eq!(p.digest(), *blake3::hash(b"hello").as_bytes());
        let p = existing_prefix(&target, 100).unwrap().unwrap();
        assert_eq!(p.digest(), *blake3::hash(b"hello wor").as_bytes());
        assert!(existing_prefix(&dir.path().join("g"), 5).unwrap().is_none());
    }
}
