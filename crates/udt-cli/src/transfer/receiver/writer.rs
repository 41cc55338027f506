//! The write-behind thread: hashes and writes file data, and renames each file into place
//! once its digest matches the sender's.
//!
//! Hashing here rather than on the network side leaves the thread that drains the UDT
//! receive buffer nothing but copies, so a slow hash can never hold the window shut. At
//! 4 Gbit/s on a shaped veth path it made no measurable difference either way
//! (`SHAPE=4gbit MODES=plain scripts/bench-cp.sh`, three alternating rounds): BLAKE3 with
//! AVX-512 is about 13% of the receiving process there.
//!
//! Files are not `fsync`ed: like `cp` and `scp`, a completed transfer is as durable as the
//! page cache; the digest check protects against the network, not against power loss.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender};
use std::thread;
use std::time::{Duration, Instant};

use super::placement::{exists, replace_refused};
use super::{Placement, ReceiveOptions, Replace};
use crate::transfer::error::{ErrorCode, Result, TransferError};
use crate::transfer::manifest::Entry;
use crate::transfer::paths::{not_regular, umask};
use crate::transfer::protocol::{DataBuf, Digest};
use crate::transfer::resume::{create_unique_part, part_path, rename_noreplace, Prefix};
use crate::transfer::Observer;

/// Work for the writer, in order.
pub(super) enum Job {
    /// Open entry `index`'s partial file (continuing the prefix `resume` if given).
    Start {
        index: usize,
        resume: Option<Box<Prefix>>,
    },
    /// The next bytes of the open file.
    Data(DataBuf),
    /// The open file is complete; the sender's digest of it.
    End { digest: Digest },
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
    /// BLAKE3 of the file's bytes so far (a resumed prefix included).
    hasher: blake3::Hasher,
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
                    f.hasher.update(buf.payload());
                    f.file
                        .write_all(buf.payload())
                        .map_err(|e| TransferError::io(self.shown(f.index), &e))?;
                    let _ = free.send(buf); // the network side may have stopped
                }
                Job::End { digest } => {
                    let Some(f) = open.take() else {
                        return Err(TransferError::protocol("file end outside a file"));
                    };
                    let intact = f.hasher.finalize().as_bytes() == &digest;
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

    fn open(&self, index: usize, resume: Option<Box<Prefix>>) -> Result<OpenFile> {
        let entry = &self.entries[index]; // checked by the network side
        let target = self.placement.target(&entry.path);
        let io_err = |e: &io::Error| TransferError::io(entry.path.display(), e);
        if !self.opts.resume {
            let (part, file) = create_unique_part(&target).map_err(|e| io_err(&e))?;
            return Ok(OpenFile {
                index,
                target,
                part,
                file,
                hasher: blake3::Hasher::new(),
            });
        }
        let part = part_path(&target);
        let file = open_locked_part(&part).map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock => TransferError::new(
                ErrorCode::Exists,
                format!("{}: another transfer is writing it", entry.path.display()),
            ),
            _ => io_err(&e),
        })?;
        let meta = file.metadata().map_err(|e| io_err(&e))?;
        let (len, hasher) = match resume {
            Some(prefix) if prefix.file == (meta.dev(), meta.ino()) && meta.len() >= prefix.len => {
                (prefix.len, prefix.hasher)
            }
            Some(_) => {
                return Err(TransferError::new(
                    ErrorCode::Io,
                    format!(
                        "{}: the partial file changed meanwhile",
                        entry.path.display()
                    ),
                ))
            }
            None => (0, blake3::Hasher::new()),
        };
        file.set_len(len).map_err(|e| io_err(&e))?;
        let mut file = file;
        file.seek(SeekFrom::Start(len)).map_err(|e| io_err(&e))?;
        Ok(OpenFile {
            index,
            target,
            part,
            file,
            hasher,
        })
    }

    /// Check the digest verdict, apply mode (within the umask) and mtime, and move the file
    /// into place without replacing one that appeared meanwhile unless replacing is allowed.
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
        let io_err = |e: &io::Error| TransferError::io(&shown, e);
        let mode = entry.mode & 0o777 & !umask();
        f.file
            .set_permissions(Permissions::from_mode(mode))
            .map_err(|e| io_err(&e))?;
        if let Some(t) = entry.mtime.to_system_time() {
            let _ = f.file.set_modified(t); // best effort, as cp -p
        }
        let placed = match self.opts.replace {
            Replace::Allowed => fs::rename(&f.part, &f.target),
            Replace::Never | Replace::Refused => rename_noreplace(&f.part, &f.target),
        };
        match placed {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let _ = fs::remove_file(&f.part);
                let err = match self.opts.replace {
                    Replace::Refused => replace_refused(&shown),
                    _ => exists(&shown),
                };
                return Err(TransferError {
                    message: format!("{} (it appeared during the transfer)", err.message),
                    ..err
                });
            }
            Err(e) => return Err(io_err(&e)),
        }
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

/// How long a resumed transfer waits for the previous writer of its partial file to let go
/// (a client that was interrupted and run again at once: its old connection on the server
/// ends when the server notices, within about a second when the kernel reports the old
/// client's port closed).
const LOCK_WAIT: Duration = Duration::from_secs(15);

/// Open (or create) the resumable partial file `part` and lock it for this transfer alone
/// (`WouldBlock` if another holds it for longer than [`LOCK_WAIT`]). Never follows a link or blocks on a FIFO, refuses
/// anything but a regular file, and makes it 0600 again while it is incomplete.
fn open_locked_part(part: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(part)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    let waiting_since = Instant::now();
    // SAFETY: a valid open descriptor.
    while unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::WouldBlock || waiting_since.elapsed() > LOCK_WAIT {
            return Err(err);
        }
        thread::sleep(Duration::from_millis(50));
    }
    file.set_permissions(Permissions::from_mode(0o600))?;
    Ok(file)
}
