//! The `nak_loss_list` body: arbitrary NAK bodies decoded by the wire codec and fed into the
//! sender and receiver loss lists, interleaved with the other list operations.
//!
//! Two modes, picked by the first byte:
//! - *windowed* (the connection's view): a sender window `una..next` (always < 2³⁰ wide)
//!   moves forward with sends and ACKs, and every decoded range is folded into it, as the
//!   connection only accepts NAKs for packets it sent. After each step the lists must be
//!   exact: `len()` is the sum of the range lengths, ranges are sorted, disjoint and not
//!   adjacent, inside the window, `len() <= capacity`, `first()`/`contains` agree with
//!   `ranges()`, and `pop_first` returns `first()`.
//! - *raw*: decoded ranges go in unfiltered (as a peer could send them). This breaks the
//!   lists' documented precondition (successive numbers within 2³⁰), so only totality is
//!   checked: no panic, `len() <= capacity`.

use std::time::Duration;

use super::input::Input;
use crate::loss_list::{ReceiverLossList, SenderLossList};
use crate::seq::SeqNumber;
use crate::time::Instant;
use crate::wire::{LossListIter, NakRepr, SeqRange};

/// Upper bound on operations per input.
const MAX_OPS: usize = 1_000;
/// Widest sender window the windowed mode opens (far below the 2³⁰ comparison threshold).
const MAX_WINDOW: u32 = 1 << 24;

/// Runs the NAK → loss-list operations encoded in `data`; panics on a violated invariant.
pub fn nak_loss_list(data: &[u8]) {
    let mut input = Input::new(data);
    let raw = input.u8() & 1 == 1;
    let capacity = input.upto(100_000) + 1;
    let una = SeqNumber::new(input.upto(SeqNumber::MAX));
    let mut state = State {
        sender: SenderLossList::new(capacity),
        receiver: ReceiverLossList::new(capacity),
        una,
        next: una,
        now: Instant::from_micros(0),
        raw,
    };
    for _ in 0..MAX_OPS {
        if input.is_empty() {
            break;
        }
        state.step(&mut input);
        state.check();
    }
}

/// Decodes a NAK body both ways and checks the two decoders agree; `None` if it is invalid.
fn decode_nak(body: &[u8]) -> Option<Vec<SeqRange>> {
    let parsed = NakRepr::parse(body);
    let iterated: Result<Vec<SeqRange>, _> = match LossListIter::new(body) {
        Ok(iter) => iter.collect(),
        Err(err) => Err(err),
    };
    assert_eq!(
        parsed.as_ref().map(|nak| &nak.ranges),
        iterated.as_ref(),
        "NakRepr::parse and LossListIter disagree"
    );
    if let Ok(nak) = &parsed {
        assert!(!nak.ranges.is_empty());
        assert!(nak.ranges.iter().all(|r| r.first <= r.last));
        let mut emitted = Vec::new();
        nak.emit(&mut emitted);
        assert_eq!(emitted.len(), nak.buffer_len());
        assert_eq!(NakRepr::parse(&emitted).as_ref(), Ok(nak));
    }
    parsed.ok().map(|nak| nak.ranges)
}

struct State {
    sender: SenderLossList,
    receiver: ReceiverLossList,
    /// First unacknowledged sequence number.
    una: SeqNumber,
    /// Next sequence number to send: the window is `una..next`.
    next: SeqNumber,
    now: Instant,
    raw: bool,
}

impl State {
    fn window(&self) -> u32 {
        u32::try_from(self.una.offset_to(self.next)).unwrap_or(0)
    }

    fn in_window(&self, offset: u32) -> SeqNumber {
        self.una + offset % self.window().max(1)
    }

    fn step(&mut self, input: &mut Input<'_>) {
        match input.u8() % 8 {
            0 | 1 => {
                let len = usize::from(input.u8());
                let body = input.bytes(len);
                for range in decode_nak(body).unwrap_or_default() {
                    self.insert(range, input.bool());
                }
            }
            2 => {
                let sent = input.upto(1 << 16);
                if self.window() + sent < MAX_WINDOW {
                    self.next = self.next + sent;
                }
            }
            3 => {
                let ack = self.una + input.upto(self.window());
                self.una = ack;
                self.sender.remove_before(ack);
                self.receiver.remove_before(ack);
            }
            4 => {
                let first = self.sender.first();
                assert_eq!(self.sender.pop_first(), first);
                // Raw mode breaks the lists' 2^30 window precondition, so lookups may
                // alias there: only totality is checked.
                if let (Some(seq), false) = (first, self.raw) {
                    assert!(!self.sender.contains(seq));
                }
            }
            5 => {
                let seq = self.pick(input);
                let had = self.receiver.contains(seq);
                let removed = self.receiver.remove(seq);
                if !self.raw {
                    assert_eq!(removed, had);
                    assert!(!self.receiver.contains(seq));
                }
            }
            6 => {
                let (a, b) = (self.pick(input), self.pick(input));
                self.sender.remove_range(a, b);
                self.receiver.remove_range(a, b);
            }
            _ => {
                self.now += Duration::from_micros(u64::from(input.u16()) * 100);
                let max = usize::from(input.u8());
                let due = self
                    .receiver
                    .ranges_due(self.now, Duration::from_millis(10), max);
                assert!(due.len() <= max);
            }
        }
    }

    /// A sequence number: anywhere in raw mode, in (or just around) the window otherwise.
    fn pick(&self, input: &mut Input<'_>) -> SeqNumber {
        let value = input.u32();
        if self.raw {
            SeqNumber::new(value)
        } else {
            self.in_window(value)
        }
    }

    fn insert(&mut self, range: SeqRange, reported: bool) {
        let (first, last) = if self.raw {
            (range.first, range.last)
        } else {
            if self.window() == 0 {
                return;
            }
            // Fold the range into the window, keeping its length where it fits.
            let first = self.in_window(range.first.value());
            let room = self.window() - self.una.len_to(first);
            (first, first + (range.len() - 1).min(room))
        };
        let before = self.sender.len();
        let added = self.sender.insert(first, last);
        assert_eq!(self.sender.len(), before + added);
        let before = self.receiver.len();
        let added = if reported {
            self.receiver.insert_reported(first, last, self.now)
        } else {
            self.receiver.insert(first, last)
        };
        assert_eq!(self.receiver.len(), before + added);
    }

    fn check(&self) {
        let capacity = self.sender.capacity();
        assert!(self.sender.len() <= capacity);
        assert!(self.receiver.len() <= capacity);
        if self.raw {
            return;
        }
        let sender: Vec<_> = self.sender.ranges().collect();
        self.check_ranges(&sender, self.sender.len());
        assert_eq!(self.sender.first(), sender.first().map(|r| r.0));
        for &(a, b) in &sender {
            assert!(self.sender.contains(a) && self.sender.contains(b));
            assert!(!self.sender.contains(a - 1u32) && !self.sender.contains(b + 1u32));
        }
        let receiver: Vec<_> = self.receiver.ranges().collect();
        self.check_ranges(&receiver, self.receiver.len());
        assert_eq!(self.receiver.first(), receiver.first().map(|r| r.0));
        for &(a, b) in &receiver {
            assert!(self.receiver.contains(a) && self.receiver.contains(b));
        }
    }

    /// Sorted, disjoint, non-adjacent, inside `una..next`, and adding up to `len`.
    fn check_ranges(&self, ranges: &[(SeqNumber, SeqNumber)], len: u32) {
        let mut total = 0u64;
        let mut prev_end: Option<i64> = None;
        for &(first, last) in ranges {
            let a = i64::from(self.una.offset_to(first));
            let b = i64::from(self.una.offset_to(last));
            assert!(
                0 <= a && a <= b,
                "range {first:?}..={last:?} outside or reversed"
            );
            assert!(
                b < i64::from(self.window()),
                "range {last:?} past the window"
            );
            if let Some(end) = prev_end {
                assert!(end + 1 < a, "ranges overlap, touch or are unsorted");
            }
            prev_end = Some(b);
            total += u64::from(first.len_to(last));
        }
        assert_eq!(total, u64::from(len), "len() is not the sum of the ranges");
    }
}
