//! Random loss models: none, independent (Bernoulli) and bursty (Gilbert-Elliott).
//!
//! A [`LossModel`] is the configuration; [`LossState`] is the little state machine a link keeps
//! to apply it, one decision per arriving packet. Real paths lose packets in bursts (a queue
//! overflowing somewhere else, a radio fade), and congestion control reacts differently to
//! bursts than to isolated losses, so both shapes are offered.

use rand_core::Rng;

use crate::rng::chance;

/// How a link randomly loses packets (independently of its own queue overflowing).
///
/// Probabilities outside `[0, 1]` are clamped when applied (NaN counts as 0).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum LossModel {
    /// No random loss.
    #[default]
    None,
    /// Each packet is lost independently with probability `p`.
    Bernoulli {
        /// Per-packet loss probability.
        p: f64,
    },
    /// A two-state Markov chain (Gilbert-Elliott). Before each packet the chain moves (from
    /// good to bad with `p_good_to_bad`, from bad to good with `p_bad_to_good`), then the packet
    /// is lost with the loss probability of the state it is now in. The chain starts good.
    GilbertElliott {
        /// Per-packet probability of leaving the good state.
        p_good_to_bad: f64,
        /// Per-packet probability of leaving the bad state.
        p_bad_to_good: f64,
        /// Loss probability while good (usually 0).
        loss_in_good: f64,
        /// Loss probability while bad (usually 1).
        loss_in_bad: f64,
    },
}

impl LossModel {
    /// Independent loss with probability `p` per packet.
    pub fn bernoulli(p: f64) -> Self {
        Self::Bernoulli { p }
    }

    /// Bursty loss with long-run loss rate `mean_loss` and mean burst length `mean_burst_len`
    /// packets: a simple Gilbert model (good state never loses, bad state always loses).
    ///
    /// The time spent in the bad state is geometric, so its mean `L` is `1 / p_bad_to_good`; the
    /// stationary probability of the bad state is `p_gb / (p_gb + p_bg)`, which must equal the
    /// loss rate `m`. Hence:
    ///
    /// ```text
    /// p_bad_to_good = 1 / L
    /// p_good_to_bad = m * p_bad_to_good / (1 - m)
    /// ```
    ///
    /// `L` is clamped to at least 1 and `m` to `[0, 1]`. The pair is reachable only when
    /// `m <= L / (L + 1)` (otherwise `p_good_to_bad` would exceed 1 and is clamped to 1, giving a
    /// lower loss rate than asked for).
    pub fn bursty(mean_loss: f64, mean_burst_len: f64) -> Self {
        let burst = if mean_burst_len >= 1.0 {
            mean_burst_len
        } else {
            1.0
        };
        let m = if mean_loss.is_nan() {
            0.0
        } else {
            mean_loss.clamp(0.0, 1.0)
        };
        let p_bad_to_good = 1.0 / burst;
        let p_good_to_bad = if m >= 1.0 {
            1.0
        } else {
            (m * p_bad_to_good / (1.0 - m)).min(1.0)
        };
        Self::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_in_good: 0.0,
            loss_in_bad: 1.0,
        }
    }

    /// The long-run fraction of packets this model loses (the stationary loss rate).
    pub fn mean_loss(&self) -> f64 {
        match *self {
            Self::None => 0.0,
            Self::Bernoulli { p } => clamp01(p),
            Self::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => {
                let (gb, bg) = (clamp01(p_good_to_bad), clamp01(p_bad_to_good));
                // With no transitions the chain stays in its initial (good) state.
                let p_bad = if gb + bg > 0.0 { gb / (gb + bg) } else { 0.0 };
                (1.0 - p_bad) * clamp01(loss_in_good) + p_bad * clamp01(loss_in_bad)
            }
        }
    }
}

/// Clamps a probability into `[0, 1]`, mapping NaN to 0.
fn clamp01(p: f64) -> f64 {
    if p.is_nan() {
        0.0
    } else {
        p.clamp(0.0, 1.0)
    }
}

/// The per-link state needed to apply a [`LossModel`] (only Gilbert-Elliott has any).
#[derive(Debug, Clone, Default)]
pub(crate) struct LossState {
    /// True while a Gilbert-Elliott chain is in its bad state.
    bad: bool,
}

impl LossState {
    /// Decides whether the next arriving packet is lost under `model`.
    pub(crate) fn lose(&mut self, model: &LossModel, rng: &mut impl Rng) -> bool {
        match *model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => chance(rng, p),
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => {
                let leave = if self.bad {
                    p_bad_to_good
                } else {
                    p_good_to_bad
                };
                if chance(rng, leave) {
                    self.bad = !self.bad;
                }
                chance(rng, if self.bad { loss_in_bad } else { loss_in_good })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use rand_core::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    use super::*;

    /// Runs `n` decisions and returns (losses, number of loss bursts).
    fn run(model: LossModel, n: u64, seed: u64) -> (u64, u64) {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut state = LossState::default();
        let (mut lost, mut bursts, mut prev) = (0, 0, false);
        for _ in 0..n {
            let l = state.lose(&model, &mut rng);
            lost += u64::from(l);
            bursts += u64::from(l && !prev);
            prev = l;
        }
        (lost, bursts)
    }

    #[test]
    fn bursty_formula_round_trips_mean_loss() {
        for (m, l) in [(0.01, 1.0), (0.02, 4.0), (0.1, 10.0), (0.3, 2.0)] {
            let model = LossModel::bursty(m, l);
            assert!((model.mean_loss() - m).abs() < 1e-12, "{model:?}");
        }
    }

    #[test]
    fn bursty_model_matches_its_long_run_stats() {
        for (m, l, seed) in [(0.02, 4.0, 1), (0.05, 2.0, 2), (0.01, 10.0, 3)] {
            // ~4000+ bursts per case: the tolerances below are about 4 sigma or more.
            let n = 4_000_000;
            let (lost, bursts) = run(LossModel::bursty(m, l), n, seed);
            let rate = lost as f64 / n as f64;
            let mean_burst = lost as f64 / bursts as f64;
            assert!((rate - m).abs() < 0.1 * m, "m={m} L={l}: rate {rate}");
            assert!(
                (mean_burst - l).abs() < 0.08 * l,
                "m={m} L={l}: burst {mean_burst}"
            );
        }
    }

    #[test]
    fn bursty_clamps_unreachable_parameters() {
        let LossModel::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            ..
        } = LossModel::bursty(0.9, 0.5)
        else {
            panic!("bursty must build a Gilbert-Elliott model");
        };
        assert_eq!((p_good_to_bad, p_bad_to_good), (1.0, 1.0));
        assert_eq!(LossModel::bursty(f64::NAN, 3.0).mean_loss(), 0.0);
    }

    #[test]
    fn none_and_certain_loss() {
        assert_eq!(run(LossModel::None, 1000, 0).0, 0);
        assert_eq!(run(LossModel::bernoulli(1.0), 1000, 0).0, 1000);
        assert_eq!(run(LossModel::bernoulli(-3.0), 1000, 0).0, 0);
    }
}
