//! A tiny total reader over fuzzer bytes: every getter returns a value even when the input is
//! exhausted (zeros), so a body never has to handle "out of input" and a short input simply
//! means "small values, few operations". No dependency on `arbitrary`, so the bodies build on
//! stable for the proptest drivers too.

/// Reads little-endian integers and bounded byte slices from the front of a fuzz input.
#[derive(Debug, Clone)]
pub(crate) struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    /// Whether every byte was consumed.
    pub(crate) fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Up to `n` bytes (fewer if the input runs out).
    pub(crate) fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (head, tail) = self.data.split_at(n.min(self.data.len()));
        self.data = tail;
        head
    }

    /// `N` bytes, zero-padded when the input runs out.
    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        let head = self.bytes(N);
        out[..head.len()].copy_from_slice(head);
        out
    }

    pub(crate) fn u8(&mut self) -> u8 {
        self.array::<1>()[0]
    }

    pub(crate) fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.array())
    }

    pub(crate) fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.array())
    }

    pub(crate) fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.array())
    }

    pub(crate) fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    /// A value in `0..=max` (uniform enough for fuzzing: a modulo).
    pub(crate) fn upto(&mut self, max: u32) -> u32 {
        match max.checked_add(1) {
            Some(span) => self.u32() % span,
            None => self.u32(),
        }
    }

    /// A fraction in `[0, 1]`.
    pub(crate) fn frac(&mut self) -> f64 {
        f64::from(self.u16()) / f64::from(u16::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exhausted_input_reads_zeros() {
        let mut input = Input::new(&[1, 2, 3]);
        assert_eq!(input.u16(), 0x0201);
        assert_eq!(input.u32(), 3);
        assert!(input.is_empty());
        assert_eq!((input.u8(), input.u64(), input.bytes(4)), (0, 0, &[][..]));
        assert_eq!(input.upto(u32::MAX), 0);
        assert_eq!(input.frac(), 0.0);
    }
}
