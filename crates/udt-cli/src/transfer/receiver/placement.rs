//! Where received entries land, scp-style: into `dest` when it is a directory, else as
//! `dest` itself (which then names the one top-level entry).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::Replace;
use crate::transfer::error::{ErrorCode, Result, TransferError};
use crate::transfer::manifest::{Entry, EntryKind};
use crate::transfer::paths::{create_dirs, RelPath};

/// The destination of a transfer, decided once from the manifest.
#[derive(Debug, Clone)]
pub struct Placement {
    /// Every entry lands under this existing directory.
    base: PathBuf,
    /// When set, the manifest's single top-level name is replaced by this one.
    rename_top: Option<RelPath>,
}

impl Placement {
    /// `dest` is an existing directory: entries go inside it. Otherwise the manifest must
    /// have exactly one top-level name, which becomes `dest` (whose parent must exist).
    pub fn decide(dest: &Path, entries: &[Entry]) -> Result<Self> {
        let shown = dest.display();
        match fs::metadata(dest) {
            Ok(meta) if meta.is_dir() => {
                return Ok(Self {
                    base: dest.to_path_buf(),
                    rename_top: None,
                })
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(TransferError::io(&shown, &e)),
        }
        let mut tops = entries.iter().map(|e| e.path.names().next());
        let first = tops.next().flatten();
        if first.is_some() && !tops.all(|t| t == first) {
            return Err(TransferError::new(
                ErrorCode::NotDirectory,
                format!("{shown}: not a directory (several sources need one)"),
            ));
        }
        let name = dest.file_name().ok_or_else(|| {
            TransferError::new(ErrorCode::PathRefused, format!("{shown}: not a file name"))
        })?;
        let base = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !base.is_dir() {
            return Err(TransferError::new(
                ErrorCode::NotFound,
                format!("{}: no such directory", base.display()),
            ));
        }
        Ok(Self {
            base,
            rename_top: Some(RelPath::from_name(name)?),
        })
    }

    /// The entry's path relative to the base.
    fn relative(&self, path: &RelPath) -> RelPath {
        match (&self.rename_top, path.strip_first()) {
            (Some(top), Some(rest)) => top.join_rel(&rest),
            (Some(top), None) => top.clone(),
            (None, _) => path.clone(),
        }
    }

    /// Where `path` lands.
    pub fn target(&self, path: &RelPath) -> PathBuf {
        self.base.join(self.relative(path).as_path())
    }

    /// The directory every entry lands under.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Create `entry`'s directories (taken from `dirs`) and refuse an existing file unless
    /// `replace` allows it, and anything but a regular file or link in the way; returns where
    /// it lands.
    pub fn prepare(&self, entry: &Entry, replace: Replace, dirs: &mut usize) -> Result<PathBuf> {
        let rel = self.relative(&entry.path);
        if entry.kind == EntryKind::Dir {
            return create_dirs(&self.base, &rel, dirs);
        }
        if let Some(parent) = rel.parent() {
            create_dirs(&self.base, &parent, dirs)?;
        }
        let target = self.base.join(rel.as_path());
        let shown = entry.path.display();
        let meta = match fs::symlink_metadata(&target) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(target),
            Err(e) => return Err(TransferError::io(shown, &e)),
        };
        let kind = meta.file_type();
        if kind.is_dir() {
            return Err(TransferError::new(
                ErrorCode::IsDirectory,
                format!("{shown}: a directory is in the way"),
            ));
        }
        if !kind.is_file() && !kind.is_symlink() {
            return Err(TransferError::new(
                ErrorCode::PathRefused,
                format!("{shown}: a special file (FIFO, device or socket) is in the way"),
            ));
        }
        match replace {
            Replace::Allowed => Ok(target),
            Replace::Never => Err(exists(&shown)),
            Replace::Refused => Err(replace_refused(&shown)),
        }
    }
}

/// An existing file, replacing not asked for.
pub(super) fn exists(shown: &str) -> TransferError {
    TransferError::new(
        ErrorCode::Exists,
        format!("{shown}: already exists (use --force to overwrite)"),
    )
}

/// An existing file, replacing asked for but not allowed by the server.
pub(super) fn replace_refused(shown: &str) -> TransferError {
    TransferError::new(
        ErrorCode::Exists,
        format!(
            "{shown}: already exists, and this server does not replace files \
             (it would need `udt serve --allow-overwrite`)"
        ),
    )
}
