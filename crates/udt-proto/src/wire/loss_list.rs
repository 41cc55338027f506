//! NAK bodies (control type 3): range-compressed lists of lost sequence numbers.
//!
//! Each entry is one or two big-endian words:
//! - MSB clear: a single lost sequence number;
//! - MSB set: the low 31 bits start an inclusive range whose last number is the next word
//!   (MSB clear).
//!
//! Example: `00000005 80000009 0000000C 00000011` = lost {5, 9..=12, 17}.
//!
//! Decoding rejects ([`Error::BadLossList`]) what would make 4.11 misbehave or what no
//! sane sender produces: an empty list, a range start as the last word (4.11 would read past
//! the body), a range end with the MSB set, and a reversed range (last before first in
//! sequence order). `[a | MSB, a]` is accepted as the single number `a`. As in 4.11, the
//! word count is `body.len() / 4`: 1–3 trailing bytes are ignored.
//!
//! [`LossListIter`] decodes without allocating; [`NakRepr::parse`] collects into a `Vec` whose
//! capacity is bounded by the body length. [`emit_nak_body`] encodes any iterator of ranges.

use super::header::{body_word, put_word};
use super::Error;
use crate::seq::SeqNumber;

/// The MSB of a loss-list word: "this word starts a range".
const RANGE_FLAG: u32 = 0x8000_0000;

/// An inclusive range of lost sequence numbers; `first == last` is a single number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SeqRange {
    /// First lost number.
    pub first: SeqNumber,
    /// Last lost number (inclusive), at or after `first`.
    pub last: SeqNumber,
}

impl SeqRange {
    /// The one-number range `{seq}`.
    pub const fn single(seq: SeqNumber) -> Self {
        Self {
            first: seq,
            last: seq,
        }
    }

    /// Number of sequence numbers in the range.
    pub fn len(&self) -> u32 {
        self.first.len_to(self.last)
    }

    /// Always false: a range holds at least one number.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Words this range takes on the wire: 1 for a single number, 2 for a range.
    pub fn encoded_len(&self) -> usize {
        if self.first == self.last {
            4
        } else {
            8
        }
    }
}

/// A NAK body: the lost ranges in the order they appear on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NakRepr {
    /// The lost ranges; never empty when parsed.
    pub ranges: Vec<SeqRange>,
}

impl NakRepr {
    /// Parses and validates a NAK body. Allocates at most `body.len() / 4` ranges, and only
    /// after the whole list was validated.
    pub fn parse(body: &[u8]) -> Result<Self, Error> {
        let mut count = 0usize;
        for range in LossListIter::new(body)? {
            range?;
            count += 1;
        }
        let mut ranges = Vec::with_capacity(count);
        // Validated above: every item is Ok.
        ranges.extend(LossListIter::new(body)?.flatten());
        Ok(Self { ranges })
    }

    /// Encoded body length in bytes.
    pub fn buffer_len(&self) -> usize {
        self.ranges.iter().map(SeqRange::encoded_len).sum()
    }

    /// Appends the encoded body.
    pub fn emit(&self, out: &mut Vec<u8>) {
        emit_nak_body(self.ranges.iter().copied(), out);
    }
}

/// Appends the encoding of `ranges` (single numbers take one word, ranges two), without
/// allocating beyond `out`'s growth. Ranges should be valid (last at or after first), since
/// decoders reject reversed ones.
pub fn emit_nak_body(ranges: impl Iterator<Item = SeqRange>, out: &mut Vec<u8>) {
    for range in ranges {
        if range.first == range.last {
            put_word(out, range.first.value());
        } else {
            put_word(out, range.first.value() | RANGE_FLAG);
            put_word(out, range.last.value());
        }
    }
}

/// A non-allocating decoder over a NAK body: yields each range or the first error (after
/// which it stops).
#[derive(Debug, Clone)]
pub struct LossListIter<'a> {
    body: &'a [u8],
    words: usize,
    next: usize,
}

impl<'a> LossListIter<'a> {
    /// A decoder over `body`; [`Error::BadLossList`] if it holds no whole word.
    pub fn new(body: &'a [u8]) -> Result<Self, Error> {
        let words = body.len() / 4;
        if words == 0 {
            return Err(Error::BadLossList);
        }
        Ok(Self {
            body,
            words,
            next: 0,
        })
    }

    fn word(&mut self) -> Option<u32> {
        if self.next >= self.words {
            return None;
        }
        let word = body_word(self.body, self.next);
        self.next += 1;
        word
    }

    fn decode(&mut self, word: u32) -> Result<SeqRange, Error> {
        if word & RANGE_FLAG == 0 {
            return Ok(SeqRange::single(SeqNumber::new(word)));
        }
        let last = self.word().ok_or(Error::BadLossList)?;
        if last & RANGE_FLAG != 0 {
            return Err(Error::BadLossList);
        }
        let range = SeqRange {
            first: SeqNumber::new(word),
            last: SeqNumber::new(last),
        };
        if range.last < range.first {
            return Err(Error::BadLossList);
        }
        Ok(range)
    }
}

impl Iterator for LossListIter<'_> {
    type Item = Result<SeqRange, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let word = self.word()?;
        let item = self.decode(word);
        if item.is_err() {
            // Stop after the first error.
            self.next = self.words;
        }
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.words.saturating_sub(self.next);
        (left.div_ceil(2), Some(left))
    }
}
