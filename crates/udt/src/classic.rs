//! The classic UDT4 sample file protocol, spoken by libudt's `sendfile` (server) and
//! `recvfile` (client) sample apps, so our tools can talk to old deployments of them.
//!
//! The exchange, on one stream connection:
//! 1. client → server: the name's length as a 4-byte signed integer, then the name's bytes;
//! 2. server → client: the file's size as an 8-byte signed integer (−1: no such file), then
//!    exactly that many bytes of file; then the server closes.
//!
//! Both integers are in the *host* byte order of the machine that writes them, as the
//! samples `send` the raw memory of an `int` / `int64_t`. Every deployment we know of is
//! little-endian (x86, ARM), and so is every machine this crate is tested on; we write and
//! read native order, which is what a sample app built on the same machine would do.
//!
//! The 4.11 `sendfile` sample reads the name into a 1024-byte buffer and NUL-terminates it, so
//! names of 1024 bytes or more would overflow it: [`fetch`] refuses them, and [`serve_one`]
//! answers them with −1. [`serve_one`] serves only paths inside its root: no `..`, no
//! absolute paths, and no symbolic link leading outside.

use std::fs::File;
use std::io::{self, Read, Write};
use std::net::ToSocketAddrs;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use crate::aligned::PageAligned;
use crate::UdtStream;

/// Longest name the 4.11 `sendfile` sample can take (its buffer is 1024 bytes with a NUL).
pub const MAX_NAME_BYTES: usize = 1023;

/// The size a server sends for a file it will not or cannot serve (the sample's `tellg()`
/// of a file that failed to open).
const NO_SUCH_FILE: i64 = -1;

/// How long a refusal may wait for its acknowledgement when closing (see `serve_one`).
const REFUSAL_LINGER: Duration = Duration::from_secs(1);

/// Copy buffer for file data (large: each `write` call costs a lock round on the connection).
const CHUNK_BYTES: usize = 1 << 20;

/// What [`serve_one`] did for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Served {
    /// The whole file was sent (and acknowledged, since the stream was closed with linger).
    File {
        /// The path served, inside the root.
        path: PathBuf,
        /// Its size in bytes.
        bytes: u64,
    },
    /// The name was refused or the file could not be opened; the client was told −1.
    Refused {
        /// The requested name, lossily decoded.
        name: String,
        /// Why, for the server's log.
        reason: String,
    },
}

/// Connect to a `sendfile`-style server at `addr`, ask for `name`, and write the file to
/// `dest` (created or truncated). Returns the number of bytes received.
///
/// Errors: `NotFound` if the server answers −1; `InvalidInput` for a name the sample server
/// cannot take (empty, or longer than [`MAX_NAME_BYTES`]); `UnexpectedEof` if the connection
/// ends before the announced size has arrived.
pub fn fetch(addr: impl ToSocketAddrs, name: &str, dest: &Path) -> io::Result<u64> {
    let mut stream = UdtStream::connect(addr)?;
    let mut file = File::create(dest)?;
    let bytes = fetch_into(&mut stream, name, &mut file)?;
    file.flush()?;
    stream.close()?;
    Ok(bytes)
}

/// The client side on an existing connection: request `name`, copy the file into `out`.
pub fn fetch_into(stream: &mut UdtStream, name: &str, out: &mut impl Write) -> io::Result<u64> {
    stream.write_all(&encode_request(name)?)?;
    let mut size = [0u8; 8];
    stream.read_exact(&mut size)?;
    let size = i64::from_ne_bytes(size);
    let Ok(size) = u64::try_from(size) else {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no such file {name:?} on the server (it answered size {size})"),
        ));
    };
    let copied = io::copy(&mut Read::by_ref(stream).take(size), out)?;
    if copied < size {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the server announced {size} bytes but closed after {copied}"),
        ));
    }
    Ok(copied)
}

/// The request bytes for `name`: its length (4 bytes, host order), then the name. Sent in one
/// `write` so that the sample server, which reads the name with a single `recv`, finds it
/// whole.
pub fn encode_request(name: &str) -> io::Result<Vec<u8>> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "file name must be 1..={MAX_NAME_BYTES} bytes, got {}",
                name.len()
            ),
        ));
    }
    // Cannot fail: the length was checked against MAX_NAME_BYTES above.
    let len = i32::try_from(name.len()).unwrap_or(i32::MAX);
    let mut req = Vec::with_capacity(4 + name.len());
    req.extend_from_slice(&len.to_ne_bytes());
    req.extend_from_slice(name.as_bytes());
    Ok(req)
}

/// Serve one request on an accepted `stream`: read the name, send the size and the file from
/// under `root`, close (waiting, with linger, until the client acknowledged everything).
///
/// A refused or missing file is not an error of this function: the client gets −1 and the
/// result says [`Served::Refused`]. Errors are I/O failures of the connection or of reading
/// the file after its size was sent.
pub fn serve_one(mut stream: UdtStream, root: &Path) -> io::Result<Served> {
    let name = read_name(&mut stream)?;
    let opened = match name.as_deref() {
        Ok(name) => open_under(root, name),
        Err(why) => Err(why.clone()),
    };
    let display = match &name {
        Ok(n) => n.clone(),
        Err(_) => String::from("<unreadable name>"),
    };
    let (mut file, path, size) = match opened {
        Ok(found) => found,
        Err(reason) => {
            stream.write_all(&NO_SUCH_FILE.to_ne_bytes())?;
            // 4.11's `recvfile` exits right after reading −1, without `UDT::close`, and
            // libudt can hand the 8 bytes to its application before their ACK leaves. So
            // the answer may never be acknowledged nor the connection closed: linger briefly
            // and treat how the close ended as no failure of serving.
            stream.set_linger(Some(REFUSAL_LINGER));
            let _ = stream.close();
            return Ok(Served::Refused {
                name: display,
                reason,
            });
        }
    };
    // A file larger than i64::MAX bytes cannot exist on any file system we run on.
    let announced = i64::try_from(size).unwrap_or(i64::MAX);
    stream.write_all(&announced.to_ne_bytes())?;
    let sent = copy_exact(&mut file, &mut stream, size)?;
    stream.close()?;
    Ok(Served::File { path, bytes: sent })
}

/// Read the request: the length, then the name. An unacceptable name is `Ok(Err(reason))`
/// (the client still deserves an answer); connection failures are `Err`.
fn read_name(stream: &mut UdtStream) -> io::Result<Result<String, String>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = i32::from_ne_bytes(len);
    let len = match usize::try_from(len) {
        Ok(n) if (1..=MAX_NAME_BYTES).contains(&n) => n,
        _ => {
            return Ok(Err(format!(
                "name length {len} outside 1..={MAX_NAME_BYTES}"
            )))
        }
    };
    let mut name = vec![0u8; len];
    stream.read_exact(&mut name)?;
    Ok(String::from_utf8(name).map_err(|_| String::from("name is not UTF-8")))
}

/// Open `name` under `root` if it is a safe relative path to a regular file there.
fn open_under(root: &Path, name: &str) -> Result<(File, PathBuf, u64), String> {
    let relative = safe_relative(name)?;
    let root = root
        .canonicalize()
        .map_err(|e| format!("root {}: {e}", root.display()))?;
    let path = root
        .join(relative)
        .canonicalize()
        .map_err(|e| format!("{name}: {e}"))?;
    if !path.starts_with(&root) {
        return Err(format!("{name}: leads outside the served directory"));
    }
    let file = File::open(&path).map_err(|e| format!("{name}: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("{name}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{name}: not a regular file"));
    }
    Ok((file, path, meta.len()))
}

/// `name` as a relative path made only of normal components (no `..`, `.`, root or prefix).
pub fn safe_relative(name: &str) -> Result<&Path, String> {
    let path = Path::new(name);
    if name.contains('\0') {
        return Err(String::from("name contains a NUL byte"));
    }
    let mut components = path.components().peekable();
    if components.peek().is_none() {
        return Err(String::from("empty name"));
    }
    if components.all(|c| matches!(c, Component::Normal(_))) {
        Ok(path)
    } else {
        Err(format!(
            "{name}: only plain relative paths are served (no '..', '.' or leading '/')"
        ))
    }
}

/// Copy exactly `size` bytes of `file` (the size already announced) to `stream`.
fn copy_exact(file: &mut File, stream: &mut UdtStream, size: u64) -> io::Result<u64> {
    let mut buf = PageAligned::zeroed(CHUNK_BYTES);
    let mut sent = 0u64;
    while sent < size {
        let want = buf
            .len()
            .min(usize::try_from(size - sent).unwrap_or(usize::MAX));
        let n = file.read(&mut buf[..want])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the file shrank to {sent} bytes after {size} were announced"),
            ));
        }
        stream.write_all(&buf[..n])?;
        sent += n as u64;
    }
    Ok(sent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_is_host_order_length_then_name() {
        let req = encode_request("a/b.bin").unwrap();
        assert_eq!(&req[..4], &7i32.to_ne_bytes());
        assert_eq!(&req[4..], b"a/b.bin");
        assert!(encode_request("").is_err());
        assert!(encode_request(&"x".repeat(MAX_NAME_BYTES)).is_ok());
        assert!(encode_request(&"x".repeat(MAX_NAME_BYTES + 1)).is_err());
    }

    #[test]
    fn only_plain_relative_names_are_served() {
        for good in ["f", "dir/f.bin", "a/b/c"] {
            assert!(safe_relative(good).is_ok(), "{good}");
        }
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "./f", "a\0b"] {
            assert!(safe_relative(bad).is_err(), "{bad:?}");
        }
    }
}
