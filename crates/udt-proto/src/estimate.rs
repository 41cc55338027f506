//! The receiver's and sender's running estimates: RTT and its variance, packet arrival speed,
//! link capacity from packet pairs, and the sender's smoothing of what the receiver reports.
//!
//! They live together because they are all small fixed-size filters fed per packet or per
//! ACK and read once per full ACK (every SYN). Feeding is O(1); the median filters sort a
//! stack copy of their window only when read, so the per-packet cost stays a store.

use std::time::Duration;

use crate::seq::SeqNumber;
use crate::time::{duration_micros, duration_nanos, Instant};

/// Smoothed RTT and RTT variance, in 4.11's integer EWMA form.
///
/// Both ends keep one: the receiver feeds ACK→ACK2 round trips, the sender feeds the RTT the
/// receiver reports in each numbered ACK (§4.3), and the handshake gives each side a first
/// sample where it can (`connection`: a caller times its last request, a server the caller's
/// keep-alive).
///
/// The first sample replaces the initial guess (RFC 6298 §2.2: RTT = sample, variance = half
/// of it) instead of being averaged into it, a deviation from 4.11, which starts every
/// connection at 100 ms and moves an eighth of the way per sample. On a sub-millisecond path
/// 4.11's way takes some 35 samples (a few hundred milliseconds of ACKs) to come within 1 ms,
/// and meanwhile everything scaled by the RTT is scaled by a phantom 100 ms: the model's
/// start-up paced at 16 packets per 100 ms and, at 4 Gbit/s on a veth pair, ended after
/// three ACK periods at 1.3k packets per second, then crawled for seconds. Only the local
/// estimate changes: the wire carries it as before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RttEstimator {
    rtt_us: u32,
    rtt_var_us: u32,
    /// Whether a sample has replaced the initial values.
    measured: bool,
}

impl RttEstimator {
    /// 4.11's initial RTT: 10 × SYN.
    pub(crate) const INITIAL_RTT_US: u32 = 100_000;
    /// 4.11's initial RTT variance.
    pub(crate) const INITIAL_RTT_VAR_US: u32 = 50_000;

    /// An estimator at 4.11's initial values (100 ms, 50 ms).
    pub(crate) fn new() -> Self {
        Self::with_initial(Self::INITIAL_RTT_US, Self::INITIAL_RTT_VAR_US)
    }

    /// An estimator starting from known values (4.11 restores them from a per-peer cache).
    pub(crate) fn with_initial(rtt_us: u32, rtt_var_us: u32) -> Self {
        Self {
            rtt_us,
            rtt_var_us,
            measured: false,
        }
    }

    /// Feeds one RTT sample.
    ///
    /// The first sample is taken as it is (see the type's doc); after it, UDT4 §4.3:
    /// `RTTVar = (3·RTTVar + |rtt − RTT|) / 4` with the old RTT, then `RTT = (7·RTT + rtt) / 8`,
    /// integer arithmetic.
    pub(crate) fn update(&mut self, sample: Duration) {
        let sample_us = u32::try_from(duration_micros(sample)).unwrap_or(u32::MAX);
        self.update_us(sample_us);
    }

    /// [`Self::update`] with a sample in microseconds (the RTT word of an ACK).
    pub(crate) fn update_us(&mut self, sample_us: u32) {
        if !std::mem::replace(&mut self.measured, true) {
            self.rtt_us = sample_us;
            self.rtt_var_us = sample_us / 2;
            return;
        }
        let (rtt, var, sample) = (
            u64::from(self.rtt_us),
            u64::from(self.rtt_var_us),
            u64::from(sample_us),
        );
        let var = (3 * var + rtt.abs_diff(sample)) / 4;
        let rtt = (7 * rtt + sample) / 8;
        // Both are weighted means of u32 values, so they fit in u32.
        self.rtt_var_us = u32::try_from(var).unwrap_or(u32::MAX);
        self.rtt_us = u32::try_from(rtt).unwrap_or(u32::MAX);
    }

    /// Smoothed RTT.
    pub(crate) fn rtt(&self) -> Duration {
        Duration::from_micros(self.rtt_us.into())
    }

    /// RTT variance.
    pub(crate) fn rtt_var(&self) -> Duration {
        Duration::from_micros(self.rtt_var_us.into())
    }

    /// Smoothed RTT in microseconds (the ACK's RTT word).
    pub(crate) fn rtt_us(&self) -> u32 {
        self.rtt_us
    }

    /// RTT variance in microseconds (the ACK's RTT-variance word).
    pub(crate) fn rtt_var_us(&self) -> u32 {
        self.rtt_var_us
    }

    /// `RTT + 4·RTTVar`: the timeout term 4.11 uses everywhere (EXP, ACK repeat, NAK interval).
    pub(crate) fn rto_base(&self) -> Duration {
        Duration::from_micros(u64::from(self.rtt_us) + 4 * u64::from(self.rtt_var_us))
    }
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self::new()
    }
}

/// Receiver-side packet arrival speed (ACK word 4), from the last 16 inter-arrival times.
///
/// Arrivals are timed in *events*: a full-sized packet that arrives less than
/// [`BACK_TO_BACK`] after the previous one joins its event (up to [`MAX_EVENT`] from the event's first packet), and the
/// time from an event's start to the next one's is shared evenly among its packets. Packets
/// spaced by their sending rate read as in 4.11, one interval each; a pacing train, sent at
/// one instant and arriving back to back, is timed as a unit. Per-packet intervals read the
/// gaps inside trains (a few µs through a veth), the median filter then dropped the gaps
/// between them, and a 1 Gbit/s flow in trains read as 4 Gbit/s. Datagrams stamped with one
/// time (a GRO train) are the same case. An event records at most [`ARRIVAL_WINDOW`] entries.
///
/// Intervals are kept in nanoseconds where 4.11 keeps whole microseconds. A loopback flow
/// arrives in GRO trains at under 1 µs a packet: whole microseconds read each as 1 µs (or
/// 0, truncated) and the speed could not exceed 1M packets a second (11.6 Gbit/s of
/// payload). The model caps its delivery samples near the reported speed, so its estimate
/// stuck at ~0.9M while the path delivered 1.3M. Only the precision changes: the ACK still
/// reports packets per second. (A `u32` of nanoseconds holds 4.3 s; a longer gap is stored
/// as that, where the median filter drops it as an outlier anyway.)
#[derive(Clone, Debug)]
pub(crate) struct ArrivalSpeed {
    window_ns: [u32; ARRIVAL_WINDOW],
    next: usize,
    /// When the arrival event under way began, and when its last packet arrived.
    event: Option<(Instant, Instant)>,
    /// Packets in it so far.
    event_pkts: u32,
}

const ARRIVAL_WINDOW: usize = 16;
/// Full-sized arrivals closer than this are back to back: one event. Above a veth's (1-3 µs)
/// or a 10 Gbit/s link's (1.2 µs) spacing, below a 1 Gbit/s sender's (12 µs).
const BACK_TO_BACK: Duration = Duration::from_micros(10);
/// The longest event (a continuous stream of back-to-back packets still reports each ms).
const MAX_EVENT: Duration = Duration::from_millis(1);
const PROBE_WINDOW: usize = 64;

impl ArrivalSpeed {
    /// A window filled with 4.11's initial 1 s intervals: the speed reads 1 pkt/s until real
    /// intervals displace them (as 4.11's first ACK shows).
    pub(crate) fn new() -> Self {
        Self {
            window_ns: [1_000_000_000; ARRIVAL_WINDOW],
            next: 0,
            event: None,
            event_pkts: 0,
        }
    }

    /// Records a data packet arrival (every one, duplicates included, §4.7).
    ///
    /// The first call only starts the first event. (4.11 measures the first interval from
    /// socket creation; that one sample is dropped by the median filter anyway.) An event's
    /// interval is recorded when the next event starts (see the type's documentation).
    ///
    /// Only `full_size` packets join an event by arriving back to back (besides datagrams
    /// stamped alike): a short packet (a write's tail) follows the one before it closely
    /// because it is short, which is the link's spacing, read per packet as in 4.11.
    pub(crate) fn on_arrival(&mut self, now: Instant, full_size: bool) {
        if let Some((start, last)) = self.event {
            let joins = now == last || (full_size && now < last + BACK_TO_BACK);
            if joins && now < start + MAX_EVENT {
                self.event = Some((start, now.max(last)));
                self.event_pkts = self.event_pkts.saturating_add(1);
                return;
            }
            let packets = self.event_pkts.max(1);
            let mut interval = nanos_u32((now - start) / packets);
            if packets > 1 {
                // An event faster than 1 ns per packet must not read as "unknown".
                interval = interval.max(1);
            }
            for _ in 0..packets.min(ARRIVAL_WINDOW as u32) {
                self.window_ns[self.next] = interval;
                self.next = (self.next + 1) % ARRIVAL_WINDOW;
            }
        }
        self.event = Some((now, now));
        self.event_pkts = 1;
    }

    /// Packets per second, or 0 when too few intervals agree with the median.
    ///
    /// UDT4 §4.7: median = element 8 of the first 15 entries sorted (4.11 quirk); keep all
    /// entries v with M/8 < v < 8·M; if more than 8 are kept, `ceil(1e9 / (sum div count))`
    /// (4.11's `1e6` with the intervals in µs).
    pub(crate) fn speed_pkts(&self) -> u32 {
        let median = quirky_median(&self.window_ns);
        let (sum, count) = filter_around(&self.window_ns, median);
        if count <= (ARRIVAL_WINDOW / 2) as u64 {
            return 0;
        }
        // Kept entries are > M/8 >= 0, so the integer mean is at least 1.
        let mean = (sum / count).max(1);
        per_second(mean as f64)
    }
}

impl Default for ArrivalSpeed {
    fn default() -> Self {
        Self::new()
    }
}

/// Receiver-side packets per second counted over whole report periods (the time between
/// two full ACKs that carry rates, at least a SYN): what the ACK pacing uses.
///
/// [`ArrivalSpeed`] times the last few arrival events, so one pacing train that a token
/// bucket let through at wire speed fills its window: through `tbf` at 45 Mbit/s it read
/// 15,000-67,000 pkt/s at times against ~3,900 delivered, and the prompt-ACK gap (16
/// packets at that speed) fell to its 1 ms floor: twice the intended ACKs, each a wake-up
/// and a system call at both ends. A count over 10 ms or more spans several trains and
/// does not see them. The spikes come from long trains: [`ArrivalSpeed`] records an event as
/// up to its whole window, so one 16-packet GSO train is the whole reading, where one of the
/// 4-packet trains that 4.11 and simulated peers get is a quarter of it. So the connection
/// applies the count only to a peer that sends GSO trains (see `prompt_ack_gap`).
///
/// The count lags a flow that is speeding up (slow start doubles per RTT, and a period can
/// span many short RTTs), so it only caps the arrival speed while the flow is steady: two
/// whole periods in a row agree within a quarter ([`Self::cap`]). Otherwise the arrival
/// speed stands, as before.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CountedSpeed {
    /// Where the period under way began: (time, packets received by then).
    mark: Option<(Instant, u64)>,
    /// Packets per second over the last whole period (0: none yet), and the one before.
    speed_pkts: u32,
    previous_pkts: u32,
}

impl CountedSpeed {
    /// Closes the period under way at `now`, when `received` packets have arrived in all,
    /// and starts the next one. A period shorter than 1 ms is too short to count and is
    /// left running.
    pub(crate) fn close_period(&mut self, now: Instant, received: u64) {
        if let Some((start, before)) = self.mark {
            let elapsed = duration_micros(now - start);
            if elapsed < 1_000 {
                return;
            }
            let pkts = received.saturating_sub(before);
            let speed = pkts.saturating_mul(1_000_000) / elapsed;
            self.previous_pkts = self.speed_pkts;
            self.speed_pkts = u32::try_from(speed).unwrap_or(u32::MAX);
        }
        self.mark = Some((now, received));
    }

    /// Packets per second over the last whole period; 0 before the first one ends.
    pub(crate) fn speed_pkts(&self) -> u32 {
        self.speed_pkts
    }

    /// `arrival_pkts` (an [`ArrivalSpeed`] reading), held to a quarter above the counted
    /// speed while the flow is steady (the last two periods agree within a quarter and
    /// counted something); unchanged otherwise.
    pub(crate) fn cap(&self, arrival_pkts: u32) -> u32 {
        let (now, before) = (u64::from(self.speed_pkts), u64::from(self.previous_pkts));
        let steady = now > 0 && before > 0 && now * 4 <= before * 5 && before * 4 <= now * 5;
        if !steady {
            return arrival_pkts;
        }
        let ceiling = u32::try_from(now + now / 4).unwrap_or(u32::MAX);
        arrival_pkts.min(ceiling)
    }
}

/// The least mean pair gap [`LinkCapacity`] reads, in ns: 1 µs, 4.11's resolution. A pair
/// that arrives inside one GRO train carries the train's one arrival stamp: its gap reads 0,
/// which says only that the pair came faster than the receiver can tell apart, not how fast
/// the bottleneck is. Read as 1 ns (10⁹ packets a second), such pairs made UDT4's native
/// controller, whose increase grows with the log of the spare capacity, add a hundred times
/// 4.11's step behind a shaper that passes bursts at line speed: 86 Mbit/s against 180 on a
/// `tbf` at 200 Mbit/s, twice the retransmissions of the losses (BENCHMARKS.md).
const MIN_PAIR_GAP_NS: f64 = 1_000.0;

/// Receiver-side link capacity (ACK word 5), from back-to-back packet pairs (§4.6, §4.8).
///
/// Pair gaps are kept in nanoseconds, as [`ArrivalSpeed`]'s intervals are, so a gap of
/// 11.8 µs (1 Gbit/s) no longer reads as 11 or 12. The mean gap is still held to at least
/// [`MIN_PAIR_GAP_NS`], so the capacity reads 1M packets a second at most, as in 4.11.
#[derive(Clone, Debug)]
pub(crate) struct LinkCapacity {
    window_ns: [u32; PROBE_WINDOW],
    next: usize,
    probe_start: Option<Instant>,
}

impl LinkCapacity {
    /// A window filled with 4.11's initial 1000 µs gaps (capacity reads 1000 pkts/s).
    pub(crate) fn new() -> Self {
        Self {
            window_ns: [1_000_000; PROBE_WINDOW],
            next: 0,
            probe_start: None,
        }
    }

    /// Records a data packet arrival (every one, retransmissions and duplicates included).
    ///
    /// Seq ≡ 0 (mod 16) starts a probe; seq ≡ 1 (mod 16) ends it and stores the gap. Unlike
    /// 4.11 the start is forgotten once used, so a lost first packet does not pair the second
    /// with a stale start (4.11's median filter usually rejects that sample anyway).
    pub(crate) fn on_arrival(&mut self, seq: SeqNumber, now: Instant) {
        match seq.value() % 16 {
            0 => self.probe_start = Some(now),
            1 => {
                if let Some(start) = self.probe_start.take() {
                    self.window_ns[self.next] = nanos_u32(now - start);
                    self.next = (self.next + 1) % PROBE_WINDOW;
                }
            }
            _ => {}
        }
    }

    /// Estimated capacity in packets per second; never 0.
    ///
    /// UDT4 §4.8: median = element 32 of the first 63 entries sorted; keep v with
    /// M/8 < v < 8·M; `ceil(1e9 / ((M + Σkept) / (1 + count)))` with the gaps in ns, the
    /// mean at least [`MIN_PAIR_GAP_NS`].
    pub(crate) fn capacity_pkts(&self) -> u32 {
        let median = quirky_median(&self.window_ns);
        let (sum, count) = filter_around(&self.window_ns, median);
        let mean = (u64::from(median) + sum) as f64 / (count + 1) as f64;
        per_second(mean.max(MIN_PAIR_GAP_NS))
    }
}

impl Default for LinkCapacity {
    fn default() -> Self {
        Self::new()
    }
}

/// The sender's smoothed view of the receiver's reports (§4.9), handed to congestion control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PeerRates {
    /// Smoothed receive rate A (packets/s); starts at 16.
    pub recv_rate_pkts: u32,
    /// Smoothed link capacity B (packets/s); starts at 1.
    pub bandwidth_pkts: u32,
}

impl PeerRates {
    /// 4.11's initial values: A = 16, B = 1.
    pub(crate) fn new() -> Self {
        Self {
            recv_rate_pkts: 16,
            bandwidth_pkts: 1,
        }
    }

    /// Folds in the rate words of a 24-byte ACK: `x = (7·x + v) / 8` for each reported
    /// value v > 0; zeros (unknown) leave the estimate alone.
    pub(crate) fn update(&mut self, recv_rate_pkts: u32, bandwidth_pkts: u32) {
        self.recv_rate_pkts = ewma_eighth(self.recv_rate_pkts, recv_rate_pkts);
        self.bandwidth_pkts = ewma_eighth(self.bandwidth_pkts, bandwidth_pkts);
    }
}

impl Default for PeerRates {
    fn default() -> Self {
        Self::new()
    }
}

/// `(7·old + sample) / 8`, or `old` when the sample is 0.
fn ewma_eighth(old: u32, sample: u32) -> u32 {
    if sample == 0 {
        return old;
    }
    let mixed = (7 * u64::from(old) + u64::from(sample)) / 8;
    u32::try_from(mixed).unwrap_or(u32::MAX)
}

/// 4.11's median: sort a copy of all but the last entry and take index `N / 2`.
fn quirky_median<const N: usize>(window: &[u32; N]) -> u32 {
    let mut copy = *window;
    let head = &mut copy[..N - 1];
    let (_, median, _) = head.select_nth_unstable(N / 2);
    *median
}

/// Sum and count of the entries strictly between `median / 8` and `median · 8`.
fn filter_around(window: &[u32], median: u32) -> (u64, u64) {
    let upper = u64::from(median) << 3;
    let lower = u64::from(median >> 3);
    window
        .iter()
        .map(|&v| u64::from(v))
        .filter(|&v| v > lower && v < upper)
        .fold((0, 0), |(sum, count), v| (sum + v, count + 1))
}

/// `ceil(1e9 / interval_ns)`, saturating at `u32::MAX`.
fn per_second(interval_ns: f64) -> u32 {
    // `as` saturates for floats; interval >= 1 keeps the value finite.
    (1e9 / interval_ns).ceil() as u32
}

fn nanos_u32(d: Duration) -> u32 {
    u32::try_from(duration_nanos(d)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(us: u64) -> Instant {
        Instant::from_micros(us)
    }

    #[test]
    fn rtt_ewma_matches_hand_computation() {
        let mut rtt = RttEstimator::new();
        assert_eq!((rtt.rtt_us(), rtt.rtt_var_us()), (100_000, 50_000));
        rtt.update(Duration::from_micros(100_000));
        // The first sample replaces the initial guess: RTT = sample, RTTVar = sample / 2.
        assert_eq!((rtt.rtt_us(), rtt.rtt_var_us()), (100_000, 50_000));
        rtt.update(Duration::from_micros(20_000));
        // var = (150000 + 80000) / 4 = 57500; rtt = (700000 + 20000) / 8 = 90000
        assert_eq!((rtt.rtt_us(), rtt.rtt_var_us()), (90_000, 57_500));
        rtt.update_us(90_007);
        // var = (172500 + 7) / 4 = 43126 (integer); rtt = (630000 + 90007) / 8 = 90000
        assert_eq!((rtt.rtt_us(), rtt.rtt_var_us()), (90_000, 43_126));
        assert_eq!(rtt.rto_base(), Duration::from_micros(90_000 + 4 * 43_126));
        assert_eq!(rtt.rtt(), Duration::from_micros(90_000));
        assert_eq!(rtt.rtt_var(), Duration::from_micros(43_126));
    }

    #[test]
    fn the_first_sample_replaces_the_initial_guess() {
        let mut rtt = RttEstimator::new();
        rtt.update(Duration::from_micros(60));
        assert_eq!((rtt.rtt_us(), rtt.rtt_var_us()), (60, 30));
        // From the second sample on, 4.11's EWMA: (7 * 60 + 140) / 8 = 70.
        rtt.update(Duration::from_micros(140));
        assert_eq!(rtt.rtt_us(), 70);
    }

    #[test]
    fn rtt_converges_and_saturates() {
        let mut rtt = RttEstimator::new();
        for _ in 0..200 {
            rtt.update(Duration::from_micros(1_000));
        }
        assert!(rtt.rtt_us() <= 1_010, "{}", rtt.rtt_us());
        rtt.update(Duration::from_secs(1 << 40));
        assert!(rtt.rtt_us() > 1_000);
    }

    #[test]
    fn counted_speed_counts_whole_periods() {
        let mut counted = CountedSpeed::default();
        assert_eq!(counted.speed_pkts(), 0);
        counted.close_period(at(0), 100);
        assert_eq!(counted.speed_pkts(), 0, "one mark is no period");
        // 40 packets in 10 ms, however bunched: 4,000 pkt/s.
        counted.close_period(at(10_000), 140);
        assert_eq!(counted.speed_pkts(), 4_000);
        // A period under 1 ms keeps running and the last speed stands.
        counted.close_period(at(10_500), 200);
        assert_eq!(counted.speed_pkts(), 4_000);
        counted.close_period(at(20_000), 240);
        assert_eq!(counted.speed_pkts(), 10_000);
    }

    #[test]
    fn counted_speed_caps_spikes_only_while_steady() {
        let mut counted = CountedSpeed::default();
        counted.close_period(at(0), 0);
        counted.close_period(at(10_000), 40);
        // One period: not known to be steady, a spike passes.
        assert_eq!(counted.cap(60_000), 60_000);
        counted.close_period(at(20_000), 82);
        // 4,000 then 4,200 pkt/s: steady, so a 60,000 pkt/s train reading is held to 5,250…
        assert_eq!(counted.cap(60_000), 5_250);
        // …and a reading below the ceiling stands.
        assert_eq!(counted.cap(3_000), 3_000);
        // Speeding up (4,200 then 8,000): the count lags, the arrival speed stands.
        counted.close_period(at(30_000), 162);
        assert_eq!(counted.cap(16_000), 16_000);
    }

    #[test]
    fn arrival_speed_initially_one() {
        assert_eq!(ArrivalSpeed::new().speed_pkts(), 1);
    }

    #[test]
    fn arrival_speed_of_steady_100us_spacing() {
        let mut speed = ArrivalSpeed::new();
        for i in 0..=16 {
            speed.on_arrival(at(5_000 + i * 100), true);
        }
        assert_eq!(speed.speed_pkts(), 10_000);
    }

    #[test]
    fn arrival_speed_needs_more_than_eight_agreeing_intervals() {
        let mut speed = ArrivalSpeed::new();
        // 8 intervals of 100 µs: the other 8 are still 1 s, so the median is 1 s and only
        // those 8 pass the filter: 1e9 / 1e9 = 1 ... but 8 is not "more than 8".
        for i in 0..=8 {
            speed.on_arrival(at(i * 100), true);
        }
        assert_eq!(speed.speed_pkts(), 0);
        // A 9th and 10th: the sorted first 15 now put 100 µs at index 8.
        speed.on_arrival(at(900), true);
        speed.on_arrival(at(1000), true);
        assert_eq!(speed.speed_pkts(), 10_000);
    }

    #[test]
    fn arrival_speed_filters_outliers() {
        let mut speed = ArrivalSpeed::new();
        let mut t = 0;
        speed.on_arrival(at(t), true);
        for i in 0..16 {
            t += if i == 3 { 5_000 } else { 200 };
            speed.on_arrival(at(t), true);
        }
        // The 5 ms gap is > 8 × 200 µs and is dropped: 15 × 200 µs kept.
        assert_eq!(speed.speed_pkts(), 5_000);
    }

    #[test]
    fn arrival_speed_times_pacing_trains_as_units() {
        // Issue 13: 4-packet trains sent at one instant arrive 2 µs apart, one train per ms:
        // 4,000 packets/s, not the 500,000 the gaps inside the trains read as per packet.
        let mut speed = ArrivalSpeed::new();
        for train in 0..8 {
            for i in 0..4 {
                speed.on_arrival(at(10_000 + train * 1_000 + i * 2), true);
            }
        }
        assert_eq!(speed.speed_pkts(), 4_000);
        // ~1.2 Gbit/s as a runtime that wakes every 200 µs sends it: 20-packet bursts 3 µs
        // apart (read per packet: 333,334/s).
        let mut gbit = ArrivalSpeed::new();
        for burst in 0..25 {
            for i in 0..20 {
                gbit.on_arrival(at(10_000 + burst * 200 + i * 3), true);
            }
        }
        assert_eq!(gbit.speed_pkts(), 100_000);
    }

    #[test]
    fn arrival_speed_spreads_trains_stamped_alike() {
        // 40-packet trains every 200 µs (one GRO buffer each): 5 µs per packet, 200k/s.
        let mut speed = ArrivalSpeed::new();
        for train in 0..4 {
            for _ in 0..40 {
                speed.on_arrival(at(1_000 + train * 200), true);
            }
        }
        assert_eq!(speed.speed_pkts(), 200_000);
        // Trains faster than 1 µs per packet (loopback's GRO trains) keep their fraction of a
        // microsecond: 0.5 µs is 2M packets a second, not 4.11's 1 µs ceiling.
        let mut fast = ArrivalSpeed::new();
        for train in 0..3 {
            for _ in 0..40 {
                fast.on_arrival(at(1_000 + train * 20), true);
            }
        }
        assert_eq!(fast.speed_pkts(), 2_000_000);
        // 64-packet trains every 50 µs: 781 ns a packet, 1.28M a second.
        let mut loopback = ArrivalSpeed::new();
        for train in 0..3 {
            for _ in 0..64 {
                loopback.on_arrival(at(1_000 + train * 50), true);
            }
        }
        assert_eq!(loopback.speed_pkts(), 1_280_410);
    }

    #[test]
    fn capacity_initially_1000() {
        assert_eq!(LinkCapacity::new().capacity_pkts(), 1000);
    }

    #[test]
    fn capacity_from_pairs_12us_apart() {
        let mut cap = LinkCapacity::new();
        let mut t = 0;
        for n in 0..64u32 {
            cap.on_arrival(SeqNumber::new(n * 16), at(t));
            cap.on_arrival(SeqNumber::new(n * 16 + 1), at(t + 12));
            cap.on_arrival(SeqNumber::new(n * 16 + 2), at(t + 500));
            t += 1_000;
        }
        // 1e6 / 12 = 83333.3 -> 83334
        assert_eq!(cap.capacity_pkts(), 83_334);
    }

    #[test]
    fn capacity_ignores_unpaired_second_packet() {
        let mut cap = LinkCapacity::new();
        cap.on_arrival(SeqNumber::new(17), at(10));
        assert_eq!(cap.window_ns, [1_000_000; PROBE_WINDOW]);
        cap.on_arrival(SeqNumber::new(32), at(20));
        cap.on_arrival(SeqNumber::new(33), at(20));
        assert_eq!(cap.window_ns[0], 0);
        // One zero sample among 1000s is filtered out.
        assert_eq!(cap.capacity_pkts(), 1000);
    }

    #[test]
    fn pairs_inside_one_gro_train_read_as_a_microsecond() {
        let mut cap = LinkCapacity::new();
        // Every pair stamped alike (one GRO train each): at most 4.11's 1M packets a second,
        // not 10⁹.
        cap.window_ns = [0; PROBE_WINDOW];
        assert_eq!(cap.capacity_pkts(), 1_000_000);
        // Gaps under a microsecond that the receiver did tell apart are held there too;
        // longer ones keep their nanoseconds.
        cap.window_ns = [400; PROBE_WINDOW];
        assert_eq!(cap.capacity_pkts(), 1_000_000);
        cap.window_ns = [11_776; PROBE_WINDOW];
        assert_eq!(cap.capacity_pkts(), 84_919);
    }

    #[test]
    fn capacity_pair_across_seq_wrap() {
        let mut cap = LinkCapacity::new();
        // MAX = 0x7FFF_FFFF ≡ 15 (mod 16): 0 and 1 after the wrap form a pair.
        cap.on_arrival(SeqNumber::new(SeqNumber::MAX), at(0));
        cap.on_arrival(SeqNumber::new(0), at(100));
        cap.on_arrival(SeqNumber::new(1), at(150));
        assert_eq!(cap.window_ns[0], 50_000);
    }

    #[test]
    fn peer_rates_smooth_by_eighths() {
        let mut rates = PeerRates::new();
        assert_eq!((rates.recv_rate_pkts, rates.bandwidth_pkts), (16, 1));
        rates.update(800, 80_001);
        // A = (112 + 800) / 8 = 114; B = (7 + 80001) / 8 = 10001
        assert_eq!((rates.recv_rate_pkts, rates.bandwidth_pkts), (114, 10_001));
        rates.update(0, 0);
        assert_eq!((rates.recv_rate_pkts, rates.bandwidth_pkts), (114, 10_001));
        rates.update(u32::MAX, u32::MAX);
        assert!(rates.recv_rate_pkts > 114);
    }
}
