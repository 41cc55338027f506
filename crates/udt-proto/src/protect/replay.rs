//! The replay window: which packet counters of one direction have already been accepted.
//!
//! A sliding bitmap of the last [`WINDOW`] counters below the highest one accepted. Counters
//! are marked only after their packet authenticated, so a forged counter can neither move the
//! window nor blot out a genuine packet. A counter older than the window is refused: UDT
//! retransmits what matters under a fresh counter.

/// Counters remembered below the highest accepted: reordering deeper than this many packets
/// (about 50 ms at 1 Gbit/s) drops the late packet, as a loss would.
pub(crate) const WINDOW: u64 = 4096;
const WORDS: usize = (WINDOW / 64) as usize;

/// See the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct ReplayWindow {
    /// Highest counter accepted plus one (0: none yet).
    next: u64,
    /// Bit `c % WINDOW` set: counter `c` (within the window) was accepted.
    seen: [u64; WORDS],
}

impl ReplayWindow {
    pub(crate) fn new() -> Self {
        Self {
            next: 0,
            seen: [0; WORDS],
        }
    }

    /// Whether `counter` may still be accepted (new, and not too old).
    pub(crate) fn is_fresh(&self, counter: u64) -> bool {
        if counter >= self.next {
            return true;
        }
        self.next - counter <= WINDOW && !self.bit(counter)
    }

    /// Record an authenticated `counter` (checked fresh just before).
    pub(crate) fn accept(&mut self, counter: u64) {
        if counter >= self.next {
            // Clear the slots the window slides over (at most all of them).
            let advance = counter + 1 - self.next;
            if advance >= WINDOW {
                self.seen = [0; WORDS];
            } else {
                for c in self.next..=counter {
                    self.clear(c);
                }
            }
            self.next = counter + 1;
        }
        let (w, b) = slot(counter);
        self.seen[w] |= 1 << b;
    }

    fn bit(&self, counter: u64) -> bool {
        let (w, b) = slot(counter);
        self.seen[w] & (1 << b) != 0
    }

    fn clear(&mut self, counter: u64) {
        let (w, b) = slot(counter);
        self.seen[w] &= !(1 << b);
    }
}

fn slot(counter: u64) -> (usize, u32) {
    let i = counter % WINDOW;
    ((i / 64) as usize, (i % 64) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_counter_is_accepted_once() {
        let mut w = ReplayWindow::new();
        for c in [0, 5, 3, 4, 1000, 999] {
            assert!(w.is_fresh(c), "{c}");
            w.accept(c);
            assert!(!w.is_fresh(c), "{c} replayed");
        }
        assert!(w.is_fresh(1), "never seen, inside the window");
    }

    #[test]
    fn counters_older_than_the_window_are_refused() {
        let mut w = ReplayWindow::new();
        w.accept(10_000);
        assert!(
            w.is_fresh(10_001 - WINDOW),
            "the oldest counter the window holds"
        );
        assert!(!w.is_fresh(10_000 - WINDOW), "one older");
        // A jump past the whole window forgets everything before it.
        w.accept(10_000 + 3 * WINDOW);
        assert!(!w.is_fresh(10_000));
        assert!(w.is_fresh(10_001 + 2 * WINDOW));
    }

    #[test]
    fn sliding_clears_reused_slots() {
        let mut w = ReplayWindow::new();
        w.accept(7);
        // 7 + WINDOW lands on 7's slot: a fresh counter, not mistaken for a replay.
        assert!(w.is_fresh(7 + WINDOW));
        w.accept(7 + WINDOW);
        assert!(!w.is_fresh(7 + WINDOW));
        assert!(w.is_fresh(8 + WINDOW / 2));
    }
}
