//! Wrap-aware protocol numbers: packet sequence numbers (31 bit), message numbers (29 bit),
//! ACK sequence numbers (31 bit) and socket ids.
//!
//! Architecture Invariant: this is the only module that does arithmetic on raw sequence
//! values. Everything else compares and offsets through these types, so the wrap at 2³¹ (and
//! 2²⁹ for messages) is handled in exactly one place and tested at the wrap points.
//!
//! Comparison follows 4.11 (`CSeqNo::seqcmp`): two numbers closer than 2³⁰ − 1 compare by
//! their difference; farther apart they compare "backwards" (the smaller raw value is the later
//! one). That is a serial-number order, not a total order, so these types implement
//! `PartialOrd` but not `Ord`; every window the protocol keeps is far below 2³⁰.

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, Sub};

/// A 31-bit data packet sequence number.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SeqNumber(u32);

impl SeqNumber {
    /// Largest sequence number; the next one after it is 0.
    pub const MAX: u32 = 0x7FFF_FFFF;
    /// 4.11's comparison threshold (`CSeqNo::m_iSeqNoTH`).
    const THRESHOLD: i64 = 0x3FFF_FFFF;
    const SPACE: i64 = 1 << 31;

    /// A sequence number from the low 31 bits of `value` (the top bit is the data/control
    /// flag on the wire and is discarded).
    pub const fn new(value: u32) -> Self {
        Self(value & Self::MAX)
    }

    /// The raw 31-bit value.
    pub const fn value(self) -> u32 {
        self.0
    }

    /// The next sequence number (wraps from [`Self::MAX`] to 0).
    #[must_use]
    pub const fn next(self) -> Self {
        Self::new(self.0.wrapping_add(1))
    }

    /// The previous sequence number (wraps from 0 to [`Self::MAX`]).
    #[must_use]
    pub const fn prev(self) -> Self {
        Self::new(self.0.wrapping_sub(1))
    }

    /// Signed distance from `self` to `later` (4.11 `seqoff`): positive when `later` is after
    /// `self`.
    pub fn offset_to(self, later: Self) -> i32 {
        let raw = i64::from(later.0) - i64::from(self.0);
        let off = if raw.abs() < Self::THRESHOLD {
            raw
        } else if raw > 0 {
            raw - Self::SPACE
        } else {
            raw + Self::SPACE
        };
        // |off| <= 2^31 - 1 by construction.
        off as i32
    }

    /// Number of sequence numbers in the inclusive range `self..=last` (4.11 `seqlen`).
    /// `last` is taken to be at or after `self`.
    pub fn len_to(self, last: Self) -> u32 {
        if self.0 <= last.0 {
            last.0 - self.0 + 1
        } else {
            // Wrapped: last + 2^31 - self + 1, which fits because self > last.
            (Self::MAX - self.0) + last.0 + 2
        }
    }

    /// Wrap-aware comparison (4.11 `seqcmp`).
    pub fn cmp_seq(self, other: Self) -> Ordering {
        other.offset_to(self).cmp(&0)
    }

    /// The later of two numbers.
    #[must_use]
    pub fn max_seq(self, other: Self) -> Self {
        if self.cmp_seq(other) == Ordering::Less {
            other
        } else {
            self
        }
    }

    /// The earlier of two numbers.
    #[must_use]
    pub fn min_seq(self, other: Self) -> Self {
        if self.cmp_seq(other) == Ordering::Greater {
            other
        } else {
            self
        }
    }
}

impl PartialOrd for SeqNumber {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp_seq(*other))
    }
}

impl Add<u32> for SeqNumber {
    type Output = Self;
    fn add(self, n: u32) -> Self {
        Self::new(self.0.wrapping_add(n))
    }
}

impl Sub<u32> for SeqNumber {
    type Output = Self;
    fn sub(self, n: u32) -> Self {
        Self::new(self.0.wrapping_sub(n))
    }
}

impl Add<i32> for SeqNumber {
    type Output = Self;
    fn add(self, n: i32) -> Self {
        Self::new(self.0.wrapping_add_signed(n))
    }
}

impl Sub for SeqNumber {
    /// `a - b` is the signed distance from `b` to `a`.
    type Output = i32;
    fn sub(self, earlier: Self) -> i32 {
        earlier.offset_to(self)
    }
}

impl fmt::Debug for SeqNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

impl fmt::Display for SeqNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// A 29-bit message number (bits 3–31 of a data packet's second word).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct MsgNumber(u32);

impl MsgNumber {
    /// Largest encodable message number. 4.11 never sends it (nor 0).
    pub const MAX: u32 = 0x1FFF_FFFF;
    /// The first message number a 4.11 sender uses.
    pub const FIRST: Self = Self(1);
    const THRESHOLD: i64 = 0x0FFF_FFFF;
    const SPACE: i64 = 1 << 29;

    /// A message number from the low 29 bits of `value`.
    pub const fn new(value: u32) -> Self {
        Self(value & Self::MAX)
    }

    /// The raw 29-bit value.
    pub const fn value(self) -> u32 {
        self.0
    }

    /// The number a sender uses after `self`. UDT4: senders count 1, 2, …, 0x1FFFFFFE and
    /// then start again at 1, never using 0 or 0x1FFFFFFF.
    #[must_use]
    pub const fn next(self) -> Self {
        if self.0 >= Self::MAX - 1 {
            Self(1)
        } else {
            Self(self.0 + 1)
        }
    }

    /// Signed distance from `self` to `later` in the 29-bit space.
    pub fn offset_to(self, later: Self) -> i32 {
        let raw = i64::from(later.0) - i64::from(self.0);
        let off = if raw.abs() < Self::THRESHOLD {
            raw
        } else if raw > 0 {
            raw - Self::SPACE
        } else {
            raw + Self::SPACE
        };
        off as i32
    }
}

impl Default for MsgNumber {
    fn default() -> Self {
        Self::FIRST
    }
}

impl PartialOrd for MsgNumber {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(other.offset_to(*self).cmp(&0))
    }
}

impl fmt::Debug for MsgNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "msg{}", self.0)
    }
}

/// A 31-bit ACK sequence number: numbers full ACKs so ACK2 can echo them for RTT sampling.
/// The first numbered ACK of a connection is 1; light ACKs carry 0.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AckNumber(u32);

impl AckNumber {
    /// Largest ACK sequence number; it wraps to 0.
    pub const MAX: u32 = 0x7FFF_FFFF;
    /// The number light ACKs carry in their header.
    pub const LIGHT: Self = Self(0);

    /// An ACK number from the low 31 bits of `value`.
    pub const fn new(value: u32) -> Self {
        Self(value & Self::MAX)
    }

    /// The raw 31-bit value.
    pub const fn value(self) -> u32 {
        self.0
    }

    /// The next ACK number (wraps from [`Self::MAX`] to 0).
    #[must_use]
    pub const fn next(self) -> Self {
        Self::new(self.0.wrapping_add(1))
    }

    /// Wrap-aware "is `self` after `other`", with the same window rule as sequence numbers.
    pub fn is_after(self, other: Self) -> bool {
        SeqNumber::new(other.0).offset_to(SeqNumber::new(self.0)) > 0
    }
}

impl fmt::Debug for AckNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ack{}", self.0)
    }
}

/// A UDT socket id: names one end of a connection inside a multiplexer. 0 on the wire means
/// "no socket yet" (connection requests).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SocketId(pub u32);

impl SocketId {
    /// The destination id of connection requests.
    pub const NONE: Self = Self(0);
}

impl fmt::Debug for SocketId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sock{:#x}", self.0)
    }
}

impl fmt::Display for SocketId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MAX: u32 = SeqNumber::MAX;

    #[test]
    fn seq_wraps_at_2_pow_31() {
        let top = SeqNumber::new(MAX);
        assert_eq!(top.next(), SeqNumber::new(0));
        assert_eq!(SeqNumber::new(0).prev(), top);
        assert!(SeqNumber::new(0) > top);
        assert!(SeqNumber::new(5) > SeqNumber::new(MAX - 5));
        assert_eq!(top.offset_to(SeqNumber::new(0)), 1);
        assert_eq!(SeqNumber::new(0).offset_to(top), -1);
        assert_eq!(SeqNumber::new(MAX - 5).offset_to(SeqNumber::new(5)), 11);
        assert_eq!(SeqNumber::new(5) - SeqNumber::new(MAX - 5), 11);
        assert_eq!(top + 3u32, SeqNumber::new(2));
        assert_eq!(SeqNumber::new(2) - 3u32, top);
        assert_eq!(SeqNumber::new(2) + (-3i32), top);
    }

    #[test]
    fn seq_new_drops_flag_bit() {
        assert_eq!(SeqNumber::new(0x8000_0005).value(), 5);
    }

    #[test]
    fn len_counts_inclusive_across_wrap() {
        assert_eq!(SeqNumber::new(10).len_to(SeqNumber::new(10)), 1);
        assert_eq!(SeqNumber::new(10).len_to(SeqNumber::new(19)), 10);
        assert_eq!(SeqNumber::new(MAX).len_to(SeqNumber::new(0)), 2);
        assert_eq!(SeqNumber::new(MAX - 1).len_to(SeqNumber::new(2)), 5);
    }

    #[test]
    fn far_apart_numbers_compare_backwards_like_4_11() {
        // 4.11 seqcmp: |a - b| >= 2^30 - 1 flips the order.
        let a = SeqNumber::new(0);
        let b = SeqNumber::new(0x4000_0000);
        assert!(a > b);
        assert!(SeqNumber::new(0) < SeqNumber::new(0x3FFF_FFFE));
    }

    #[test]
    fn msg_number_wraps_at_2_pow_29_skipping_0_and_max() {
        assert_eq!(MsgNumber::new(MsgNumber::MAX - 1).next(), MsgNumber::new(1));
        assert_eq!(MsgNumber::new(MsgNumber::MAX).next(), MsgNumber::new(1));
        assert_eq!(MsgNumber::new(7).next(), MsgNumber::new(8));
        assert_eq!(MsgNumber::new(0x2000_0003).value(), 3);
        assert_eq!(
            MsgNumber::new(MsgNumber::MAX).offset_to(MsgNumber::new(2)),
            3
        );
        assert!(MsgNumber::new(1) > MsgNumber::new(MsgNumber::MAX - 1));
    }

    #[test]
    fn ack_number_wraps() {
        assert_eq!(AckNumber::new(AckNumber::MAX).next(), AckNumber::new(0));
        assert!(AckNumber::new(0).is_after(AckNumber::new(AckNumber::MAX)));
        assert!(!AckNumber::new(3).is_after(AckNumber::new(3)));
    }

    proptest! {
        #[test]
        fn offset_and_add_are_inverse(a in 0..=MAX, d in -0x3FFF_FFF0i32..0x3FFF_FFF0) {
            let s = SeqNumber::new(a);
            prop_assert_eq!(s.offset_to(s + d), d);
            prop_assert_eq!((s + d) - s, d);
        }

        #[test]
        fn comparison_is_antisymmetric(a in 0..=MAX, b in 0..=MAX) {
            let (x, y) = (SeqNumber::new(a), SeqNumber::new(b));
            prop_assert_eq!(x.cmp_seq(y), y.cmp_seq(x).reverse());
        }

        #[test]
        fn len_matches_offset(a in 0..=MAX, n in 0u32..0x3FFF_0000) {
            let s = SeqNumber::new(a);
            prop_assert_eq!(s.len_to(s + n), n + 1);
        }

        #[test]
        fn msg_offset_inverse(a in 0..=MsgNumber::MAX, d in 0u32..0x0FFF_0000) {
            let m = MsgNumber::new(a);
            let later = MsgNumber::new(a.wrapping_add(d));
            prop_assert_eq!(m.offset_to(later), d as i32);
        }
    }
}
