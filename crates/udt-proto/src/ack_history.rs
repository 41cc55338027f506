//! Recently sent numbered ACKs, so an ACK2 can be turned into an RTT sample.
//!
//! UDT4 keeps 1024 entries (`CACKWindow`): ACK number → (acknowledged sequence, send time).
//! Older entries are overwritten; an ACK2 for a number no longer here is ignored.

use crate::seq::{AckNumber, SeqNumber};
use crate::time::Instant;

const SIZE: usize = 1024;

#[derive(Debug, Clone, Copy)]
struct Entry {
    number: AckNumber,
    ack: SeqNumber,
    sent: Instant,
}

/// Ring of the last 1024 numbered ACKs.
#[derive(Debug, Clone)]
pub struct AckHistory {
    entries: Vec<Option<Entry>>,
}

impl Default for AckHistory {
    fn default() -> Self {
        Self {
            entries: vec![None; SIZE],
        }
    }
}

impl AckHistory {
    /// Remember that ACK `number` acknowledged up to `ack` at `sent`.
    pub fn record(&mut self, number: AckNumber, ack: SeqNumber, sent: Instant) {
        self.entries[slot(number)] = Some(Entry { number, ack, sent });
    }

    /// Look up the ACK an ACK2 echoes: its acknowledged sequence and send time. The entry is
    /// consumed so a duplicated ACK2 gives no second sample.
    pub fn acknowledge(&mut self, number: AckNumber) -> Option<(SeqNumber, Instant)> {
        let entry = self.entries[slot(number)].filter(|e| e.number == number)?;
        self.entries[slot(number)] = None;
        Some((entry.ack, entry.sent))
    }
}

fn slot(number: AckNumber) -> usize {
    number.value() as usize % SIZE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_recent_and_forgets_overwritten() {
        let mut h = AckHistory::default();
        h.record(
            AckNumber::new(1),
            SeqNumber::new(10),
            Instant::from_micros(5),
        );
        assert_eq!(
            h.acknowledge(AckNumber::new(1)),
            Some((SeqNumber::new(10), Instant::from_micros(5)))
        );
        assert_eq!(h.acknowledge(AckNumber::new(1)), None);
        h.record(AckNumber::new(2), SeqNumber::new(11), Instant::ZERO);
        h.record(AckNumber::new(2 + 1024), SeqNumber::new(12), Instant::ZERO);
        assert_eq!(h.acknowledge(AckNumber::new(2)), None);
        assert!(h.acknowledge(AckNumber::new(1026)).is_some());
    }
}
