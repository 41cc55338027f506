//! [`Poller`]: wait on many UDT sockets at once, like UDT4's `epoll_*` calls.
//!
//! UDT sockets have no file descriptor of their own (every connection on a port shares one
//! UDP socket), so the OS poller cannot watch them. Instead each connection (and each
//! listener's accept queue) keeps a list of [`Watchers`]: the pollers registered on it. When
//! the I/O thread reports progress on a connection it signals them, which bumps the poller's
//! generation counter and wakes its condition variable.
//!
//! Readiness is level-triggered and computed, not stored: `wait` asks every registered socket
//! whether a read / write would block right now, and sleeps only if none is ready and no
//! signal arrived since it started looking. A signal between the look and the sleep changes
//! the generation, so no wake-up is lost. Each look costs one lock per registered socket;
//! that is cheap next to the I/O itself for thousands of sockets.
//!
//! Lock order: the poller's registry, then a connection or multiplexer lock, then a
//! `Watchers` list, then the poller's signal (both leaves).

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::ops::{BitOr, BitOrAssign};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant as StdInstant};

use udt_proto::{ConnectionError, Mode, State};

use crate::mux::Mux;
use crate::shared::ConnShared;

/// A set of readiness flags (UDT4 `UDT_EPOLL_IN` / `OUT` / `ERR`): what a registration asks
/// for, and what [`Poller::wait`] reports.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Ready(u8);

impl Ready {
    /// No flag.
    pub const EMPTY: Self = Self(0);
    /// A read (or `accept`) would not block: data, end of stream, an error, or a waiting
    /// connection (UDT_EPOLL_IN, 0x1).
    pub const IN: Self = Self(0x1);
    /// A write would not block: send-buffer space, or an error (UDT_EPOLL_OUT, 0x4). An
    /// asynchronous connect becomes writable when it completes.
    pub const OUT: Self = Self(0x4);
    /// The connection ended other than by our own close: refused, timed out, broken, or
    /// shut down by the peer (UDT_EPOLL_ERR, 0x8). Reported whether asked for or not.
    pub const ERR: Self = Self(0x8);

    /// Whether every flag of `other` is set.
    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether no flag is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The UDT4 bit mask (as `UDT_EVENT` reports it).
    pub fn bits(self) -> u8 {
        self.0
    }

    fn intersect(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }
}

impl BitOr for Ready {
    type Output = Self;

    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl BitOrAssign for Ready {
    fn bitor_assign(&mut self, rhs: Self) {
        self.0 |= rhs.0;
    }
}

impl fmt::Debug for Ready {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [(Self::IN, "IN"), (Self::OUT, "OUT"), (Self::ERR, "ERR")];
        let set: Vec<_> = names
            .iter()
            .filter(|(flag, _)| self.contains(*flag))
            .map(|(_, name)| *name)
            .collect();
        write!(f, "Ready({})", set.join(" | "))
    }
}

/// The caller's name for a registration, handed back in its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token(pub usize);

/// One ready registration, as [`Poller::wait`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollEvent {
    /// The registration's token.
    pub token: Token,
    /// The flags that are ready among those asked for (plus [`Ready::ERR`]).
    pub ready: Ready,
}

/// Something a [`Poller`] can watch: [`crate::UdtStream`], [`crate::UdtMessageSocket`],
/// [`crate::UdtListener`].
pub trait Source {
    /// The handle a poller keeps (opaque).
    #[doc(hidden)]
    fn poll_handle(&self) -> PollHandle;
}

/// What a poller keeps of a registered socket: the shared state, and a weak reference that
/// dies with the application's socket (so a dropped socket leaves the poller by itself).
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct PollHandle(Target);

#[derive(Clone)]
enum Target {
    Conn {
        conn: Arc<ConnShared>,
        mode: Mode,
        alive: Weak<()>,
    },
    Listener {
        mux: Arc<Mux>,
        alive: Weak<()>,
    },
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Conn { conn, .. } => write!(f, "Conn({})", conn.id.0),
            Self::Listener { mux, .. } => write!(f, "Listener({})", mux.local_addr()),
        }
    }
}

impl PollHandle {
    pub(crate) fn conn(conn: &Arc<ConnShared>, mode: Mode, alive: &Arc<()>) -> Self {
        Self(Target::Conn {
            conn: Arc::clone(conn),
            mode,
            alive: Arc::downgrade(alive),
        })
    }

    pub(crate) fn listener(mux: &Arc<Mux>, alive: &Arc<()>) -> Self {
        Self(Target::Listener {
            mux: Arc::clone(mux),
            alive: Arc::downgrade(alive),
        })
    }

    fn watchers(&self) -> &Watchers {
        match &self.0 {
            Target::Conn { conn, .. } => &conn.watchers,
            Target::Listener { mux, .. } => &mux.accept_watchers,
        }
    }

    fn is_alive(&self) -> bool {
        match &self.0 {
            Target::Conn { alive, .. } | Target::Listener { alive, .. } => alive.strong_count() > 0,
        }
    }

    /// Readiness right now.
    fn readiness(&self) -> Ready {
        match &self.0 {
            Target::Conn { conn, mode, .. } => conn_readiness(conn, *mode),
            Target::Listener { mux, .. } => {
                let state = mux.lock();
                if !state.accept_queue.is_empty() || !state.endpoint.is_listening() {
                    Ready::IN
                } else {
                    Ready::EMPTY
                }
            }
        }
    }
}

/// A connection's readiness: IN if a read would not block, OUT if a write would not, ERR if
/// it ended other than by our own close.
pub(crate) fn conn_readiness(conn: &ConnShared, mode: Mode) -> Ready {
    let st = conn.lock();
    let c = &st.conn;
    let mut ready = Ready::EMPTY;
    let readable = match mode {
        Mode::Stream => c.readable_bytes() > 0,
        Mode::Message => c.has_message(),
    };
    let closed = c.state() == State::Closed;
    if readable || closed {
        ready |= Ready::IN;
    }
    if closed || (c.state() == State::Connected && c.send_buffer_free() > 0) {
        ready |= Ready::OUT;
    }
    if closed && c.error() != Some(ConnectionError::LocallyClosed) {
        ready |= Ready::ERR;
    }
    ready
}

/// Waits for readiness on many UDT sockets (UDT4 `epoll_create` / `epoll_add_usock` /
/// `epoll_wait`). Cheap to share: every method takes `&self`.
///
/// ```no_run
/// use udt::{Poller, Ready, Token, UdtListener};
/// let listener = UdtListener::bind("127.0.0.1:9000")?;
/// let poller = Poller::new();
/// poller.add(&listener, Token(0), Ready::IN)?;
/// let mut events = Vec::new();
/// poller.wait(&mut events, None)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Poller {
    signal: Arc<Signal>,
    registry: Mutex<HashMap<Token, Registration>>,
}

struct Registration {
    handle: PollHandle,
    interest: Ready,
}

impl Poller {
    /// An empty poller.
    pub fn new() -> Self {
        Self {
            signal: Arc::new(Signal::default()),
            registry: Mutex::new(HashMap::new()),
        }
    }

    /// Watch `source` for `interest` (ERR is always reported), naming it `token`. A token
    /// already in use is `AlreadyExists`.
    pub fn add(&self, source: &impl Source, token: Token, interest: Ready) -> io::Result<()> {
        let handle = source.poll_handle();
        let mut registry = self.registry();
        if registry.contains_key(&token) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("poller token {} is already registered", token.0),
            ));
        }
        handle.watchers().add(&self.signal);
        registry.insert(token, Registration { handle, interest });
        drop(registry);
        // The socket may be ready already: let a concurrent `wait` look again.
        self.signal.bump();
        Ok(())
    }

    /// Change what `token` is watched for.
    pub fn modify(&self, token: Token, interest: Ready) -> io::Result<()> {
        match self.registry().get_mut(&token) {
            Some(r) => r.interest = interest,
            None => return Err(not_registered(token)),
        }
        self.signal.bump();
        Ok(())
    }

    /// Stop watching `token` (UDT4 `epoll_remove_usock`).
    pub fn remove(&self, token: Token) -> io::Result<()> {
        let r = self
            .registry()
            .remove(&token)
            .ok_or_else(|| not_registered(token))?;
        r.handle.watchers().remove(&self.signal);
        Ok(())
    }

    /// Registrations left. Sockets dropped by the application are removed at the next
    /// `wait`.
    pub fn len(&self) -> usize {
        self.registry().len()
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Block until some registration is ready or `timeout` runs out (`None`: no limit;
    /// zero: just look). `events` is cleared and filled with every ready registration
    /// (level-triggered: a socket stays ready until read / written); returns how many, 0 on
    /// timeout.
    pub fn wait(
        &self,
        events: &mut Vec<PollEvent>,
        timeout: Option<Duration>,
    ) -> io::Result<usize> {
        let deadline = timeout.map(|t| StdInstant::now() + t);
        events.clear();
        loop {
            let seen = self.signal.generation();
            self.collect(events);
            if !events.is_empty() {
                return Ok(events.len());
            }
            if !self.signal.wait_past(seen, deadline) {
                return Ok(0);
            }
        }
    }

    /// Look at every registration once; forget those whose socket is gone.
    fn collect(&self, events: &mut Vec<PollEvent>) {
        let mut registry = self.registry();
        let mut dead = Vec::new();
        for (&token, r) in registry.iter() {
            if !r.handle.is_alive() {
                dead.push(token);
                continue;
            }
            let ready = r.handle.readiness().intersect(r.interest | Ready::ERR);
            if !ready.is_empty() {
                events.push(PollEvent { token, ready });
            }
        }
        for token in dead {
            if let Some(r) = registry.remove(&token) {
                r.handle.watchers().remove(&self.signal);
            }
        }
    }

    fn registry(&self) -> MutexGuard<'_, HashMap<Token, Registration>> {
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for Poller {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        for (_, r) in self.registry().drain() {
            r.handle.watchers().remove(&self.signal);
        }
    }
}

impl fmt::Debug for Poller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Poller")
            .field("registered", &self.len())
            .finish()
    }
}

fn not_registered(token: Token) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("poller token {} is not registered", token.0),
    )
}

/// A poller's wake-up: a generation counter under a mutex, and a condition variable.
#[derive(Debug, Default)]
pub(crate) struct Signal {
    generation: Mutex<u64>,
    cond: Condvar,
}

impl Signal {
    fn lock(&self) -> MutexGuard<'_, u64> {
        self.generation
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn generation(&self) -> u64 {
        *self.lock()
    }

    /// Something may have become ready.
    fn bump(&self) {
        let mut g = self.lock();
        *g = g.wrapping_add(1);
        drop(g);
        self.cond.notify_all();
    }

    /// Sleep until the generation moves past `seen`; false once `deadline` passes first.
    fn wait_past(&self, seen: u64, deadline: Option<StdInstant>) -> bool {
        let mut g = self.lock();
        while *g == seen {
            g = match deadline {
                None => self.cond.wait(g).unwrap_or_else(PoisonError::into_inner),
                Some(d) => {
                    let left = d.saturating_duration_since(StdInstant::now());
                    if left.is_zero() {
                        return false;
                    }
                    self.cond
                        .wait_timeout(g, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
        true
    }
}

/// The pollers registered on one connection or accept queue. Signalling costs one atomic
/// load when there are none, so the I/O thread's hot path is unchanged for unpolled sockets.
#[derive(Debug, Default)]
pub(crate) struct Watchers {
    count: AtomicUsize,
    list: Mutex<Vec<Arc<Signal>>>,
}

impl Watchers {
    fn lock(&self) -> MutexGuard<'_, Vec<Arc<Signal>>> {
        self.list.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn add(&self, signal: &Arc<Signal>) {
        let mut list = self.lock();
        list.push(Arc::clone(signal));
        self.count.store(list.len(), SeqCst);
    }

    fn remove(&self, signal: &Arc<Signal>) {
        let mut list = self.lock();
        if let Some(i) = list.iter().position(|s| Arc::ptr_eq(s, signal)) {
            list.swap_remove(i);
        }
        self.count.store(list.len(), SeqCst);
    }

    /// Wake every registered poller.
    pub(crate) fn signal(&self) {
        if self.count.load(SeqCst) == 0 {
            return;
        }
        for s in self.lock().iter() {
            s.bump();
        }
    }
}
