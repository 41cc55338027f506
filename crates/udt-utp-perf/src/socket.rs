//! The uTP socket of one test: its buffers and the librqbit-utp options they become.
//!
//! librqbit-utp keeps two buffers per connection ("virtual socket"): the receive buffer, whose
//! free space is the window advertised to the sender, and the send buffer, which holds the
//! unacknowledged bytes and so caps the flight. They play the parts of UDT_RCVBUF and
//! UDT_SNDBUF, and `--rcvbuf`/`--sndbuf` set them; the send buffer starts small (32 KiB) and
//! grows to its maximum, which is what `--sndbuf` sets.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::sync::Arc;

use anyhow::Context;
use librqbit_utp::{SocketOpts, UtpSocketUdp};
use serde::{Deserialize, Serialize};

/// librqbit-utp's default receive buffer (its `RX_BUF_SIZE_PER_VSOCK_DEFAULT`).
pub const DEFAULT_RECV_BUFFER: u64 = 1 << 20;

/// librqbit-utp's default send-buffer maximum (its `TX_BUF_SIZE_PER_VSOCK_MAX_DEFAULT`).
pub const DEFAULT_SEND_BUFFER: u64 = 1 << 20;

/// librqbit-utp's initial send buffer (its `TX_BUF_SIZE_PER_VSOCK_INITIAL_DEFAULT`).
const INITIAL_SEND_BUFFER: u64 = 32 << 10;

/// The smallest buffer accepted: one full uTP segment and a little more.
pub const MIN_BUFFER: u64 = 2 << 10;

/// Connections one socket may hold: a test has one; librqbit-utp sizes the UDP socket's
/// receive buffer from this times the receive buffer.
const MAX_CONNECTIONS: usize = 2;

/// Buffer sizes of a test; `None` is librqbit-utp's default. Named as `udt perf` names its
/// buffers in `--json`, so the lab reads both alike.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Buffers {
    /// The send buffer's maximum (the cap on unacknowledged bytes).
    pub send_buffer_bytes: Option<u64>,
    /// The receive buffer (the advertised window).
    pub recv_buffer_bytes: Option<u64>,
}

impl Buffers {
    /// The sizes in force: each requested one, or the default.
    pub fn in_force(&self) -> Self {
        Self {
            send_buffer_bytes: Some(self.send_buffer_bytes.unwrap_or(DEFAULT_SEND_BUFFER)),
            recv_buffer_bytes: Some(self.recv_buffer_bytes.unwrap_or(DEFAULT_RECV_BUFFER)),
        }
    }

    /// An error naming the first buffer below [`MIN_BUFFER`] or beyond the address space.
    pub fn check(&self) -> anyhow::Result<()> {
        let named = [
            ("send", self.send_buffer_bytes),
            ("receive", self.recv_buffer_bytes),
        ];
        for (name, size) in named {
            if let Some(size) = size {
                anyhow::ensure!(
                    size >= MIN_BUFFER,
                    "a uTP {name} buffer of {size} bytes is too small: use at least {MIN_BUFFER}"
                );
                usize::try_from(size)
                    .with_context(|| format!("a uTP {name} buffer of {size} bytes is too large"))?;
            }
        }
        Ok(())
    }

    /// librqbit-utp's options for these buffers.
    pub fn options(&self) -> anyhow::Result<SocketOpts> {
        self.check()?;
        let size = |bytes: Option<u64>| -> Option<NonZeroUsize> {
            bytes
                .and_then(|b| usize::try_from(b).ok())
                .and_then(NonZeroUsize::new)
        };
        let initial = self
            .send_buffer_bytes
            .map(|max| max.min(INITIAL_SEND_BUFFER));
        Ok(SocketOpts {
            vsock_rx_bufsize_bytes: size(self.recv_buffer_bytes),
            vsock_tx_bufsize_bytes_max: size(self.send_buffer_bytes),
            vsock_tx_bufsize_bytes_initial: size(initial),
            max_live_vsocks: NonZeroUsize::new(MAX_CONNECTIONS),
            ..SocketOpts::default()
        })
    }
}

/// A bound uTP socket whose background tasks stop when it is dropped.
pub struct Socket {
    inner: Arc<UtpSocketUdp>,
    stop: SocketOpts,
}

impl Socket {
    /// Binds a uTP socket on UDP `addr` with `buffers`.
    pub async fn bind(addr: SocketAddr, buffers: &Buffers) -> anyhow::Result<Self> {
        let options = buffers.options()?;
        let stop = SocketOpts {
            cancellation_token: options.cancellation_token.clone(),
            ..SocketOpts::default()
        };
        let inner = UtpSocketUdp::new_udp_with_opts(addr, options, Default::default())
            .await
            .with_context(|| format!("binding a uTP socket on UDP {addr}"))?;
        Ok(Self { inner, stop })
    }

    /// The socket.
    pub fn utp(&self) -> &Arc<UtpSocketUdp> {
        &self.inner
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        self.stop.cancellation_token.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_become_options() {
        let b = Buffers {
            send_buffer_bytes: Some(16 << 10),
            recv_buffer_bytes: None,
        };
        let o = b.options().unwrap();
        assert_eq!(
            o.vsock_tx_bufsize_bytes_max.map(|n| n.get()),
            Some(16 << 10)
        );
        assert_eq!(
            o.vsock_tx_bufsize_bytes_initial.map(|n| n.get()),
            Some(16 << 10)
        );
        assert_eq!(o.vsock_rx_bufsize_bytes, None);
        assert_eq!(
            b.in_force(),
            Buffers {
                send_buffer_bytes: Some(16 << 10),
                recv_buffer_bytes: Some(DEFAULT_RECV_BUFFER)
            }
        );
        let big = Buffers {
            send_buffer_bytes: Some(64 << 20),
            recv_buffer_bytes: Some(64 << 20),
        };
        let o = big.options().unwrap();
        assert_eq!(
            o.vsock_tx_bufsize_bytes_initial.map(|n| n.get()),
            Some(32 << 10)
        );
        let tiny = Buffers {
            send_buffer_bytes: None,
            recv_buffer_bytes: Some(100),
        };
        let err = tiny.options().unwrap_err().to_string();
        assert!(err.contains("receive buffer of 100 bytes"), "{err}");
    }
}
