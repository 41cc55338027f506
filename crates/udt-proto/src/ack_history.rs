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

/// Ring of the last 1024 numbered ACKs. The ring (24 KiB) is allocated by the first ACK, not
/// up front: an idle connection, or one that only sends, never needs it, and a server with a
/// thousand such connections would otherwise hold 24 MiB of empty rings.
#[derive(Debug, Clone, Default)]
pub(crate) struct AckHistory {
    entries: Vec<Option<Entry>>,
}

impl AckHistory {
    /// Remember that ACK `number` acknowledged up to `ack` at `sent`.
    pub(crate) fn record(&mut self, number: AckNumber, ack: SeqNumber, sent: Instant) {
        if self.entries.is_empty() {
            self.entries = vec![None; SIZE];
        }
        self.entries[slot(number)] = Some(Entry { number, ack, sent });
    }

    /// Look up the ACK an ACK2 echoes: its acknowledged sequence and send time. The entry is
    /// consumed so a duplicated ACK2 gives no second sample.
    pub(crate) fn acknowledge(&mut self, number: AckNumber) -> Option<(SeqNumber, Instant)> {
        // Empty until the first ACK: an ACK2 before it finds nothing.
        let cell = self.entries.get_mut(slot(number))?;
        let entry = cell.filter(|e| e.number == number)?;
        *cell = None;
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
        assert_eq!(
            h.acknowledge(AckNumber::new(1)),
            None,
            "nothing recorded yet"
        );
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
