//! Canned scenarios for the native controller, checked by hand against 4.11 `CUDTCC`.
//!
//! Each test drives one situation with exact inputs and asserts the exact state 4.11 would
//! reach; the arithmetic is spelled out in comments. Times are µs since the epoch; the
//! controller is initialised at `T0` unless stated, so the 10 ms RC gate opens at `T0 + 10 ms`.

use super::*;
use crate::congestion::{LossRange, TimeoutInfo};

const ISN: u32 = 1000;
const RTT_US: u64 = 100_000;
const T0: u64 = 1_000_000;

fn seq(value: u32) -> SeqNumber {
    SeqNumber::new(value)
}

fn at(micros: u64) -> Instant {
    Instant::from_micros(T0 + micros)
}

/// `a` equals `b` up to float rounding (relative 1e-12).
fn assert_close(a: f64, b: f64) {
    assert!((a - b).abs() <= b.abs() * 1e-12, "{a} != {b}");
}

fn native(max_window_pkts: u32, recv_rate_pkts: u32, seed: u64) -> Native {
    let mut native = Native::new(NativeConfig::libudt());
    let init = ControllerInit {
        mss: 1500,
        max_window_pkts,
        isn: seq(ISN),
        rtt: Duration::from_micros(RTT_US),
        recv_rate_pkts,
        bandwidth_pkts: 1,
        seed,
    };
    native.init(Instant::from_micros(T0), &init);
    native
}

fn ack(native: &mut Native, micros: u64, ack: u32, recv_rate_pkts: u32, bandwidth_pkts: u32) {
    let info = AckInfo {
        ack: seq(ack),
        rtt: Duration::from_micros(RTT_US),
        recv_rate_pkts,
        bandwidth_pkts,
        largest_sent: seq(ack + 100),
        receiver_time: None,
    };
    native.on_ack(at(micros), &info);
}

fn nak(native: &mut Native, micros: u64, first_lost: u32, largest_sent: u32, recv_rate: u32) {
    let ranges = [LossRange {
        first: seq(first_lost),
        last: seq(first_lost),
    }];
    let info = LossInfo {
        first_lost: seq(first_lost),
        ranges: &ranges,
        largest_sent: seq(largest_sent),
        rtt: Duration::from_micros(RTT_US),
        recv_rate_pkts: recv_rate,
        bandwidth_pkts: 1,
        receiver_time: None,
    };
    native.on_loss(at(micros), &info);
}

fn timeout(native: &mut Native, micros: u64, recv_rate_pkts: u32) {
    let info = TimeoutInfo {
        rtt: Duration::from_micros(RTT_US),
        recv_rate_pkts,
        largest_sent: seq(ISN + 50),
    };
    native.on_timeout(at(micros), &info);
}

/// A controller out of slow start at period 10⁶ / rate and no loss flag: a NAK during slow
/// start with a known receive rate does exactly that (4.11 `onLoss` early return).
fn paced(recv_rate_pkts: u32, seed: u64) -> Native {
    let mut native = native(8192, recv_rate_pkts, seed);
    nak(&mut native, 0, ISN + 3, ISN + 20, recv_rate_pkts);
    native
}

#[test]
fn init_state_matches_4_11() {
    let native = native(8192, 16, 0);
    assert!(native.slow_start());
    assert_eq!(native.cwnd_pkts(), 16.0);
    assert_eq!(native.period_us(), 1.0);
    assert_eq!(native.send_period(), Duration::from_micros(1));
    assert_eq!(native.last_ack, seq(ISN - 1));
    assert_eq!(native.last_dec_seq(), seq(ISN - 2));
    assert_eq!(native.last_dec_period_us(), 1.0);
    let counters = (
        native.avg_nak_num(),
        native.nak_count(),
        native.dec_random(),
    );
    assert_eq!((counters, native.dec_count()), ((0, 0, 1), 0));
    assert_eq!(native.ack_period(), Some(SYN));
    assert_eq!((native.ack_interval_pkts(), native.rto()), (None, None));
}

#[test]
fn slow_start_grows_by_inclusive_ack_count_then_exits_at_max_window() {
    let mut native = native(100, 16, 0);
    let mut cwnd = vec![native.cwnd_pkts()];
    // (time after init in µs, ACK number, receive rate)
    let acks = [
        (5_000, 1010, 16),    // gated: < 10 ms since init
        (10_000, 1010, 16),   // + len(999, 1010) = 12 -> 28
        (15_000, 1020, 16),   // gated
        (20_000, 1040, 16),   // + len(1010, 1040) = 31 -> 59
        (30_000, 1070, 5000), // + 31 -> 90
        (40_000, 1080, 5000), // + len(1070, 1080) = 11 -> 101 > 100: exit
        (50_000, 1100, 5000), // cwnd = 5000 / 1e6 * (100 000 + 10 000) + 16 = 566
    ];
    for (micros, number, rate) in acks {
        ack(&mut native, micros, number, rate, 1);
        cwnd.push(native.cwnd_pkts());
        if micros == 40_000 {
            assert!(!native.slow_start());
            // Exit sets period = 1e6 / 5000 = 200 µs, then the same call increases it.
            // B = 1: b = trunc(1 - 1e6/200) = -4999 <= 0, so inc = min_inc = 0.01 and
            // period = 200 * 10 000 / (200 * 0.01 + 10 000) = 2e6 / 10 002.
            assert_close(native.period_us(), 2e6 / 10_002.0);
        }
    }
    assert_eq!(cwnd, [16.0, 16.0, 28.0, 28.0, 59.0, 90.0, 101.0, 566.0]);
    // Each min_inc step adds 0.01 * 1e6 / SYN = 1 packet/s: 5000 -> 5001 -> 5002 pkts/s.
    assert_close(native.period_us(), 1e6 / 5002.0);
}

#[test]
fn ack_rate_control_gate_is_10_ms() {
    let mut native = native(8192, 16, 0);
    ack(&mut native, 9_999, 1010, 16, 1);
    assert_eq!((native.cwnd_pkts(), native.last_ack), (16.0, seq(ISN - 1)));
    ack(&mut native, 10_000, 1010, 16, 1); // exactly 10 ms: acts
    assert_eq!(native.cwnd_pkts(), 28.0);
    ack(&mut native, 19_999, 1020, 16, 1);
    assert_eq!(native.cwnd_pkts(), 28.0);
    ack(&mut native, 20_000, 1020, 16, 1); // + len(1010, 1020) = 11
    assert_eq!(native.cwnd_pkts(), 39.0);
}

/// Our default (deviation): every ACK in slow start grows the window by what it newly
/// acknowledges; the first ACK of an RC interval still counts 4.11's way (one more).
#[test]
fn ack_clocked_slow_start_grows_on_every_ack() {
    let mut native = Native::new(NativeConfig::default());
    let init = ControllerInit {
        max_window_pkts: 100,
        isn: seq(ISN),
        recv_rate_pkts: 5000,
        ..ControllerInit::default()
    };
    native.init(Instant::from_micros(T0), &init);
    let mut cwnd = Vec::new();
    for (micros, number) in [
        (1_000, 1016),  // + 17 (999 -> 1016) -> 33
        (2_000, 1016),  // nothing new
        (3_000, 1049),  // + 33 -> 66
        (10_000, 1060), // RC interval: + len(1049, 1060) = 12 -> 78
        (11_000, 1083), // + 23 -> 101 > 100: leaves slow start
    ] {
        ack(&mut native, micros, number, 5000, 1);
        cwnd.push(native.cwnd_pkts());
    }
    assert_eq!(cwnd, [33.0, 33.0, 66.0, 78.0, 101.0]);
    assert!(!native.slow_start());
    // The ACKs covered 1016 -> 1083 = 67 packets in the 10 ms since the first one: 6,700/s,
    // more than A = 5,000/s, so the period is 10⁶ / 6,700 µs rather than 4.11's 200 µs.
    assert_close(native.period_us(), 1e6 / 6_700.0);
}

#[test]
fn loss_in_slow_start_with_known_rate_sets_rate_without_decrease() {
    let mut native = native(8192, 16, 0);
    nak(&mut native, 1_000, ISN + 3, ISN + 20, 16);
    assert!(!native.slow_start());
    assert_eq!(native.period_us(), 62_500.0); // 1e6 / 16
    assert!(!native.loss_pending());
    assert_eq!(native.last_dec_seq(), seq(ISN - 2));
    assert_eq!((native.nak_count(), native.dec_count()), (0, 0));
    // No loss flag, so the next RC interval increases: 16 -> 17 pkts/s (B = 1, min_inc),
    // and the window becomes 16 / 1e6 * 110 000 + 16 = 17.76.
    ack(&mut native, 10_000, ISN + 5, 16, 1);
    assert_close(native.period_us(), 1e6 / 17.0);
    assert_close(native.cwnd_pkts(), 17.76);
}

#[test]
fn loss_in_slow_start_without_rate_uses_inverted_units_then_decreases() {
    let mut native = native(8192, 0, 0);
    nak(&mut native, 1_000, ISN + 3, ISN + 20, 0);
    // period = cwnd / (RTT + SYN) = 16 / 110 000 (4.11's unit slip), then a new congestion
    // period: LastDecPeriod = that, period = ceil(1.4545e-4 * 1.125) = 1.
    assert!(!native.slow_start());
    assert!(native.loss_pending());
    assert_close(native.last_dec_period_us(), 16.0 / 110_000.0);
    assert_eq!(native.period_us(), 1.0);
    assert_eq!(native.last_dec_seq(), seq(ISN + 20));
    assert_eq!((native.avg_nak_num(), native.nak_count()), (0, 1));
    assert_eq!((native.dec_count(), native.dec_random()), (1, 1));
}

#[test]
fn congestion_avoidance_increase_at_1_gbit() {
    // 1 Gbit/s at 1500 B: 1e9 / 8 / 1500 = 83 333 pkts/s. Start at period 100 µs.
    let mut native = paced(10_000, 0);
    assert_eq!(native.period_us(), 100.0);
    ack(&mut native, 10_000, ISN + 40, 10_000, 83_333);
    // b = trunc(83 333 - 1e6 / 100) = 73 333. period 100 > LastDecPeriod 1 and
    // 83 333 div 9 = 9 259 < 73 333, so b = 9 259.
    // b * MSS * 8 = 9 259 * 1500 * 8 = 111 108 000; log10 = 8.05 -> ceil 9;
    // inc = 1e9 * 1.5e-6 / 1500 = 1.0 packet per SYN (+100 pkts/s per 10 ms).
    // period = 100 * 10 000 / (100 * 1.0 + 10 000) = 1e6 / 10 100 = 99.0099...
    assert_close(native.period_us(), 1e6 / 10_100.0);
    // cwnd = 10 000 / 1e6 * 110 000 + 16 = 1116.
    assert_close(native.cwnd_pkts(), 1116.0);
    assert_close(native.increase(), 1.0);
}

#[test]
fn increase_is_uncapped_when_faster_than_before_the_last_decrease() {
    // Period 0.5 µs (2e6 pkts/s) <= LastDecPeriod 1 µs, so b is not capped at B / 9.
    let mut native = paced(2_000_000, 0);
    ack(&mut native, 10_000, ISN + 40, 2_000_000, 7_200_000);
    // b = 7.2e6 - 2e6 = 5.2e6; b * 12 000 = 6.24e10 -> 1e11 * 1.5e-6 / 1500 = 100.
    // (Capped, B / 9 = 800 000 would give 9.6e9 -> 1e10 -> inc 10.)
    // period = 0.5 * 1e4 / (0.5 * 100 + 1e4) = 1e6 / 2 010 000.
    assert_close(native.period_us(), 1e6 / 2_010_000.0);
}

#[test]
fn first_loss_decreases_then_at_most_four_extra_per_period() {
    let mut native = paced(10_000, 0);
    let mut periods = Vec::new();
    // NAK k (k = 0..7) at largest sent 1050 + 10k; the first reports 1005 > LastDecSeq
    // (998), the rest report 1006, which stays <= LastDecSeq: same congestion period.
    for k in 0..7 {
        let first_lost = if k == 0 { ISN + 5 } else { ISN + 6 };
        nak(
            &mut native,
            1_000 + k,
            first_lost,
            ISN + 50 + 10 * k as u32,
            10_000,
        );
        periods.push(native.period_us());
        if k == 0 {
            assert_eq!(native.last_dec_period_us(), 100.0);
            assert_eq!(native.last_dec_seq(), seq(ISN + 50));
            // AvgNAKNum = ceil(0.875 * 0 + 0.125 * 0) = 0 -> DecRandom = max(1, 0) = 1.
            assert_eq!((native.avg_nak_num(), native.dec_random()), (0, 1));
        }
    }
    // ceil(100 * 1.125) = 113, ceil(127.125) = 128, 144, 162, ceil(182.25) = 183; then
    // DecCount reached 5 and further NAKs neither count nor decrease.
    assert_eq!(periods, [113.0, 128.0, 144.0, 162.0, 183.0, 183.0, 183.0]);
    assert_eq!((native.nak_count(), native.dec_count()), (5, 7));
    assert_eq!(native.last_dec_seq(), seq(ISN + 90)); // set by the last decrease
    assert!(native.loss_pending());
    // The next RC interval only clears the loss flag; the one after increases.
    ack(&mut native, 10_000, ISN + 40, 10_000, 1);
    assert_eq!(native.period_us(), 183.0);
    assert!(!native.loss_pending());
    ack(&mut native, 20_000, ISN + 41, 10_000, 1);
    assert_close(native.period_us(), 1e6 / (1e6 / 183.0 + 1.0));
    // A NAK past LastDecSeq opens a new period: AvgNAKNum = ceil(0.125 * 5) = 1.
    nak(&mut native, 30_000, ISN + 91, ISN + 200, 10_000);
    assert_eq!((native.avg_nak_num(), native.dec_random()), (1, 1));
}

/// Runs `periods` congestion periods of six NAKs each; returns (AvgNAKNum, DecRandom,
/// number of extra decreases) per period.
fn congestion_periods(native: &mut Native, periods: u32) -> Vec<(u32, u32, u32)> {
    let mut out = Vec::new();
    let mut largest = ISN + 100;
    for p in 0..periods {
        largest += 100;
        let micros = u64::from(p) * 1_000;
        nak(native, micros, largest - 50, largest, 10_000);
        let (avg, random) = (native.avg_nak_num(), native.dec_random());
        let mut extra = 0;
        for _ in 0..5 {
            let before = native.period_us();
            nak(native, micros, largest - 60, largest, 10_000);
            extra += u32::from(native.period_us() != before);
        }
        out.push((avg, random, extra));
    }
    out
}

#[test]
fn dec_random_stays_within_one_and_avg_nak_num() {
    let mut seen = [false; 6];
    for seed in 0..40 {
        let mut native = paced(10_000, seed);
        let rounds = congestion_periods(&mut native, 12);
        // NAKCount is 5 at the end of every period, so AvgNAKNum = ceil(0.875 A + 0.625):
        // 0, 1, 2, 3, 4, 5, 5, ...
        let avgs: Vec<u32> = rounds.iter().map(|r| r.0).collect();
        assert_eq!(avgs, [0, 1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 5]);
        for (avg, random, extra) in rounds {
            assert!(
                (1..=avg.max(1)).contains(&random),
                "{random} not in 1..={avg}"
            );
            // Extra decreases happen at NAKCount 2..=5 that are multiples of DecRandom.
            assert_eq!(extra, (2..=5).filter(|n| n % random == 0).count() as u32);
            seen[random as usize] = true;
        }
    }
    assert_eq!(seen, [false, true, true, true, true, true]);
}

#[test]
fn timeout_only_acts_in_slow_start() {
    let mut native = native(8192, 16, 0);
    timeout(&mut native, 1_000, 16);
    assert!(!native.slow_start());
    assert_eq!(native.period_us(), 62_500.0);
    assert!(!native.loss_pending());

    let mut native = paced(10_000, 0);
    nak(&mut native, 1_000, ISN + 5, ISN + 50, 10_000);
    let before = native.clone();
    timeout(&mut native, 2_000, 10_000);
    assert_eq!(native.period_us(), before.period_us());
    assert_eq!(native.cwnd_pkts(), before.cwnd_pkts());
    assert_eq!(native.last_dec_seq(), before.last_dec_seq());
    assert_eq!(native.loss_pending(), before.loss_pending());

    // Without a receive rate, 4.11's inverted fallback: cwnd / (RTT + SYN).
    let mut native = native_without_rate();
    timeout(&mut native, 1_000, 0);
    assert_close(native.period_us(), 16.0 / 110_000.0);
}

fn native_without_rate() -> Native {
    native(8192, 0, 0)
}

#[test]
fn same_seed_gives_same_period_sequence() {
    let run = |seed| {
        let mut native = paced(10_000, seed);
        let mut trace = Vec::new();
        for (p, (_, random, _)) in congestion_periods(&mut native, 30).into_iter().enumerate() {
            ack(
                &mut native,
                100_000 + p as u64 * 10_000,
                ISN + 40,
                10_000,
                83_333,
            );
            trace.push((random, native.period_us().to_bits()));
        }
        trace
    };
    assert_eq!(run(7), run(7));
    let distinct: std::collections::HashSet<_> = (0..8).map(run).collect();
    assert!(distinct.len() > 1, "the seed should matter");
}

/// Rate increases in 100 ms of ACKs 3.125 ms apart (prompt ACKs on a 200 ms path).
fn increases_with_frequent_acks(config: NativeConfig) -> u32 {
    let mut native = Native::new(config);
    let init = ControllerInit {
        isn: seq(ISN),
        recv_rate_pkts: 5000,
        ..ControllerInit::default()
    };
    native.init(Instant::from_micros(T0), &init);
    nak(&mut native, 0, ISN + 3, ISN + 20, 5000);
    let mut increases = 0;
    for i in 1..=32u32 {
        let before = native.period_us();
        ack(&mut native, u64::from(i) * 3_125, ISN + 20 + i, 5000, 1);
        increases += u32::from(native.period_us() < before);
    }
    increases
}

/// 4.11 starts each RC interval at the ACK that opened it, so ACKs 3.125 ms apart open one
/// every 12.5 ms (8 in 100 ms); our steady clock keeps one per 10 ms (10 in 100 ms).
#[test]
fn steady_rc_clock_keeps_one_increase_per_interval() {
    assert_eq!(increases_with_frequent_acks(NativeConfig::libudt()), 8);
    assert_eq!(increases_with_frequent_acks(NativeConfig::default()), 10);
}
