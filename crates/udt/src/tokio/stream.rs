//! [`UdtStream`]: a UDT connection in stream mode, used like `tokio::net::TcpStream`.

use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use ::tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use bytes::Bytes;
use udt_proto::Mode;

use super::{check_mode, connect_any, connect_from, rendezvous, Conn};
use crate::options::SocketOptions;

/// A reliable, ordered byte stream over UDT (`SOCK_STREAM`), for async code.
///
/// - `poll_read` returns what has arrived (`0` bytes: the peer closed and everything was
///   read); `poll_write` returns once some bytes are queued in the send buffer.
/// - `poll_flush` waits until everything written is *acknowledged* by the peer, as the
///   blocking `flush` does (stronger than TCP's, where flush is a no-op).
/// - `poll_shutdown` closes gracefully with linger: queued data drains, the peer is told,
///   and it returns when the connection has ended. UDT has no half-close: afterwards data
///   already received can still be read, but the peer can send no more.
/// - Dropping the stream closes it in the background with the same linger semantics.
///
/// Every poll is cancellation safe: a future dropped while pending has consumed nothing.
/// `&UdtStream` is also `AsyncRead + AsyncWrite`, so one task may read while another writes.
#[derive(Debug)]
pub struct UdtStream {
    conn: Conn,
}

impl UdtStream {
    /// Connect to a listener at `addr` with UDT4's default options, from a new ephemeral
    /// port. A refused request gives `ConnectionRefused`, no answer within the connect
    /// timeout (3 s by default) `TimedOut` (see [`crate::connection_error`] for the cause).
    pub async fn connect(addr: impl ::tokio::net::ToSocketAddrs) -> io::Result<Self> {
        Self::connect_with(addr, SocketOptions::default()).await
    }

    /// [`Self::connect`] with explicit options (the mode must be [`Mode::Stream`]).
    pub async fn connect_with(
        addr: impl ::tokio::net::ToSocketAddrs,
        options: impl Into<SocketOptions>,
    ) -> io::Result<Self> {
        let options = options.into();
        check_mode(options.mode(), Mode::Stream)?;
        Ok(Self {
            conn: connect_any(addr, &options).await?,
        })
    }

    /// Rendezvous connect (UDT_RENDEZVOUS): bind `local` and connect to `remote`, which must
    /// do the same towards us (30 s limit by default).
    pub async fn rendezvous(local: SocketAddr, remote: SocketAddr) -> io::Result<Self> {
        Self::rendezvous_with(local, remote, SocketOptions::default()).await
    }

    /// [`Self::rendezvous`] with explicit options.
    pub async fn rendezvous_with(
        local: SocketAddr,
        remote: SocketAddr,
        options: impl Into<SocketOptions>,
    ) -> io::Result<Self> {
        let options = options.into();
        check_mode(options.mode(), Mode::Stream)?;
        Ok(Self {
            conn: rendezvous(local, remote, &options).await?,
        })
    }

    /// Connect from the local address `local` (UDT4: `bind`, then `connect`); sharing the
    /// port with a listener or other connections of this process as UDT_REUSEADDR allows
    /// (see the blocking [`crate::UdtStream::connect_from`]).
    pub async fn connect_from(
        local: SocketAddr,
        remote: impl ::tokio::net::ToSocketAddrs,
        options: impl Into<SocketOptions>,
    ) -> io::Result<Self> {
        let options = options.into();
        check_mode(options.mode(), Mode::Stream)?;
        Ok(Self {
            conn: connect_from(local, remote, &options).await?,
        })
    }

    pub(super) fn from_conn(conn: Conn) -> Self {
        Self { conn }
    }

    /// `AsyncWriteExt::write` without the copy into the send buffer, as
    /// [`crate::UdtStream::write_shared`]: the connection holds `data` (a reference count)
    /// until the peer acknowledges it. Returns the bytes queued from the front of `data`.
    pub async fn write_shared(&self, data: &Bytes) -> io::Result<usize> {
        poll_fn(|cx| self.conn.poll_write_shared(cx, data)).await
    }

    /// `AsyncReadExt::read` without the copy out of the receive buffer, as
    /// [`crate::UdtStream::read_chunks`]: appends up to `max` bytes to `out` as [`Bytes`];
    /// `Ok(0)` is the end of the stream.
    pub async fn read_chunks(&self, out: &mut Vec<Bytes>, max: usize) -> io::Result<usize> {
        poll_fn(|cx| self.conn.poll_read_chunks(cx, out, max)).await
    }

    /// Close with linger and wait for the result (what `AsyncWriteExt::shutdown` does, by
    /// value).
    pub async fn close(self) -> io::Result<()> {
        poll_fn(|cx| self.conn.poll_close(cx)).await
    }
}

async_socket_methods!(UdtStream);

fn read_into(conn: &Conn, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
    // `initialize_unfilled` zeroes only bytes never initialised before (none, for a buffer
    // made from `&mut [u8]`).
    match conn.poll_read(cx, buf.initialize_unfilled()) {
        Poll::Ready(Ok(n)) => {
            buf.advance(n);
            Poll::Ready(Ok(()))
        }
        Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
        Poll::Pending => Poll::Pending,
    }
}

impl AsyncRead for UdtStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        read_into(&self.conn, cx, buf)
    }
}

impl AsyncRead for &UdtStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        read_into(&self.conn, cx, buf)
    }
}

impl AsyncWrite for UdtStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.conn.poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.conn.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.conn.poll_close(cx)
    }
}

impl AsyncWrite for &UdtStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.conn.poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.conn.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.conn.poll_close(cx)
    }
}
