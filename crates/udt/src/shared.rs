//! Per-connection state shared by the I/O thread and application threads.
//!
//! Each connection sits behind its own mutex, so connections on one multiplexer never contend
//! with each other, and application calls (`send`, `recv`) touch only their connection. The
//! condition variable wakes blocked readers, writers and connectors; it is only signalled
//! when someone waits, because a futex wake is a syscall the hot path should not pay per
//! packet.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
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
}

/// What the mutex guards.
#[derive(Debug)]
pub(crate) struct ConnState {
    pub(crate) conn: Connection,
    /// The deadline of this connection's live entry in the driver's timer heap; entries with
    /// another time are stale and skipped.
    pub(crate) armed: Option<Instant>,
    /// Queued for the driver after an application call (dedupes wake-ups).
    pub(crate) dirty: bool,
    /// The I/O thread removed the drained connection, after sending its last datagrams
    /// (so `close` can return knowing its Shutdown left).
    pub(crate) retired: bool,
    /// Application threads blocked on `cond`.
    waiters: u32,
}

impl ConnShared {
    pub(crate) fn new(conn: Connection) -> Arc<Self> {
        Arc::new(Self {
            id: conn.local_id(),
            state: Mutex::new(ConnState {
                conn,
                armed: None,
                dirty: false,
                retired: false,
                waiters: 0,
            }),
            cond: Condvar::new(),
            watchers: Watchers::default(),
        })
    }

    /// Lock the connection. A panic elsewhere while holding the lock leaves the connection
    /// in a consistent state between calls, so poisoning is ignored.
    pub(crate) fn lock(&self) -> MutexGuard<'_, ConnState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wake blocked application threads, if there are any.
    pub(crate) fn notify(&self, state: &ConnState) {
        if state.waiters > 0 {
            self.cond.notify_all();
        }
        self.watchers.signal();
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
