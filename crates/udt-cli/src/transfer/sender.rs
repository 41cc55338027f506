//! The sending role: announce the manifest, learn what the receiver already holds, then
//! stream each file as `FileStart`, `Data`…, `FileEnd{blake3}`.
//!
//! Disk and network overlap: a read-ahead thread reads [`MAX_DATA`]-byte chunks into a
//! pool of buffers and hashes them, while this thread hands the previous chunks to the
//! stream, header included. A UDT stream keeps each chunk uncopied until the receiver has it
//! ([`udt::UdtStream::write_shared`]), and this thread takes the buffers back for the read-ahead
//! as they come free. Up to [`POOL_BUFFERS`] chunks wait read ahead; the rest of the pool is
//! what the stream's send buffer holds, so the pool takes the memory that copies in the send
//! buffer would.
//!
//! The receiver speaks only to report the end (`Done`) or a failure (`Error`). Before each
//! chunk this thread looks whether anything arrived, so a receiver that failed (disk full)
//! is heard at once rather than when the connection breaks.
//!
//! Test-only fault hook: in debug builds, `UDT_TEST_CORRUPT_AT=N` flips byte `N` of every
//! file after it was hashed, so the receiver's digest check must catch it.

use std::collections::VecDeque;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread;

use bytes::Bytes;

use super::error::{Result, TransferError};
use super::manifest::{EntryKind, Manifest};
use super::paths::open_regular;
use super::protocol::{DataBuf, Digest, Frame, Sent, MAX_DATA};
use super::resume::hash_prefix;
use super::{unexpected, Link, Observer, Summary};

/// Chunks read ahead (1 MiB each).
pub const POOL_BUFFERS: usize = 8;

/// What the read-ahead thread hands over.
enum Chunk {
    Start { index: u32, offset: u64 },
    Data(DataBuf),
    End { digest: Digest },
}

/// Send `manifest` over `link`; returns once the receiver confirmed everything.
pub fn send(link: &mut Link<'_>, manifest: &Manifest, obs: &dyn Observer) -> Result<Summary> {
    let result = send_inner(link, manifest, obs);
    result.map_err(|e| {
        let e = link.peer_error_or(e);
        link.fail(e)
    })
}

fn send_inner(link: &mut Link<'_>, manifest: &Manifest, obs: &dyn Observer) -> Result<Summary> {
    for entry in &manifest.entries {
        link.send(&Frame::Entry(entry.clone()))?;
    }
    let count = manifest.entries.len() as u64;
    link.send(&Frame::ManifestEnd { count })?;
    link.push()?;
    let offers = read_plan(link, manifest)?;
    obs.start(count, manifest.total_bytes());
    let mut summary = stream_files(link, manifest, &offers, obs)?;
    link.send(&Frame::End)?;
    link.push()?;
    match link.reader.next_frame()? {
        Frame::Done { .. } => {
            summary.files = count;
            summary.bytes = manifest.total_bytes();
            Ok(summary)
        }
        other => Err(unexpected(other, "after the last file")),
    }
}

/// Read the receiver's `Resume` offers up to `Go`: for each entry, the prefix it holds.
fn read_plan(link: &mut Link<'_>, manifest: &Manifest) -> Result<Vec<Option<(u64, Digest)>>> {
    let mut offers = vec![None; manifest.entries.len()];
    loop {
        match link.reader.next_frame()? {
            Frame::Go => return Ok(offers),
            Frame::Resume {
                index,
                offset,
                digest,
            } => {
                let entry = manifest.entries.get(index as usize);
                let valid = entry.is_some_and(|e| e.kind == EntryKind::File && offset <= e.size);
                let slot = offers.get_mut(index as usize);
                match slot {
                    Some(slot) if valid => *slot = Some((offset, digest)),
                    _ => return Err(TransferError::protocol(format!("bad resume offer {index}"))),
                }
            }
            other => return Err(unexpected(other, "before data")),
        }
    }
}

/// Run the read-ahead thread and write what it reads.
fn stream_files(
    link: &mut Link<'_>,
    manifest: &Manifest,
    offers: &[Option<(u64, Digest)>],
    obs: &dyn Observer,
) -> Result<Summary> {
    let (chunk_tx, chunk_rx) = mpsc::sync_channel(POOL_BUFFERS);
    let (free_tx, free_rx) = mpsc::channel();
    for _ in 0..POOL_BUFFERS {
        // Cannot fail: the receiving end is alive right here.
        let _ = free_tx.send(DataBuf::new());
    }
    thread::scope(|scope| {
        scope.spawn(move || read_ahead(manifest, offers, chunk_tx, free_rx));
        write_chunks(link, manifest, chunk_rx, free_tx, obs)
    })
}

/// The network side: turn chunks into frames until the read-ahead thread is done.
fn write_chunks(
    link: &mut Link<'_>,
    manifest: &Manifest,
    chunks: Receiver<Result<Chunk>>,
    free: mpsc::Sender<DataBuf>,
    obs: &dyn Observer,
) -> Result<Summary> {
    let mut summary = Summary::default();
    let mut current = 0usize;
    // Frames the stream holds, oldest first: their buffers return in order, as acknowledged.
    let mut held: VecDeque<Bytes> = VecDeque::new();
    for chunk in chunks {
        match chunk? {
            Chunk::Start { index, offset } => {
                current = index as usize;
                link.send(&Frame::FileStart { index, offset })?;
                summary.resumed += offset;
                obs.resumed(offset);
            }
            Chunk::Data(buf) => {
                check_peer(link)?;
                let n = buf.payload().len() as u64;
                match link.writer.send_data_shared(buf) {
                    // The read-ahead thread may have stopped: fine.
                    Ok(Sent::Copied(buf)) => drop(free.send(buf)),
                    Ok(Sent::Held(frame)) => held.push_back(frame),
                    // `send` looks for the receiver's reason.
                    Err(e) => return Err(TransferError::io("connection", &e)),
                }
                summary.transferred += n;
                obs.progress(n);
                give_back(&mut held, &free);
            }
            Chunk::End { digest } => {
                link.send(&Frame::FileEnd { digest })?;
                if let Some(e) = manifest.entries.get(current) {
                    obs.file_done(&e.path, e.size);
                }
            }
        }
    }
    Ok(summary)
}

/// Returns the buffers of the oldest held frames that the stream has let go of.
fn give_back(held: &mut VecDeque<Bytes>, free: &mpsc::Sender<DataBuf>) {
    while held.front().is_some_and(Bytes::is_unique) {
        let Some(frame) = held.pop_front() else {
            return;
        };
        if let Ok(buf) = DataBuf::reclaim(frame) {
            let _ = free.send(buf);
        }
    }
}

/// Fail with the receiver's `Error` if one has arrived.
fn check_peer(link: &mut Link<'_>) -> Result<()> {
    if link.peer_has_data() {
        return Err(unexpected(link.reader.next_frame()?, "during data"));
    }
    Ok(())
}

/// The read-ahead thread: read and hash each file's chunks in order.
fn read_ahead(
    manifest: &Manifest,
    offers: &[Option<(u64, Digest)>],
    out: SyncSender<Result<Chunk>>,
    free: Receiver<DataBuf>,
) {
    for (index, entry) in manifest.entries.iter().enumerate() {
        if entry.kind != EntryKind::File {
            continue;
        }
        let source = &manifest.sources[index];
        let offer = offers.get(index).copied().flatten();
        // Indices fit u32: MAX_ENTRIES is 2^22.
        let sent = read_file(index as u32, entry.size, source, offer, &out, &free);
        match sent {
            Ok(true) => {}
            Ok(false) => return, // the network side stopped
            Err(e) => {
                let _ = out.send(Err(e));
                return;
            }
        }
    }
}

/// Read one file into chunks; `Ok(false)` if the network side went away.
fn read_file(
    index: u32,
    size: u64,
    source: &std::path::Path,
    offer: Option<(u64, Digest)>,
    out: &SyncSender<Result<Chunk>>,
    free: &Receiver<DataBuf>,
) -> Result<bool> {
    let what = source.display();
    let file = open_regular(source).map_err(|e| TransferError::io(&what, &e))?;
    let (offset, mut hasher) = match offer {
        Some((len, digest)) => match hash_prefix(&file, len) {
            Ok(h) if *h.finalize().as_bytes() == digest => (len, h),
            _ => (0, blake3::Hasher::new()),
        },
        None => (0, blake3::Hasher::new()),
    };
    if out.send(Ok(Chunk::Start { index, offset })).is_err() {
        return Ok(false);
    }
    let mut pos = offset;
    while pos < size {
        // A new buffer when none came back: the others are read ahead (at most
        // POOL_BUFFERS, the channel's bound) or held by the stream's send buffer.
        let mut buf = free.try_recv().unwrap_or_else(|_| DataBuf::new());
        let want = MAX_DATA.min(usize::try_from(size - pos).unwrap_or(MAX_DATA));
        let n = std::os::unix::fs::FileExt::read_at(&file, &mut buf.space()[..want], pos)
            .map_err(|e| TransferError::io(&what, &e))?;
        if n == 0 {
            return Err(TransferError::new(
                super::ErrorCode::Io,
                format!("{what}: file shrank while being sent"),
            ));
        }
        buf.set_len(n);
        hasher.update(buf.payload());
        fault::corrupt(pos, &mut buf);
        pos += n as u64;
        if out.send(Ok(Chunk::Data(buf))).is_err() {
            return Ok(false);
        }
    }
    let digest = *hasher.finalize().as_bytes();
    Ok(out.send(Ok(Chunk::End { digest })).is_ok())
}

/// The test-only corruption hook (see the module doc); nothing in release builds.
mod fault {
    use super::DataBuf;

    #[cfg(debug_assertions)]
    pub(super) fn corrupt(pos: u64, buf: &mut DataBuf) {
        use std::sync::OnceLock;
        static AT: OnceLock<Option<u64>> = OnceLock::new();
        let at = AT.get_or_init(|| {
            std::env::var("UDT_TEST_CORRUPT_AT")
                .ok()
                .and_then(|v| v.parse().ok())
        });
        if let Some(at) = *at {
            let payload = buf.payload_mut();
            if let Some(i) = at.checked_sub(pos).and_then(|i| usize::try_from(i).ok()) {
                if let Some(byte) = payload.get_mut(i) {
                    *byte ^= 0xff;
                }
            }
        }
    }

    #[cfg(not(debug_assertions))]
    pub(super) fn corrupt(_pos: u64, _buf: &mut DataBuf) {}
}
