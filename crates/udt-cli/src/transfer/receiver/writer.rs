//! The write-behind thread: writes file data, and renames each file into place once the
//! network side (which hashes the data as it arrives) found its digest right.
//!
//! Files are not `fsync`ed: like `cp` and `scp`, a completed transfer is as durable as the
//! page cache; the digest check protects against the network, not against power loss.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender};

use super::{Placement, ReceiveOptions};
use crate::transfer::error::{ErrorCode, Result, TransferError};
use crate::transfer::manifest::Entry;
use crate::transfer::protocol::DataBuf;
use crate::transfer::resume::part_path;
use crate::transfer::Observer;

/// Work for the writer, in order.
pub(super) enum Job {
    /// Open entry `index`'s partial file (continuing its first `resume` bytes if given).
    Start { index: usize, resume: Option<u64> },
    /// The next bytes of the open file.
    Data(DataBuf),
    /// The open file is complete; whether its digest matched the sender's.
    End { intact: bool },
}

/// The writer's state.
pub(super) struct Writer<'a> {
    placement: &'a Placement,
    entries: &'a [Entry],
    opts: ReceiveOptions,
    obs: &'a dyn Observer,
}

/// The file being written.
struct OpenFile {
    index: usize,
    target: PathBuf,
    part: PathBuf,
    file: File,
}

impl<'a> Writer<'a> {
    pub(super) fn new(
        placement: &'a Placement,
        entries: &'a [Entry],
        opts: ReceiveOptions,
        obs: &'a dyn Observer,
    ) -> Self {
        Self {
            placement,
            entries,
            opts,
            obs,
        }
    }

    /// Process jobs until the channel closes or something fails; a file left open is then
    /// abandoned (its partial file kept only with `--resume`).
    pub(super) fn run(self, jobs: Receiver<Job>, free: Sender<DataBuf>) -> Result<()> {
        let mut open = None;
        let result = self.process(&jobs, &free, &mut open);
        if let Some(file) = open {
            self.abandon(file);
        }
        result
    }

    fn process(
        &self,
        jobs: &Receiver<Job>,
        free: &Sender<DataBuf>,
        open: &mut Option<OpenFile>,
    ) -> Result<()> {
        for job in jobs {
            match job {
                Job::Start { index, resume } => *open = Some(self.open(index, resume)?),
                Job::Data(buf) => {
                    let Some(f) = open.as_mut() else {
                        return Err(TransferError::protocol("data outside a file"));
                    };
                    f.file
                        .write_all(buf.payload())
                        .map_err(|e| TransferError::io(self.shown(f.index), &e))?;
                    let _ = free.send(buf); // the network side may have stopped
                }
                Job::End { intact } => {
                    let Some(f) = open.take() else {
                        return Err(TransferError::protocol("file end outside a file"));
                    };
                    self.finish(f, intact)?;
                }
            }
        }
        Ok(())
    }

    fn shown(&self, index: usize) -> String {
        self.entries
            .get(index)
            .map_or_else(String::new, |e| e.path.display())
    }

    fn open(&self, index: usize, resume: Option<u64>) -> Result<OpenFile> {
        let entry = &self.entries[index]; // checked by the network side
        let target = self.placement.target(&entry.path);
        let part = part_path(&target);
        let io_err = |e: &std::io::Error| TransferError::io(entry.path.display(), e);
        let mut options = OpenOptions::new();
        options
            .write(true)
            .create(true)
            .truncate(resume.is_none())
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW);
        let mut file = options.open(&part).map_err(|e| io_err(&e))?;
        if let Some(len) = resume {
            file.set_len(len).map_err(|e| io_err(&e))?;
            file.seek(SeekFrom::Start(len)).map_err(|e| io_err(&e))?;
        }
        Ok(OpenFile {
            index,
            target,
            part,
            file,
        })
    }

    /// Check the digest verdict, apply mode and mtime, rename into place.
    fn finish(&self, f: OpenFile, intact: bool) -> Result<()> {
        let entry = &self.entries[f.index];
        let shown = entry.path.display();
        if !intact {
            let _ = fs::remove_file(&f.part);
            return Err(TransferError::new(
                ErrorCode::DigestMismatch,
                format!("{shown}: BLAKE3 digest mismatch, data corrupted in transit (not kept)"),
            ));
        }
        let io_err = |e: &std::io::Error| TransferError::io(&shown, e);
        let mode = entry.mode & 0o777;
        f.file
            .set_permissions(Permissions::from_mode(mode))
            .map_err(|e| io_err(&e))?;
        if let Some(t) = entry.mtime.to_system_time() {
            let _ = f.file.set_modified(t); // best effort, as cp -p
        }
        if !self.opts.force && fs::symlink_metadata(&f.target).is_ok() {
            return Err(TransferError::new(
                ErrorCode::Exists,
                format!("{shown}: appeared during the transfer (use --force to overwrite)"),
            ));
        }
        fs::rename(&f.part, &f.target).map_err(|e| io_err(&e))?;
        self.obs.file_done(&entry.path, entry.size);
        Ok(())
    }

    /// Drop an unfinished file: keep it for `--resume`, else remove it if the partial name
    /// still refers to our file (another transfer may have replaced it).
    fn abandon(&self, f: OpenFile) {
        if self.opts.resume {
            return;
        }
        let ours = f.file.metadata().ok().map(|m| (m.dev(), m.ino()));
        let there = fs::symlink_metadata(&f.part)
            .ok()
            .map(|m| (m.dev(), m.ino()));
        if ours.is_some() && ours == there {
            let _ = fs::remove_file(&f.part);
        }
    }
}
