//! [`UdtStream`]: a UDT connection in stream mode, used like a `TcpStream`.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use udt_proto::{ConnectionConfig, ConnectionStats, Mode, PathStats, State};

use super::{check_mode, connect_any, rendezvous, Socket};

/// A reliable, ordered byte stream over UDT (`SOCK_STREAM`).
///
/// `write` blocks while the send buffer is full and returns once some bytes are queued;
/// `flush` blocks until everything written is acknowledged. Dropping the stream closes it in
/// the background with UDT4 linger semantics (unsent data keeps draining up to the linger
/// time); [`UdtStream::close`] does the same and waits for the result.
#[derive(Debug)]
pub struct UdtStream {
    socket: Socket,
}

impl UdtStream {
    /// Connect to a listener at `addr` with UDT4's default options, from a new ephemeral
    /// port. Blocks until connected; a refused request gives `ConnectionRefused`, no answer
    /// within 3 s gives `TimedOut`.
    pub fn connect(addr: impl ToSocketAddrs) -> io::Result<Self> {
        Self::connect_with(addr, ConnectionConfig::default())
    }

    /// [`Self::connect`] with explicit options (the mode must be [`Mode::Stream`]).
    pub fn connect_with(addr: impl ToSocketAddrs, config: ConnectionConfig) -> io::Result<Self> {
        check_mode(&config, Mode::Stream)?;
        connect_any(addr, &config).map(Self::from_socket)
    }

    /// Rendezvous connect (UDT_RENDEZVOUS): bind `local` and connect to `remote`, which must
    /// do the same towards us. Blocks until connected (30 s limit by default).
    pub fn rendezvous(local: SocketAddr, remote: SocketAddr) -> io::Result<Self> {
        Self::rendezvous_with(local, remote, ConnectionConfig::default())
    }

    /// [`Self::rendezvous`] with explicit options.
    pub fn rendezvous_with(
        local: SocketAddr,
        remote: SocketAddr,
        config: ConnectionConfig,
    ) -> io::Result<Self> {
        check_mode(&config, Mode::Stream)?;
        rendezvous(local, remote, &config).map(Self::from_socket)
    }

    pub(crate) fn from_socket(socket: Socket) -> Self {
        Self { socket }
    }

    /// Close with linger: wait until unsent data is acknowledged (or the linger time runs
    /// out, giving `TimedOut`) and the peer is told.
    pub fn close(self) -> io::Result<()> {
        self.socket.close()
    }

    /// UDT_RCVTIMEO: how long `read` may block (`None`: forever, the default).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.socket.set_read_timeout(timeout)
    }

    /// UDT_SNDTIMEO: how long `write` and `flush` may block (`None`: forever, the default).
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.socket.set_write_timeout(timeout)
    }

    /// The current UDT_RCVTIMEO.
    pub fn read_timeout(&self) -> Option<Duration> {
        self.socket.read_timeout()
    }

    /// The current UDT_SNDTIMEO.
    pub fn write_timeout(&self) -> Option<Duration> {
        self.socket.write_timeout()
    }

    /// Cumulative counters (UDT4 perfmon totals).
    pub fn stats(&self) -> ConnectionStats {
        self.socket.stats()
    }

    /// Instantaneous path state: RTT, windows, sending period, rates.
    pub fn path_stats(&self) -> PathStats {
        self.socket.path_stats()
    }

    /// UDT_STATE.
    pub fn state(&self) -> State {
        self.socket.state()
    }

    /// The local UDP address (shared by every connection on the same multiplexer).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.socket.local_addr())
    }

    /// The peer's UDP address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.socket.peer_addr())
    }

    /// Stop this stream's multiplexer at once without telling any peer, as if the process
    /// died. For tests of a vanished peer.
    #[doc(hidden)]
    pub fn abort_multiplexer(&self) {
        self.socket.multiplexer().abort();
    }
}

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
