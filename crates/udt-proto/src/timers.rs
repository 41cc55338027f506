//! The connection's deadlines, one slot per timer kind.
//!
//! A connection asks "when must I next be woken?" through `poll_timeout`, which is the
//! earliest armed slot here. Keeping them in one table (rather than loose fields) makes that
//! question a single scan and keeps the set of timers visible in one place.

use crate::time::Instant;

/// The timers a connection runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Timer {
    /// Next full ACK (every SYN, 10 ms).
    Ack = 0,
    /// Next periodic NAK of still-missing packets.
    Nak = 1,
    /// Retransmission timeout / keep-alive / broken-connection check (UDT's EXP).
    Exp = 2,
    /// Handshake resend or connect deadline.
    Handshake = 3,
    /// Close: the linger deadline.
    Linger = 4,
}

const COUNT: usize = 5;

/// Armed deadlines by [`Timer`].
#[derive(Debug, Clone, Default)]
pub(crate) struct TimerTable {
    slots: [Option<Instant>; COUNT],
}

impl TimerTable {
    /// Arm (or re-arm) `timer` for `at`.
    pub(crate) fn set(&mut self, timer: Timer, at: Instant) {
        self.slots[timer as usize] = Some(at);
    }

    /// Disarm `timer`.
    pub(crate) fn stop(&mut self, timer: Timer) {
        self.slots[timer as usize] = None;
    }

    /// The deadline of `timer`, if armed.
    pub(crate) fn get(&self, timer: Timer) -> Option<Instant> {
        self.slots[timer as usize]
    }

    /// Whether `timer` is armed and due at `now`.
    pub(crate) fn is_due(&self, timer: Timer, now: Instant) -> bool {
        self.get(timer).is_some_and(|t| t <= now)
    }

    /// The earliest armed deadline.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.slots.iter().flatten().min().copied()
    }

    /// Disarm everything.
    pub(crate) fn stop_all(&mut self) {
        self.slots = [None; COUNT];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_is_earliest_armed() {
        let mut t = TimerTable::default();
        assert_eq!(t.next(), None);
        t.set(Timer::Exp, Instant::from_micros(50));
        t.set(Timer::Ack, Instant::from_micros(20));
        assert_eq!(t.next(), Some(Instant::from_micros(20)));
        assert!(t.is_due(Timer::Ack, Instant::from_micros(20)));
        assert!(!t.is_due(Timer::Exp, Instant::from_micros(20)));
        t.stop(Timer::Ack);
        assert_eq!(t.next(), Some(Instant::from_micros(50)));
        t.stop_all();
        assert_eq!(t.next(), None);
    }
}
