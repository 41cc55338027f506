//! Per-connection state shared by the I/O thread and application threads.
//!
//! Each connection sits behind its own mutex, so connections on one multiplexer never contend
//! with each other, and application calls (`send`, `recv`) touch only their connection. The
//! condition variable wakes blocked readers, writers and connectors; it is only signalled
//! when someone waits, because a futex wake is a syscall the hot path should not pay per
//! packet.
//!
//! Async tasks (`udt::tokio`) wait in a [`WakerList`] beside the condition variable: a task
//! that finds nothing to do registers its `Waker` *while still holding the connection's
//! lock*, and the I/O thread wakes the list under that same lock, so a wake-up between the
//! look and the registration cannot be lost. An empty list costs the I/O thread one atomic
//! load.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::Waker;
use std::time::Instant as StdInstant;

use udt_proto::{Connection, Instant, SocketId};

use crate::poller::Watchers;

/// One connection and its wait queue.
#[derive(Debug)]
pub(crate) struct ConnShared {
    pub(crate) id: SocketId,
    state: Mutex<ConnState>,
    cond: Condvar,
    /// Pollers watching this connection (signalled with the waiters).
    pub(crate) watchers: Watchers,
    /// Async tasks waiting for any progress on this connection (woken with the waiters).
    pub(crate) wakers: WakerList,
}

/// What the mutex guards.
#[derive(Debug)]
pub(crate) struct ConnState {
    pub(crate) conn: Connection,
    /// The deadline of this connection's live entry in the driver's timer heap; entries with
    /// another time are stale and skipped.
    pub(crate) armed: Option<Instant>,
    /// The connection's own next deadline, as its last drive reported it. It can be later
    /// than `armed` (a deadline that moved back, such as the ACK timer after a prompt ACK):
    /// the driver then moves the heap entry before it sleeps rather than waking for it.
    pub(crate) deadline: Option<Instant>,
    /// Queued for the driver after an application call (dedupes wake-ups).
    pub(crate) dirty: bool,
    /// The driver's flush count when this connection last lent a payload to the send
    /// batch: once the count has passed it, the payloads are sent and the driver tells the
    /// connection (`Connection::lent_sent`) at its next drive.
    pub(crate) lent_before: Option<u64>,
    /// The I/O thread removed the drained connection, after sending its last datagrams
    /// (so `close` can return knowing its Shutdown left).
    pub(crate) retired: bool,
    /// Application threads blocked on `cond`.
    waiters: u32,
}

impl ConnState {
    /// Whether application threads are blocked on the connection's condition variable.
    pub(crate) fn has_waiters(&self) -> bool {
        self.waiters > 0
    }
}

impl ConnShared {
    pub(crate) fn new(conn: Connection) -> Arc<Self> {
        Arc::new(Self {
            id: conn.local_id(),
            state: Mutex::new(ConnState {
                conn,
                armed: None,
                deadline: None,
                dirty: false,
                lent_before: None,
                retired: false,
                waiters: 0,
            }),
            cond: Condvar::new(),
            watchers: Watchers::default(),
            wakers: WakerList::default(),
        })
    }

    /// Lock the connection. A panic elsewhere while holding the lock leaves the connection
    /// in a consistent state between calls, so poisoning is ignored.
    pub(crate) fn lock(&self) -> MutexGuard<'_, ConnState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The lock if no other thread holds it (see [`Self::lock`] on poisoning).
    pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, ConnState>> {
        match self.state.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Wake blocked application threads, if there are any.
    pub(crate) fn notify(&self, state: &ConnState) {
        self.wake(state.has_waiters());
    }

    /// [`Self::notify`] after the lock was released: `waiters` is [`ConnState::has_waiters`]
    /// as read under the lock when the state changed. A thread that starts waiting later
    /// looks at the state first, and one that waited then is woken now, so nothing is lost;
    /// and the woken thread does not find the lock still held (a futex wait and wake more).
    pub(crate) fn wake(&self, waiters: bool) {
        if waiters {
            self.cond.notify_all();
        }
        self.watchers.signal();
        self.wakers.wake_all();
    }

    /// Call `f` under the lock until it returns `Some`, sleeping on the condition variable
    /// between tries; `None` once `deadline` passes.
    pub(crate) fn wait_until<T>(
        &self,
        deadline: Option<StdInstant>,
        mut f: impl FnMut(&mut ConnState) -> Option<T>,
    ) -> Option<T> {
        let mut guard = self.lock();
        loop {
            if let Some(v) = f(&mut guard) {
                return Some(v);
            }
            guard.waiters += 1;
            guard = match deadline {
                None => self
                    .cond
                    .wait(guard)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(d) => {
                    let left = d.saturating_duration_since(StdInstant::now());
                    if left.is_zero() {
                        guard.waiters -= 1;
                        return None;
                    }
                    self.cond
                        .wait_timeout(guard, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
            guard.waiters -= 1;
        }
    }
}

/// Async tasks waiting for something to change: readable data, buffer space, a finished
/// handshake or close (a connection), or a new connection (an accept queue).
///
/// One list wakes everyone on any progress, as the condition variable's `notify_all` does:
/// the I/O thread does not say which event happened, and a woken task simply looks again.
/// Wakers are deduplicated (`will_wake`), so a task polled many times between events is
/// registered once, and the list keeps its capacity across rounds, so waiting allocates
/// nothing in steady state.
#[derive(Debug, Default)]
pub(crate) struct WakerList {
    /// Whether the list may be non-empty (lets `wake_all` skip the lock when nobody waits).
    armed: AtomicBool,
    list: Mutex<Vec<Waker>>,
}

impl WakerList {
    /// Wake `waker`'s task at the next `wake_all`. Call it while holding the lock under which
    /// the awaited condition changes (the connection's, or the multiplexer's for accepts).
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn register(&self, waker: &Waker) {
        let mut list = self.list.lock().unwrap_or_else(PoisonError::into_inner);
        if !list.iter().any(|w| w.will_wake(waker)) {
            list.push(waker.clone());
        }
        self.armed.store(true, SeqCst);
    }

    /// Wake every registered task and forget them (they register again if they still wait).
    pub(crate) fn wake_all(&self) {
        if !self.armed.load(SeqCst) {
            return;
        }
        let mut list = self.list.lock().unwrap_or_else(PoisonError::into_inner);
        self.armed.store(false, SeqCst);
        // Waking only schedules the task (it never polls inline), so doing it under this
        // leaf lock is safe, and keeps the vector's capacity for the next round.
        for w in list.drain(..) {
            w.wake();
        }
    }
}
