//! Operation-model property test for every built-in controller (style habit 5, after
//! s2n-quic): random sequences of sent / received / ACK / NAK / timeout / custom-message /
//! time steps with plausible arguments, checking after every step that the window stays at
//! or above the controller's minimum and the period stays positive and finite. The model
//! itself ([`Op`], [`run_model`]) lives in `fuzzing/congestion_ops.rs`, shared with the
//! byte-driven fuzz body; this file only generates the operations.
//!
//! Minimums: native — `NativeConfig::min_window_pkts()` (16 by default: the window starts at
//! 16, only grows in slow start, and afterwards is `A/10⁶·(RTT + SYN) + 16 >= 16`);
//! fixed rate — [`FixedRate::MIN_WINDOW_PKTS`] (16); ledbat — its configured minimum (2);
//! cubic — its configured minimum (4).

use std::time::Duration;

use proptest::prelude::*;

use super::*;
use crate::fuzzing::congestion_ops::{native_period_in_range, run_model, Op, Rates};

/// Mixes small values (where the window floor and the `b <= 0` branch matter) with large
/// ones (fast links), so both ends get exercised.
fn rates() -> impl Strategy<Value = Rates> {
    let rtt = prop_oneof![1u64..2_000, 1u64..2_000_000];
    let recv = prop_oneof![0u32..100, 0u32..1_000_000];
    let bw = prop_oneof![0u32..100, 0u32..2_000_000];
    let stamp = proptest::option::of(any::<u32>());
    (rtt, recv, bw, stamp).prop_map(|(rtt_us, recv, bw, stamp)| Rates {
        rtt: Duration::from_micros(rtt_us),
        recv_rate_pkts: recv,
        bandwidth_pkts: bw,
        receiver_time: stamp,
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u64..30_000).prop_map(|us| Op::Step(Duration::from_micros(us))),
        3 => (1u32..64).prop_map(Op::Send),
        1 => Just(Op::Retransmit),
        1 => Just(Op::Receive),
        3 => (0.0f64..=1.0, rates()).prop_map(|(frac, rates)| Op::Ack { frac, rates }),
        2 => (0.0f64..=1.0, 0u32..20, rates())
            .prop_map(|(frac, span, rates)| Op::Loss { frac, span, rates }),
        1 => rates().prop_map(Op::Timeout),
        1 => (any::<u16>(), proptest::collection::vec(any::<u8>(), 0..16))
            .prop_map(|(t, body)| Op::Custom(t, body)),
    ]
}

fn init() -> impl Strategy<Value = ControllerInit> {
    (
        1u32..=9000,
        0u32..100_000,
        0u32..=SeqNumber::MAX,
        rates(),
        any::<u64>(),
    )
        .prop_map(|(mss, max_window_pkts, isn, rates, seed)| ControllerInit {
            mss,
            max_window_pkts,
            isn: SeqNumber::new(isn),
            rtt: rates.rtt,
            recv_rate_pkts: rates.recv_rate_pkts,
            bandwidth_pkts: rates.bandwidth_pkts,
            seed,
        })
}

proptest! {
    #[test]
    fn native_keeps_window_and_period_sane(
        init in init(),
        ops in proptest::collection::vec(op(), 0..300),
    ) {
        let mut native = Native::default();
        let min = native.config().min_window_pkts();
        prop_assert_eq!(min, 16.0);
        run_model(&mut native, &init, ops, min, native_period_in_range)
            .map_err(TestCaseError::fail)?;
    }

    #[test]
    fn ledbat_keeps_window_and_period_sane(
        init in init(),
        ops in proptest::collection::vec(op(), 0..300),
    ) {
        let mut ledbat = Ledbat::default();
        let min = ledbat.config().min_window_value();
        run_model(&mut ledbat, &init, ops, min, |_| Ok(())).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn cubic_keeps_window_and_period_sane(
        init in init(),
        ops in proptest::collection::vec(op(), 0..300),
    ) {
        let mut cubic = Cubic::default();
        let min = cubic.config().min_window_value();
        run_model(&mut cubic, &init, ops, min, |_| Ok(())).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn fixed_rate_keeps_window_and_period_sane(
        rate in 0u64..20_000_000_000,
        init in init(),
        ops in proptest::collection::vec(op(), 0..300),
    ) {
        let mut fixed = FixedRateFactory::new(rate).build();
        run_model(fixed.as_mut(), &init, ops, FixedRate::MIN_WINDOW_PKTS, |_| Ok(()))
            .map_err(TestCaseError::fail)?;
    }
}

#[test]
fn factories_build_named_controllers() {
    let native = NativeFactory::default();
    assert_eq!((native.name(), native.build().name()), ("native", "native"));
    let ledbat = LedbatFactory::default();
    assert_eq!((ledbat.name(), ledbat.build().name()), ("ledbat", "ledbat"));
    let cubic = CubicFactory::default();
    assert_eq!((cubic.name(), cubic.build().name()), ("cubic", "cubic"));
    let fixed = FixedRateFactory::new(1_000_000);
    assert_eq!(
        (fixed.name(), fixed.build().name()),
        ("fixed-rate", "fixed-rate")
    );
}

#[test]
fn period_conversion_keeps_positive_periods_positive() {
    assert_eq!(duration_from_micros_f64(1.0), Duration::from_micros(1));
    assert_eq!(
        duration_from_micros_f64(99.0099),
        Duration::from_nanos(99_010)
    );
    assert_eq!(duration_from_micros_f64(1e-9), Duration::from_nanos(1));
    assert_eq!(duration_from_micros_f64(0.0), Duration::ZERO);
    assert_eq!(duration_from_micros_f64(f64::NAN), Duration::ZERO);
    assert_eq!(
        duration_from_micros_f64(f64::INFINITY),
        Duration::from_nanos(u64::MAX)
    );
}
