//! Paths from the network, made safe: [`RelPath`] (a validated relative path) and [`Root`]
//! (resolution under a served directory that never leads outside it).
//!
//! A peer is assumed hostile. Every path it sends is bytes that must parse as a [`RelPath`]:
//! 1..=[`MAX_PATH_BYTES`] bytes, `/`-separated components of 1..=[`MAX_NAME_BYTES`] bytes, no
//! NUL, no `.` or `..`, no leading `/`. That alone keeps a joined path lexically inside its
//! base; symbolic links are the remaining way out, so:
//! - reading resolves the path (`canonicalize`) and checks it is still under the root, then
//!   opens the resolved path with `O_NOFOLLOW` (a link swapped in afterwards fails to open);
//! - writing creates directories one component at a time, refusing any existing component
//!   that is a symbolic link leading outside the root, and creates files with `O_NOFOLLOW`.
//!   The final rename replaces a link rather than following it.

use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::error::{ErrorCode, Result, TransferError};

/// Longest path accepted from the wire (Linux PATH_MAX).
pub const MAX_PATH_BYTES: usize = 4096;

/// Longest single component accepted from the wire (Linux NAME_MAX).
pub const MAX_NAME_BYTES: usize = 255;

/// A relative path of plain components, checked as described in the module doc.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath(Vec<u8>);

impl RelPath {
    /// Validate bytes from the wire (or from a local walk).
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let refuse = |why: &str| {
            Err(TransferError::new(
                ErrorCode::PathRefused,
                format!("{}: {why}", String::from_utf8_lossy(bytes)),
            ))
        };
        if bytes.is_empty() || bytes.len() > MAX_PATH_BYTES {
            return refuse("path must be 1..=4096 bytes");
        }
        if bytes.contains(&0) {
            return refuse("path contains a NUL byte");
        }
        if bytes[0] == b'/' {
            return refuse("absolute paths are refused");
        }
        for name in bytes.split(|&b| b == b'/') {
            match name {
                b"" => return refuse("empty path component"),
                b"." | b".." => return refuse("'.' and '..' are refused"),
                n if n.len() > MAX_NAME_BYTES => return refuse("component longer than 255 bytes"),
                _ => {}
            }
        }
        Ok(Self(bytes.to_vec()))
    }

    /// A request path as a user typed it: `""`, `"."` and `"./"` mean the base itself
    /// (`None`); trailing and repeated slashes and `./` components are dropped; the rest must
    /// pass [`Self::parse`].
    pub fn parse_request(bytes: &[u8]) -> Result<Option<Self>> {
        let names: Vec<&[u8]> = bytes
            .split(|&b| b == b'/')
            .filter(|n| !n.is_empty() && *n != b".")
            .collect();
        if bytes.first() == Some(&b'/') {
            return Self::parse(bytes).map(Some); // refused with the usual message
        }
        if names.is_empty() {
            return Ok(None);
        }
        Self::parse(&names.join(&b'/')).map(Some)
    }

    /// A path from one local file name (a walk's entry or a source's base name).
    pub fn from_name(name: &OsStr) -> Result<Self> {
        Self::parse(name.as_bytes())
    }

    /// `self/name`.
    pub fn join(&self, name: &OsStr) -> Result<Self> {
        let mut bytes = self.0.clone();
        bytes.push(b'/');
        bytes.extend_from_slice(name.as_bytes());
        Self::parse(&bytes)
    }

    /// The path without its last component (`None` for a one-component path).
    pub fn parent(&self) -> Option<Self> {
        let cut = self.0.iter().rposition(|&b| b == b'/')?;
        Some(Self(self.0[..cut].to_vec()))
    }

    /// `self/rest`.
    pub fn join_rel(&self, rest: &Self) -> Self {
        let mut bytes = self.0.clone();
        bytes.push(b'/');
        bytes.extend_from_slice(&rest.0);
        // Two valid paths joined stay valid, except for the total length.
        Self(bytes)
    }

    /// The bytes, as sent on the wire.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// As a relative filesystem path.
    pub fn as_path(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.0))
    }

    /// The components.
    pub fn names(&self) -> impl Iterator<Item = &OsStr> {
        self.0.split(|&b| b == b'/').map(OsStr::from_bytes)
    }

    /// The path without its first component (`None` for a one-component path).
    pub fn strip_first(&self) -> Option<Self> {
        let cut = self.0.iter().position(|&b| b == b'/')?;
        Some(Self(self.0[cut + 1..].to_vec()))
    }

    /// For messages and `--json` (lossy for non-UTF-8 names).
    pub fn display(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }
}

/// A directory that paths from the network are confined to.
#[derive(Debug, Clone)]
pub struct Root {
    dir: PathBuf,
}

impl Root {
    /// `dir` must exist; it is canonicalized once here.
    pub fn new(dir: &Path) -> io::Result<Self> {
        let dir = dir.canonicalize()?;
        if !dir.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", dir.display()),
            ));
        }
        Ok(Self { dir })
    }

    /// The canonical root directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Resolve `rel` (or the root for `None`) for reading: the canonical path, which must
    /// exist and lie under the root.
    pub fn resolve_existing(&self, rel: Option<&RelPath>) -> Result<PathBuf> {
        let Some(rel) = rel else {
            return Ok(self.dir.clone());
        };
        let joined = self.dir.join(rel.as_path());
        let resolved = joined
            .canonicalize()
            .map_err(|e| TransferError::io(rel.display(), &e))?;
        self.check_inside(&resolved, rel)?;
        Ok(resolved)
    }

    /// Resolve `rel` (or the root) as a destination: the path under the root with every
    /// existing directory component checked; the last component may be missing.
    pub fn resolve_destination(&self, rel: Option<&RelPath>) -> Result<PathBuf> {
        let Some(rel) = rel else {
            return Ok(self.dir.clone());
        };
        let mut path = self.dir.clone();
        let names: Vec<&OsStr> = rel.names().collect();
        for (i, name) in names.iter().enumerate() {
            path.push(name);
            let last = i + 1 == names.len();
            match fs::symlink_metadata(&path) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    let target = path
                        .canonicalize()
                        .map_err(|e| TransferError::io(rel.display(), &e))?;
                    self.check_inside(&target, rel)?;
                    path = target;
                }
                Ok(meta) if !last && !meta.is_dir() => {
                    return Err(TransferError::new(
                        ErrorCode::NotDirectory,
                        format!("{}: not a directory", rel.display()),
                    ))
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound && last => {}
                Err(e) => return Err(TransferError::io(rel.display(), &e)),
            }
        }
        Ok(path)
    }

    fn check_inside(&self, resolved: &Path, rel: &RelPath) -> Result<()> {
        if resolved.starts_with(&self.dir) {
            Ok(())
        } else {
            Err(TransferError::new(
                ErrorCode::PathRefused,
                format!("{}: leads outside the served directory", rel.display()),
            ))
        }
    }
}

/// Most directories one connection may create (a manifest of deep paths would otherwise
/// create thousands per entry).
#[cfg(not(test))]
pub const MAX_DIRS_CREATED: usize = 100_000;

/// Small in unit tests, so that hitting it is quick.
#[cfg(test)]
pub const MAX_DIRS_CREATED: usize = 1_000;

/// Create `base/rel`'s directories one by one (like `mkdir -p`), refusing symbolic links
/// and non-directories on the way; `base` itself must exist. Each directory created is taken
/// from `allowance`; none left is an error. Returns the directory path.
pub fn create_dirs(base: &Path, rel: &RelPath, allowance: &mut usize) -> Result<PathBuf> {
    let mut path = base.to_path_buf();
    for name in rel.names() {
        path.push(name);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(TransferError::new(
                    ErrorCode::PathRefused,
                    format!("{}: is a symbolic link", rel.display()),
                ))
            }
            Ok(_) => {
                return Err(TransferError::new(
                    ErrorCode::NotDirectory,
                    format!("{}: exists and is not a directory", rel.display()),
                ))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(TransferError::io(rel.display(), &e)),
        }
        let Some(left) = allowance.checked_sub(1) else {
            return Err(TransferError::new(
                ErrorCode::Unsupported,
                format!(
                    "{}: more than {MAX_DIRS_CREATED} directories in one transfer",
                    rel.display()
                ),
            ));
        };
        *allowance = left;
        match fs::create_dir(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => {}
            Err(e) => return Err(TransferError::io(rel.display(), &e)),
        }
    }
    Ok(path)
}

/// Open a file for reading without following a final symbolic link, and without blocking
/// on a FIFO or device swapped in after a check (`O_NONBLOCK`); the caller checks the kind
/// (or uses [`open_regular`]).
pub fn open_nofollow(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// [`open_nofollow`], refusing anything but a regular file (FIFOs, devices, sockets,
/// directories) before a byte is read. `O_NONBLOCK` has no effect on regular files.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = open_nofollow(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// The error for a special file where a regular one was expected.
pub fn not_regular() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a regular file")
}

/// The process's file-creation mask, read once (from `/proc/self/status`, else by setting
/// and restoring it, which `udt serve` and `udt cp` do before starting other threads).
pub fn umask() -> u32 {
    static MASK: OnceLock<u32> = OnceLock::new();
    *MASK.get_or_init(|| {
        let from_proc = fs::read_to_string("/proc/self/status").ok().and_then(|s| {
            let line = s.lines().find_map(|l| l.strip_prefix("Umask:"))?;
            u32::from_str_radix(line.trim(), 8).ok()
        });
        from_proc.unwrap_or_else(|| {
            // SAFETY: umask cannot fail; the old mask is put back at once.
            unsafe {
                let old = libc::umask(0o077);
                libc::umask(old);
                old
            }
        })
    })
}

#[cfg(test)]
mod tests;
