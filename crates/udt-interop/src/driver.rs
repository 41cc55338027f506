//! A minimal, single-threaded, blocking driver for `udt-proto` over one real UDP socket.
//!
//! Each [`Driver::turn`] reads whatever datagrams are waiting (non-blocking) and routes them
//! (`Endpoint::route`), drives every connection (`Connection::drive`: due timers, transmits,
//! events; the same contract the real runtime follows), and when there was nothing to do
//! sleeps in a socket read until the next deadline (at most 2 ms). The application (a test)
//! acts between turns through [`Driver::run_until`]'s closure. That is the whole runtime: it
//! is enough to exercise the wire protocol against libudt on loopback, not to be fast.
//!
//! The first datagrams each way are kept in [`Capture`] so tests can print and compare the
//! handshakes libudt sends with ours.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, ErrorKind};
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use udt_proto::{
    ConnectError, Connection, ConnectionConfig, Endpoint, Instant, Route, Sink, SocketId, Transmit,
};

/// Datagrams received per turn before timers and transmits get their chance.
const RECV_BATCH: usize = 64;
/// Longest sleep in one turn, so the application closure runs regularly.
const MAX_WAIT: Duration = Duration::from_millis(2);
/// Waits shorter than this are spun (yield) instead of slept in a socket read.
const MIN_SLEEP: Duration = Duration::from_micros(50);

/// The first datagrams seen in each direction, in order.
#[derive(Debug, Default, Clone)]
pub struct Capture {
    /// Received: (source, bytes).
    pub received: Vec<(SocketAddr, Vec<u8>)>,
    /// Sent: (destination, bytes).
    pub sent: Vec<(SocketAddr, Vec<u8>)>,
    limit: usize,
}

impl Capture {
    fn record(list: &mut Vec<(SocketAddr, Vec<u8>)>, limit: usize, addr: SocketAddr, d: &[u8]) {
        if list.len() < limit {
            list.push((addr, d.to_vec()));
        }
    }
}

/// One UDP socket, its [`Endpoint`] and connections.
#[derive(Debug)]
pub struct Driver {
    socket: UdpSocket,
    endpoint: Endpoint,
    conns: BTreeMap<SocketId, Connection>,
    /// Drained connections the endpoint has forgotten (kept in `conns` for the tests).
    retired: BTreeSet<SocketId>,
    accepted: Vec<SocketId>,
    epoch: std::time::Instant,
    recv_buf: Vec<u8>,
    send_buf: Vec<u8>,
    /// The first datagrams each way (see [`Driver::capture_first`]).
    pub capture: Capture,
}

/// Sends each datagram the core commits at once (the interop tests need no batching).
struct SendNow<'a> {
    socket: &'a UdpSocket,
    capture: &'a mut Capture,
    buf: &'a mut Vec<u8>,
    /// The first send error, reported after the drive.
    error: Option<io::Error>,
}

impl<'a> SendNow<'a> {
    fn new(socket: &'a UdpSocket, capture: &'a mut Capture, buf: &'a mut Vec<u8>) -> Self {
        buf.clear();
        Self {
            socket,
            capture,
            buf,
            error: None,
        }
    }

    fn finish(self) -> io::Result<()> {
        self.error.map_or(Ok(()), Err)
    }
}

impl Sink for SendNow<'_> {
    fn buffer(&mut self) -> &mut Vec<u8> {
        self.buf
    }

    fn commit(&mut self, t: Transmit) {
        let start = self.buf.len() - t.size;
        if self.error.is_none() {
            let limit = self.capture.limit;
            Capture::record(
                &mut self.capture.sent,
                limit,
                t.destination,
                &self.buf[start..],
            );
            if let Err(e) = send_to(self.socket, t.destination, &self.buf[start..]) {
                self.error = Some(e);
            }
        }
        self.buf.truncate(start);
    }
}

impl Driver {
    /// Bind `addr` (use port 0 for an ephemeral port); `seed` seeds the endpoint's ids, ISNs
    /// and cookies.
    pub fn bind(addr: SocketAddr, seed: u64) -> io::Result<Self> {
        let socket = UdpSocket::bind(addr)?;
        socket.set_nonblocking(true)?;
        Ok(Self {
            socket,
            endpoint: Endpoint::new(seed),
            conns: BTreeMap::new(),
            retired: BTreeSet::new(),
            accepted: Vec::new(),
            epoch: std::time::Instant::now(),
            recv_buf: vec![0; 65_536],
            send_buf: Vec::with_capacity(65_536),
            capture: Capture::default(),
        })
    }

    /// Keep the first `n` datagrams of each direction in [`Driver::capture`].
    pub fn capture_first(&mut self, n: usize) {
        self.capture.limit = n;
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        // Cannot fail: `getsockname` on a bound socket we own fails only on a bad descriptor.
        self.socket
            .local_addr()
            .expect("a bound UDP socket has an address")
    }

    /// The protocol clock: time since this driver was created.
    pub fn now(&self) -> Instant {
        Instant::from_duration(self.epoch.elapsed())
    }

    /// Accept incoming connections (every verified request is accepted).
    pub fn listen(&mut self, config: ConnectionConfig) {
        self.endpoint.listen(config);
    }

    /// Start connecting to `remote` (rendezvous if `config` says so).
    pub fn connect(
        &mut self,
        remote: SocketAddr,
        config: ConnectionConfig,
    ) -> Result<SocketId, ConnectError> {
        let now = self.now();
        let conn = self.endpoint.connect(now, remote, config)?;
        let id = conn.local_id();
        self.conns.insert(id, conn);
        Ok(id)
    }

    /// A connection by id.
    ///
    /// # Panics
    /// If there is no such connection (a test bug).
    pub fn conn(&mut self, id: SocketId) -> &mut Connection {
        // A panic here is a test bug (documented above); ids come from this driver.
        self.conns.get_mut(&id).expect("no such connection")
    }

    /// Connections accepted by the listener, in order.
    pub fn accepted(&self) -> &[SocketId] {
        &self.accepted
    }

    /// Turn until `done` returns true (then `Ok(true)`) or `limit` passes (`Ok(false)`).
    pub fn run_until(
        &mut self,
        limit: Duration,
        mut done: impl FnMut(&mut Self) -> bool,
    ) -> io::Result<bool> {
        let start = std::time::Instant::now();
        loop {
            if done(self) {
                return Ok(true);
            }
            if start.elapsed() >= limit {
                return Ok(false);
            }
            self.turn()?;
        }
    }

    /// One round of receive, timers and transmit; sleeps until the next deadline if idle.
    pub fn turn(&mut self) -> io::Result<()> {
        let mut busy = self.receive_batch()?;
        busy |= self.drive_all()?;
        if !busy {
            self.wait()?;
        }
        Ok(())
    }

    /// Read up to [`RECV_BATCH`] waiting datagrams without blocking.
    fn receive_batch(&mut self) -> io::Result<bool> {
        for n in 0..RECV_BATCH {
            match self.socket.recv_from(&mut self.recv_buf) {
                Ok((len, from)) => self.handle_datagram(len, from)?,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(n > 0),
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => {} // ICMP from a dead peer
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Sleep in a socket read until the next deadline (bounded by [`MAX_WAIT`]).
    fn wait(&mut self) -> io::Result<()> {
        let now = self.now();
        let next = self
            .conns
            .values()
            .filter_map(Connection::poll_timeout)
            .min();
        let wait = next.map_or(MAX_WAIT, |t| t.saturating_duration_since(now).min(MAX_WAIT));
        if wait < MIN_SLEEP {
            std::thread::yield_now();
            return Ok(());
        }
        self.socket.set_nonblocking(false)?;
        self.socket.set_read_timeout(Some(wait))?;
        let got = self.socket.recv_from(&mut self.recv_buf);
        self.socket.set_nonblocking(true)?;
        match got {
            Ok((len, from)) => self.handle_datagram(len, from),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::ConnectionRefused
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Route one datagram (in `recv_buf[..len]`) through the endpoint.
    fn handle_datagram(&mut self, len: usize, from: SocketAddr) -> io::Result<()> {
        let now = self.now();
        let data = &self.recv_buf[..len];
        Capture::record(&mut self.capture.received, self.capture.limit, from, data);
        let mut sink = SendNow::new(&self.socket, &mut self.capture, &mut self.send_buf);
        match self
            .endpoint
            .route(now, now, from, data, |_| true, &mut sink)
        {
            Route::Connection(id) => {
                if let Some(conn) = self.conns.get_mut(&id) {
                    conn.handle_datagram(now, from, data);
                }
            }
            Route::Accepted(conn) => {
                let id = conn.local_id();
                self.conns.insert(id, *conn);
                self.accepted.push(id);
            }
            Route::Done => {}
        }
        sink.finish()
    }

    /// Drive every connection (due timers, transmits, events); true if anything was sent.
    /// A drained connection is forgotten by the endpoint, as the runtime does, but stays in
    /// the table: tests look at its `state()`/`error()`.
    fn drive_all(&mut self) -> io::Result<bool> {
        let now = self.now();
        let mut sent = false;
        let mut sink = SendNow::new(&self.socket, &mut self.capture, &mut self.send_buf);
        for (id, conn) in &mut self.conns {
            if self.retired.contains(id) {
                continue;
            }
            let driven = conn.drive(now, &mut sink);
            sent |= driven.transmits > 0;
            if driven.drained {
                self.endpoint.forget(conn);
                self.retired.insert(*id);
            }
        }
        sink.finish()?;
        Ok(sent)
    }
}

/// Send one datagram, waiting out a full socket buffer.
fn send_to(socket: &UdpSocket, to: SocketAddr, data: &[u8]) -> io::Result<()> {
    loop {
        match socket.send_to(data, to) {
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::yield_now(),
            // A vanished peer's port answers with ICMP: the protocol will notice by itself.
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}
