//! Random sampling helpers and the per-feature random streams of a link.
//!
//! Each impairment (loss, jitter, reordering, duplication, corruption, stalls) draws from its own
//! generator, all derived from the one seed the caller gives. Turning one impairment on or off
//! therefore does not shift the random sequence of the others: with the same seed, a run with
//! jitter loses exactly the same packets as the run without it, which keeps A/B experiments
//! comparable.

use std::time::Duration;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// The independent random streams of one link.
#[derive(Debug, Clone)]
pub(crate) struct Streams {
    pub(crate) loss: Pcg64Mcg,
    pub(crate) jitter: Pcg64Mcg,
    pub(crate) reorder: Pcg64Mcg,
    pub(crate) duplicate: Pcg64Mcg,
    pub(crate) corrupt: Pcg64Mcg,
}

impl Streams {
    /// Derives the five streams from `seed`; each gets a distinct seed so they are unrelated.
    pub(crate) fn new(seed: u64) -> Self {
        Self {
            loss: stream(seed, 1),
            jitter: stream(seed, 2),
            reorder: stream(seed, 3),
            duplicate: stream(seed, 4),
            corrupt: stream(seed, 5),
        }
    }
}

/// The index of the stall stream (the link's [`StallSchedule`](crate::StallSchedule) holds
/// it), after the five of [`Streams`].
pub(crate) const STALL_STREAM: u64 = 6;

/// Random stream `k` of the link seeded with `seed`.
pub(crate) fn stream(seed: u64, k: u64) -> Pcg64Mcg {
    Pcg64Mcg::seed_from_u64(seed ^ k.wrapping_mul(STREAM_SPREAD))
}

/// Returns true with probability `p`.
///
/// `p <= 0` (and NaN) never fires and `p >= 1` always fires; neither consumes randomness, so a
/// disabled impairment costs nothing per packet.
pub(crate) fn chance(rng: &mut impl Rng, p: f64) -> bool {
    if p.is_nan() || p <= 0.0 {
        return false;
    }
    if p >= 1.0 {
        return true;
    }
    unit(rng) < p
}

/// A uniform sample in `[0, 1)` with 53 bits of precision.
fn unit(rng: &mut impl Rng) -> f64 {
    const SCALE: f64 = 1.0 / (1u64 << 53) as f64;
    (rng.next_u64() >> 11) as f64 * SCALE
}

/// A uniform sample in `[0, n)`; `n == 0` yields 0.
///
/// Uses the widening-multiply range reduction: the bias is at most `n / 2^64`, far below
/// anything a link simulation can measure, and it costs no division or retry loop.
pub(crate) fn below(rng: &mut impl Rng, n: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

/// A uniform sample in `[0, max]` at nanosecond resolution (spans beyond ~584 years saturate).
pub(crate) fn uniform_duration(rng: &mut impl Rng, max: Duration) -> Duration {
    let max_ns = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
    if max_ns == 0 {
        return Duration::ZERO;
    }
    Duration::from_nanos(below(rng, max_ns.saturating_add(1)))
}

/// An exponentially distributed sample with mean `mean` (the gap between events of a
/// Poisson process), saturating at [`Duration::MAX`].
pub(crate) fn exponential_duration(rng: &mut impl Rng, mean: Duration) -> Duration {
    // 1 - unit is in (0, 1], so the logarithm is finite.
    let draw = -(1.0 - unit(rng)).ln() * mean.as_secs_f64();
    Duration::try_from_secs_f64(draw).unwrap_or(Duration::MAX)
}

/// Flips one uniformly chosen bit of `data`; returns false (and does nothing) if it is empty.
pub(crate) fn flip_random_bit(rng: &mut impl Rng, data: &mut [u8]) -> bool {
    let bits = (data.len() as u64).saturating_mul(8);
    if bits == 0 {
        return false;
    }
    let bit = below(rng, bits);
    // `bit < data.len() * 8`, so the byte index is in bounds and fits in usize.
    let byte = usize::try_from(bit / 8).unwrap_or(usize::MAX);
    if let Some(b) = data.get_mut(byte) {
        *b ^= 1 << (bit % 8);
    }
    true
}

/// Odd 64-bit constant (2^64 / golden ratio) that spreads stream indices over the seed space.
const STREAM_SPREAD: u64 = 0x9E37_79B9_7F4A_7C15;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chance_extremes_consume_nothing() {
        let mut a = Pcg64Mcg::seed_from_u64(7);
        let mut b = a.clone();
        assert!(!chance(&mut a, 0.0));
        assert!(!chance(&mut a, f64::NAN));
        assert!(chance(&mut a, 1.0));
        assert_eq!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn uniform_duration_stays_in_range_and_spreads() {
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let max = Duration::from_micros(10);
        let samples: Vec<_> = (0..10_000)
            .map(|_| uniform_duration(&mut rng, max))
            .collect();
        assert!(samples.iter().all(|&d| d <= max));
        let mean_ns = samples.iter().map(|d| d.as_nanos()).sum::<u128>() / 10_000;
        assert!((4_800..=5_200).contains(&mean_ns), "mean {mean_ns} ns");
    }

    #[test]
    fn exponential_duration_has_its_mean() {
        let mut rng = Pcg64Mcg::seed_from_u64(2);
        let mean = Duration::from_millis(10);
        let total: Duration = (0..20_000)
            .map(|_| exponential_duration(&mut rng, mean))
            .sum();
        let avg_ms = total.as_secs_f64() / 20_000.0 * 1e3;
        assert!((9.7..10.3).contains(&avg_ms), "mean {avg_ms:.2} ms");
        // Huge means saturate instead of panicking.
        for _ in 0..100 {
            exponential_duration(&mut rng, Duration::MAX);
        }
    }

    #[test]
    fn flip_changes_exactly_one_bit() {
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        for len in 1..40 {
            let mut data = vec![0u8; len];
            assert!(flip_random_bit(&mut rng, &mut data));
            let ones: u32 = data.iter().map(|b| b.count_ones()).sum();
            assert_eq!(ones, 1);
        }
        assert!(!flip_random_bit(&mut rng, &mut []));
    }

    #[test]
    fn streams_differ() {
        let mut s = Streams::new(0);
        assert_ne!(s.loss.next_u64(), s.jitter.next_u64());
    }
}
