//! The statistics the experiments tabulate: mean, standard deviation, σ/μ, Jain's fairness
//! index, and per-second rate series put on one clock.
//!
//! Kept apart from the experiments so that each figure is defined once (the papers we
//! reproduce disagree on details such as n versus n-1), and tested without a lab.
//!
//! Conventions:
//! - Empty input gives `None` rather than `NaN`, so a missing figure is visible in a table
//!   instead of propagating silently.
//! - The standard deviation is the *population* one (divides by n): the flows of a run, or the
//!   seconds of a transfer, are everything there is to describe, not a sample of something
//!   larger. With one value it is 0.

/// Arithmetic mean; `None` for no values.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

/// The middle value (the mean of the two middle ones for an even count); `None` for no
/// values.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// Population standard deviation (divides by n); `None` for no values.
pub fn std_dev(values: &[f64]) -> Option<f64> {
    let mu = mean(values)?;
    let var = values.iter().map(|v| (v - mu).powi(2)).sum::<f64>() / values.len() as f64;
    Some(var.sqrt())
}

/// σ/μ (the coefficient of variation, Teraflows' fairness figure: 0 is perfectly even);
/// `None` for no values or a mean of zero.
pub fn cov(values: &[f64]) -> Option<f64> {
    let mu = mean(values)?;
    if mu == 0.0 {
        return None;
    }
    Some(std_dev(values)? / mu)
}

/// Jain's fairness index, `(Σx)² / (n Σx²)`: 1 when all are equal, `1/n` when one flow takes
/// everything. `None` for no values or all zeros.
pub fn jain_index(values: &[f64]) -> Option<f64> {
    let sum: f64 = values.iter().sum();
    let squares: f64 = values.iter().map(|v| v * v).sum();
    if values.is_empty() || squares == 0.0 {
        return None;
    }
    Some(sum * sum / (values.len() as f64 * squares))
}

/// Mean, standard deviation and extremes of a set of values, as one table row shows them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// How many values.
    pub n: usize,
    /// Their mean.
    pub mean: f64,
    /// Their population standard deviation.
    pub std_dev: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
}

impl Summary {
    /// The summary of `values`; `None` if there are none.
    pub fn of(values: &[f64]) -> Option<Self> {
        Some(Self {
            n: values.len(),
            mean: mean(values)?,
            std_dev: std_dev(values)?,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }

    /// σ/μ of the values (`None` when the mean is zero).
    pub fn cov(&self) -> Option<f64> {
        (self.mean != 0.0).then(|| self.std_dev / self.mean)
    }
}

/// One reported interval of a flow: a rate over `[start_s, end_s)`, seconds on the flow's
/// own clock (as `udt perf`'s intervals are).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// Start, seconds.
    pub start_s: f64,
    /// End, seconds.
    pub end_s: f64,
    /// Bits per second over the span.
    pub bps: f64,
}

/// Resamples a flow's intervals onto whole seconds of a common clock: bin `k` covers
/// `[k, k+1)` seconds after the common start, and the flow's clock starts `offset_s` after
/// the common one (a flow launched later has a positive offset). Each bin gets the bits of
/// the spans overlapping it, in proportion to the overlap, so intervals that do not fall on
/// whole seconds (or are 0.5 s long) still add up; seconds the flow did not cover count 0.
pub fn per_second(spans: &[Span], offset_s: f64, seconds: usize) -> Vec<f64> {
    let mut bins = vec![0.0; seconds];
    for span in spans {
        let (start, end) = (span.start_s + offset_s, span.end_s + offset_s);
        let forward = matches!(end.partial_cmp(&start), Some(std::cmp::Ordering::Greater));
        if !forward || !span.bps.is_finite() {
            continue;
        }
        let first = start.max(0.0).floor() as usize;
        for (k, bin) in bins.iter_mut().enumerate().skip(first) {
            let (lo, hi) = (k as f64, k as f64 + 1.0);
            if lo >= end {
                break;
            }
            let overlap = hi.min(end) - lo.max(start);
            if overlap > 0.0 {
                *bin += span.bps * overlap;
            }
        }
    }
    bins
}

/// The element-wise sum of several series (the aggregate of a group of flows); the result is
/// as long as the longest, shorter ones counting 0 past their end.
pub fn sum_series(series: &[Vec<f64>]) -> Vec<f64> {
    let len = series.iter().map(Vec::len).max().unwrap_or(0);
    let mut total = vec![0.0; len];
    for s in series {
        for (t, v) in total.iter_mut().zip(s) {
            *t += v;
        }
    }
    total
}

/// The seconds of a series after the first `skip` (slow start, the queue filling) and before
/// the last `skip_end` (a flow finishing mid-second), the window in which a steady rate is
/// averaged. Returns what is left, possibly nothing.
pub fn steady(series: &[f64], skip: usize, skip_end: usize) -> &[f64] {
    let end = series.len().saturating_sub(skip_end);
    series.get(skip.min(end)..end).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn mean_and_std_dev_are_the_population_ones() {
        let v = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&v), Some(5.0));
        assert_eq!(std_dev(&v), Some(2.0));
        assert_eq!(cov(&v), Some(0.4));
        assert_eq!(std_dev(&[3.0]), Some(0.0));
    }

    #[test]
    fn empty_and_zero_inputs_give_none() {
        assert_eq!(mean(&[]), None);
        assert_eq!(std_dev(&[]), None);
        assert_eq!(cov(&[]), None);
        assert_eq!(cov(&[0.0, 0.0]), None);
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
        assert_eq!(Summary::of(&[]), None);
    }

    #[test]
    fn jain_index_spans_one_over_n_to_one() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0]), Some(1.0));
        assert!(close(jain_index(&[9.0, 0.0, 0.0]).unwrap(), 1.0 / 3.0));
        // (1+3)² / (2 (1+9)) = 0.8
        assert!(close(jain_index(&[1.0, 3.0]).unwrap(), 0.8));
    }

    #[test]
    fn summary_has_extremes_and_cov() {
        let s = Summary::of(&[1.0, 3.0]).unwrap();
        assert_eq!(
            (s.n, s.mean, s.std_dev, s.min, s.max),
            (2, 2.0, 1.0, 1.0, 3.0)
        );
        assert_eq!(s.cov(), Some(0.5));
    }

    #[test]
    fn per_second_keeps_aligned_intervals() {
        let spans = [
            Span {
                start_s: 0.0,
                end_s: 1.0,
                bps: 10.0,
            },
            Span {
                start_s: 1.0,
                end_s: 2.0,
                bps: 20.0,
            },
        ];
        assert_eq!(per_second(&spans, 0.0, 3), vec![10.0, 20.0, 0.0]);
    }

    #[test]
    fn per_second_shifts_and_splits_by_overlap() {
        // A flow starting 0.5 s after the common clock: its first second straddles bins 0-1.
        let spans = [
            Span {
                start_s: 0.0,
                end_s: 1.0,
                bps: 10.0,
            },
            Span {
                start_s: 1.0,
                end_s: 2.0,
                bps: 30.0,
            },
        ];
        assert_eq!(per_second(&spans, 0.5, 3), vec![5.0, 20.0, 15.0]);
        // Half-second intervals fold into whole seconds.
        let halves = [
            Span {
                start_s: 0.0,
                end_s: 0.5,
                bps: 10.0,
            },
            Span {
                start_s: 0.5,
                end_s: 1.0,
                bps: 30.0,
            },
        ];
        assert_eq!(per_second(&halves, 0.0, 1), vec![20.0]);
    }

    #[test]
    fn per_second_conserves_bits_within_the_window() {
        let spans: Vec<Span> = (0..7)
            .map(|i| Span {
                start_s: i as f64 * 0.7,
                end_s: (i + 1) as f64 * 0.7,
                bps: 1e6 * (i + 1) as f64,
            })
            .collect();
        let bits: f64 = spans.iter().map(|s| s.bps * (s.end_s - s.start_s)).sum();
        let bins = per_second(&spans, 0.3, 10);
        assert!(close(bins.iter().sum::<f64>(), bits));
    }

    #[test]
    fn per_second_ignores_what_falls_outside() {
        let spans = [
            Span {
                start_s: 0.0,
                end_s: 1.0,
                bps: 10.0,
            },
            Span {
                start_s: 2.0,
                end_s: 1.0,
                bps: 99.0,
            },
            Span {
                start_s: 1.0,
                end_s: 2.0,
                bps: f64::NAN,
            },
            Span {
                start_s: 5.0,
                end_s: 6.0,
                bps: 7.0,
            },
        ];
        assert_eq!(per_second(&spans, -0.5, 2), vec![5.0, 0.0]);
    }

    #[test]
    fn sum_series_pads_shorter_ones() {
        let total = sum_series(&[vec![1.0, 2.0], vec![10.0, 20.0, 30.0]]);
        assert_eq!(total, vec![11.0, 22.0, 30.0]);
        assert!(sum_series(&[]).is_empty());
    }

    #[test]
    fn steady_trims_both_ends_without_panicking() {
        let s = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(steady(&s, 1, 1), &[2.0, 3.0, 4.0]);
        assert_eq!(steady(&s, 4, 2), &[] as &[f64]);
        assert_eq!(steady(&[], 2, 0), &[] as &[f64]);
    }
}
