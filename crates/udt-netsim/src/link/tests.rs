//! Tests that measure the link model against its configuration.

use super::*;
use crate::LossModel;

const MS: Duration = Duration::from_millis(1);
const US: Duration = Duration::from_micros(1);

/// Drains every scheduled packet by jumping a virtual clock from deadline to deadline.
fn drain<T: Clone>(link: &mut Link<T>) -> Vec<Delivery<T>> {
    let mut out = Vec::new();
    while let Some(deadline) = link.next_deadline() {
        while let Some(d) = link.poll_delivery(deadline) {
            out.push(d);
        }
    }
    out
}

/// Pushes `n` packets of `len` bytes, one every `gap`, tagged with their index, and drains.
fn run(config: LinkConfig, seed: u64, n: u64, len: usize, gap: Duration) -> Link<u64> {
    let mut link = Link::new(config, seed);
    for i in 0..n {
        link.push(gap * i as u32, i, vec![0xA5; len]);
    }
    link
}

/// Asserts that `count` successes out of `n` trials fit probability `p` within 5 sigma.
fn assert_binomial(count: u64, n: u64, p: f64, what: &str) {
    let mean = n as f64 * p;
    let sigma = (n as f64 * p * (1.0 - p)).sqrt();
    let dev = (count as f64 - mean).abs();
    assert!(
        dev <= 5.0 * sigma,
        "{what}: {count} of {n}, expected {mean:.0} ± {:.0}",
        5.0 * sigma
    );
}

#[test]
fn perfect_link_delivers_at_once_in_order() {
    let mut link: Link<u32> = Link::new(LinkConfig::default(), 0);
    for i in 0..10 {
        assert_eq!(link.push(MS, i, vec![i as u8]), Verdict::Queued);
    }
    for i in 0..10 {
        assert_eq!(link.poll_deliver(MS), Some((i, vec![i as u8])));
    }
    assert_eq!(link.poll_deliver(MS), None);
    assert_eq!(link.next_deadline(), None);
}

#[test]
fn rate_is_exact_for_a_saturating_burst() {
    let rate = 1_000_000_000;
    let config = LinkConfig::new()
        .rate_bps(rate)
        .delay(20 * MS)
        .queue_bytes(usize::MAX);
    let (n, len) = (100_000u64, 1500);
    let mut link = run(config, 1, n, len, Duration::ZERO);
    let out = drain(&mut link);
    assert_eq!(out.len() as u64, n);
    let span = out.last().unwrap().at - 20 * MS;
    let throughput = (n * len as u64 * 8) as f64 / span.as_secs_f64();
    assert!(
        (throughput / rate as f64 - 1.0).abs() < 0.001,
        "{throughput}"
    );
    // First packet: 12 µs of serialization at 1 Gbit/s.
    assert_eq!(out[0].at, 20 * MS + 12 * US);
}

#[test]
fn rate_holds_under_overload_with_drop_tail() {
    // Packets arrive every 10 µs but take 12 µs to send: the queue fills, then drops.
    let rate = 1_000_000_000;
    let config = LinkConfig::new().rate_bps(rate).delay(5 * MS);
    let n = 50_000;
    let mut link = run(config, 2, n, 1500, 10 * US);
    let out = drain(&mut link);
    let stats = link.stats();
    assert!(stats.dropped_queue > 0);
    assert!(stats.max_queue_bytes <= LinkConfig::DEFAULT_QUEUE_BYTES);
    assert!(stats.max_queue_bytes > LinkConfig::DEFAULT_QUEUE_BYTES - 1500);
    let span = out.last().unwrap().at - out.first().unwrap().at;
    let bits = (out.len() as u64 - 1) * 1500 * 8;
    let throughput = bits as f64 / span.as_secs_f64();
    assert!(
        (throughput / rate as f64 - 1.0).abs() < 0.001,
        "{throughput}"
    );
}

#[test]
fn delay_is_exact_without_jitter() {
    let config = LinkConfig::new().delay(50 * MS);
    let mut link = run(config, 3, 1000, 100, 7 * US);
    for d in drain(&mut link) {
        assert_eq!(d.at, 7 * US * d.tag as u32 + 50 * MS);
    }
}

#[test]
fn jitter_is_bounded_and_does_not_reorder_by_default() {
    // Close spacing exercises the FIFO floor; wide spacing shows the full jitter range.
    for gap in [100 * US, 10 * MS] {
        let config = LinkConfig::new().delay(10 * MS).jitter(5 * MS);
        let mut link = run(config, 4, 20_000, 100, gap);
        let out = drain(&mut link);
        assert_eq!(out.len(), 20_000);
        let (mut lo, mut hi) = (Duration::MAX, Duration::ZERO);
        for (i, d) in out.iter().enumerate() {
            assert_eq!(d.tag, i as u64, "reordered");
            let extra = d.at - gap * d.tag as u32 - 10 * MS;
            assert!(extra <= 5 * MS);
            (lo, hi) = (lo.min(extra), hi.max(extra));
        }
        if gap > 5 * MS {
            assert!(lo < MS / 10 && hi > 5 * MS - MS / 10, "{lo:?}..{hi:?}");
        }
    }
}

#[test]
fn jitter_may_reorder_when_allowed() {
    let config = LinkConfig::new()
        .delay(10 * MS)
        .jitter(5 * MS)
        .jitter_reorders(true);
    let mut link = run(config, 5, 20_000, 100, 100 * US);
    let out = drain(&mut link);
    let mut inversions = 0;
    for w in out.windows(2) {
        inversions += u32::from(w[1].tag < w[0].tag);
        assert!(w[0].at <= w[1].at);
    }
    for d in &out {
        let extra = d.at - 100 * US * d.tag as u32 - 10 * MS;
        assert!(extra <= 5 * MS);
    }
    assert!(inversions > 1000, "{inversions}");
}

#[test]
fn bernoulli_loss_rate_is_binomial() {
    for (p, seed) in [(0.01, 6), (0.1, 7)] {
        let n = 100_000;
        let config = LinkConfig::new().loss(LossModel::bernoulli(p));
        let mut link = run(config, seed, n, 100, US);
        let delivered = drain(&mut link).len() as u64;
        let stats = link.stats();
        assert_eq!(stats.dropped_loss + delivered, n);
        assert_binomial(stats.dropped_loss, n, p, "loss");
    }
}

#[test]
fn bursty_loss_has_its_mean_loss_and_burst_length() {
    let (m, burst) = (0.02, 4.0);
    let n = 1_000_000;
    let config = LinkConfig::new().loss(LossModel::bursty(m, burst));
    let mut link = Link::new(config, 8);
    let (mut lost, mut bursts, mut prev_lost) = (0u64, 0u64, false);
    for i in 0..n {
        let l = link.push(US * i as u32, (), Vec::new()) == Verdict::DroppedLoss;
        lost += u64::from(l);
        bursts += u64::from(l && !prev_lost);
        prev_lost = l;
        while link.poll_deliver(US * i as u32).is_some() {}
    }
    // ~5000 bursts: the loss rate is within ~5 sigma, the burst length within ~4.
    let rate = lost as f64 / n as f64;
    let mean_burst = lost as f64 / bursts as f64;
    assert!((rate - m).abs() < 0.1 * m, "loss rate {rate}");
    assert!(
        (mean_burst - burst).abs() < 0.05 * burst,
        "burst {mean_burst}"
    );
}

#[test]
fn drop_tail_loses_exactly_the_excess() {
    let config = LinkConfig::new().rate_bps(1_000_000).queue_bytes(10_000);
    let mut link: Link<u32> = Link::new(config, 9);
    let verdicts: Vec<_> = (0..15)
        .map(|i| link.push(Duration::ZERO, i, vec![0; 1000]))
        .collect();
    assert!(verdicts[..10].iter().all(|&v| v == Verdict::Queued));
    assert!(verdicts[10..]
        .iter()
        .all(|&v| v == Verdict::DroppedQueueFull));
    assert_eq!(link.queued_bytes(Duration::ZERO), 10_000);
    // 1000 bytes at 1 Mbit/s take 8 ms: one packet has left by then, making room for one.
    assert_eq!(link.queued_bytes(8 * MS), 9_000);
    assert_eq!(link.push(8 * MS, 15, vec![0; 1000]), Verdict::Queued);
    assert_eq!(link.push(8 * MS, 16, vec![0; 1]), Verdict::DroppedQueueFull);
    let tags: Vec<_> = drain(&mut link).into_iter().map(|d| d.tag).collect();
    assert_eq!(tags, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15]);
    assert_eq!(link.stats().dropped_queue, 6);
    assert_eq!(link.stats().max_queue_bytes, 10_000);
}

#[test]
fn duplicates_are_exact_copies_at_the_configured_rate() {
    let n = 100_000;
    let config = LinkConfig::new().duplicate(0.05).delay(MS);
    let mut link = run(config, 10, n, 64, US);
    let out = drain(&mut link);
    let stats = link.stats().clone();
    assert_binomial(stats.duplicated, n, 0.05, "duplicates");
    assert_eq!(out.len() as u64, n + stats.duplicated);
    assert_eq!(stats.delivered, n + stats.duplicated);
    assert!(out.iter().all(|d| d.data == [0xA5; 64]));
    let mut seen = vec![0u32; n as usize];
    for d in &out {
        seen[d.tag as usize] += 1;
    }
    assert_eq!(
        seen.iter().filter(|&&c| c == 2).count() as u64,
        stats.duplicated
    );
}

#[test]
fn corruption_flips_one_bit_at_the_configured_rate() {
    let n = 100_000;
    let config = LinkConfig::new().corrupt(0.05);
    let mut link = run(config, 11, n, 64, US);
    let mut corrupted = 0;
    for d in drain(&mut link) {
        let flipped: u32 = d.data.iter().map(|b| (b ^ 0xA5).count_ones()).sum();
        assert!(flipped <= 1);
        corrupted += u64::from(flipped);
    }
    assert_eq!(corrupted, link.stats().corrupted);
    assert_binomial(corrupted, n, 0.05, "corruption");
}

#[test]
fn mtu_drops_longer_packets_only() {
    let mut link: Link = Link::new(LinkConfig::new().mtu(1500), 12);
    assert_eq!(link.push(MS, (), vec![0; 1500]), Verdict::Queued);
    assert_eq!(link.push(MS, (), vec![0; 1501]), Verdict::DroppedMtu);
    assert_eq!(link.stats().dropped_mtu, 1);
    assert_eq!(drain(&mut link).len(), 1);
}

#[test]
fn offer_hands_back_dropped_buffers_for_reuse() {
    let config = LinkConfig::new()
        .rate_bps(8_000_000)
        .queue_bytes(1500)
        .mtu(1500);
    let mut link: Link<u32> = Link::new(config, 1);
    assert_eq!(link.offer(Duration::ZERO, 1, vec![1; 1000]), Ok(()));
    // The queue holds 1000 of 1500 bytes: a second 1000-byte packet overflows it.
    let (verdict, data) = link.offer(Duration::ZERO, 2, vec![2; 1000]).unwrap_err();
    assert_eq!((verdict, data), (Verdict::DroppedQueueFull, vec![2; 1000]));
    let (verdict, data) = link.offer(Duration::ZERO, 3, vec![3; 1501]).unwrap_err();
    assert_eq!((verdict, data.len()), (Verdict::DroppedMtu, 1501));
    assert_eq!(link.stats().dropped(), 2);
}

#[test]
fn reordering_delays_the_chosen_packets_so_later_ones_overtake() {
    let n = 100_000;
    let config = LinkConfig::new().delay(MS).reorder(0.02, 100 * US);
    let mut link = run(config, 13, n, 64, 10 * US);
    let out = drain(&mut link);
    let reordered = link.stats().reordered;
    assert_binomial(reordered, n, 0.02, "reordering");
    let late = out
        .iter()
        .filter(|d| d.at == 10 * US * d.tag as u32 + MS + 100 * US)
        .count() as u64;
    assert_eq!(late, reordered);
    let inversions = out.windows(2).filter(|w| w[1].tag < w[0].tag).count();
    assert!(inversions as u64 >= reordered * 9 / 10, "{inversions}");
}

/// Stalls hold the whole link: a steady stream through a link that stalls a fifth of the
/// time arrives in bunches at the stalls' ends, still in order, and a link with spare
/// capacity delivers every packet in the end.
#[test]
fn stalls_bunch_deliveries_and_keep_the_order() {
    let config = LinkConfig::new()
        .rate_bps(100_000_000)
        .delay(5 * MS)
        .queue_bytes(1 << 20)
        .stalls(200.0, 2 * MS);
    // A 1000-byte packet every 100 µs: 80% of the link.
    let n = 50_000;
    let mut link = run(config, 11, n, 1000, 100 * US);
    let out = drain(&mut link);
    assert_eq!(out.len() as u64, n);
    assert!(out.windows(2).all(|w| w[0].tag < w[1].tag));
    // Alone, each packet takes 80 µs + 5 ms; a stall holds it longer, at arrival (and the
    // backlog it leaves, which the link's spare fifth drains in about four times the stall)
    // or at delivery.
    let base = 5 * MS + 80 * US;
    let held = out
        .iter()
        .filter(|d| d.at > 100 * US * d.tag as u32 + base + 10 * US)
        .count() as f64
        / n as f64;
    assert!((0.3..0.95).contains(&held), "held {held:.3}");
    let worst = out
        .iter()
        .map(|d| d.at - 100 * US * d.tag as u32)
        .max()
        .unwrap_or_default();
    assert!(worst > base + MS && worst < base + 20 * MS, "{worst:?}");
    // Bunches: packets delivered at the same instant as the one before.
    let bunched = out.windows(2).filter(|w| w[0].at == w[1].at).count();
    assert!(bunched as u64 > n / 20, "{bunched}");
}

/// The stall stream is its own: turning stalls on changes no loss draw.
#[test]
fn stalls_leave_the_other_draws_alone() {
    let lossy = LinkConfig::new()
        .rate_bps(100_000_000)
        .loss(LossModel::bernoulli(0.05));
    let plain = run(lossy.clone(), 4, 10_000, 500, 50 * US);
    let stalled = run(lossy.stalls(100.0, MS), 4, 10_000, 500, 50 * US);
    assert_eq!(plain.stats().dropped_loss, stalled.stats().dropped_loss);
    let mut a = plain;
    let mut b = stalled;
    let tags = |out: Vec<Delivery<u64>>| out.into_iter().map(|d| d.tag).collect::<Vec<_>>();
    assert_eq!(tags(drain(&mut a)), tags(drain(&mut b)));
}

/// A config with every impairment on, for the determinism tests.
fn everything() -> LinkConfig {
    LinkConfig::new()
        .rate_bps(100_000_000)
        .delay(3 * MS)
        .jitter(MS)
        .queue_bytes(50_000)
        .loss(LossModel::bursty(0.03, 3.0))
        .reorder(0.01, 2 * MS)
        .duplicate(0.01)
        .corrupt(0.01)
        .stalls(20.0, MS)
}

/// The full observable outcome of a run: delivery times, tags and payloads, plus stats.
fn outcome(seed: u64) -> (Vec<Delivery<u64>>, LinkStats) {
    let mut link = run(everything(), seed, 20_000, 1000, 50 * US);
    (drain(&mut link), link.stats().clone())
}

#[test]
fn same_seed_same_outcome_and_different_seeds_differ() {
    assert_eq!(outcome(14), outcome(14));
    assert_ne!(outcome(14), outcome(15));
}

#[test]
fn impairments_do_not_shift_each_others_draws() {
    let loss = LossModel::bernoulli(0.1);
    let lost = |config: LinkConfig| -> Vec<Verdict> {
        let mut link: Link = Link::new(config, 16);
        (0..1000)
            .map(|i| link.push(US * i, (), vec![0; 10]))
            .collect()
    };
    let plain = lost(LinkConfig::new().loss(loss));
    let noisy = lost(
        LinkConfig::new()
            .loss(loss)
            .jitter(MS)
            .duplicate(0.5)
            .corrupt(0.5),
    );
    assert_eq!(plain, noisy);
}

#[test]
fn set_config_applies_to_later_packets() {
    let mut link: Link = Link::new(LinkConfig::new().delay(MS), 17);
    link.push(Duration::ZERO, (), vec![]);
    link.set_config(LinkConfig::new().delay(5 * MS).rate_bps(8_000_000));
    link.push(Duration::ZERO, (), vec![0; 1000]);
    let at: Vec<_> = drain(&mut link).into_iter().map(|d| d.at).collect();
    assert_eq!(at, [MS, 6 * MS]);
    assert_eq!(link.config().delay, 5 * MS);
}

mod prop {
    use proptest::prelude::*;

    use super::*;

    fn arb_loss() -> impl Strategy<Value = LossModel> {
        prop_oneof![
            Just(LossModel::None),
            (-0.1..1.1f64).prop_map(LossModel::bernoulli),
            (0.0..1.0f64, 0.0..20.0f64).prop_map(|(m, l)| LossModel::bursty(m, l)),
            (0.0..1.0f64, 0.0..1.0f64, 0.0..1.0f64, 0.0..1.0f64).prop_map(|(a, b, c, d)| {
                LossModel::GilbertElliott {
                    p_good_to_bad: a,
                    p_bad_to_good: b,
                    loss_in_good: c,
                    loss_in_bad: d,
                }
            }),
        ]
    }

    prop_compose! {
        fn arb_config()(
            rate in proptest::option::of(0..10_000_000_000u64),
            delay in 0..100_000u64,
            jitter in 0..100_000u64,
            jitter_reorders: bool,
            queue_bytes in 0..100_000usize,
            loss in arb_loss(),
            reorder_prob in -0.1..1.1f64,
            reorder_delay in 0..100_000u64,
            duplicate_prob in -0.1..1.1f64,
            corrupt_prob in -0.1..1.1f64,
            mtu in 0..3000usize,
            stall_rate in -10.0..2_000.0f64,
            stall_max in 0..20_000u64,
        ) -> LinkConfig {
            LinkConfig {
                rate_bps: rate,
                delay: US * delay as u32,
                jitter: US * jitter as u32,
                jitter_reorders,
                queue_bytes,
                loss,
                reorder_prob,
                reorder_delay: US * reorder_delay as u32,
                duplicate_prob,
                corrupt_prob,
                mtu,
                stall_rate,
                stall_max: US * stall_max as u32,
            }
        }
    }

    /// One step: advance the clock by `dt` µs, then push a `len`-byte packet, then maybe poll.
    fn arb_steps() -> impl Strategy<Value = Vec<(u32, usize, bool)>> {
        proptest::collection::vec((0..2_000u32, 0..2_500usize, any::<bool>()), 0..300)
    }

    proptest! {
        #[test]
        fn link_invariants(config in arb_config(), seed: u64, steps in arb_steps()) {
            let delay = config.delay;
            let mut link: Link<Duration> = Link::new(config, seed);
            let mut now = Duration::ZERO;
            let mut out = Vec::new();
            for (dt, len, poll) in steps {
                now += US * dt;
                link.push(now, now, vec![0; len]);
                while let Some(d) = poll.then(|| link.poll_delivery(now)).flatten() {
                    prop_assert!(d.at <= now);
                    out.push(d);
                }
                prop_assert!(link.queued_bytes(now) <= link.config().queue_bytes);
            }
            out.extend(drain(&mut link));
            let s = link.stats();
            prop_assert_eq!(s.delivered + s.dropped(), s.pushed + s.duplicated);
            prop_assert_eq!(s.delivered, out.len() as u64);
            for w in out.windows(2) {
                prop_assert!(w[0].at <= w[1].at);
            }
            for d in &out {
                prop_assert!(d.at >= d.tag + delay);
            }
        }
    }
}
