//! [`UdtStream`]: a UDT connection in stream mode, used like a `TcpStream`.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use bytes::Bytes;
use udt_proto::Mode;

use super::{check_mode, connect_any, connect_from, rendezvous, Socket};
use crate::options::SocketOptions;

/// A reliable, ordered byte stream over UDT (`SOCK_STREAM`).
///
/// `write` blocks while the send buffer is full and returns once some bytes are queued;
/// `flush` blocks until everything written is acknowledged. Dropping the stream closes it in
/// the background with UDT4 linger semantics (unsent data keeps draining up to the linger
/// time); [`UdtStream::close`] does the same and waits for the result.
#[derive(Debug)]
pub struct UdtStream {
    pub(super) socket: Socket,
}

impl UdtStream {
    /// Connect to a listener at `addr` with UDT4's default options, from a new ephemeral
    /// port. Blocks until connected; a refused request gives `ConnectionRefused`, no answer
    /// within 3 s gives `TimedOut` (see [`crate::connection_error`] for the exact cause).
    pub fn connect(addr: impl ToSocketAddrs) -> io::Result<Self> {
        Self::connect_with(addr, SocketOptions::default())
    }

    /// [`Self::connect`] with explicit options (the mode must be [`Mode::Stream`]). With
    /// UDT_RCVSYN off this returns at once; the stream becomes writable when connected.
    pub fn connect_with(
        addr: impl ToSocketAddrs,
        options: impl Into<SocketOptions>,
    ) -> io::Result<Self> {
        let options = options.into();
        check_mode(options.mode(), Mode::Stream)?;
        connect_any(addr, &options).map(Self::from_socket)
    }

    /// Rendezvous connect (UDT_RENDEZVOUS): bind `local` and connect to `remote`, which must
    /// do the same towards us. Blocks until connected (30 s limit by default).
    pub fn rendezvous(local: SocketAddr, remote: SocketAddr) -> io::Result<Self> {
        Self::rendezvous_with(local, remote, SocketOptions::default())
    }

    /// [`Self::rendezvous`] with explicit options.
    pub fn rendezvous_with(
        local: SocketAddr,
        remote: SocketAddr,
        options: impl Into<SocketOptions>,
    ) -> io::Result<Self> {
        let options = options.into();
        check_mode(options.mode(), Mode::Stream)?;
        rendezvous(local, remote, &options).map(Self::from_socket)
    }

    /// Connect from the local address `local` (UDT4: `bind`, then `connect`) to a listener
    /// at `remote`. With UDT_REUSEADDR on (the default) on both sides, `local` may be the
    /// address of a listener or of other connections of this process with the same MSS:
    /// they all share one UDP port and one I/O thread, and several connections from one
    /// port may go to the same remote. A port held with UDT_REUSEADDR off on either side is
    /// `AddrInUse`. Port 0 picks a new ephemeral port, like [`Self::connect_with`].
    pub fn connect_from(
        local: SocketAddr,
        remote: impl ToSocketAddrs,
        options: impl Into<SocketOptions>,
    ) -> io::Result<Self> {
        let options = options.into();
        check_mode(options.mode(), Mode::Stream)?;
        connect_from(local, remote, &options).map(Self::from_socket)
    }

    pub(crate) fn from_socket(socket: Socket) -> Self {
        Self { socket }
    }

    /// [`Write::write`] without the copy into the send buffer: the packets are sent from
    /// `data` itself, which the connection holds (a reference count, no copy) until the peer
    /// acknowledges them. Returns the bytes queued, from the front of `data`, waiting for
    /// room as `write` does; short writes are copied as usual. For writers whose data is in a
    /// [`Bytes`] already (or that send the same bytes again and again, as `udt perf` does):
    /// at 1 Gbit/s the copy was a seventh of the sender's CPU.
    pub fn write_shared(&self, data: &Bytes) -> io::Result<usize> {
        self.socket.write_shared(data)
    }

    /// `read` without the copy out of the receive buffer: appends up to `max` bytes to
    /// `out` as [`Bytes`] that share the buffers the packets arrived in (the runtime reads
    /// whole GRO trains into such buffers), waiting for data as `read` does. Returns the bytes
    /// appended; `Ok(0)` is the end of the stream. For readers that can consume `Bytes`
    /// (hash, `writev`, forward, or count and drop as `udt perf` does): at 1 Gbit/s the
    /// copies were a sixth of the receiver's CPU. Packets the runtime copied on arrival
    /// (sealed ones, short trains, paths without GRO) are copied once more, as by `read`,
    /// gathered into one `Bytes` per run of them.
    pub fn read_chunks(&self, out: &mut Vec<Bytes>, max: usize) -> io::Result<usize> {
        self.socket.read_chunks(out, max)
    }

    /// Close with linger: wait until unsent data is acknowledged (or the linger time runs
    /// out, giving `TimedOut`) and the peer is told. With UDT_SNDSYN off, return at once and
    /// linger in the background.
    pub fn close(self) -> io::Result<()> {
        self.socket.close()
    }
}

common_socket_methods!(UdtStream);

impl Read for UdtStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.socket.read(buf)
    }
}

impl Read for &UdtStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.socket.read(buf)
    }
}

impl Write for UdtStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.socket.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.socket.flush()
    }
}

impl Write for &UdtStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.socket.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.socket.flush()
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::blocking::UdtListener;

    /// The I/O thread sends data payloads from the send buffer (lent), and tells the
    /// connection when they have left: once a transfer is acknowledged, no chunk is held
    /// back for them. (A runtime that never told it would hold every chunk the transfer
    /// used.)
    #[test]
    fn lent_payloads_are_reported_sent_and_their_chunks_freed() {
        let listener = UdtListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let total = 16 << 20;
        let reader = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut buf = vec![0u8; 1 << 16];
            let mut got = 0;
            while got < total {
                let n = stream.read(&mut buf).unwrap();
                assert!(n > 0, "the stream ended after {got} bytes");
                got += n;
            }
            stream
        });
        let mut stream = UdtStream::connect(addr).unwrap();
        let chunk = vec![0x5Au8; 1 << 20];
        for _ in 0..total / chunk.len() {
            stream.write_all(&chunk).unwrap();
        }
        let _receiver = reader.join().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let held = loop {
            let held = stream.socket.shared().lock().conn.lent_chunks_held();
            if held == 0 || Instant::now() > deadline {
                break held;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(held, 0, "chunks still held for lent payloads");
    }
}
