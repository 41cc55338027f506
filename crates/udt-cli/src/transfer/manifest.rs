//! The manifest: what the sender will send (relative path, kind, size, mode, mtime), built by
//! walking local sources, and read back by the receiver within bounds.
//!
//! Entry paths start with each source's own name (`cp -r photos host:` sends
//! `photos/...`); the receiver decides where that name lands. Directories come before their
//! contents; names are sorted so that runs are reproducible. Symbolic links inside a walked
//! tree are skipped (following them could copy things far outside what was named).

use std::collections::BTreeSet;
use std::fs::{self, Metadata};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::error::{ErrorCode, Result, TransferError};
use super::paths::RelPath;
use super::protocol::{Frame, FrameReader};

/// Most entries one manifest may hold (the [`MANIFEST_BUDGET`] is usually reached first).
pub const MAX_ENTRIES: u64 = 1 << 22;

/// Memory one connection may spend on its manifest and the per-entry state derived from it
/// (entries, names, the duplicate check, resumable prefixes), whatever the peer announces:
/// about 600,000 entries with short names.
pub const MANIFEST_BUDGET: usize = 64 << 20;

/// What one entry costs the budget: the entry, twice over for the vector's growth, plus its
/// name and an index for the duplicate check.
fn entry_cost(entry: &Entry) -> usize {
    2 * size_of::<Entry>() + entry.path.as_bytes().len() + 4
}

/// The rest of a connection's [`MANIFEST_BUDGET`].
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    left: usize,
}

impl Budget {
    /// A budget of `bytes`.
    pub fn new(bytes: usize) -> Self {
        Self { left: bytes }
    }

    /// Spend `bytes`, or fail saying what did not fit.
    pub fn charge(&mut self, bytes: usize, what: &str) -> Result<()> {
        match self.left.checked_sub(bytes) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(TransferError::new(
                ErrorCode::Unsupported,
                format!(
                    "{what}: over the {} MiB a transfer may use for its list of files",
                    MANIFEST_BUDGET >> 20
                ),
            )),
        }
    }
}

impl Default for Budget {
    fn default() -> Self {
        Self::new(MANIFEST_BUDGET)
    }
}

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file; its data follows in the transfer.
    File,
    /// A directory, created by the receiver.
    Dir,
}

/// Modification time: seconds and nanoseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mtime {
    /// Seconds (negative before 1970).
    pub secs: i64,
    /// Nanoseconds, 0..1e9.
    pub nanos: u32,
}

impl Mtime {
    /// The time as a `SystemTime`, if representable.
    pub fn to_system_time(self) -> Option<SystemTime> {
        let nanos = Duration::from_nanos(u64::from(self.nanos));
        if self.secs >= 0 {
            UNIX_EPOCH.checked_add(Duration::from_secs(self.secs as u64) + nanos)
        } else {
            UNIX_EPOCH
                .checked_sub(Duration::from_secs(self.secs.unsigned_abs()))?
                .checked_add(nanos)
        }
    }
}

/// One file or directory to transfer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Where it goes, relative to the destination.
    pub path: RelPath,
    /// File or directory.
    pub kind: EntryKind,
    /// Bytes (0 for directories).
    pub size: u64,
    /// Unix permission bits (the receiver applies `mode & 0o777`).
    pub mode: u32,
    /// Modification time, applied by the receiver to files.
    pub mtime: Mtime,
}

impl Entry {
    fn of(path: RelPath, meta: &Metadata) -> Self {
        Self {
            path,
            kind: if meta.is_dir() {
                EntryKind::Dir
            } else {
                EntryKind::File
            },
            size: if meta.is_dir() { 0 } else { meta.len() },
            mode: meta.permissions().mode(),
            mtime: Mtime {
                secs: meta.mtime(),
                nanos: u32::try_from(meta.mtime_nsec())
                    .unwrap_or(0)
                    .min(999_999_999),
            },
        }
    }
}

/// The sender's manifest: entries plus where each file's data comes from.
#[derive(Debug, Default)]
pub struct Manifest {
    /// What the receiver is told.
    pub entries: Vec<Entry>,
    /// For each entry, the local path it was found at.
    pub sources: Vec<PathBuf>,
    /// The top-level names so far (two sources may not share one).
    tops: BTreeSet<RelPath>,
    /// What is left of [`MANIFEST_BUDGET`].
    budget: Budget,
}

impl Manifest {
    /// Total bytes of file data.
    pub fn total_bytes(&self) -> u64 {
        self.entries.iter().map(|e| e.size).sum()
    }

    /// Add `source` under the name `name`, walking directories when `recursive`.
    pub fn add(&mut self, source: &Path, name: RelPath, recursive: bool) -> Result<()> {
        let meta = fs::metadata(source).map_err(|e| TransferError::io(name.display(), &e))?;
        if !self.tops.insert(name.clone()) {
            return Err(TransferError::new(
                ErrorCode::Unsupported,
                format!(
                    "{}: named twice (sources must have different names)",
                    name.display()
                ),
            ));
        }
        if meta.is_dir() && !recursive {
            return Err(TransferError::new(
                ErrorCode::IsDirectory,
                format!("{}: is a directory (use -r)", name.display()),
            ));
        }
        if !meta.is_dir() && !meta.is_file() {
            return Err(TransferError::new(
                ErrorCode::PathRefused,
                format!("{}: not a regular file or directory", name.display()),
            ));
        }
        self.push(source.to_path_buf(), Entry::of(name.clone(), &meta))?;
        if meta.is_dir() {
            self.walk(source, &name)?;
        }
        Ok(())
    }

    /// Depth-first walk of `dir` (its own entry already added).
    fn walk(&mut self, dir: &Path, name: &RelPath) -> Result<()> {
        let mut children: Vec<_> = fs::read_dir(dir)
            .map_err(|e| TransferError::io(name.display(), &e))?
            .collect::<std::io::Result<_>>()
            .map_err(|e| TransferError::io(name.display(), &e))?;
        children.sort_by_key(|c| c.file_name());
        for child in children {
            let child_name = name.join(&child.file_name())?;
            let meta = child
                .metadata()
                .map_err(|e| TransferError::io(child_name.display(), &e))?;
            if !meta.is_dir() && !meta.is_file() {
                continue; // symbolic links, devices, sockets: not copied
            }
            self.push(child.path(), Entry::of(child_name.clone(), &meta))?;
            if meta.is_dir() {
                self.walk(&child.path(), &child_name)?;
            }
        }
        Ok(())
    }

    fn push(&mut self, source: PathBuf, entry: Entry) -> Result<()> {
        if self.entries.len() as u64 >= MAX_ENTRIES {
            return Err(TransferError::new(
                ErrorCode::Unsupported,
                format!("more than {MAX_ENTRIES} files in one transfer"),
            ));
        }
        let cost = entry_cost(&entry) + 2 * size_of::<PathBuf>() + source.as_os_str().len();
        self.budget.charge(cost, &entry.path.display())?;
        self.entries.push(entry);
        self.sources.push(source);
        Ok(())
    }
}

/// Read the sender's manifest: entries up to `ManifestEnd`, within [`MAX_ENTRIES`] and
/// `budget`, refusing duplicate paths.
pub fn read_manifest<R: Read>(
    reader: &mut FrameReader<R>,
    budget: &mut Budget,
) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    loop {
        match reader.next_frame()? {
            Frame::Entry(e) => {
                if entries.len() as u64 >= MAX_ENTRIES {
                    return Err(TransferError::protocol("manifest too long"));
                }
                if e.kind == EntryKind::Dir && e.size != 0 {
                    return Err(TransferError::protocol("directory entry with a size"));
                }
                budget.charge(entry_cost(&e), "the manifest")?;
                entries.push(e);
            }
            Frame::ManifestEnd { count } if count == entries.len() as u64 => {
                refuse_duplicates(&entries)?;
                return Ok(entries);
            }
            Frame::ManifestEnd { count } => {
                return Err(TransferError::protocol(format!(
                    "manifest announced {count} entries but sent {}",
                    entries.len()
                )))
            }
            Frame::Error { code, message } => {
                return Err(TransferError {
                    code,
                    message,
                    remote: true,
                })
            }
            other => {
                return Err(TransferError::protocol(format!(
                    "unexpected frame in manifest: {other:?}"
                )))
            }
        }
    }
}

/// Two entries with one path would have the second replace the first (and its digest check
/// vouch for the wrong file): refused. Sorting indices costs 4 bytes an entry, charged.
fn refuse_duplicates(entries: &[Entry]) -> Result<()> {
    let mut order: Vec<u32> = (0..entries.len() as u32).collect(); // fits: MAX_ENTRIES
    order.sort_unstable_by(|&a, &b| entries[a as usize].path.cmp(&entries[b as usize].path));
    for pair in order.windows(2) {
        let path = &entries[pair[0] as usize].path;
        if *path == entries[pair[1] as usize].path {
            return Err(TransferError::protocol(format!(
                "{}: listed twice in the manifest",
                path.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_lists_dirs_before_contents_and_skips_links() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("top");
        fs::create_dir_all(top.join("b/c")).unwrap();
        fs::write(top.join("a.txt"), b"hello").unwrap();
        fs::write(top.join("b/c/d"), b"").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", top.join("link")).unwrap();
        let mut m = Manifest::default();
        m.add(&top, RelPath::parse(b"top").unwrap(), true).unwrap();
        let names: Vec<String> = m.entries.iter().map(|e| e.path.display()).collect();
        assert_eq!(names, ["top", "top/a.txt", "top/b", "top/b/c", "top/b/c/d"]);
        assert_eq!(m.total_bytes(), 5);
        let mut m = Manifest::default();
        let err = m
            .add(&top, RelPath::parse(b"top").unwrap(), false)
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::IsDirectory);
    }

    #[test]
    fn mtimes_convert_both_sides_of_the_epoch() {
        let t = Mtime { secs: -1, nanos: 5 }.to_system_time().unwrap();
        assert!(t < UNIX_EPOCH);
        let t = Mtime { secs: 10, nanos: 0 }.to_system_time().unwrap();
        assert_eq!(t, UNIX_EPOCH + Duration::from_secs(10));
        // Extremes give None or a time, never a panic.
        let _ = Mtime {
            secs: i64::MIN,
            nanos: 999_999_999,
        }
        .to_system_time();
        let _ = Mtime {
            secs: i64::MAX,
            nanos: 999_999_999,
        }
        .to_system_time();
    }
}
