//! The I/O thread's deadlines: a binary heap of connections by their next deadline, with lazy
//! invalidation.
//!
//! A connection has at most one live entry, at its `armed` time ([`ConnState::armed`]). When
//! its deadline moves earlier, a new entry is pushed and the old one goes stale (its time no
//! longer matches `armed`) and is skipped when it surfaces. When the deadline moves *later*,
//! as the receiver's ACK timer does after every prompt ACK (re-armed a full period on), the
//! entry stays; before the thread sleeps, [`Deadlines::next`] moves such an entry to the
//! connection's real deadline ([`ConnState::deadline`]). Left in place, it woke the thread to
//! find nothing due: about one wake-up per GSO train at a 45 Mbit/s receiver. So a busy
//! connection pushes O(1) entries per packet and an idle one none.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

use udt_proto::Instant;

use crate::shared::{ConnShared, ConnState};

/// The connections of one port by deadline.
#[derive(Default)]
pub(crate) struct Deadlines {
    heap: BinaryHeap<Entry>,
}

impl Deadlines {
    /// Record `conn`'s deadline after a drive (`st` is its locked state; `None`: nothing
    /// armed). Only a deadline earlier than the live entry needs a new one.
    pub(crate) fn arm(
        &mut self,
        conn: &Arc<ConnShared>,
        st: &mut ConnState,
        deadline: Option<Instant>,
    ) {
        st.deadline = deadline;
        if let Some(at) = deadline {
            if st.armed.is_none_or(|armed| at < armed) {
                st.armed = Some(at);
                self.heap.push(Entry {
                    at,
                    conn: Arc::clone(conn),
                });
            }
        }
    }

    /// The next connection whose live entry is due at `now`, its entry removed (the caller
    /// drives it, which arms it again).
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<Arc<ConnShared>> {
        while self.heap.peek().is_some_and(|e| e.at <= now) {
            let entry = self.heap.pop()?;
            let mut st = entry.conn.lock();
            if st.armed == Some(entry.at) {
                st.armed = None;
                drop(st);
                return Some(entry.conn);
            }
        }
        None
    }

    /// The earliest deadline worth waking for. Stale entries at the top are dropped and
    /// entries whose connection's deadline moved later are moved there. A connection whose
    /// lock an application holds just now keeps its entry (at worst one early wake-up).
    pub(crate) fn next(&mut self) -> Option<Instant> {
        while let Some(top) = self.heap.peek() {
            let (at, conn) = (top.at, Arc::clone(&top.conn));
            let Some(mut st) = conn.try_lock() else {
                return Some(at);
            };
            if st.armed == Some(at) && st.deadline.is_some_and(|d| d <= at) {
                return Some(at);
            }
            self.heap.pop();
            if st.armed != Some(at) {
                continue;
            }
            st.armed = st.deadline;
            if let Some(later) = st.deadline {
                drop(st);
                self.heap.push(Entry { at: later, conn });
            }
        }
        None
    }
}

/// A connection's deadline in the heap (earliest first).
struct Entry {
    at: Instant,
    conn: Arc<ConnShared>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    /// Reversed, so `BinaryHeap` (a max-heap) pops the earliest deadline.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .at
            .cmp(&self.at)
            .then_with(|| other.conn.id.0.cmp(&self.conn.id.0))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use udt_proto::{ConnectionConfig, Endpoint};

    use super::*;

    fn conn(endpoint: &mut Endpoint) -> Arc<ConnShared> {
        let remote = "127.0.0.1:9000".parse().unwrap();
        let c = endpoint
            .connect(Instant::ZERO, remote, ConnectionConfig::default())
            .unwrap();
        ConnShared::new(c)
    }

    fn ms(n: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(n)
    }

    #[test]
    fn a_deadline_that_moved_later_is_slept_until_not_woken_for() {
        let mut endpoint = Endpoint::new(7);
        let (a, b) = (conn(&mut endpoint), conn(&mut endpoint));
        let mut d = Deadlines::default();
        d.arm(&a, &mut a.lock(), Some(ms(10)));
        d.arm(&b, &mut b.lock(), Some(ms(15)));
        assert_eq!(d.next(), Some(ms(10)));
        // `a` was driven again: its deadline is now later than its live entry.
        d.arm(&a, &mut a.lock(), Some(ms(20)));
        assert_eq!(d.next(), Some(ms(15)));
        assert_eq!(d.pop_due(ms(15)).map(|c| c.id), Some(b.id));
        d.arm(&b, &mut b.lock(), None);
        assert_eq!(d.pop_due(ms(15)).map(|c| c.id), None);
        assert_eq!(d.next(), Some(ms(20)));
        assert_eq!(d.pop_due(ms(20)).map(|c| c.id), Some(a.id));
        assert_eq!(d.next(), None);
    }

    #[test]
    fn an_earlier_deadline_leaves_the_old_entry_stale() {
        let mut endpoint = Endpoint::new(7);
        let a = conn(&mut endpoint);
        let mut d = Deadlines::default();
        d.arm(&a, &mut a.lock(), Some(ms(10)));
        d.arm(&a, &mut a.lock(), Some(ms(4)));
        assert_eq!(d.next(), Some(ms(4)));
        assert_eq!(d.pop_due(ms(10)).map(|c| c.id), Some(a.id));
        // The 10 ms entry is stale: nothing more is due, and nothing is left to wait for.
        assert_eq!(d.pop_due(ms(10)).map(|c| c.id), None);
        assert_eq!(d.next(), None);
    }

    #[test]
    fn a_connection_that_an_application_holds_keeps_its_entry() {
        let mut endpoint = Endpoint::new(7);
        let a = conn(&mut endpoint);
        let mut d = Deadlines::default();
        d.arm(&a, &mut a.lock(), Some(ms(10)));
        let mut st = a.lock();
        st.deadline = Some(ms(30));
        assert_eq!(d.next(), Some(ms(10)));
        drop(st);
        assert_eq!(d.next(), Some(ms(30)));
    }
}
