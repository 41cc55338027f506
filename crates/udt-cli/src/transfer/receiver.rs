//! The receiving role: read the manifest (within a memory budget, no duplicates), check it
//! (only what was asked for, sizes, free space), decide where every entry lands and refuse
//! what must not happen (replacing a file that may not be replaced, a path through a
//! symbolic link, a special file), offer resumable prefixes, then take the files.
//!
//! Disk and network overlap: this thread reads `Data` frames into a pool of buffers, and a
//! write-behind thread (`writer`) hashes each one and writes it into the file's partial
//! file and, if the digest matches at `FileEnd`, renames the file into place. This thread
//! does nothing but drain the connection (see `writer` for why the hashing moved). A failure on either side
//! (a full disk, a mismatched digest, a broken connection) stops both; the peer is told in
//! an `Error` frame, and the partial file is removed unless `--resume` was asked.

mod checks;
mod placement;
#[cfg(test)]
mod tests;
mod writer;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc;
use std::thread;

use super::error::{ErrorCode, Result, TransferError};
use super::manifest::{read_manifest, Budget, Entry, EntryKind};
use super::paths::MAX_DIRS_CREATED;
use super::protocol::{DataBuf, Frame, Incoming};
use super::resume::{existing_prefix, Prefix};
use super::{unexpected, Link, Observer, Summary};
pub use checks::Accept;
pub use placement::Placement;
use writer::{Job, Writer};

/// Receive buffers in flight (1 MiB each).
const POOL_BUFFERS: usize = 8;

/// Whether an existing file may be replaced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Replace {
    /// Not asked for: an existing file is an error that suggests `--force`.
    #[default]
    Never,
    /// Asked for (`--force`) but the server does not allow it (`udt serve` without
    /// `--allow-overwrite`): an existing file is an error that says so.
    Refused,
    /// Replace existing files.
    Allowed,
}

/// How the receiver treats existing files, and the limits it enforces.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReceiveOptions {
    /// Whether existing files are replaced.
    pub replace: Replace,
    /// Keep partial files on failure; continue existing ones.
    pub resume: bool,
    /// Refuse any file larger than this (`udt serve --max-file-size`).
    pub max_file_size: Option<u64>,
}

impl ReceiveOptions {
    /// A client's options: `force` replaces local files (the client's own decision).
    pub fn new(force: bool, resume: bool) -> Self {
        Self {
            replace: if force {
                Replace::Allowed
            } else {
                Replace::Never
            },
            resume,
            max_file_size: None,
        }
    }
}

/// The resumable prefixes found, by manifest index (only files that have one).
type Plan = BTreeMap<usize, Prefix>;

/// Receive into `dest` (see [`Placement::decide`] for where entries land), taking only the
/// entries `accept` allows.
pub fn receive(
    link: &mut Link<'_>,
    dest: &Path,
    opts: ReceiveOptions,
    accept: &Accept,
    obs: &dyn Observer,
) -> Result<Summary> {
    let result = receive_inner(link, dest, opts, accept, obs);
    result.map_err(|e| link.fail(e))
}

fn receive_inner(
    link: &mut Link<'_>,
    dest: &Path,
    opts: ReceiveOptions,
    accept: &Accept,
    obs: &dyn Observer,
) -> Result<Summary> {
    let mut budget = Budget::default();
    let entries = read_manifest(&mut link.reader, &mut budget)?;
    accept.check(&entries)?;
    checks::sizes(&entries, opts.max_file_size)?;
    let placement = Placement::decide(dest, &entries)?;
    let plan = prepare(&placement, &entries, opts, &mut budget)?;
    checks::free_space(placement.base(), &entries, &plan)?;
    for (&index, prefix) in &plan {
        link.send(&Frame::Resume {
            index: index as u32, // fits: MAX_ENTRIES is 2^22
            offset: prefix.len,
            digest: prefix.digest(),
        })?;
    }
    link.send(&Frame::Go)?;
    link.push()?;
    let total: u64 = entries.iter().map(|e| e.size).sum();
    obs.start(entries.len() as u64, total);
    let mut summary = take_files(link, &placement, &entries, plan, opts, obs)?;
    summary.files = entries.len() as u64;
    summary.bytes = total;
    link.send(&Frame::Done {
        files: summary.files,
        bytes: summary.transferred,
    })?;
    link.push()?;
    Ok(summary)
}

/// Check every destination and create the directories (at most [`MAX_DIRS_CREATED`]);
/// returns the resumable prefixes, each charged to `budget`.
fn prepare(
    placement: &Placement,
    entries: &[Entry],
    opts: ReceiveOptions,
    budget: &mut Budget,
) -> Result<Plan> {
    let mut plan = Plan::new();
    let mut dirs = MAX_DIRS_CREATED;
    for (index, entry) in entries.iter().enumerate() {
        let target = placement.prepare(entry, opts.replace, &mut dirs)?;
        if entry.kind == EntryKind::File && opts.resume {
            let prefix = existing_prefix(&target, entry.size)
                .map_err(|e| TransferError::io(entry.path.display(), &e))?;
            if let Some(prefix) = prefix {
                budget.charge(size_of::<Prefix>() + 64, "the resumable files")?;
                plan.insert(index, prefix);
            }
        }
    }
    Ok(plan)
}

/// Read `FileStart` / `Data` / `FileEnd` frames up to `End`, feeding the writer thread.
fn take_files(
    link: &mut Link<'_>,
    placement: &Placement,
    entries: &[Entry],
    plan: Plan,
    opts: ReceiveOptions,
    obs: &dyn Observer,
) -> Result<Summary> {
    let (job_tx, job_rx) = mpsc::sync_channel(POOL_BUFFERS);
    let (free_tx, free_rx) = mpsc::channel();
    for _ in 0..POOL_BUFFERS {
        let _ = free_tx.send(DataBuf::new()); // cannot fail: free_rx is alive here
    }
    let writer = Writer::new(placement, entries, opts, obs);
    thread::scope(|scope| {
        let handle = scope.spawn(move || writer.run(job_rx, free_tx));
        let read = read_frames(link, entries, plan, job_tx, free_rx, obs);
        // The writer's error explains a read-side failure (it stopped taking jobs).
        let written = handle
            .join()
            .unwrap_or_else(|_| Err(TransferError::new(ErrorCode::Io, "writer thread panicked")));
        match (read, written) {
            (Ok(summary), Ok(())) => Ok(summary),
            (_, Err(e)) | (Err(e), Ok(())) => Err(e),
        }
    })
}

/// The network side of [`take_files`].
fn read_frames(
    link: &mut Link<'_>,
    entries: &[Entry],
    mut plan: Plan,
    jobs: mpsc::SyncSender<Job>,
    free: mpsc::Receiver<DataBuf>,
    obs: &dyn Observer,
) -> Result<Summary> {
    let stopped = || TransferError::new(ErrorCode::Io, "the writer stopped");
    let mut summary = Summary::default();
    let mut next_index = 0usize; // files arrive in manifest order, each once
    let mut remaining = 0u64; // bytes still due for the open file
    let mut open = false;
    loop {
        match link.reader.next_incoming()? {
            Incoming::Data(len) => {
                if !open || len as u64 > remaining {
                    return Err(TransferError::protocol(
                        "file data beyond the announced size",
                    ));
                }
                let mut buf = free.recv().map_err(|_| stopped())?;
                link.reader.read_data(&mut buf.space()[..len])?;
                buf.set_len(len);
                remaining -= len as u64;
                summary.transferred += len as u64;
                obs.progress(len as u64);
                jobs.send(Job::Data(buf)).map_err(|_| stopped())?;
            }
            Incoming::Frame(Frame::FileStart { index, offset }) => {
                let index = index as usize;
                let entry = entries.get(index).filter(|e| e.kind == EntryKind::File);
                let expected = next_file(entries, next_index);
                let Some(entry) = entry.filter(|_| !open && Some(index) == expected) else {
                    return Err(TransferError::protocol(format!("unexpected file {index}")));
                };
                let prefix = plan.remove(&index);
                let resume = match (offset, prefix) {
                    (0, _) => None,
                    (o, Some(p)) if o == p.len => Some(Box::new(p)),
                    _ => return Err(TransferError::protocol("resume offset not offered")),
                };
                next_index = index + 1;
                remaining = entry.size - offset;
                open = true;
                summary.resumed += offset;
                obs.resumed(offset);
                jobs.send(Job::Start { index, resume })
                    .map_err(|_| stopped())?;
            }
            Incoming::Frame(Frame::FileEnd { digest }) => {
                if !open || remaining != 0 {
                    return Err(TransferError::protocol("file ended before its size"));
                }
                open = false;
                jobs.send(Job::End { digest }).map_err(|_| stopped())?;
            }
            Incoming::Frame(Frame::End) if !open => {
                return check_all_sent(entries, next_index, summary)
            }
            Incoming::Frame(other) => return Err(unexpected(other, "during data")),
        }
    }
}

/// At `End`: no file of the manifest may have been skipped.
fn check_all_sent(entries: &[Entry], next_index: usize, summary: Summary) -> Result<Summary> {
    if next_file(entries, next_index).is_some() {
        return Err(TransferError::protocol("the sender skipped files"));
    }
    Ok(summary)
}

/// The index of the first file entry at or after `from`.
fn next_file(entries: &[Entry], from: usize) -> Option<usize> {
    (from..entries.len()).find(|&i| entries[i].kind == EntryKind::File)
}
