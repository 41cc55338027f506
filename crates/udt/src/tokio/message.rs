//! [`UdtMessageSocket`]: a UDT connection in message mode (`SOCK_DGRAM`), for async code.

use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use udt_proto::Mode;

use super::{check_mode, connect_any, connect_from, rendezvous, Conn};
use crate::options::SocketOptions;

/// A connection that carries whole messages: each `send_msg` arrives as one `recv_msg`, or
/// not at all if its TTL runs out first. Methods take `&self`, so several tasks may share
/// one socket (for instance through an `Arc`).
#[derive(Debug)]
pub struct UdtMessageSocket {
    conn: Conn,
}

impl UdtMessageSocket {
    /// Connect to a message-mode listener at `addr` with UDT4's defaults.
    pub async fn connect(addr: impl ::tokio::net::ToSocketAddrs) -> io::Result<Self> {
        Self::connect_with(addr, SocketOptions::new(Mode::Message)).await
    }

    /// [`Self::connect`] with explicit options (the mode must be [`Mode::Message`]).
    pub async fn connect_with(
        addr: impl ::tokio::net::ToSocketAddrs,
        options: impl Into<SocketOptions>,
    ) -> io::Result<Self> {
        let options = options.into();
        check_mode(options.mode(), Mode::Message)?;
        Ok(Self {
            conn: connect_any(addr, &options).await?,
        })
    }

    /// Rendezvous connect in message mode.
    pub async fn rendezvous(local: SocketAddr, remote: SocketAddr) -> io::Result<Self> {
        let options = SocketOptions::new(Mode::Message);
        Ok(Self {
            conn: rendezvous(local, remote, &options).await?,
        })
    }

    /// Connect from the local address `local` (UDT4: `bind`, then `connect`); sharing the
    /// port with a listener or other connections of this process as UDT_REUSEADDR allows
    /// (see the blocking [`crate::UdtMessageSocket::connect_from`]).
    pub async fn connect_from(
        local: SocketAddr,
        remote: impl ::tokio::net::ToSocketAddrs,
        options: impl Into<SocketOptions>,
    ) -> io::Result<Self> {
        let options = options.into();
        check_mode(options.mode(), Mode::Message)?;
        Ok(Self {
            conn: connect_from(local, remote, &options).await?,
        })
    }

    pub(super) fn from_conn(conn: Conn) -> Self {
        Self { conn }
    }

    /// Send one message. `ttl`: drop it if not delivered within this time (`None`: never);
    /// `in_order`: deliver it only after every earlier message. Waits while the send buffer
    /// is full. Cancellation safe: if dropped while waiting, the message was not queued.
    pub async fn send_msg(
        &self,
        msg: &[u8],
        ttl: Option<Duration>,
        in_order: bool,
    ) -> io::Result<()> {
        poll_fn(|cx| self.conn.poll_send_msg(cx, msg, ttl, in_order)).await
    }

    /// Receive one whole message into `buf`; returns its length (a message longer than `buf`
    /// is truncated, as in UDT4). Cancellation safe: if dropped while waiting, no message
    /// was taken.
    pub async fn recv_msg(&self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| self.conn.poll_recv_msg(cx, buf)).await
    }

    /// Wait until every message sent has been acknowledged or dropped.
    pub async fn flush(&self) -> io::Result<()> {
        poll_fn(|cx| self.conn.poll_flush(cx)).await
    }

    /// Close with linger and wait for the result.
    pub async fn close(self) -> io::Result<()> {
        poll_fn(|cx| self.conn.poll_close(cx)).await
    }
}

async_socket_methods!(UdtMessageSocket);
