//! Receive buffers lent to connections: a GRO train read whole becomes a reference-counted
//! allocation, cut into datagrams that each own their part (so a protected one is opened
//! where it lies), and its packets' payloads stay there as slices in the receive buffer, so
//! the reader's copy is the only one after the kernel's.
//!
//! A held packet keeps its whole buffer alive (a 64 KiB train buffer for one 1.5 KiB
//! packet, if that is all that is left unread), so lending is bounded: only well-filled
//! trains are lent (the driver's choice), and at most [`LENT_MAX`] buffers are out at once;
//! past that, trains are copied as before. Buffers come back in the order they were lent
//! (the reader consumes in sequence order), and one no longer referenced elsewhere is
//! reused for the next read, so a steady flow allocates nothing.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};

/// Buffers out at once per port: 32 MiB of 64 KiB trains, over a 1 Gbit/s × 200 ms window.
pub(crate) const LENT_MAX: usize = 512;

/// Returned buffers kept for reuse; more are freed.
const FREE_MAX: usize = 8;

/// The buffers a port's receive batch lends out, and those come back.
#[derive(Debug)]
pub(crate) struct Lending {
    /// Capacity of every buffer.
    slot: usize,
    /// One reference to each buffer lent, oldest first: an empty handle on its allocation,
    /// past the bytes lent.
    lent: VecDeque<Bytes>,
    free: Vec<BytesMut>,
}

impl Lending {
    pub(crate) fn new(slot: usize) -> Self {
        Self {
            slot,
            lent: VecDeque::new(),
            free: Vec::new(),
        }
    }

    /// An empty buffer of the slot's capacity: a returned one if there is one.
    pub(crate) fn fresh(&mut self) -> BytesMut {
        self.reclaim();
        let mut buf = self
            .free
            .pop()
            .unwrap_or_else(|| BytesMut::with_capacity(self.slot));
        buf.clear();
        buf.reserve(self.slot);
        buf
    }

    /// Whether another buffer may be lent now.
    pub(crate) fn can_lend(&mut self) -> bool {
        self.reclaim();
        self.lent.len() < LENT_MAX
    }

    /// Shares `buf`'s allocation for lending, keeping track of it until every part of it
    /// is dropped; `buf`'s bytes are returned, to be cut into datagrams.
    pub(crate) fn lend(&mut self, mut buf: BytesMut) -> BytesMut {
        let tracker = buf.split_off(buf.len()).freeze();
        self.lent.push_back(tracker);
        buf
    }

    /// Buffers out now.
    #[cfg(test)]
    pub(crate) fn lent(&self) -> usize {
        self.lent.len()
    }

    /// Takes back the oldest buffers that nothing else references any more.
    fn reclaim(&mut self) {
        while self.lent.front().is_some_and(Bytes::is_unique) {
            let Some(buf) = self.lent.pop_front() else {
                break;
            };
            if self.free.len() < FREE_MAX {
                if let Ok(buf) = buf.try_into_mut() {
                    self.free.push(buf);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_comes_back_once_its_slices_are_dropped() {
        let mut lending = Lending::new(4096);
        let mut buf = lending.fresh();
        buf.extend_from_slice(&[7; 3000]);
        let addr = buf.as_ptr();
        let mut lent = lending.lend(buf);
        let packet = lent.split_off(100).split_to(1500).freeze();
        drop(lent);
        assert_eq!(lending.lent(), 1);
        let other = lending.fresh();
        assert_ne!(other.as_ptr(), addr, "still held by a packet");
        drop(packet);
        assert!(lending.can_lend());
        assert_eq!(lending.lent(), 0);
        let again = lending.fresh();
        assert_eq!(
            again.as_ptr(),
            addr,
            "the same allocation, reused from its start"
        );
        assert!(again.is_empty() && again.capacity() >= 4096);
    }

    #[test]
    fn lending_stops_at_the_bound_until_buffers_return() {
        let mut lending = Lending::new(64);
        let held: Vec<Bytes> = (0..LENT_MAX)
            .map(|_| {
                let mut buf = lending.fresh();
                buf.extend_from_slice(b"train");
                lending.lend(buf).freeze()
            })
            .collect();
        assert!(!lending.can_lend());
        // Buffers return in lending order: freeing a later one alone does not help.
        let mut held = held.into_iter();
        let first = held.next();
        let rest: Vec<Bytes> = held.collect();
        drop(rest);
        assert!(!lending.can_lend(), "the oldest is still held");
        drop(first);
        assert!(lending.can_lend());
        assert_eq!(lending.lent(), 0);
    }
}
