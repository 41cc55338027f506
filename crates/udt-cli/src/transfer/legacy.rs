//! The classic UDT4 sample file protocol (libudt's `sendfile` / `recvfile`), for
//! `udt cp --legacy` and for `udt serve` answering old `recvfile` clients.
//!
//! The exchange is described in [`udt::classic`]: a host-order `i32` name length and the
//! name; a host-order `i64` size (−1: refused) and the bytes. It carries no digest, so
//! legacy transfers are checked only for their length. The server side here is our own
//! (not [`udt::classic::serve_one`]) because `udt serve` has already read the first 4 bytes
//! to tell the protocols apart, and because it resolves names with [`Root`]'s rules.

use std::cell::Cell;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::Path;
use std::rc::Rc;

use udt::classic::{encode_request, MAX_NAME_BYTES};
use udt::UdtStream;

use super::error::{ErrorCode, Result, TransferError};
use super::paths::{open_regular, umask, RelPath, Root};
use super::protocol::DataBuf;
use super::resume::{create_unique_part, rename_noreplace};
use super::watchdog::{Watchdog, Watched};
use super::{Observer, Summary};

/// The size a classic server sends for a file it will not serve.
const REFUSED: i64 = -1;

/// Bytes received per `recv_file` call between progress reports.
const SLICE: u64 = 16 << 20;

/// What [`serve_classic`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LegacyServed {
    /// The file was sent whole.
    File {
        /// The requested name.
        name: String,
        /// Bytes sent.
        bytes: u64,
    },
    /// The client was answered −1.
    Refused {
        /// The requested name (lossy).
        name: String,
        /// Why, for the log.
        reason: String,
    },
}

/// Answer a classic client whose first 4 bytes (its name length) were `first`. Only ever
/// a download (the classic protocol has no upload); the client's reading and writing are
/// accounted to `dog`, so that a slow one cannot hold the connection.
pub fn serve_classic(
    stream: &UdtStream,
    first: [u8; 4],
    root: &Root,
    dog: Watchdog,
) -> Result<LegacyServed> {
    let io = |e: &std::io::Error| TransferError::io("connection", e);
    let mut watched = Watched::new(stream, Rc::new(Cell::new(dog)));
    let len = i32::from_ne_bytes(first);
    let refuse = |name: String, reason: String| -> Result<LegacyServed> {
        (&*stream)
            .write_all(&REFUSED.to_ne_bytes())
            .map_err(|e| io(&e))?;
        Ok(LegacyServed::Refused { name, reason })
    };
    let len = match usize::try_from(len) {
        Ok(n) if (1..=MAX_NAME_BYTES).contains(&n) => n,
        _ => return refuse(String::new(), format!("name length {len}")),
    };
    let mut name = vec![0u8; len];
    watched.read_exact(&mut name).map_err(|e| io(&e))?;
    let shown = String::from_utf8_lossy(&name).into_owned();
    let opened = RelPath::parse_request(&name).and_then(|rel| {
        let rel = rel.ok_or_else(|| TransferError::new(ErrorCode::PathRefused, "empty name"))?;
        let path = root.resolve_existing(Some(&rel))?;
        let file = open_regular(&path).map_err(|e| TransferError::io(&shown, &e))?;
        let meta = file.metadata().map_err(|e| TransferError::io(&shown, &e))?;
        if !meta.is_file() {
            return Err(TransferError::new(
                ErrorCode::IsDirectory,
                "not a regular file",
            ));
        }
        Ok((file, meta.len()))
    });
    let (file, size) = match opened {
        Ok(found) => found,
        Err(e) => return refuse(shown, e.message),
    };
    let announced = i64::try_from(size).unwrap_or(i64::MAX);
    watched
        .write_all(&announced.to_ne_bytes())
        .map_err(|e| io(&e))?;
    let sent = copy_file(&file, size, &mut watched).map_err(|e| io(&e))?;
    watched.flush().map_err(|e| io(&e))?;
    Ok(LegacyServed::File {
        name: shown,
        bytes: sent,
    })
}

/// `size` bytes of `file` to `out` (as `UdtStream::send_file`, but through the watchdog),
/// read into a [`DataBuf`]'s page-aligned space, where the kernel's copy runs at full speed.
fn copy_file(file: &File, size: u64, out: &mut impl Write) -> std::io::Result<u64> {
    let mut chunk = DataBuf::new();
    let buf = chunk.space(); // MAX_DATA bytes, read per write
    let mut sent = 0u64;
    while sent < size {
        let want = buf
            .len()
            .min(usize::try_from(size - sent).unwrap_or(buf.len()));
        let n = file.read_at(&mut buf[..want], sent)?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("file shrank while being sent, after {sent} of {size} bytes"),
            ));
        }
        out.write_all(&buf[..n])?;
        sent += n as u64;
    }
    Ok(sent)
}

/// Fetch `name` from a classic `sendfile` server into `dest` (a directory, or the file's
/// new name), through a partial file renamed when complete.
pub fn fetch(
    stream: &UdtStream,
    name: &str,
    dest: &Path,
    force: bool,
    obs: &dyn Observer,
) -> Result<Summary> {
    let io = |e: &std::io::Error| TransferError::io("connection", e);
    let request = encode_request(name)
        .map_err(|e| TransferError::new(ErrorCode::PathRefused, e.to_string()))?;
    (&*stream).write_all(&request).map_err(|e| io(&e))?;
    let mut size = [0u8; 8];
    (&*stream).read_exact(&mut size).map_err(|e| io(&e))?;
    let Ok(size) = u64::try_from(i64::from_ne_bytes(size)) else {
        return Err(TransferError {
            code: ErrorCode::NotFound,
            message: format!("{name}: no such file (the classic server answered -1)"),
            remote: true,
        });
    };
    let target = legacy_target(name, dest, force)?;
    obs.start(1, size);
    let got = receive_to(stream, &target, size, force, obs)?;
    Ok(Summary {
        files: 1,
        bytes: size,
        transferred: got,
        resumed: 0,
    })
}

/// Where a legacy download lands, refusing to overwrite unless `force`.
fn legacy_target(name: &str, dest: &Path, force: bool) -> Result<std::path::PathBuf> {
    let base = Path::new(name).file_name().ok_or_else(|| {
        TransferError::new(ErrorCode::PathRefused, format!("{name}: no file name"))
    })?;
    let target = if dest.is_dir() {
        dest.join(base)
    } else {
        dest.to_path_buf()
    };
    if !force && fs::symlink_metadata(&target).is_ok() {
        return Err(TransferError::new(
            ErrorCode::Exists,
            format!(
                "{}: already exists (use --force to overwrite)",
                target.display()
            ),
        ));
    }
    Ok(target)
}

/// Receive `size` bytes into `target` through a partial file of its own (0600 until
/// complete, then the umask's mode), renamed over an existing file only with `force`.
fn receive_to(
    stream: &UdtStream,
    target: &Path,
    size: u64,
    force: bool,
    obs: &dyn Observer,
) -> Result<u64> {
    let shown = target.display();
    let (part, file) = create_unique_part(target).map_err(|e| TransferError::io(&shown, &e))?;
    let failed = |err: TransferError| {
        let _ = fs::remove_file(&part);
        err
    };
    let mut got = 0u64;
    while got < size {
        let want = SLICE.min(size - got);
        let n = stream
            .recv_file(&file, got, want)
            .map_err(|e| failed(TransferError::io(&shown, &e)))?;
        got += n;
        obs.progress(n);
        if n < want {
            return Err(failed(TransferError::new(
                ErrorCode::Io,
                format!("{shown}: the server closed after {got} of {size} bytes"),
            )));
        }
    }
    let mode = 0o666 & !umask();
    file.set_permissions(fs::Permissions::from_mode(mode))
        .map_err(|e| failed(TransferError::io(&shown, &e)))?;
    let placed = if force {
        fs::rename(&part, target)
    } else {
        rename_noreplace(&part, target)
    };
    placed.map_err(|e| failed(TransferError::io(&shown, &e)))?;
    Ok(got)
}
