//! Recently sent numbered ACKs, so an ACK2 can be turned into an RTT sample.
//!
//! UDT4 keeps 1024 entries (`CACKWindow`): ACK number → (acknowledged sequence, send time).
//! Older entries are overwritten; an ACK2 for a number no longer here is ignored.
//!
//! Each entry keeps two times: the arrival stamp of the packet that triggered the ACK, and
//! when the ACK left. They differ when a runtime left arrivals unread for a while (the
//! threaded runtime's holds) and hands them over with their kernel stamps: the ACK is
//! recorded at the stamp but leaves when the hold ends. The first gives the round trip as
//! this end lives it, holds included; the second the network's alone (see
//! `Connection::on_ack2`).

use crate::seq::{AckNumber, SeqNumber};
use crate::time::Instant;

const SIZE: usize = 1024;

#[derive(Debug, Clone, Copy)]
struct Entry {
    number: AckNumber,
    ack: SeqNumber,
    triggered: Instant,
    sent: Instant,
}

/// What an ACK2 closes: the ACK's acknowledged sequence, the arrival stamp that triggered
/// it, and when it left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Acked {
    pub(crate) ack: SeqNumber,
    pub(crate) triggered: Instant,
    pub(crate) sent: Instant,
}

/// Ring of the last 1024 numbered ACKs. The ring (32 KiB) is allocated by the first ACK, not
/// up front: an idle connection, or one that only sends, never needs it, and a server with a
/// thousand such connections would otherwise hold 32 MiB of empty rings.
#[derive(Debug, Clone, Default)]
pub(crate) struct AckHistory {
    entries: Vec<Option<Entry>>,
}

impl AckHistory {
    /// Remember that ACK `number` acknowledged up to `ack`, triggered by an arrival stamped
    /// `at` (it leaves then too, unless [`AckHistory::mark_sent`] says later).
    pub(crate) fn record(&mut self, number: AckNumber, ack: SeqNumber, at: Instant) {
        if self.entries.is_empty() {
            self.entries = vec![None; SIZE];
        }
        self.entries[slot(number)] = Some(Entry {
            number,
            ack,
            triggered: at,
            sent: at,
        });
    }

    /// ACK `number` left at `now` (never earlier than it was triggered).
    pub(crate) fn mark_sent(&mut self, number: AckNumber, now: Instant) {
        let entry = self
            .entries
            .get_mut(slot(number))
            .and_then(|cell| cell.as_mut())
            .filter(|e| e.number == number);
        if let Some(entry) = entry {
            entry.sent = entry.sent.max(now);
        }
    }

    /// Look up the ACK an ACK2 echoes. The entry is consumed so a duplicated ACK2 gives no
    /// second sample.
    pub(crate) fn acknowledge(&mut self, number: AckNumber) -> Option<Acked> {
        // Empty until the first ACK: an ACK2 before it finds nothing.
        let cell = self.entries.get_mut(slot(number))?;
        let entry = cell.filter(|e| e.number == number)?;
        *cell = None;
        Some(Acked {
            ack: entry.ack,
            triggered: entry.triggered,
            sent: entry.sent,
        })
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
            Some(Acked {
                ack: SeqNumber::new(10),
                triggered: Instant::from_micros(5),
                sent: Instant::from_micros(5),
            })
        );
        assert_eq!(h.acknowledge(AckNumber::new(1)), None);
        h.record(AckNumber::new(2), SeqNumber::new(11), Instant::ZERO);
        h.record(AckNumber::new(2 + 1024), SeqNumber::new(12), Instant::ZERO);
        assert_eq!(h.acknowledge(AckNumber::new(2)), None);
        assert!(h.acknowledge(AckNumber::new(1026)).is_some());
    }

    #[test]
    fn an_ack_sent_after_its_trigger_keeps_both_times() {
        let mut h = AckHistory::default();
        let (n, ack) = (AckNumber::new(7), SeqNumber::new(70));
        let at = |us| Instant::from_micros(us);
        h.record(n, ack, at(100));
        h.mark_sent(n, at(50));
        h.mark_sent(AckNumber::new(8), at(900));
        h.mark_sent(n, at(400));
        let acked = Acked {
            ack,
            triggered: at(100),
            sent: at(400),
        };
        assert_eq!(h.acknowledge(n), Some(acked));
        // An entry overwritten by a later number is not marked for the old one.
        h.record(AckNumber::new(9 + 1024), ack, at(10));
        h.mark_sent(AckNumber::new(9), at(999));
        let acked = h.acknowledge(AckNumber::new(9 + 1024)).map(|a| a.sent);
        assert_eq!(acked, Some(at(10)));
    }
}
