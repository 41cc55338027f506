//! Operation-model property test for every built-in controller (style habit 5, after
//! s2n-quic): random sequences of sent / received / ACK / NAK / timeout / custom-message /
//! time steps with plausible arguments, checking after every step that the window stays at
//! or above the controller's minimum and the period stays positive and finite.
//!
//! Minimums: native — `NativeConfig::min_window_pkts()` (16 by default: the window starts at
//! 16, only grows in slow start, and afterwards is `A/10⁶·(RTT + SYN) + 16 >= 16`);
//! fixed rate — [`FixedRate::MIN_WINDOW_PKTS`] (16).

use std::time::Duration;

use proptest::prelude::*;

use super::*;

/// One step of the model. Sizes are fractions or small counts so that every generated
/// sequence is plausible: ACKs never pass what was sent, NAKs report sent packets.
#[derive(Clone, Debug)]
enum Op {
    Step(u64),
    Send(u32),
    Retransmit,
    Receive,
    Ack { frac: f64, rates: Rates },
    Loss { frac: f64, span: u32, rates: Rates },
    Timeout(Rates),
    Custom(u16, Vec<u8>),
}

/// RTT and the sender-smoothed receiver reports carried by an ACK, NAK or timeout.
#[derive(Clone, Copy, Debug)]
struct Rates {
    rtt_us: u64,
    recv_rate_pkts: u32,
    bandwidth_pkts: u32,
}

/// Mixes small values (where the window floor and the `b <= 0` branch matter) with large
/// ones (fast links), so both ends get exercised.
fn rates() -> impl Strategy<Value = Rates> {
    let rtt = prop_oneof![1u64..2_000, 1u64..2_000_000];
    let recv = prop_oneof![0u32..100, 0u32..1_000_000];
    let bw = prop_oneof![0u32..100, 0u32..2_000_000];
    (rtt, recv, bw).prop_map(|(rtt_us, recv, bw)| Rates {
        rtt_us,
        recv_rate_pkts: recv,
        bandwidth_pkts: bw,
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u64..30_000).prop_map(Op::Step),
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
            rtt: Duration::from_micros(rates.rtt_us),
            recv_rate_pkts: rates.recv_rate_pkts,
            bandwidth_pkts: rates.bandwidth_pkts,
            seed,
        })
}

/// The sender's view the model keeps so that every hook gets consistent arguments.
struct Model {
    now: Instant,
    /// First unacknowledged sequence number.
    acked: SeqNumber,
    /// Next sequence number to send.
    next: SeqNumber,
}

impl Model {
    fn outstanding(&self) -> u32 {
        u32::try_from(self.acked.offset_to(self.next)).unwrap_or(0)
    }

    /// The sequence number `frac` of the way through the unacknowledged packets.
    fn pick(&self, frac: f64) -> SeqNumber {
        self.acked + (f64::from(self.outstanding()) * frac) as u32
    }

    fn apply<C: Controller + ?Sized>(&mut self, cc: &mut C, op: &Op) {
        let largest_sent = self.next.prev();
        match op {
            Op::Step(us) => self.now += Duration::from_micros(*us),
            Op::Send(n) => {
                for _ in 0..*n {
                    let info = SentInfo {
                        seq: self.next,
                        len: 1472,
                        retransmit: false,
                    };
                    cc.on_packet_sent(self.now, &info);
                    self.next = self.next.next();
                }
            }
            Op::Retransmit => {
                let info = SentInfo {
                    seq: self.acked,
                    len: 1472,
                    retransmit: true,
                };
                cc.on_packet_sent(self.now, &info);
            }
            Op::Receive => cc.on_packet_received(
                self.now,
                &ReceivedInfo {
                    seq: self.acked,
                    len: 64,
                },
            ),
            Op::Ack { frac, rates } => {
                let ack = self.pick(*frac);
                if self.outstanding() == 0 || ack == self.acked {
                    return; // only ACKs that advance the send buffer reach the controller
                }
                self.acked = ack;
                let info = AckInfo {
                    ack,
                    rtt: Duration::from_micros(rates.rtt_us),
                    recv_rate_pkts: rates.recv_rate_pkts,
                    bandwidth_pkts: rates.bandwidth_pkts,
                    largest_sent,
                };
                cc.on_ack(self.now, &info);
            }
            Op::Loss { frac, span, rates } => self.loss(cc, *frac, *span, rates),
            Op::Timeout(rates) => {
                let info = TimeoutInfo {
                    rtt: Duration::from_micros(rates.rtt_us),
                    recv_rate_pkts: rates.recv_rate_pkts,
                    largest_sent,
                };
                cc.on_timeout(self.now, &info);
            }
            Op::Custom(ext_type, body) => {
                cc.on_custom_message(self.now, *ext_type, body);
                while cc.poll_custom_message().is_some() {}
            }
        }
    }

    fn loss<C: Controller + ?Sized>(&mut self, cc: &mut C, frac: f64, span: u32, rates: &Rates) {
        if self.outstanding() == 0 {
            return; // a NAK can only report packets that were sent
        }
        let first = self.pick(frac.min(0.999));
        let largest_sent = self.next.prev();
        let last = (first + span).min_seq(largest_sent);
        let ranges = [LossRange { first, last }];
        let info = LossInfo {
            first_lost: first,
            ranges: &ranges,
            largest_sent,
            rtt: Duration::from_micros(rates.rtt_us),
            recv_rate_pkts: rates.recv_rate_pkts,
            bandwidth_pkts: rates.bandwidth_pkts,
        };
        cc.on_loss(self.now, &info);
    }
}

fn check_invariants<C: Controller + ?Sized>(
    cc: &C,
    min_window_pkts: f64,
) -> Result<(), TestCaseError> {
    let window = cc.window_pkts();
    prop_assert!(
        window.is_finite() && window >= min_window_pkts,
        "window {window}"
    );
    prop_assert!(
        cc.send_period() > Duration::ZERO,
        "period {:?}",
        cc.send_period()
    );
    if let Some(period) = cc.ack_period() {
        prop_assert!(period > Duration::ZERO);
    }
    Ok(())
}

/// Drives `cc` through `ops`, checking the shared invariants and `extra` after each step.
fn run_model<C: Controller + ?Sized>(
    cc: &mut C,
    init: &ControllerInit,
    ops: &[Op],
    min_window_pkts: f64,
    extra: impl Fn(&C) -> Result<(), TestCaseError>,
) -> Result<(), TestCaseError> {
    let mut model = Model {
        now: Instant::from_micros(1_000_000),
        acked: init.isn,
        next: init.isn,
    };
    cc.init(model.now, init);
    check_invariants(cc, min_window_pkts)?;
    extra(cc)?;
    for op in ops {
        model.apply(cc, op);
        check_invariants(cc, min_window_pkts)?;
        extra(cc)?;
    }
    cc.close();
    Ok(())
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
        run_model(&mut native, &init, &ops, min, |native| {
            let period = native.period_us();
            prop_assert!(period > 0.0 && period <= Native::MAX_PERIOD_US, "period {period}");
            Ok(())
        })?;
    }

    #[test]
    fn fixed_rate_keeps_window_and_period_sane(
        rate in 0u64..20_000_000_000,
        init in init(),
        ops in proptest::collection::vec(op(), 0..300),
    ) {
        let mut fixed = FixedRateFactory::new(rate).build();
        run_model(fixed.as_mut(), &init, &ops, FixedRate::MIN_WINDOW_PKTS, |_| Ok(()))?;
    }
}

#[test]
fn factories_build_named_controllers() {
    let native = NativeFactory::default();
    assert_eq!((native.name(), native.build().name()), ("native", "native"));
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
