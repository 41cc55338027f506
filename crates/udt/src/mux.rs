//! The multiplexer: one UDP socket and one I/O thread serving every UDT connection on a local
//! port (4.11 §2.1).
//!
//! [`Mux`] is what the I/O thread and the application share: the socket, the `udt_proto`
//! [`Endpoint`] with the connection table (one mutex, taken by the I/O thread once per received
//! batch and by `connect`/`accept`), the accept queue, and the queue of connections an
//! application call has touched. [`MuxRef`] is an application's counted handle: when the last
//! one is gone and every connection has drained, the I/O thread exits and the port closes.
//!
//! Sockets find a multiplexer to share through the registry in `ports` (UDT_REUSEADDR). A
//! multiplexer whose owners went to zero while connections still drain may gain an owner
//! again ([`MuxRef::join`]); once the I/O thread has decided to exit ([`Mux::try_retire`]
//! marks the count [`RETIRED`] in the same atomic step that checks it is zero) it never does.
//!
//! Lock order: `Mux::state`, then a connection's lock, then `Mux::pending` (a leaf).

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant as StdInstant;

use udt_proto::wire::Capabilities;
use udt_proto::{ConnectError, ConnectionConfig, Endpoint, Instant, SocketId};

use crate::driver;
use crate::poller::Watchers;
use crate::shared::{ConnShared, ConnState, WakerList};
use crate::sys::{self, Waker};

/// Accepted connections waiting for `accept` (4.11's listen backlog; beyond it requests are
/// refused).
pub(crate) const DEFAULT_BACKLOG: usize = 1024;

/// The owner count of a multiplexer whose I/O thread exits: no handle may join it any more.
const RETIRED: usize = usize::MAX;

/// State shared by the I/O thread and the application handles of one port.
pub(crate) struct Mux {
    socket: UdpSocket,
    local_addr: SocketAddr,
    waker: Waker,
    /// `Instant::ZERO` for every connection on this port.
    epoch: StdInstant,
    /// Largest datagram accepted (MSS minus the IP/UDP header).
    pub(crate) max_datagram: usize,
    /// The UDP-level options the port was opened with (UDT_REUSEADDR is reported from here:
    /// it is never the kernel option).
    pub(crate) udp_options: sys::UdpOptions,
    /// What the kernel granted the socket (offloads, buffer sizes).
    pub(crate) socket_info: sys::SocketInfo,
    state: Mutex<MuxState>,
    accept_cond: Condvar,
    pending: Mutex<Vec<Arc<ConnShared>>>,
    has_pending: AtomicBool,
    /// The I/O thread is (about to be) blocked in `ppoll` and needs the waker.
    pub(crate) sleeping: AtomicBool,
    owners: AtomicUsize,
    pub(crate) aborted: AtomicBool,
    /// Pollers waiting for the accept queue.
    pub(crate) accept_watchers: Watchers,
    /// Async `accept` calls waiting for the accept queue.
    pub(crate) accept_wakers: WakerList,
}

/// The endpoint and everything found through it.
pub(crate) struct MuxState {
    pub(crate) endpoint: Endpoint,
    pub(crate) conns: HashMap<SocketId, Arc<ConnShared>>,
    pub(crate) accept_queue: VecDeque<Arc<ConnShared>>,
    pub(crate) backlog: usize,
}

impl Mux {
    /// Current time on this port's clock.
    pub(crate) fn now(&self) -> Instant {
        Instant::from_duration(self.epoch.elapsed())
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }

    pub(crate) fn waker(&self) -> &Waker {
        &self.waker
    }

    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The capabilities this port's connections announce to their peers (see
    /// `udt_proto::wire::extension`): GSO trains are welcome when this kernel has GSO (a
    /// kernel that has it also cuts trains apart for a socket without GRO), and GRO says
    /// whether this side receives them coalesced.
    pub(crate) fn local_capabilities(&self) -> Capabilities {
        let mut caps = Capabilities::NONE;
        if self.socket_info.gso {
            caps = caps.union(Capabilities::GSO);
        }
        if self.socket_info.gro {
            caps = caps.union(Capabilities::GRO);
        }
        caps
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, MuxState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tell blocked `accept` calls that the queue changed.
    pub(crate) fn notify_acceptors(&self) {
        self.accept_cond.notify_all();
        self.accept_watchers.signal();
        self.accept_wakers.wake_all();
    }

    /// Take the connections application calls have touched since the last call.
    pub(crate) fn take_pending(&self, into: &mut Vec<Arc<ConnShared>>) {
        if self.has_pending.swap(false, SeqCst) {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            std::mem::swap(into, &mut *pending);
        }
    }

    pub(crate) fn has_pending(&self) -> bool {
        self.has_pending.load(SeqCst)
    }

    /// Whether the I/O thread may exit now, because no application handle and no connection
    /// is left (the I/O thread asks; so does a bind that may not share this multiplexer and
    /// would otherwise wait for it to notice). A `true` is final: the owner count becomes
    /// [`RETIRED`] in the same atomic step that sees it zero, under the state lock that
    /// connections are added under, so [`MuxRef::join`] can never revive it.
    pub(crate) fn try_retire(&self) -> bool {
        // The common case, asked on every turn of the I/O loop, without the state lock.
        if !matches!(self.owners.load(SeqCst), 0 | RETIRED) {
            return false;
        }
        let state = self.lock();
        state.conns.is_empty()
            && match self.owners.compare_exchange(0, RETIRED, SeqCst, SeqCst) {
                Ok(_) => true,
                Err(n) => n == RETIRED,
            }
    }

    /// Whether this multiplexer stopped or is stopping for good (retired or aborted): a
    /// socket binding its address must not join it.
    pub(crate) fn is_dying(&self) -> bool {
        self.owners.load(SeqCst) == RETIRED || self.aborted.load(SeqCst)
    }

    /// Queue `conn` for the I/O thread after an application call changed it (new data, close,
    /// a new connection) and wake the thread if it sleeps.
    pub(crate) fn poke(&self, conn: &Arc<ConnShared>, state: &mut ConnState) {
        if !state.dirty {
            state.dirty = true;
            self.pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(Arc::clone(conn));
            self.has_pending.store(true, SeqCst);
        }
        if self.sleeping.load(SeqCst) {
            self.waker.wake();
        }
    }
}

/// An application's handle on a multiplexer; the port lives while one exists (or while a
/// connection still drains).
pub(crate) struct MuxRef(Arc<Mux>);

impl MuxRef {
    /// Open a new port at `addr` and start its I/O thread. `max_datagram` is the largest UDP
    /// payload its connections will use; `udp` sets the socket's options. Sockets call
    /// `ports::open` instead, which shares a multiplexer when UDT_REUSEADDR allows.
    pub(crate) fn bind(
        addr: SocketAddr,
        max_datagram: usize,
        udp: &sys::UdpOptions,
    ) -> io::Result<Self> {
        let (socket, socket_info) = sys::bind_udp(addr, udp)?;
        Self::start(socket, socket_info, max_datagram, udp)
    }

    /// A new multiplexer on an application's bound UDP socket (4.11 `bind2`).
    pub(crate) fn adopt(
        socket: UdpSocket,
        max_datagram: usize,
        udp: &sys::UdpOptions,
    ) -> io::Result<Self> {
        let (socket, socket_info) = sys::adopt_udp(socket, udp)?;
        Self::start(socket, socket_info, max_datagram, udp)
    }

    /// Wrap a ready socket and start its I/O thread.
    fn start(
        socket: UdpSocket,
        socket_info: sys::SocketInfo,
        max_datagram: usize,
        udp: &sys::UdpOptions,
    ) -> io::Result<Self> {
        let local_addr = socket.local_addr()?;
        let mut seed = [0u8; 8];
        fill_random(&mut seed);
        let mux = Arc::new(Mux {
            socket,
            local_addr,
            waker: Waker::new()?,
            epoch: StdInstant::now(),
            max_datagram,
            udp_options: *udp,
            socket_info,
            state: Mutex::new(MuxState {
                endpoint: Endpoint::new(u64::from_ne_bytes(seed)),
                conns: HashMap::new(),
                accept_queue: VecDeque::new(),
                backlog: DEFAULT_BACKLOG,
            }),
            accept_cond: Condvar::new(),
            pending: Mutex::new(Vec::new()),
            has_pending: AtomicBool::new(false),
            sleeping: AtomicBool::new(false),
            owners: AtomicUsize::new(1),
            aborted: AtomicBool::new(false),
            accept_watchers: Watchers::default(),
            accept_wakers: WakerList::default(),
        });
        driver::spawn(Arc::clone(&mux))?;
        Ok(Self(mux))
    }

    /// A new handle on a live multiplexer found in the registry, or `None` if it is dying
    /// (retired: its I/O thread exits; or aborted). Joining one whose last handle is gone
    /// but whose connections still drain is fine: its I/O thread is still running and now
    /// keeps running.
    pub(crate) fn join(mux: &Arc<Mux>) -> Option<Self> {
        if mux.aborted.load(SeqCst) {
            return None;
        }
        let mut n = mux.owners.load(SeqCst);
        loop {
            if n == RETIRED {
                return None;
            }
            match mux.owners.compare_exchange(n, n + 1, SeqCst, SeqCst) {
                Ok(_) => return Some(Self(Arc::clone(mux))),
                Err(now) => n = now,
            }
        }
    }

    pub(crate) fn mux(&self) -> &Mux {
        &self.0
    }

    /// The shared state itself, for a poller (which must not keep the port open).
    pub(crate) fn shared(&self) -> &Arc<Mux> {
        &self.0
    }

    /// Accept connection requests with `config`, unless another socket already listens on
    /// this port (4.11 refuses a second listener) or a rendezvous connection lives here (the
    /// listener would take its handshakes, which come for socket 0).
    pub(crate) fn listen(&self, config: ConnectionConfig) -> io::Result<()> {
        let mut state = self.0.lock();
        if state.endpoint.is_listening() {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!(
                    "another UDT socket is already listening on {}",
                    self.0.local_addr
                ),
            ));
        }
        if state.endpoint.has_rendezvous() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "cannot listen on {}: a rendezvous connection uses that port",
                    self.0.local_addr
                ),
            ));
        }
        state.endpoint.listen(config);
        Ok(())
    }

    /// Stop accepting, and close connections that were accepted but never taken.
    pub(crate) fn stop_listening(&self) {
        let now = self.0.now();
        let queued: Vec<_> = {
            let mut state = self.0.lock();
            state.endpoint.stop_listening();
            state.accept_queue.drain(..).collect()
        };
        for conn in queued {
            let mut st = conn.lock();
            st.conn.close(now);
            self.0.poke(&conn, &mut st);
        }
        self.0.notify_acceptors();
    }

    /// Wait for the next accepted connection (until `deadline`, if any).
    pub(crate) fn accept(&self, deadline: Option<StdInstant>) -> io::Result<Arc<ConnShared>> {
        let mut state = self.0.lock();
        loop {
            if let Some(conn) = state.accept_queue.pop_front() {
                return Ok(conn);
            }
            if !state.endpoint.is_listening() || self.0.aborted.load(SeqCst) {
                return Err(io::Error::new(
                    io::ErrorKind::NotConnected,
                    "the listener was closed",
                ));
            }
            state = match deadline {
                None => self
                    .0
                    .accept_cond
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(d) => {
                    let left = d.saturating_duration_since(StdInstant::now());
                    if left.is_zero() {
                        return Err(io::ErrorKind::TimedOut.into());
                    }
                    self.0
                        .accept_cond
                        .wait_timeout(state, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
    }

    /// Start a connection to `remote` (its handshake goes out from the I/O thread).
    pub(crate) fn connect(
        &self,
        remote: SocketAddr,
        config: ConnectionConfig,
    ) -> io::Result<Arc<ConnShared>> {
        let now = self.0.now();
        let conn = {
            let mut state = self.0.lock();
            let mut conn = state
                .endpoint
                .connect(now, remote, config)
                .map_err(connect_error)?;
            conn.set_local_extensions(self.0.local_capabilities());
            let shared = ConnShared::new(conn);
            state.conns.insert(shared.id, Arc::clone(&shared));
            shared
        };
        let mut st = conn.lock();
        self.0.poke(&conn, &mut st);
        drop(st);
        Ok(conn)
    }

    /// Stop the I/O thread at once without telling any peer (tests of a vanished peer).
    pub(crate) fn abort(&self) {
        self.0.aborted.store(true, SeqCst);
        self.0.waker.wake();
        self.0.notify_acceptors();
    }
}

impl Clone for MuxRef {
    fn clone(&self) -> Self {
        self.0.owners.fetch_add(1, SeqCst);
        Self(Arc::clone(&self.0))
    }
}

impl Drop for MuxRef {
    fn drop(&mut self) {
        if self.0.owners.fetch_sub(1, SeqCst) == 1 {
            // The I/O thread may now be done: let it check.
            self.0.waker.wake();
        }
    }
}

impl std::fmt::Debug for MuxRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Multiplexer")
            .field("local_addr", &self.0.local_addr)
            .finish()
    }
}

fn connect_error(e: ConnectError) -> io::Error {
    let kind = match e {
        ConnectError::AlreadyConnecting(_) => io::ErrorKind::AddrInUse,
        _ => io::ErrorKind::InvalidInput,
    };
    io::Error::new(kind, e)
}

/// Seed material from the OS (the endpoint's SYN-cookie key, socket ids and ISNs derive from
/// it, so it must not be guessable).
fn fill_random(buf: &mut [u8]) {
    // SAFETY: getrandom writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n != buf.len() as isize {
        // Practically unreachable (getrandom blocks until seeded); fall back to time and
        // address entropy rather than failing to open a socket.
        let t = StdInstant::now().elapsed().as_nanos() as u64 ^ (buf.as_ptr() as u64);
        let mixed = std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), t);
        for (b, m) in buf.iter_mut().zip(mixed.to_ne_bytes()) {
            *b = m;
        }
    }
}
