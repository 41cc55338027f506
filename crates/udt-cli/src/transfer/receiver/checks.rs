//! What a receiver checks in a manifest before it touches the disk: that the entries are
//! what it asked for ([`Accept`]), that no file is over the size limit, and that the files
//! fit in the free space.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::Plan;
use crate::transfer::error::{ErrorCode, Result, TransferError};
use crate::transfer::manifest::{Entry, EntryKind};
use crate::transfer::paths::RelPath;

/// Which entries a receiver takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Accept {
    /// Anything (a server receiving an upload: the paths are confined by the destination).
    Any,
    /// A download: only entries under what was requested, which the server names by the
    /// last component of each requested path; directories only with `-r`. A server that
    /// sends anything else (CVE-2019-6111) is refused and reported.
    Requested {
        /// The last component of each requested path.
        names: BTreeSet<RelPath>,
        /// Whether `-r` was given.
        recursive: bool,
    },
}

impl Accept {
    /// What a download of `paths` (with `-r` or not) accepts.
    pub fn requested(paths: &[RelPath], recursive: bool) -> Self {
        let names = paths
            .iter()
            .filter_map(|p| p.names().last().and_then(|n| RelPath::from_name(n).ok()))
            .collect();
        Self::Requested { names, recursive }
    }

    /// Refuse the first entry that was not asked for.
    pub fn check(&self, entries: &[Entry]) -> Result<()> {
        let Self::Requested { names, recursive } = self else {
            return Ok(());
        };
        for entry in entries {
            let path = &entry.path;
            let top = path.names().next().and_then(|n| RelPath::from_name(n).ok());
            let why = if !top.is_some_and(|t| names.contains(&t)) {
                Some("which was not asked for")
            } else if !recursive && entry.kind == EntryKind::Dir {
                Some("a directory, without -r")
            } else if !recursive && path.parent().is_some() {
                Some("inside a directory, without -r")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(TransferError::new(
                    ErrorCode::PathRefused,
                    format!(
                        "the server sent {:?}, {why}: refused, nothing was written",
                        path.display()
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Refuse a file larger than `max` (a server's `--max-file-size`).
pub(super) fn sizes(entries: &[Entry], max: Option<u64>) -> Result<()> {
    let Some(max) = max else {
        return Ok(());
    };
    match entries.iter().find(|e| e.size > max) {
        Some(e) => Err(TransferError::new(
            ErrorCode::DiskFull,
            format!(
                "{}: {} bytes, over the server's limit of {max} bytes per file (--max-file-size)",
                e.path.display(),
                e.size
            ),
        )),
        None => Ok(()),
    }
}

/// Refuse a transfer whose files (less what is already there to resume) do not fit in the
/// space available to us on `dir`'s file system, before any data is written.
pub(super) fn free_space(dir: &Path, entries: &[Entry], plan: &Plan) -> Result<()> {
    let total = entries
        .iter()
        .fold(0u64, |sum, e| sum.saturating_add(e.size));
    let held: u64 = plan.values().map(|p| p.len).sum();
    let needed = total.saturating_sub(held);
    let Some(free) = available_bytes(dir) else {
        return Ok(()); // unknown (an exotic file system): the writes will tell
    };
    if needed > free {
        return Err(TransferError::new(
            ErrorCode::DiskFull,
            format!("{needed} bytes to write but only {free} bytes free at the destination"),
        ));
    }
    Ok(())
}

/// Bytes an unprivileged writer may still use on `dir`'s file system (`statvfs`).
fn available_bytes(dir: &Path) -> Option<u64> {
    let path = CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is plain data; zeroed is a valid value for it.
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid NUL-terminated path and a valid out pointer.
    if unsafe { libc::statvfs(path.as_ptr(), &mut stats) } != 0 {
        return None;
    }
    Some(stats.f_bavail.saturating_mul(stats.f_frsize))
}
