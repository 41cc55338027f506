//! `send_file` / `recv_file` on [`UdtStream`] (UDT4 `sendfile` / `recvfile`): move a byte
//! range of a file over the stream, with explicit offsets so several transfers can share one
//! open file.
//!
//! Reads and writes go through a 1 MiB buffer: large enough that the file costs a few
//! syscalls per thousand packets, small enough to stay in cache. The sender's buffer starts
//! on a page boundary, as the file's pages do ([`PageAligned`]). Each chunk is handed to the
//! send buffer in as few locked copies as space allows, never one write per packet. Both
//! calls block (with the socket's timeouts) whatever UDT_SNDSYN / UDT_RCVSYN say, as in 4.11.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::UdtStream;
use crate::aligned::PageAligned;

/// Bytes read from or written to the file per call.
const FILE_CHUNK: usize = 1 << 20;

impl UdtStream {
    /// Send `len` bytes of `file` starting at `offset`, then wait until all are
    /// acknowledged; returns the bytes sent. A file shorter than `offset + len` gives
    /// `UnexpectedEof` after sending what it had.
    pub fn send_file(&self, file: &File, offset: u64, len: u64) -> io::Result<u64> {
        let mut buf =
            PageAligned::zeroed(FILE_CHUNK.min(usize::try_from(len).unwrap_or(FILE_CHUNK)));
        let mut sent = 0u64;
        while sent < len {
            let want = buf
                .len()
                .min(usize::try_from(len - sent).unwrap_or(buf.len()));
            let n = file.read_at(&mut buf[..want], offset + sent)?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("file ended after {sent} of {len} bytes from offset {offset}"),
                ));
            }
            self.write_all_blocking(&buf[..n])?;
            sent += n as u64;
        }
        self.socket.flush_blocking()?;
        Ok(sent)
    }

    /// Receive up to `len` bytes into `file` starting at `offset`; returns the bytes
    /// written, fewer than `len` only if the peer closed the stream first.
    pub fn recv_file(&self, file: &File, offset: u64, len: u64) -> io::Result<u64> {
        let mut buf = vec![0u8; FILE_CHUNK.min(usize::try_from(len).unwrap_or(FILE_CHUNK))];
        let mut got = 0u64;
        while got < len {
            // Fill the buffer as far as the stream allows before touching the file.
            let want = buf
                .len()
                .min(usize::try_from(len - got).unwrap_or(buf.len()));
            let mut filled = 0;
            while filled < want {
                let n = self.socket.read_blocking(&mut buf[filled..want])?;
                if n == 0 {
                    break;
                }
                filled += n;
                if self.socket.recv_data_pkts() == 0 {
                    break;
                }
            }
            if filled == 0 {
                break;
            }
            file.write_all_at(&buf[..filled], offset + got)?;
            got += filled as u64;
        }
        Ok(got)
    }

    /// Read as `read` does, blocking whatever UDT_RCVSYN says (the socket's read timeout
    /// still applies), as 4.11's `recvfile` reads.
    pub fn read_blocking(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.socket.read_blocking(buf)
    }

    /// Queue all of `data`, blocking whatever UDT_SNDSYN says (the write timeout still
    /// applies), as 4.11's `sendfile` sends.
    pub fn write_all_blocking(&self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let n = self.socket.write_with(true, data)?;
            data = &data[n..];
        }
        Ok(())
    }
}
