//! The deterministic test data shared with the C++ peers (`interop/peer.h`).
//!
//! Stream byte `i` is [`pattern_byte`]`(i)`. Message `k` is [`message_size`]`(k)` bytes: `k` as
//! 8 little-endian bytes, then [`message_byte`]`(k, i)`. Any change here must be made in
//! `peer.h` too.

/// Stream byte `i`: the top byte of a Fibonacci hash (no short period to hide a shifted block).
pub fn pattern_byte(i: u64) -> u8 {
    (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
}

/// Fill `buf` with the stream bytes starting at `offset`.
pub fn fill_stream(offset: u64, buf: &mut [u8]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = pattern_byte(offset + i as u64);
    }
}

/// Index of the first byte of `buf` that differs from the stream at `offset`.
pub fn check_stream(offset: u64, buf: &[u8]) -> Option<u64> {
    buf.iter()
        .enumerate()
        .find(|&(i, &b)| b != pattern_byte(offset + i as u64))
        .map(|(i, _)| offset + i as u64)
}

/// Length of message `k`, in `8..=max_msg` (`max_msg` at least 8).
pub fn message_size(k: u64, max_msg: usize) -> usize {
    let h = (k + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33;
    8 + (h % (max_msg as u64 - 7)) as usize
}

/// Byte `i` (`i >= 8`) of message `k`.
pub fn message_byte(k: u64, i: u64) -> u8 {
    pattern_byte(k.wrapping_mul(1_000_003).wrapping_add(i))
}

/// Message `k` in full.
pub fn message(k: u64, max_msg: usize) -> Vec<u8> {
    let n = message_size(k, max_msg);
    let mut m = Vec::with_capacity(n);
    m.extend_from_slice(&k.to_le_bytes());
    m.extend((8..n as u64).map(|i| message_byte(k, i)));
    m
}

/// The index `k` of a received message, if it is exactly message `k` of a run of `count`.
pub fn check_message(msg: &[u8], count: u64, max_msg: usize) -> Option<u64> {
    let k = u64::from_le_bytes(msg.get(..8)?.try_into().ok()?);
    (k < count && msg == message(k, max_msg).as_slice()).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_vary() {
        let sizes: Vec<usize> = (0..50).map(|k| message_size(k, 10_000)).collect();
        assert!(sizes.iter().all(|&s| (8..=10_000).contains(&s)));
        assert!(
            sizes.iter().any(|&s| s > 1456),
            "some messages span packets"
        );
        for k in 0..50 {
            assert_eq!(check_message(&message(k, 10_000), 50, 10_000), Some(k));
        }
        let mut bad = message(3, 10_000);
        bad[9] ^= 1;
        assert_eq!(check_message(&bad, 50, 10_000), None);
    }

    #[test]
    fn stream_check_finds_first_difference() {
        let mut buf = vec![0; 4096];
        fill_stream(1000, &mut buf);
        assert_eq!(check_stream(1000, &buf), None);
        buf[17] ^= 0x80;
        assert_eq!(check_stream(1000, &buf), Some(1017));
        // Matches the C++ definition on a few fixed points.
        assert_eq!(pattern_byte(0), 0);
        assert_eq!(pattern_byte(1), 0x9E);
    }
}
