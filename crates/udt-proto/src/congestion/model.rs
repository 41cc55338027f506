//! A model-based controller in the spirit of BBR: it paces at a gain times an estimate of the
//! bottleneck bandwidth and caps the data in flight at a multiple of the estimated
//! bandwidth-delay product, instead of reacting to each loss the way UDT's native DAIMD does.
//!
//! The model has two numbers:
//! * **bandwidth** — the maximum delivery rate seen over the last 10 rounds (a round is one
//!   trip of the sequence space: it ends when the ACK passes what was the largest sequence
//!   sent when it began). Samples come from cumulative-ACK progress between sampled packets
//!   (`model/sampler.rs`), so they count what the receiver took, never what was sent;
//! * **min RTT** — the smallest RTT sample over the last 10 s.
//!
//! (Samples are taken at markers spaced by the min RTT or, on sub-millisecond paths, by the
//! gap between ACKs: see `marker_spacing` and `model/sampler.rs`.)
//!
//! and four modes:
//! 1. *Startup*: pace at 2/ln 2 ≈ 2.89 × bandwidth and grow the window by what each ACK
//!    delivers (the rate roughly doubles per round) until the bandwidth estimate has grown by
//!    less than 25% for three rounds (the pipe is full), or a round loses heavily.
//! 2. *Drain*: pace at 1/2.89 until the data in flight is down to one BDP (or two min RTTs
//!    passed: under random loss the flight never looks small, because UDT's cumulative ACK
//!    waits for each hole to be repaired), emptying the queue startup built. The competition
//!    mode's trials (below) drain the same way.
//! 3. *Probe bandwidth*: cycle the pacing gain through 1.25, 0.75, then six rounds of 1, one
//!    min RTT each, starting at a random cruise phase: the 1.25 phase finds newly free
//!    capacity, the 0.75 phase drains what the probe queued.
//! 4. *Probe RTT*: when the min RTT has not been refreshed for 10 s, hold the window at half
//!    the data of a min RTT and an ACK period (at least 4 packets) for 200 ms (after the
//!    flight has drained or one min RTT passed), so the queue empties and the min RTT can be
//!    measured again; competing flows synchronise on this. (BBR v1 holds 4 packets, which
//!    UDT's 10 ms ACKs turn into a stall.) A flow that saw the queue empty anyway (the
//!    smoothed RTT within 1/64 of the min, at least 2 ms) for a quarter of those 10 s skips
//!    probing: it takes the lowest RTT sample of those 10 s for its min if that is within the
//!    same tolerance, and keeps the min otherwise (see `min_rtt_expired`).
//!
//! Sharing with other model flows: from the fourth phase of the gain cycle on, a flow that
//! sees a standing queue of delay `d` (2-50 ms) lowers its estimate towards `α / d` packets
//! per second (`α` = 32 packets), the share at which every flow keeps the same `α` packets
//! queued whatever its RTT (Vegas and FAST TCP's equilibrium), or towards `K / d²` where
//! that is more (`K` = 0.25 packet-seconds: short queues, where `α / d` would put the
//! equilibrium below the 2 ms noise floor, as for two flows at 1 Gbit/s); probing and
//! back-offs alone move all flows in proportion and kept 4 flows at σ/μ 0.28. With the
//! competition mode on ([`ModelConfig::tcp_friendly`]) the rule rests whenever the
//! detector is judging or competing (see `share_fairly`). See `model/share.rs`.
//!
//! Window: 2 × BDP plus one ACK period of data (UDT acknowledges every 10 ms, so a window of
//! just 2 × BDP would stall on short paths), plus the packets between the cumulative ACK and
//! the receiver's known front (a hole holds the cumulative ACK back for a round trip, and the
//! connection counts everything after it as in flight); never above the peer's flow window.
//! "In flight" for the model's own decisions (drain, probe phases) is counted from the front.
//!
//! Loss: a loss by itself is *not* taken as congestion: random loss of a few percent leaves
//! the rate alone. A round whose loss rate exceeds 20%, or 2% while the smoothed RTT is 1.5 ×
//! the min RTT (a full queue overflowing), cuts the bandwidth estimate to 80%, or to the share
//! the round delivered if that is less, down to half (at most once every two rounds), and so
//! does an EXP timeout. The round start-up overfilled the queue in, which often ends only
//! after the drain, is the exception: it holds the estimate to the receiver's arrival reports
//! and no lower, however often it is judged (unless packets sent after start-up are lost in
//! it), since the estimate already is what the path delivered (cut to 80% there, a lone flow
//! at 1 Gbit/s × 100 ms spent its next second at 86% of the link). Startup ends at once when
//! its round loses more than 2% (at least 16 packets): startup overshoots by design, and on a
//! path with a one-BDP queue each extra round at 2.89× would lose most of a BDP.
//!
//! Application-limited stretches: from a packet sent with nothing queued behind it until the
//! front passes that packet, samples only count when they beat the estimate, and the rounds
//! do not count towards startup's plateau (as in BBR), so a connection that exchanges a few
//! small messages before its bulk data still starts up at full speed.
//!
//! Competing with loss-based flows (on by default, [`ModelConfig::tcp_friendly`] turns it
//! off): a queue still full after the drain, a loss while the queue is full (the RTT half the
//! path's floor above it), a loss late in cruise at the top of a wide RTT range, a queue that
//! stands for seconds without a loss, or one that never fell over four gain cycles while the
//! estimate never rose, falling by a fifth (a competitor's window growing into it), is taken for
//! congestion, not random loss, and the model then runs as a CUBIC flow (RFC 9438, `--cc
//! cubic`'s window) until a trial every 10 s shows the competitors gone, or at once when a
//! loss comes with the queue empty (random loss: a drop-tail queue drops only when full).
//! Losses with the queue empty also keep it from competing for a while: the path has random
//! loss. Competitors that do not yield to loss (BBR v1) keep the queue full too, and a CUBIC
//! flow beside them starves: if the CUBIC window loses more than 2% over three stretches
//! of a second, the model goes back to its rate-based self, undoes the back-offs of the last
//! seconds, and for 10 s neither competes nor backs off for loss (less, and back to competing,
//! if its own loss then shows the competitors yielding). See `model/competition.rs`.
//!
//! With [`ModelConfig::own_queue_test`] (off by default): where the floor RTT is shorter
//! than the gap between ACKs (veth pairs, LANs), a standing queue can be the model's own:
//! there the estimate, the highest delivery sample, was seen to read a few percent above the
//! link. So there a standing queue (after the drain, at a loss, or at the end of a gain
//! cycle) is first tested: the model paces at three quarters of the rate it measured over
//! its last 16 ACKs, and competes only if the queue does not empty (see `QueueTest`).
//!
//! On short paths (the min RTT below the gap between ACKs, the ACK/ACK2 round trip within
//! two gaps: LANs, veth pairs) a full queue can be shorter than the detector resolves (a
//! gigabit link's 64 packets hold 0.77 ms), so beside loss-based flows the model's own
//! back-offs must yield: there they may come every 4 round trips instead of every 200 ms,
//! cut to no less than 0.95 of the delivery rate over the last 16 ACKs (alone, that rate is
//! the link's), and delivery samples may exceed that rate by at most 10% per 6 ms of a
//! gain-cycle phase, up to the probe's 25% (a slow flow's ACKs, and so its phases, are
//! further apart; see `SHORT_PATH_BACKOFF_RTTS` and `SHORT_PATH_SLACK_PHASE`).
//!
//! Everything is O(1) per hook apart from `on_loss`, which is linear in the NAK's ranges.
//! Losses are counted once per sequence number (re-reported NAK ranges are not counted again).

mod competition;
mod holes;
mod sampler;
mod share;
#[cfg(test)]
mod tests;

use std::time::Duration;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg32;

use self::competition::{Competition, Hold, QueueWatch, Trend, MEMORY};
use self::holes::Holes;
use self::sampler::{HoleTally, MaxFilter, Sampler};
use self::share::{FairShare, ShareConfig};
use super::loss_tracker::FreshLosses;
use super::{
    duration_from_micros_f64, AckInfo, Controller, ControllerFactory, ControllerInit, LossInfo,
    SentInfo, TimeoutInfo, SYN,
};
use crate::seq::SeqNumber;
use crate::time::Instant;

/// Startup's pacing and window gain, 2/ln 2: the smallest gain that doubles the delivery rate
/// every round.
const STARTUP_GAIN: f64 = 2.885;
/// The probe-bandwidth gain cycle, one phase per min RTT.
const CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// The first phase of the gain cycle whose RTTs show only the standing queue (the probe's
/// own queue drained in phase 1, and phase 2's samples are of packets sent while it did).
const SHARE_FROM_PHASE: usize = 3;
/// Round trips after entering probe bandwidth before the fair-share rule looks at the queue:
/// under random loss the drain ends by time, and start-up's queue can outlast it (alone at
/// 1 Gbit/s x 100 ms with 1% loss, one round trip was too few: the flow read its own queue
/// as standing and cut itself to 28%).
const SHARE_SETTLE_RTTS: u32 = 4;
/// The smoothed RTT within 1/64 of the min RTT above it, or [`MIN_RTT_TOLERANCE_FLOOR`],
/// counts as the queue empty (see [`ModelBased::min_rtt_expired`]).
const MIN_RTT_TOLERANCE_DIVISOR: u32 = 64;
/// The ACK/ACK2 round trip of a lone flow wanders this much above the min with an empty
/// queue (1 Gbit/s × 50 ms in the lab: half of its readings within 0.8 ms, a tenth below the
/// min, which counts the receiver's wait to acknowledge); the fair-share rule takes standing
/// delays up to this for noise too (`ShareConfig::min_delay`).
const MIN_RTT_TOLERANCE_FLOOR: Duration = Duration::from_millis(2);
/// The share of the min RTT's 10 s during which the queue must have looked empty for the
/// min to hold without a probe RTT (see [`ModelBased::min_rtt_expired`]). A lone flow's own
/// probes hold the smoothed RTT up for a while each gain cycle (alone at 1 Gbit/s × 200 ms,
/// about half of its readings at the ends of phases were within the tolerance, and with a
/// half here the one traced 20 s flow still probed); flows that share a standing queue see
/// it empty only in each other's probe RTTs, a few percent of the time.
const QUIET_SHARE: f64 = 0.25;
/// Probe RTT's window as a fraction of the data over a min RTT and an ACK period (see
/// [`ModelBased::probe_rtt_window`]).
const PROBE_RTT_GAIN: f64 = 0.5;
/// Bandwidth growth below which a startup round counts as a plateau.
const PLATEAU_GROWTH: f64 = 1.25;
/// Plateau rounds that end startup.
const PLATEAU_ROUNDS: u32 = 3;
/// Fewest losses in a round that can count as heavy (so one loss in a tiny round does not).
const MIN_HEAVY_LOSSES: u64 = 4;
/// How far a delivery-rate sample may exceed the highest arrival rate the receiver reported
/// over the last two rounds (except on short paths: see [`ModelBased::cap_sample`]).
const ARRIVAL_SLACK: f64 = 1.1;
/// Rounds without a new arrival-rate report after which the report no longer caps samples
/// (the probe gain over the estimate does instead). The receiver reports "unknown" (0, which
/// leaves the smoothed rate as it was) when its intervals split in two: trains that cross a
/// 1 Gbit/s bottleneck 12 µs a packet, with milliseconds between them, as a flow well below
/// the link sends them.
const STALE_ARRIVAL_ROUNDS: u64 = 2;
/// Reports the smoothed arrival rate takes to count: after 16, `(7/8)^16` = 12% of the
/// rate is still missing from it (see [`ModelBased::arrival_settled`]).
const ARRIVAL_SETTLE_REPORTS: u32 = 16;
/// Shortest time between two congestion back-offs.
const BACKOFF_SPACING: Duration = Duration::from_millis(200);
/// On a short path (see [`ModelBased::short_path`]) back-offs may come this many round trips
/// apart (the smoothed RTT, at least an ACK gap) instead of [`BACKOFF_SPACING`]. A CUBIC flow
/// there cuts its window at every round trip with loss, a millisecond or less; one back-off
/// per 200 ms against that let a `model` flow take 4.1 times an equal share beside four
/// cubic flows on a 1 Gbit/s, 0.1 ms simulated link with a 64-packet queue (3-4 times
/// beside kernel CUBIC in the lab, where a kernel CUBIC flow in its place took 0.9-1.0).
const SHORT_PATH_BACKOFF_RTTS: u32 = 4;
/// On a short path a back-off cuts no lower than this fraction of the delivery rate over
/// the sampler's last 16 ACKs: back-offs come every few round trips there, and alone, cut
/// by a fifth each time, the flow left the link idle (886 against 930 Mbit/s at 1 Gbit/s,
/// 0 ms in the lab). Beside competitors it still yields: the delivery rate it holds to is
/// its own share, which their growth keeps taking.
const SHORT_PATH_BACKOFF_FLOOR: f64 = 0.95;
/// On a short path a delivery sample may exceed that delivery rate by at most this much.
/// Each sample spans an ACK gap or two, a few of the emulator's or the runtimes' bunches,
/// and read up to 19% above a 1 Gbit/s link at 0 ms; the estimate keeps the highest, so it
/// sat above the link between back-offs. With the back-off spacing and floor but not this
/// cap, the flow took 1.74 times an equal share beside four cubic flows in the simulator;
/// with it, 1.21. A tighter cap held it lower there (0.90 at 5%), but in the lab a flow
/// that started beside kernel CUBIC's slow starts at 25-40 Mbit/s then stayed near that in
/// two runs of three: 5% a gain cycle could not outgrow back-offs every few round trips.
const SHORT_PATH_SAMPLE_SLACK: f64 = 1.1;
/// The longest gain-cycle phase [`SHORT_PATH_SAMPLE_SLACK`] is set for: a flow with most of
/// a 1 Gbit/s link ends its phases every 2.5-5.7 ms in the lab (p10-p90 of one traced run
/// beside kernel CUBIC; a phase lasts two ACK gaps at least). A slower flow's ACKs come
/// further apart (a GSO peer acknowledges every 32 packets at least, ~9 ms at 3,600
/// pkt/s), so its phases are longer and it probes less often: among four `model` flows at
/// 1 Gbit/s × 0 ms, a flow that left start-up at a few thousand packets a second probed
/// every ~150 ms, was cut as often as it probed, and stayed there for whole runs. Its slack
/// compounds per this much of its phase, up to the probe's gain, so that it can grow about
/// as fast per second as the flows beside it: four flows there read σ/μ 0.134 over nine
/// runs in two sittings, none under 171 Mbit/s, against 0.190 with three runs starved at
/// 40-93 Mbit/s; beside kernel CUBIC 1.67 equal shares over the last 3 s against 1.69,
/// alone at 0 ms the same. (Per 3 ms a fast flow's longer phases count too.)
const SHORT_PATH_SLACK_PHASE: Duration = Duration::from_millis(6);
/// The deepest a single loss back-off cuts the estimate to (TCP's multiplicative decrease).
const DEEPEST_BACKOFF: f64 = 0.5;
/// Fewest losses in a round that can end startup.
const MIN_STARTUP_LOSSES: u64 = 16;
/// Fewest losses of packets sent after start-up that make a round begun in start-up
/// congestion rather than start-up's overshoot (see [`ModelBased::back_off_once`]).
const MIN_CONGESTION_LOSSES: u64 = 16;
/// What a queue test paces at, as a fraction of the delivery rate measured before it (see
/// [`QueueTest`]).
const TEST_GAIN: f64 = 0.75;
/// Gain cycles after a queue test found the queue the model's own during which the estimate
/// stays at most the rate the test measured (see [`ModelBased::judge_queue_test`]).
const HOLD_CYCLES: u32 = 4;
/// Bounds on the bandwidth estimate, packets per second, so the period stays finite.
const MIN_BW_PKTS: f64 = 1.0;
const MAX_BW_PKTS: f64 = 1e9;

/// Tunables of the model controller. [`Default`] gives the values in the module doc, which
/// follow BBR v1's published constants (Cardwell et al., "BBR: Congestion-Based Congestion
/// Control", ACM Queue 2016) plus the loss rules described there for this controller.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelConfig {
    cwnd_gain: f64,
    bw_window_rounds: u64,
    min_rtt_window: Duration,
    probe_rtt_duration: Duration,
    heavy_loss: f64,
    queue_loss: f64,
    queue_rtt_ratio: f64,
    loss_backoff: f64,
    initial_window_pkts: f64,
    min_window_pkts: f64,
    tcp_friendly: bool,
    own_queue_test: bool,
    share: ShareConfig,
}

impl ModelConfig {
    /// Window in BDPs once the pipe is full (default 2). At least 1.
    pub fn cwnd_gain(&mut self, gain: f64) -> &mut Self {
        self.cwnd_gain = if gain >= 1.0 { gain } else { 1.0 };
        self
    }

    /// Rounds the bandwidth max filter remembers (default 10). At least 1.
    pub fn bw_window_rounds(&mut self, rounds: u64) -> &mut Self {
        self.bw_window_rounds = rounds.max(1);
        self
    }

    /// How long a min RTT stays valid before a probe-RTT phase (default 10 s).
    pub fn min_rtt_window(&mut self, window: Duration) -> &mut Self {
        self.min_rtt_window = window.max(Duration::from_millis(1));
        self
    }

    /// How long probe RTT holds the small window (default 200 ms).
    pub fn probe_rtt_duration(&mut self, duration: Duration) -> &mut Self {
        self.probe_rtt_duration = duration;
        self
    }

    /// Loss rate of a round above which the estimate backs off whatever the RTT (default
    /// 0.2). Clamped to [0, 1].
    pub fn heavy_loss(&mut self, rate: f64) -> &mut Self {
        self.heavy_loss = if rate >= 0.0 { rate.min(1.0) } else { 0.0 };
        self
    }

    /// Loss rate above which the estimate backs off when the queue also looks full (default
    /// 0.02), and the RTT ratio that counts as a full queue (default 1.5).
    pub fn queue_overflow(&mut self, rate: f64, rtt_ratio: f64) -> &mut Self {
        self.queue_loss = if rate >= 0.0 { rate.min(1.0) } else { 0.0 };
        self.queue_rtt_ratio = if rtt_ratio >= 1.0 { rtt_ratio } else { 1.0 };
        self
    }

    /// Bandwidth multiplier on a back-off (default 0.8). Clamped to [0.1, 1].
    pub fn loss_backoff(&mut self, factor: f64) -> &mut Self {
        self.loss_backoff = if factor >= 0.1 { factor.min(1.0) } else { 0.1 };
        self
    }

    /// Window at `init` in packets (default 32), which with the initial RTT also sets the
    /// first pacing rate. At least the minimum window.
    pub fn initial_window_pkts(&mut self, pkts: f64) -> &mut Self {
        self.initial_window_pkts = if pkts >= 1.0 { pkts } else { 1.0 };
        self
    }

    /// Whether the model turns into a CUBIC flow while it competes with loss-based flows
    /// (a standing queue with losses; `model/competition.rs`). Default on. Its first
    /// versions were off by default: they took the model's own queue on a short lossy path
    /// for competitors and the CUBIC window then collapsed under the random loss (13 Mbit/s
    /// of 1 Gbit/s at 10 ms and 1% loss in the simulator; in the lab 683-779 Mbit/s at 10-20
    /// ms and 0.1-1% against 903-962 off). Now a loss with the queue empty ends a competition
    /// and three of them hold it off for two seconds, the first cruise phases after a probe
    /// are not judged, and the lab gives 925-947 Mbit/s in those cells. Off is the plain
    /// BBR-like model, which takes several times a fair share beside CUBIC (2.18 times
    /// beside 10 kernel CUBIC flows at 1 Gbit/s in the lab).
    pub fn tcp_friendly(&mut self, on: bool) -> &mut Self {
        self.tcp_friendly = on;
        self
    }

    /// Whether, where the floor RTT is shorter than the gap between ACKs, a standing queue is
    /// tested before the model competes (see `QueueTest`; with it, the recent RTT there spans
    /// two ACK gaps). Default off: on the shaped 45
    /// Mbit/s veth pair it kept every logged flow rate-based with the queue near empty (RTT
    /// 1.4-1.7 ms instead of 18-20, a third of the retransmissions), but on loopback, where
    /// the receiver's CPU is the bottleneck, flows then moved 10 Gbit/s instead of the 13-14
    /// that the CUBIC mode's standing queue reached (BENCHMARKS.md, session 13).
    pub fn own_queue_test(&mut self, on: bool) -> &mut Self {
        self.own_queue_test = on;
        self
    }

    /// The fair-share rule among model flows (`model/share.rs`): packets each flow may keep
    /// in a standing queue (default 32; 0 turns the rule off), and the standing delay up to
    /// which the rule does nothing (default 2 ms). With [`ModelConfig::tcp_friendly`] on,
    /// the rule rests while the competition detector has the queue in hand: until its
    /// verdict on the queue after the drain, while competing, and for a while after each
    /// trial (see `ModelBased::share_fairly`).
    pub fn fair_share(&mut self, queue_pkts: f64, min_delay: Duration) -> &mut Self {
        self.share.queue_pkts = queue_pkts.max(0.0);
        self.share.min_delay = min_delay;
        self
    }

    /// The fair-share rule's allowance on short queues: in a standing queue of delay `d`
    /// each flow may keep `pkt_secs / d` packets where that is more than the rule's
    /// `queue_pkts` (default 0.25 packet-seconds; 0 keeps the rule at `queue_pkts`). It puts
    /// the rule's equilibrium above its noise floor where `queue_pkts` alone would place it
    /// below (two flows at 1 Gbit/s: 2.5 ms instead of 0.77): see `model/share.rs`.
    pub fn fair_share_short_queues(&mut self, pkt_secs: f64) -> &mut Self {
        self.share.short_queue_pkt_secs = pkt_secs.max(0.0);
        self
    }

    /// Whether the fair-share rule is configured. (With the competition mode on it also
    /// waits on the detector: see `ModelBased::share_fairly`.)
    fn shares_fairly(&self) -> bool {
        self.share.queue_pkts > 0.0
    }

    /// The smallest window: the floor everywhere, probe RTT's included (default 4).
    pub fn min_window_pkts(&self) -> f64 {
        self.min_window_pkts.min(self.initial_window_pkts)
    }
}

impl Default for ModelConfig {
    /// BBR v1's gains and windows (2 × BDP, 10 rounds, 10 s, 200 ms, 4 packets), a 32-packet
    /// initial window, and this controller's loss rules (20%, or 2% with RTT ≥ 1.5 × min;
    /// back off to 80%).
    fn default() -> Self {
        Self {
            cwnd_gain: 2.0,
            bw_window_rounds: 10,
            min_rtt_window: Duration::from_secs(10),
            probe_rtt_duration: Duration::from_millis(200),
            heavy_loss: 0.2,
            queue_loss: 0.02,
            queue_rtt_ratio: 1.5,
            loss_backoff: 0.8,
            initial_window_pkts: 32.0,
            min_window_pkts: 4.0,
            tcp_friendly: true,
            own_queue_test: false,
            share: ShareConfig::default(),
        }
    }
}

/// The least share of the estimate's BDP over the floor RTT that a competition entered
/// from the drain starts at (see [`Entry::Drained`]). The flight of that moment is usually
/// most of it (the drain paced at 1/2.89 of the estimate for a few floor RTTs of a queue
/// that other flows keep full; in the lab's traces it exceeded the BDP at every other such
/// entry), but it can be a few packets: beside 50 kernel BBR flows, one traced run entered
/// at 4 packets of a 110-packet BDP (its sender most likely held up just then), the CUBIC
/// window met no verdict before its trial 10 s later, and the run took 0.10 of an equal
/// share. Not measured in the lab with the floor: those cells spread too widely to show one
/// run in fifteen.
const DRAINED_ENTRY_FLOOR: f64 = 0.5;

/// What made the model compete (see [`ModelBased::compete`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Entry {
    /// A loss with the queue full: start from the flight, at least the estimate's worth.
    Loss,
    /// The queue stayed full after the drain: start from what is in flight, at most the
    /// estimate's worth over the floor RTT (what the model would have in flight alone; the
    /// estimate is what start-up took while every flow was starting) and at least
    /// [`DRAINED_ENTRY_FLOOR`] of that, with no cut and the
    /// cubic epoch on its plateau ([`Competition::without_loss`]). In the lab, beside 10
    /// kernel CUBIC flows, one model flow then took 1.06 times an equal share, and 1.57 without
    /// the cap; in the simulator a latecomer beside one cubic flow takes 0.64 with it.
    /// (Those two figures are from before this entry lost its β cut.) Cut by β after the cap,
    /// as after a loss, the window started at 0.42 of what the flow's rate needed at the full
    /// queue's RTT beside one kernel CUBIC flow at 100 Mbit/s × 40 ms (116 packets of 275),
    /// and the flow took 0.60-0.74 of an equal share over 30 s; without the cut, 0.81-1.01,
    /// and beside ten a median of 0.88 over twelve 20 s runs (0.84 with the cut, in the same
    /// rounds). Entering uncut at the estimate over the smoothed RTT took 0.95-1.13 beside
    /// one flow, but 1.6 beside ten (BENCHMARKS, sessions 49 and 50).
    ///
    /// The floor counts as at least one ACK period ([`SYN`]): a window must cover the data
    /// between two ACKs or it stalls. Behind a 200 Mbit/s `tbf` on a veth pair (a 50 µs
    /// floor) the cap was the 4-packet minimum, and the CUBIC window took 0.3 s to grow
    /// back, at 24-106 Mbit/s.
    Drained,
    /// The queue rose over the last gain cycles, never falling, while the estimate fell from
    /// `before_pps` ([`competition::Trend`]): start from that estimate over the smoothed
    /// RTT, what the model had in flight before it yielded, with no cut and the cubic epoch
    /// on its plateau. Beside one `cubic` flow at 100 Mbit/s × 40 ms, seeds 1-10, with the
    /// trend's first version (see [`competition::Trend`]), the lowest three shares were
    /// 0.68, 0.88 and 0.96 beside paced flows and 0.74, 0.84 and 0.90 beside kernel-like
    /// ones; entered as from the drain (the flight, at most the estimate's BDP over the
    /// floor), the window started at the share the model had yielded to: 0.65, 0.68, 0.68
    /// and 0.67, 0.78, 0.80.
    Yielded { before_pps: f64 },
}

/// A standing queue under test: is it the model's own, or competitors'?
///
/// Alone, the model keeps the queue nearly empty only if its estimate is not above the
/// link, and delivery samples read high on some paths: where the round trip is far shorter
/// than the gap between ACKs a sample spans an ACK gap or a few, and the estimate keeps the
/// highest sample. On a 45 Mbit/s veth path with a 10 ms `tbf` queue (3,750 pkt/s) samples
/// read up to 3,913-3,961, with one-gap spans and with three-gap ones alike; the flow
/// cruised there, filled the queue within a second, and took that for competitors (27 of
/// 27 logged flows then ran as CUBIC flows).
/// So before competing, the model paces at [`TEST_GAIN`] of what the path delivered over
/// the last ACKs (with a standing queue that is the link's rate, or the model's share of
/// it). A queue of its own then empties; one that competitors keep full does not.
#[derive(Clone, Copy, Debug)]
struct QueueTest {
    /// What would have made the model compete.
    entry: Entry,
    /// When the queue must have been seen empty.
    deadline: Instant,
    /// The delivery rate measured as the test began, packets per second.
    measured: f64,
    /// The estimate before the test, restored if the model competes.
    bw_before: f64,
}

/// Where the controller is in its cycle (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelMode {
    /// Exponential growth until the bandwidth plateaus.
    Startup,
    /// Emptying the queue startup built.
    Drain,
    /// Cruising at the estimate, probing up and draining in turn.
    ProbeBandwidth,
    /// Holding a tiny window to measure the min RTT again.
    ProbeRtt,
}

/// The model-based controller. Build one per connection with [`ModelBased::new`] or a
/// [`ModelFactory`], then drive it through [`Controller`].
#[derive(Clone, Debug)]
pub struct ModelBased {
    config: ModelConfig,
    rng: Pcg32,
    max_window_pkts: f64,
    sampler: Sampler,
    mode: ModelMode,
    // Rounds.
    round: u64,
    round_end: SeqNumber,
    round_started: Instant,
    // Bandwidth model.
    bw: MaxFilter,
    initial_bw_pkts: f64,
    // RTT model.
    min_rtt: Option<Duration>,
    min_rtt_stamp: Instant,
    /// How long, since `min_rtt_stamp`, the smoothed RTT sat within the min RTT's tolerance.
    quiet: Duration,
    /// The lowest RTT sample since `min_rtt_stamp` (all above the min).
    window_min_rtt: Option<Duration>,
    initial_rtt: Duration,
    srtt: Duration,
    /// Smoothed time between ACKs (zero until two have arrived), and the latest ACK's time.
    ack_gap: Duration,
    last_ack_at: Option<Instant>,
    /// The peer's receiver spaces its ACKs by the rate ([`super::sparse_acks`]).
    sparse_acks: bool,
    // Startup.
    filled: bool,
    full_bw: f64,
    plateau_rounds: u32,
    // Drain, probe bandwidth, probe RTT.
    mode_stamp: Instant,
    cycle_index: usize,
    /// The round in which the gain cycle last began at its probe phase (`None` while the
    /// cycle in progress began mid-way, as it does on entering probe bandwidth).
    cycle_round: Option<u64>,
    probe_rtt_until: Option<Instant>,
    /// The lowest recent RTT, for the fair-share rule.
    share: FairShare,
    /// Losses reported when the fair-share rule last looked.
    share_lost: u64,
    /// The estimate before the fair-share rule's first cut since it last stood at least as
    /// high (forgotten on entering probe bandwidth, so at most a min-RTT window old): what
    /// the model competes from if the queue it cut for turns out to be loss-based flows'.
    share_uncut: Option<f64>,
    // Loss accounting.
    sent_in_round: u64,
    prev_round_sent: u64,
    lost_in_round: u64,
    lost_total: u64,
    /// New packets sent (retransmissions left out), for the competition's loss meter.
    sent_total: u64,
    /// The latest cumulative ACK (the connection counts its flight from there).
    cum_ack: SeqNumber,
    /// Which losses are reported for the first time (the receiver repeats its holes).
    losses: FreshLosses,
    /// Holes reported and not yet repaired, to count their repairs as delivered.
    holes: Holes,
    last_loss_round: Option<u64>,
    /// The round in progress began in startup or drain: its losses are start-up's overshoot
    /// (see [`ModelBased::back_off_once`]).
    round_from_startup: bool,
    /// The newest packet sent, and the last one start-up sent (see `after_startup_lost`).
    newest_sent: Option<SeqNumber>,
    startup_last: Option<SeqNumber>,
    /// First-reported losses this round of packets sent after start-up: congestion, not
    /// start-up's overshoot.
    after_startup_lost: u64,
    last_backoff: Option<(u64, Instant)>,
    /// The estimate before the latest series of back-offs began, and when (see
    /// [`ModelBased::judge_loss_blind`]).
    before_backoffs: Option<(f64, Instant)>,
    /// The highest arrival rate the receiver reported in this round and the previous one
    /// (packets per second), which caps delivery-rate samples.
    arrival_max: f64,
    /// The last packet sent while the application had nothing more to send: until the
    /// front passes it, rate samples measure the application, not the path.
    app_limited_until: Option<SeqNumber>,
    /// Whether any ACK of the round in progress came while application-limited.
    round_app_limited: bool,
    prev_arrival_max: f64,
    /// The smoothed arrival rate last passed in, and the round in which it last changed
    /// (see [`ModelBased::cap_by_arrival_rate`]).
    arrival_seen: u32,
    arrival_changed_round: u64,
    /// How many times the smoothed report has changed (saturating): about the reports the
    /// sender has folded into it (see [`ModelBased::arrival_settled`]).
    arrival_reports: u32,
    // Competition with loss-based flows.
    watch: QueueWatch,
    /// When [`ModelBased::judge_drain`] looks at the queue after the last drain.
    drain_judged_at: Option<Instant>,
    /// The drain (or probe RTT) under way began with a trial: the verdict after it needs a
    /// nearly full queue to resume competing.
    trial_drain: bool,
    competing: Option<Competition>,
    /// The last competition and when it stopped, to resume from (see [`MEMORY`]).
    suspended: Option<(Instant, Competition)>,
    /// While the competitors are taken to ignore loss (see
    /// [`ModelBased::judge_loss_blind`]).
    hold: Option<Hold>,
    /// The estimate and the queue at the last gain cycles' ends.
    trend: Trend,
    /// A standing queue being tested before the model competes.
    queue_test: Option<QueueTest>,
    /// After a queue test found the queue the model's own: the rate it measured, which
    /// caps the estimate until the instant.
    ceiling: Option<(f64, Instant)>,
    // Outputs.
    pacing_gain: f64,
    cwnd_pkts: f64,
    /// Start-up's window as deliveries grew it, without the packets held beyond holes (see
    /// `update_window`).
    grown_pkts: f64,
    /// The peer's receiver reports its front ([`Controller::on_front`]).
    fronts_reported: bool,
}

impl ModelBased {
    /// A controller in its `init` state for [`ControllerInit::default`] at time zero; the
    /// connection calls [`Controller::init`] with the real values.
    pub fn new(config: ModelConfig) -> Self {
        Self::fresh(config, Instant::ZERO, &ControllerInit::default())
    }

    fn fresh(config: ModelConfig, now: Instant, init: &ControllerInit) -> Self {
        let initial_rtt = init.rtt.max(Duration::from_micros(1));
        let mut model = Self {
            rng: Pcg32::seed_from_u64(init.seed),
            max_window_pkts: f64::from(init.max_window_pkts),
            sampler: Sampler::new(now, init.isn),
            mode: ModelMode::Startup,
            round: 0,
            round_end: init.isn,
            round_started: now,
            bw: MaxFilter::new(config.bw_window_rounds),
            initial_bw_pkts: config.initial_window_pkts / initial_rtt.as_secs_f64(),
            min_rtt: None,
            min_rtt_stamp: now,
            quiet: Duration::ZERO,
            window_min_rtt: None,
            initial_rtt,
            srtt: init.rtt,
            ack_gap: Duration::ZERO,
            last_ack_at: None,
            sparse_acks: false,
            filled: false,
            full_bw: 0.0,
            plateau_rounds: 0,
            mode_stamp: now,
            cycle_index: 0,
            cycle_round: None,
            probe_rtt_until: None,
            share: FairShare::new(now),
            share_lost: 0,
            share_uncut: None,
            sent_in_round: 0,
            prev_round_sent: 0,
            sent_total: 0,
            lost_in_round: 0,
            lost_total: 0,
            cum_ack: init.isn,
            losses: FreshLosses::default(),
            holes: Holes::default(),
            last_loss_round: None,
            round_from_startup: true,
            newest_sent: None,
            startup_last: None,
            after_startup_lost: 0,
            last_backoff: None,
            before_backoffs: None,
            arrival_max: 0.0,
            prev_arrival_max: 0.0,
            arrival_seen: 0,
            arrival_changed_round: 0,
            arrival_reports: 0,
            app_limited_until: None,
            round_app_limited: false,
            watch: QueueWatch::new(now),
            drain_judged_at: None,
            trial_drain: false,
            competing: None,
            suspended: None,
            hold: None,
            trend: Trend::default(),
            queue_test: None,
            ceiling: None,
            pacing_gain: STARTUP_GAIN,
            cwnd_pkts: config.initial_window_pkts,
            grown_pkts: config.initial_window_pkts,
            fronts_reported: false,
            config,
        };
        model.clamp_window();
        model
    }

    /// The current mode.
    pub fn mode(&self) -> ModelMode {
        self.mode
    }

    /// The bandwidth estimate in packets per second (the startup guess until measured).
    pub fn bandwidth_pkts(&self) -> f64 {
        let measured = self.bw.max();
        let bw = if self.filled {
            measured
        } else {
            measured.max(self.initial_bw_pkts)
        };
        bw.clamp(MIN_BW_PKTS, MAX_BW_PKTS)
    }

    /// The min RTT estimate (the initial RTT until a sample arrives).
    pub fn min_rtt(&self) -> Duration {
        self.min_rtt.unwrap_or(self.initial_rtt)
    }

    /// The estimated bandwidth-delay product in packets.
    pub fn bdp_pkts(&self) -> f64 {
        self.bandwidth_pkts() * self.min_rtt().as_secs_f64()
    }

    /// Whether the model currently competes with loss-based flows as a CUBIC flow.
    pub fn competing(&self) -> bool {
        self.competing.is_some()
    }

    /// The current pacing gain.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    /// Rounds completed so far.
    pub fn round(&self) -> u64 {
        self.round
    }

    /// The configuration this controller runs with.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The inter-packet period in microseconds: `10⁶ / (gain · bandwidth)`, or while
    /// competing the floor RTT over 1.2 CUBIC windows.
    pub fn period_us(&self) -> f64 {
        match &self.competing {
            Some(c) => {
                let rtt = self.watch.floor().unwrap_or(self.srtt);
                c.period_us(rtt.max(Duration::from_micros(1)))
            }
            None => {
                let rate = self.pacing_gain * self.bandwidth_pkts();
                1e6 / rate.max(self.smallest_window_rate())
            }
        }
    }

    /// The smallest window per smoothed RTT: the least the pacer lets out and the lowest a
    /// back-off takes the estimate, as a window-based flow at its floor still sends. Without
    /// it, a stalled round's back-offs (see [`ModelBased::back_off_once`]) halved the
    /// estimate at each NAK down to one packet a second, which starved the retransmissions
    /// that would have ended the round: in the lab, beside 50 kernel BBR flows at 200 Mbit/s
    /// × 50 ms, a flow sent a packet a second from its third second on. Over the smoothed
    /// RTT, which a queue lengthens, as it slows window-based flows at their floor; and over
    /// at least [`SYN`], UDT's control period, so that on sub-millisecond paths the floor
    /// stays a few hundred packets a second (the smallest window per 50 µs would be 80,000).
    fn smallest_window_rate(&self) -> f64 {
        self.config.min_window_pkts() / self.srtt.max(SYN).as_secs_f64()
    }

    /// Spacing of delivery-rate markers: eight per min RTT, or sixteen per ACK gap when ACKs
    /// come further apart than that (sub-millisecond paths: UDT ACKs at most every
    /// millisecond). A sample counts delivery only up to its marker but spans the whole gap
    /// between ACKs, so markers must reach to the end of each gap: spaced by the RTT alone,
    /// the ring filled within the first packets after each ACK and every sample read at most
    /// the ring's capacity per gap (32 packets a millisecond at one marker a packet) whatever
    /// the sending rate, so the estimate stuck there (about 2.3 Gbit/s on loopback, where
    /// the runtime's send batches share a marker; 40% of 1 Gbit/s in the simulator).
    fn marker_spacing(&self) -> Duration {
        (self.min_rtt() / 8).max(self.ack_gap / 16)
    }

    /// How long a probe-bandwidth phase lasts: one min RTT, but at least two ACK gaps. On a
    /// path shorter than the gap between ACKs (UDT acknowledges at most every millisecond or
    /// so) a phase of one min RTT ends before an ACK reports it, and each delivery sample
    /// averages the 1.25 and 0.75 phases back to 1: the estimate can then never grow (a flow
    /// that left startup at 190 Mbit/s on a 1 Gbit/s, 300 µs path stayed there).
    fn phase_length(&self) -> Duration {
        self.min_rtt().max(self.ack_gap * 2)
    }

    /// Fold the time since the previous ACK into the smoothed gap (gain 1/8). A gap longer
    /// than SYN is idle time, not ACK spacing (a busy receiver ACKs at least every SYN): it
    /// counts as SYN, so markers after an idle spell are at most SYN / 16 apart.
    fn update_ack_gap(&mut self, now: Instant) {
        if let Some(last) = self.last_ack_at {
            let gap = (now - last).min(SYN);
            self.ack_gap = if self.ack_gap.is_zero() {
                gap
            } else {
                (self.ack_gap * 7 + gap) / 8
            };
            if self.config.own_queue_test {
                self.watch.set_ack_gap(self.ack_gap);
            }
        }
        self.last_ack_at = Some(now);
    }

    fn update_min_rtt(&mut self, now: Instant, sample: Option<Duration>) {
        let Some(sample) = sample.filter(|s| !s.is_zero()) else {
            return;
        };
        let expired = now - self.min_rtt_stamp > self.config.min_rtt_window;
        if self.min_rtt.is_none_or(|m| sample <= m) || expired {
            self.min_rtt = Some(sample);
            self.restamp_min_rtt(now);
        } else {
            self.window_min_rtt = Some(self.window_min_rtt.map_or(sample, |m| m.min(sample)));
        }
    }

    /// The min RTT was measured (or confirmed) at `now`: its 10 s start again.
    fn restamp_min_rtt(&mut self, now: Instant) {
        self.min_rtt_stamp = now;
        self.quiet = Duration::ZERO;
        self.window_min_rtt = None;
    }

    /// Count the time since the last ACK as quiet if the smoothed ACK/ACK2 round trip sits
    /// within [`ModelBased::min_rtt_tolerance`] of the min RTT: the queue was empty, or as
    /// good as. (The delivery-rate markers' RTT samples cannot show that: they also count
    /// the receiver's wait before it acknowledges, its read hold and the ACK gap, 4-7 ms
    /// at 1 Gbit/s × 200 ms with the queue empty.)
    fn note_quiet(&mut self, now: Instant) {
        let (Some(min), Some(last)) = (self.min_rtt, self.last_ack_at) else {
            return;
        };
        if !self.srtt.is_zero() && self.srtt <= min + Self::min_rtt_tolerance(min) {
            self.quiet += (now - last).min(SYN);
        }
    }

    /// How far above the min RTT the smoothed RTT may read and still show the queue empty:
    /// 1/64 of the min (the ACK/ACK2 round trip of a lone 1 Gbit/s × 200 ms flow read 0.4-1.7
    /// ms above its min in cruise), at least [`MIN_RTT_TOLERANCE_FLOOR`].
    fn min_rtt_tolerance(min: Duration) -> Duration {
        (min / MIN_RTT_TOLERANCE_DIVISOR).max(MIN_RTT_TOLERANCE_FLOOR)
    }

    /// Whether the min RTT's 10 s ran out, so that probe RTT must measure it again. If the
    /// queue looked empty for at least [`QUIET_SHARE`] of that time, the min is renewed
    /// instead, from the lowest sample of those 10 s if that is within the tolerance of it,
    /// as probe RTT would have measured it (a min never renewed would keep the luck of one
    /// quick ACK for good, and the fair-share rule reads the queue above it). Probe RTT
    /// exists to see the queue empty, and a flow whose gain cycle empties it need not halve
    /// its rate every 10 s for it (alone at 1 Gbit/s × 200 ms in the lab, each probe RTT cost
    /// about a fifth of a second's goodput). A share, not a moment, because flows that keep
    /// a queue standing still probe together: a flow that skipped its probe whenever the
    /// others' probe RTT happened to empty the queue would take what they set free then
    /// (beside ten loss-blind model flows in the simulator, 1.55 times an equal share
    /// against 1.09).
    fn min_rtt_expired(&mut self, now: Instant) -> bool {
        let window = self.config.min_rtt_window;
        let Some(old) = self.min_rtt.filter(|_| now - self.min_rtt_stamp > window) else {
            return false;
        };
        if self.mode != ModelMode::ProbeRtt && self.quiet >= window.mul_f64(QUIET_SHARE) {
            // The min of the window that ran out, as probe RTT would have measured it, if it
            // agrees with what the quiet showed: the smoothed RTT within the tolerance of
            // the min. Marker samples also count the receiver's wait to acknowledge (4-7 ms
            // at 1 Gbit/s × 200 ms with the queue empty) and every hole's repair before
            // them (a 20 ms flow with a starved CUBIC window in the simulator read 220 ms
            // while its ACK/ACK2 RTT read 20): the min then stays.
            if let Some(min) = self
                .window_min_rtt
                .filter(|&m| m <= old + Self::min_rtt_tolerance(old))
            {
                self.min_rtt = Some(min);
            }
            tracing::debug!(
                quiet = ?self.quiet,
                min_rtt = ?self.min_rtt,
                "model: min RTT renewed without probe RTT"
            );
            self.restamp_min_rtt(now);
            return false;
        }
        true
    }

    /// A round ended: judge its losses, then look for the startup plateau.
    fn end_round(&mut self, now: Instant) {
        tracing::trace!(
            round = self.round,
            bw_pps = self.bandwidth_pkts() as u64,
            cwnd = self.cwnd_pkts as u64,
            gain = self.pacing_gain,
            sent = self.sent_in_round,
            lost = self.lost_in_round,
            srtt = ?self.srtt,
            competing = self.competing.is_some(),
            "model: round"
        );
        self.round += 1;
        self.round_started = now;
        if self.competing.is_none() && self.overflowing() {
            self.back_off_once(now);
        }
        if self.lost_in_round > 0 {
            self.last_loss_round = Some(self.round);
        }
        self.round_from_startup = matches!(self.mode, ModelMode::Startup | ModelMode::Drain);
        self.after_startup_lost = 0;
        self.prev_round_sent = self.sent_in_round;
        self.prev_arrival_max = self.arrival_max;
        self.arrival_max = 0.0;
        self.sent_in_round = 0;
        self.lost_in_round = 0;
        let app_limited = std::mem::replace(&mut self.round_app_limited, false);
        // A round the application held back says nothing about whether the pipe is full
        // (BBR's full-pipe check skips application-limited samples the same way): a key
        // exchange or a file list of small messages would otherwise end startup after three
        // rounds with a bandwidth estimate of a few packets per round trip.
        if !self.filled && !app_limited {
            let bw = self.bw.max();
            if bw >= self.full_bw * PLATEAU_GROWTH {
                self.full_bw = bw;
                self.plateau_rounds = 0;
            } else {
                self.plateau_rounds += 1;
                self.filled = self.plateau_rounds >= PLATEAU_ROUNDS;
            }
        }
    }

    /// The loss rate of the round in progress: first-reported losses over what this round or
    /// the previous one sent (the losses reported now were mostly sent a round ago).
    fn round_loss_rate(&self) -> f64 {
        let sent = self.sent_in_round.max(self.prev_round_sent).max(1);
        self.lost_in_round as f64 / sent as f64
    }

    /// Whether the round in progress has lasted more than two smoothed RTTs (at least SYN).
    fn round_stalled(&self, now: Instant) -> bool {
        now - self.round_started > self.round_deadline()
    }

    /// How long a round may take before it counts as stalled: two smoothed RTTs (at least
    /// SYN each, the ACK period).
    fn round_deadline(&self) -> Duration {
        self.srtt.max(SYN) * 2
    }

    /// Whether the round in progress shows congestion rather than random loss: more than
    /// `heavy_loss` lost, or more than `queue_loss` while the RTT says the queue is full.
    fn overflowing(&self) -> bool {
        let rate = self.round_loss_rate();
        let queue_full =
            self.srtt.as_secs_f64() > self.min_rtt().as_secs_f64() * self.config.queue_rtt_ratio;
        self.hold.is_none()
            && self.lost_in_round >= MIN_HEAVY_LOSSES
            && (rate > self.config.heavy_loss || (rate > self.config.queue_loss && queue_full))
    }

    /// Startup overshoots by design; stop it as soon as a round loses more than
    /// `queue_loss` (random loss of a percent or so stays below that; the count floor keeps
    /// a few losses in a small round from ending startup early).
    fn check_startup_loss(&mut self, now: Instant) {
        if self.mode == ModelMode::Startup
            && self.lost_in_round >= MIN_STARTUP_LOSSES
            && self.round_loss_rate() > self.config.queue_loss
        {
            self.filled = true;
            self.enter(now, ModelMode::Drain);
        }
    }

    /// A congestion back-off, unless one happened within the last two rounds or
    /// [`BACKOFF_SPACING`]: losses reported in the round after a back-off were caused before
    /// it, and a time floor keeps short-RTT flows from backing off many times more often per
    /// second than long-RTT flows sharing the same overflowing queue.
    ///
    /// The two-round rule lapses after two smoothed RTTs: when a flow overloads its path so
    /// badly that holes stay unrepaired, the cumulative ACK stands still and rounds stop
    /// ending. Counting rounds alone then allowed one back-off in all, and a flow whose
    /// startup overshot a small queue sixfold kept that rate for seconds, resending most of
    /// what it sent (87k retransmissions for 19k losses in 6 s at 45 Mbit/s).
    fn back_off_once(&mut self, now: Instant) {
        let recent = self.last_backoff.is_some_and(|(round, at)| {
            let since = now - at;
            let rounds_pending = self.round < round + 2 && since < self.round_deadline();
            rounds_pending || since < self.backoff_spacing().max(self.min_rtt() * 2)
        });
        if !recent {
            let series = self.last_backoff.is_some_and(|(_, at)| now - at < MEMORY);
            if !series {
                self.before_backoffs = Some((self.bandwidth_pkts(), now));
            }
            // Start-up's overshoot is no news about the path: the estimate is what it
            // delivered, and the drain empties the queue. So a round begun in start-up or the
            // drain keeps the estimate (only the arrival cap applies) each time it is judged,
            // unless 16 or more packets sent after start-up were lost in it (congestion). A
            // round that stalls (a lost repair holds the ACK) is judged at its NAKs and again
            // at its end: with only the first judgement exempt, a lone flow at 1 Gbit/s x
            // 200 ms cut its estimate to 0.69 there (2,721 Mbit read in seconds 4-7 where the
            // link carries 2,967, simulator); with every judgement exempt whatever was lost, a
            // newcomer beside ten CUBIC flows kept 2.10 equal shares (bar 1.25).
            let overshoot =
                self.round_from_startup && self.after_startup_lost < MIN_CONGESTION_LOSSES;
            let factor = if overshoot && self.arrival_settled() {
                1.0
            } else {
                self.loss_backoff_factor()
            };
            self.back_off(factor);
            self.last_backoff = Some((self.round, now));
        }
    }

    /// Shortest time between two back-offs: [`BACKOFF_SPACING`], or on a short path
    /// [`SHORT_PATH_BACKOFF_RTTS`] round trips if that is less.
    fn backoff_spacing(&self) -> Duration {
        if self.short_path() {
            BACKOFF_SPACING.min(self.srtt.max(self.ack_gap) * SHORT_PATH_BACKOFF_RTTS)
        } else {
            BACKOFF_SPACING
        }
    }

    /// Whether the path's min RTT is shorter than the gap between ACKs (LANs, veth pairs,
    /// loopback) and the smoothed ACK/ACK2 round trip, queue included, within two gaps:
    /// there the competition detector's millisecond thresholds never see the queue as full
    /// (a gigabit link's 64 packets are 0.77 ms), and the model's own back-offs have to keep
    /// it from crowding out loss-based flows. (The smoothed RTT also keeps a single bogus
    /// sample, which lowers the min RTT at once, from making a long path look short.)
    fn short_path(&self) -> bool {
        self.min_rtt() < self.ack_gap && self.srtt < self.ack_gap * 2
    }

    /// The configured back-off, or deeper when the round lost a larger share than that cut
    /// takes off: what got through, down to [`DEEPEST_BACKOFF`]. A flow that is far above its
    /// path (start-up's estimate read through a token bucket's burst: 3.2-3.4 times the
    /// 45 Mbit/s link, rounds losing 50-87%) otherwise took three back-offs of a fifth,
    /// [`BACKOFF_SPACING`] apart, to come down, and lost most of the packets and did most of
    /// the retransmissions of its whole flow in that half second. Sharing a queue, rounds lose
    /// a few percent, and the configured cut applies as before.
    fn loss_backoff_factor(&self) -> f64 {
        let delivered = 1.0 - self.round_loss_rate();
        self.config.loss_backoff.min(delivered.max(DEEPEST_BACKOFF))
    }

    /// Scale the bandwidth estimate by `factor`, and to no more than the receiver's highest
    /// arrival-rate report of this round and the last (what an overflowing path delivers); a
    /// back-off in startup also ends it.
    fn back_off(&mut self, factor: f64) {
        let mut bw = self.bandwidth_pkts() * factor;
        let arrival = self.arrival_peak();
        if self.arrival_settled() {
            bw = bw.min(arrival * ARRIVAL_SLACK);
        }
        let recent = self.sampler.recent_rate().filter(|_| self.short_path());
        if let Some(recent) = recent {
            bw = bw.max((recent * SHORT_PATH_BACKOFF_FLOOR).min(self.bandwidth_pkts()));
        }
        bw = bw.max(self.smallest_window_rate().min(self.bandwidth_pkts()));
        tracing::debug!(
            recent_pps = recent.map(|r| r as u64),
            from_pps = self.bandwidth_pkts() as u64,
            to_pps = bw as u64,
            loss_rate = self.round_loss_rate(),
            srtt = ?self.srtt,
            min_rtt = ?self.min_rtt(),
            "model: back-off"
        );
        self.bw.reset(self.round, bw);
        self.filled = true;
    }

    /// Mode transitions that ACKs drive.
    fn update_mode(
        &mut self,
        now: Instant,
        inflight: f64,
        largest_sent: SeqNumber,
        min_rtt_expired: bool,
    ) {
        if self.mode == ModelMode::Startup && self.filled {
            self.enter(now, ModelMode::Drain);
        }
        let min_rtt = self.min_rtt();
        if self.mode == ModelMode::Drain
            && (inflight <= self.bdp_pkts() || now - self.mode_stamp >= min_rtt * 4)
        {
            self.enter(now, ModelMode::ProbeBandwidth);
            self.watch.disarm(now);
            self.drain_judged_at = Some(now + competition::settle(self.watch.floor()));
        }
        if self.mode == ModelMode::ProbeBandwidth && self.competing.is_none() {
            self.advance_cycle(now, inflight, largest_sent);
        }
        if self.mode != ModelMode::ProbeRtt && min_rtt_expired {
            self.enter(now, ModelMode::ProbeRtt);
        }
        if self.mode == ModelMode::ProbeRtt {
            self.probe_rtt(now, inflight);
        }
    }

    fn enter(&mut self, now: Instant, mode: ModelMode) {
        if mode != self.mode {
            tracing::debug!(
                ?mode,
                bw_pps = self.bandwidth_pkts() as u64,
                min_rtt = ?self.min_rtt(),
                srtt = ?self.srtt,
                "model: mode"
            );
        }
        if self.mode == ModelMode::Startup && mode != ModelMode::Startup {
            self.startup_last = self.newest_sent;
        }
        if mode != self.mode {
            self.trend.clear();
        }
        self.mode = mode;
        self.mode_stamp = now;
        self.pacing_gain = match mode {
            ModelMode::Startup => STARTUP_GAIN,
            ModelMode::Drain => 1.0 / STARTUP_GAIN,
            ModelMode::ProbeBandwidth => {
                self.share
                    .restart(now, self.srtt.max(self.min_rtt()) * SHARE_SETTLE_RTTS);
                self.share_uncut = None;
                // The cycle starts mid-way, so its rounds do not size the filter.
                self.cycle_round = None;
                // Start in a cruise phase at random, so flows do not probe in step.
                let r = self.rng.next_u32() as usize % (CYCLE.len() - 1);
                self.cycle_index = if r == 1 { CYCLE.len() - 1 } else { r.max(2) };
                CYCLE[self.cycle_index]
            }
            ModelMode::ProbeRtt => {
                self.probe_rtt_until = None;
                1.0
            }
        };
    }

    fn advance_cycle(&mut self, now: Instant, inflight: f64, largest_sent: SeqNumber) {
        let gain = CYCLE[self.cycle_index];
        let bdp = self.bdp_pkts();
        let elapsed = now - self.mode_stamp >= self.phase_length();
        let lossy = self.last_loss_round == Some(self.round);
        let next = if gain > 1.0 {
            elapsed && (inflight >= gain * bdp || lossy)
        } else if gain < 1.0 {
            elapsed || inflight <= bdp
        } else {
            elapsed
        };
        if next {
            tracing::trace!(
                gain,
                bw_pps = self.bandwidth_pkts() as u64,
                inflight = inflight as u64,
                bdp = bdp as u64,
                arrival_pps = self.arrival_peak() as u64,
                srtt = ?self.srtt,
                min_rtt = ?self.min_rtt(),
                "model: phase ends"
            );
            if self.cycle_index >= SHARE_FROM_PHASE {
                self.share_fairly(now, now - self.mode_stamp);
            }
            if self.cycle_index == CYCLE.len() - 1 {
                self.judge_cycle(now, largest_sent);
            }
            self.cycle_index = (self.cycle_index + 1) % CYCLE.len();
            if self.cycle_index == 0 {
                self.fit_bw_window_to_cycle();
            }
            self.pacing_gain = CYCLE[self.cycle_index];
            self.mode_stamp = now;
        }
    }

    /// Keep the bandwidth filter at least one gain cycle (plus two rounds) long, so that the
    /// 1.25 probe's sample is still held when the next probe starts. BBR's 10 rounds cover
    /// its 8 phases because a phase lasts one min RTT and a round at least that. Here a phase
    /// lasts at least two ACK gaps, and to a GSO peer ACKs come about once per train, so a
    /// round can be a fraction of a phase: behind a 45 Mbit/s `tbf` on a veth pair a cycle
    /// took some 20 rounds, the probe's sample expired in the cruise after it, and the
    /// estimate fell back to the cruise rate (70-85% of the link for seconds).
    fn fit_bw_window_to_cycle(&mut self) {
        if let Some(start) = self.cycle_round.replace(self.round) {
            let cycle_rounds = self.round.saturating_sub(start);
            self.bw
                .set_window(self.config.bw_window_rounds.max(cycle_rounds + 2));
        }
    }

    /// A cruise phase of `span` ended: the fair-share rule (`model/share.rs`) may lower the
    /// estimate towards the share of a flow that keeps `α` packets in the standing queue.
    ///
    /// Not after a phase with losses: under random loss the RTT samples wait for holes to be
    /// repaired and read high, and a lone flow at 1 Gbit/s x 200 ms with 1% loss took them
    /// for a standing queue (11% of the link instead of 54%). Flows sharing a clean
    /// bottleneck fairly keep a queue well short of overflowing, and lose nothing.
    ///
    /// With the competition mode on ([`ModelConfig::tcp_friendly`]) the rule acts only while
    /// the detector has nothing to say about the queue, so that its cuts neither feed on a
    /// loss-based flow's queue nor shape what the model competes from:
    /// * not before the detector's look at the queue after the drain (see
    ///   `judge_drain`): beside one CUBIC flow (`cc_fair`) the rule's cuts in that half
    ///   second kept the model from meeting a loss with the queue full, and it competed
    ///   from the drain's verdict with half the window instead (seed 2: 0.65 of an equal
    ///   share against 1.02; the median of five seeds 0.86 against 1.02);
    /// * not while competing, testing the queue, or within [`MEMORY`] of a trial (where
    ///   the rate-based model only tests whether the competitors left): cut towards `α / d`
    ///   of their queue in its trials, a latecomer beside four kernel-like CUBIC flows
    ///   resumed competing at a third of the rate it had entered with and took 0.70 of an
    ///   equal share instead of 1.00;
    /// * a competition that does begin after the rule has cut starts from the estimate as it
    ///   was before the cuts (`share_uncut`), as it would have without the rule (without
    ///   this, and without the first point, the model took 0.60 of an equal share beside one
    ///   CUBIC flow with seed 1 instead of 0.84);
    /// * not while holding beside competitors that ignore loss (`hold`): their
    ///   queue stands whatever the model does, and `α / d` of it would starve the model.
    ///
    /// Model flows alone keep the queue short of the detector's "full" (half the floor RTT
    /// above it), so with 2-4 of them at one RTT the rule now holds them as it does with the
    /// mode off. Where start-up overflows the queue (8 flows on a one-BDP queue, or a 200 ms
    /// flow's start-up beside a 20 ms one) they still take each other for loss-based flows
    /// and compete as CUBIC flows, as before.
    fn share_fairly(&mut self, now: Instant, span: Duration) {
        let lossy = std::mem::replace(&mut self.share_lost, self.lost_total) < self.lost_total;
        let on_trial = self.resumable(now);
        let verdict_due = self.config.tcp_friendly && self.drain_judged_at.is_some();
        if self.config.shares_fairly()
            && !lossy
            && self.competing.is_none()
            && self.queue_test.is_none()
            && !on_trial
            && !verdict_due
            && self.hold.is_none()
        {
            let (bw, min_rtt) = (self.bandwidth_pkts(), self.min_rtt());
            let fair = self.share.phase_end(&self.config.share, bw, min_rtt, span);
            if self.share_uncut.is_some_and(|u| bw >= u) {
                self.share_uncut = None;
            }
            if let Some(fair) = fair {
                tracing::trace!(bw_pps = bw, to_pps = fair, "model: fair-share cut");
                self.share_uncut.get_or_insert(bw);
                self.bw.reset(self.round, fair);
            }
        }
    }

    fn probe_rtt(&mut self, now: Instant, inflight: f64) {
        match self.probe_rtt_until {
            None => {
                let drained = inflight <= self.probe_rtt_window() + 1.0;
                if drained || now - self.mode_stamp >= self.min_rtt() {
                    self.probe_rtt_until = Some(now + self.config.probe_rtt_duration);
                }
            }
            Some(until) if now >= until => {
                self.restamp_min_rtt(now);
                let next = if self.filled {
                    ModelMode::ProbeBandwidth
                } else {
                    ModelMode::Startup
                };
                self.enter(now, next);
                if next == ModelMode::ProbeBandwidth && self.competing.is_none() && self.trial_drain
                {
                    self.drain_judged_at = Some(now + competition::settle(self.watch.floor()));
                }
            }
            Some(_) => {}
        }
    }

    /// Whether the queue verdicts apply: the model is on, start-up is over.
    fn judging(&self) -> bool {
        let settled = matches!(self.mode, ModelMode::ProbeBandwidth | ModelMode::ProbeRtt);
        self.config.tcp_friendly && self.filled && settled && self.hold.is_none()
    }

    /// While competing: if the CUBIC window meets more than [`competition::LOSS_BLIND_RATE`]
    /// of loss with the queue standing, the competitors do not yield to loss (BBR v1 flows
    /// pace at their estimate whatever they lose). Loss-based flows could not keep a loss
    /// rate that high: Reno's window at 2% is 9 packets, and CUBIC flows on a one-BDP queue
    /// at 1 Gbit/s lose a few in 10,000 even 50 strong. A CUBIC flow there is starved (one
    /// `model` flow beside 10-50 kernel BBR flows took 0.04-0.14 of an equal share), so the
    /// model goes back to its rate-based self at the estimate it had before the back-offs of
    /// the last seconds (at least the one it had on entering), and for
    /// [`competition::LOSS_BLIND_HOLD`] (or until [`ModelBased::judge_hold`] ends the hold)
    /// takes no loss with a full queue for a competitor's, backs off neither for loss (see
    /// [`ModelBased::overflowing`]) nor for timeouts, and keeps its pacing trains short:
    /// beside one kernel BBR flow (100 Mbit/s × 40 ms, one-BDP queue), the hold lost about
    /// half of what it sent in 16-packet trains, BBR about a tenth. (It also paced faster
    /// than its estimate by what repairs took, until the sampler counted repaired holes as
    /// delivered: see `model/holes.rs`.)
    fn judge_loss_blind(&mut self, now: Instant) {
        let floor = self.watch.floor().unwrap_or(self.min_rtt());
        let Some(c) = self.competing.as_mut() else {
            return;
        };
        let Some(rate) = c.loss_rate(now, floor, self.sent_total, self.lost_total) else {
            return;
        };
        if rate <= competition::LOSS_BLIND_RATE || !self.watch.queue_standing(self.srtt) {
            return;
        }
        tracing::debug!(loss_rate = rate, "model: the competitors ignore loss");
        let Some(left) = self.leave_competition(now, true) else {
            return;
        };
        self.suspended = None;
        self.hold = Some(Hold::new(now, left));
        // The back-offs of the last few seconds answered losses the competitors caused and
        // ignored: undo them. (Beside flows that ignore loss and are window-limited at a
        // full queue, any split of the link holds, so the model kept what the back-offs had
        // left it: 0.4-0.5 of an equal share beside 10 kernel BBR flows.)
        if let Some((bw, at)) = self.before_backoffs {
            if now - at < MEMORY + competition::TRIAL && bw > self.bandwidth_pkts() {
                self.bw.reset(self.round, bw);
            }
        }
    }

    /// While holding beside competitors taken to ignore loss: the hold ends after
    /// [`competition::LOSS_BLIND_HOLD`], or once its own loss shows that they yield to loss
    /// after all ([`Hold::yielded`]); then the competition that the verdict ended goes on,
    /// window and all, as after a trial.
    fn judge_hold(&mut self, now: Instant, largest_sent: SeqNumber) {
        let floor = self.watch.floor().unwrap_or(self.min_rtt());
        let Some(hold) = self.hold.as_mut() else {
            return;
        };
        if hold.over(now) {
            self.hold = None;
            return;
        }
        if !hold.yielded(now, floor, self.sent_total, self.lost_total) {
            return;
        }
        tracing::debug!("model: the competitors yield to loss after all");
        self.suspended = self.hold.take().map(|hold| (now, hold.into_left()));
        self.compete(now, largest_sent, Entry::Drained);
    }

    /// A loss with the queue full, or in cruise at the top of a wide RTT range: compete.
    fn judge_loss(&mut self, now: Instant, largest_sent: SeqNumber) {
        if self.competing.is_some() || !self.judging() || self.watch.random_loss_lately(now) {
            return;
        }
        let cruising = self.mode == ModelMode::ProbeBandwidth
            && self.pacing_gain == 1.0
            && competition::clear_of_own_probe(self.cycle_index);
        let full = self.watch.queue_full(self.srtt);
        if full && self.watch.recently_empty() && !self.resumable(now) {
            self.await_newcomer(now);
            return;
        }
        if full || (cruising && self.watch.at_the_top(self.srtt)) {
            tracing::debug!(
                full,
                cycle_index = self.cycle_index,
                "model: a loss with a queue"
            );
            self.suspect_queue(now, largest_sent, Entry::Loss);
        }
    }

    /// A loss with the queue full, where the last 2-4 s saw it empty: it may be a newcomer's
    /// start-up, which a model newcomer drains within a few round trips (a CUBIC one leaves
    /// its queue standing after slow start). So the queue is judged once
    /// [`competition::settle`] has passed, as after the model's own drain, and the model
    /// competes only if it still stands. Taken at once for a loss-based competitor's, a model
    /// latecomer's overshoot made the incumbent compete as a CUBIC flow, the latecomer's
    /// drain then found that queue standing and competed too, and two CUBIC windows at
    /// 1 Gbit/s × 50 ms stayed apart for tens of seconds (`a_latecomer_at_1gbit`: σ/μ 0.259,
    /// with this wait 0.046; BENCHMARKS, session 76).
    fn await_newcomer(&mut self, now: Instant) {
        if self.drain_judged_at.is_none() {
            tracing::debug!(
                "model: a loss with the queue full, empty lately: judged after settling"
            );
            self.drain_judged_at = Some(now + competition::settle(self.watch.floor()));
        }
    }

    /// At the end of a gain cycle, the 0.75 phase several phases behind: a queue still
    /// standing is not the probe's. Where the floor is shorter than the ACK gap, test
    /// whether it is the model's own (its estimate above the link) before it overflows;
    /// elsewhere, compete if the queue has stood for seconds without a loss
    /// ([`competition::QueueWatch::standing_throughout`]): loss-based flows are filling it,
    /// and waiting for their next loss leaves them the link meanwhile.
    fn judge_cycle(&mut self, now: Instant, largest_sent: SeqNumber) {
        if self.competing.is_some() || !self.judging() {
            self.trend.clear();
            return;
        }
        let held = if self.queue_testable() {
            self.watch.queue_full(self.srtt)
        } else {
            self.watch.standing_throughout(now, self.srtt)
        };
        if held {
            tracing::debug!(readings = ?self.watch.readings(), "model: a queue that stands");
            self.suspect_queue(now, largest_sent, Entry::Drained);
        } else {
            self.judge_trend(now, largest_sent);
        }
    }

    /// At the end of a gain cycle whose queue [`ModelBased::judge_cycle`] did not find
    /// standing: compete if over the last cycles the queue rose while the estimate fell (see
    /// [`Trend`]), from the estimate before the fall (see [`Entry::Yielded`]). Not where the
    /// queue is tested instead, nor until the watch is armed (start-up's queue is the
    /// model's own).
    fn judge_trend(&mut self, now: Instant, largest_sent: SeqNumber) {
        let (Some(floor), Some(queue)) = (self.watch.floor(), self.watch.standing_delay(self.srtt))
        else {
            return;
        };
        self.trend.push(self.bandwidth_pkts(), queue);
        if self.queue_testable() || !self.watch.armed() {
            return;
        }
        if let Some(before_pps) = self.trend.yielding(floor) {
            tracing::debug!(
                before_pps = before_pps as u64,
                bw_pps = self.bandwidth_pkts() as u64,
                ?queue,
                "model: the queue rose while the estimate fell"
            );
            self.trend.clear();
            self.suspect_queue(now, largest_sent, Entry::Yielded { before_pps });
        }
    }

    /// Once the drain is [`competition::settle`] behind, look at the queue once: if it is
    /// still full, someone else keeps it so (the model paced at 1/2.89 of its estimate for up
    /// to four min RTTs, which empties a queue it built alone, and has cruised at its
    /// estimate since), and the model competes at once, loss or not. Waiting for a loss let
    /// it keep what start-up took for seconds beside kernel TCP flows, which lose rarely (2.3
    /// times an equal share in the lab). (Judged as the drain ended, the RTT samples were of
    /// packets sent into start-up's queue, or held back by its holes, and the smoothed RTT
    /// lagged: alone at 1 Gbit/s × 100 ms the model took itself for a competitor.) After a
    /// trial's drain the queue must be near full, not just standing (see `try_model`).
    fn judge_drain(&mut self, now: Instant, largest_sent: SeqNumber) {
        if self.drain_judged_at.is_none_or(|at| now < at) {
            return;
        }
        self.drain_judged_at = None;
        let trial = std::mem::take(&mut self.trial_drain);
        let standing = if trial {
            self.watch.queue_near_full(self.srtt)
        } else {
            self.watch.queue_standing(self.srtt)
        };
        tracing::debug!(
            trial,
            standing,
            delay = ?self.watch.standing_delay(self.srtt),
            floor = ?self.watch.floor(),
            "model: the queue after the drain"
        );
        if self.competing.is_none()
            && self.mode == ModelMode::ProbeBandwidth
            && self.config.tcp_friendly
            && self.hold.is_none()
            && standing
        {
            self.suspect_queue(now, largest_sent, Entry::Drained);
        }
    }

    /// Whether a competition was suspended for a trial within [`MEMORY`] of `now`: the
    /// competitors were there lately, and a new competition resumes that one.
    fn resumable(&self, now: Instant) -> bool {
        self.suspended
            .as_ref()
            .is_some_and(|(left, _)| now - *left < MEMORY)
    }

    /// A standing queue that would make the model compete (`entry`): where the path's
    /// floor RTT is shorter than the gap between ACKs, test the queue first (see
    /// [`QueueTest`]); compete at once on longer paths, where samples span round trips and
    /// the estimate keeps no queue of its own (a test there cost model flows beside one
    /// CUBIC flow in the simulator a third of their share: 0.62 of an equal share against
    /// 1.07), or if a competition was suspended for a trial lately (competitors were
    /// there). Further suspicions wait for the test's verdict.
    fn suspect_queue(&mut self, now: Instant, largest_sent: SeqNumber, entry: Entry) {
        if self.queue_test.is_some() {
            return;
        }
        let floor = self.watch.floor().unwrap_or(self.min_rtt());
        let measured = self.sampler.recent_rate().filter(|r| *r > 0.0);
        let resumable = self.resumable(now);
        let (Some(measured), true, false) = (measured, self.queue_testable(), resumable) else {
            self.compete(now, largest_sent, entry);
            return;
        };
        // The recent RTT lags the queue by its own delay and an ACK gap; the smoothed one
        // by several round trips. Whichever is higher is nearer the queue now.
        let recent = self.watch.standing_delay(self.srtt).unwrap_or(self.srtt);
        let queue = recent.max(self.srtt.saturating_sub(floor));
        // The RTT shows the queue a floor, a few ACK gaps and the recent RTT's window late,
        // and meanwhile it grew by the estimate's excess over what was delivered. Alone, the
        // queue then drains at 1 - TEST_GAIN of the link (allow twice that), and its
        // emptiness shows one lag later.
        let lag = floor * 2 + (self.ack_gap * 4).max(SYN) + competition::MIN_RECENT;
        let excess = (self.bandwidth_pkts() / measured - 1.0).max(0.0);
        let drain = (queue + lag.mul_f64(excess)).mul_f64(2.0 / (1.0 - TEST_GAIN));
        let deadline = now + drain + lag;
        let rate = (measured * TEST_GAIN).min(self.bandwidth_pkts());
        tracing::debug!(
            ?entry,
            from_pps = self.bandwidth_pkts() as u64,
            measured_pps = measured as u64,
            ?queue,
            wait = ?(deadline - now),
            "model: testing the queue"
        );
        self.queue_test = Some(QueueTest {
            entry,
            deadline,
            measured,
            bw_before: self.bandwidth_pkts(),
        });
        self.bw.reset(self.round, rate);
    }

    /// Whether a standing queue is tested before the model competes: the option is on and
    /// the path's floor RTT (the min RTT until there is one) is shorter than the ACK gap.
    fn queue_testable(&self) -> bool {
        let floor = self.watch.floor().unwrap_or(self.min_rtt());
        self.config.own_queue_test && floor < self.ack_gap
    }

    /// The queue test's verdict: the queue was seen empty (the model's own: cruise on at
    /// the rate measured), or the deadline passed without that (competitors: compete).
    ///
    /// The rate measured then caps the estimate for [`HOLD_CYCLES`] gain cycles. A
    /// token-bucket shaper (`tbf`) banks what the test left unused once the queue was empty
    /// (the verdict comes a round trip and an ACK gap or two later), and lets it out at
    /// wire speed to the next 1.25 probe: uncapped, the estimate read 13% above a 45 Mbit/s
    /// link 70 ms after the verdict, and the queue was full again 150 ms later.
    fn judge_queue_test(&mut self, now: Instant, largest_sent: SeqNumber) {
        let Some(test) = self.queue_test else {
            return;
        };
        if self.watch.queue_drained() {
            tracing::debug!(
                measured_pps = test.measured as u64,
                "model: the queue was the model's own"
            );
            self.queue_test = None;
            self.bw.reset(self.round, test.measured);
            let hold = self.phase_length() * (CYCLE.len() as u32 * HOLD_CYCLES);
            self.ceiling = Some((test.measured, now + hold));
        } else if now >= test.deadline {
            self.queue_test = None;
            self.bw.reset(self.round, test.bw_before);
            self.compete(now, largest_sent, test.entry);
        }
    }

    /// Compete as a CUBIC flow, resuming the last competition if it stopped for a trial less
    /// than [`MEMORY`] ago, else from what is in flight (at least the estimate's worth over
    /// the current RTT: after a back-off the flight can be far below what the flow
    /// delivers). See `model/competition.rs`.
    fn compete(&mut self, now: Instant, largest_sent: SeqNumber, entry: Entry) {
        let uncut = self.share_uncut.take();
        let competition = match self.suspended.take() {
            Some((left, mut c)) if now - left < MEMORY => {
                c.resume(now, entry == Entry::Loss, self.cum_ack, largest_sent);
                c
            }
            _ => {
                let front = self.sampler.front();
                let flight = f64::from(front.offset_to(largest_sent.next()).max(0));
                let bw = self.bandwidth_pkts().max(uncut.unwrap_or(0.0));
                let min = self.config.min_window_pkts();
                match entry {
                    Entry::Loss => {
                        let window = flight.max(bw * self.srtt.as_secs_f64());
                        Competition::after_loss(now, window, largest_sent, min, bw)
                    }
                    Entry::Drained => {
                        let bdp = bw * self.min_rtt().max(SYN).as_secs_f64();
                        let window = flight.min(bdp).max(bdp * DRAINED_ENTRY_FLOOR);
                        Competition::without_loss(now, window, largest_sent, min, bw)
                    }
                    Entry::Yielded { before_pps } => {
                        let window = before_pps * self.srtt.as_secs_f64();
                        Competition::without_loss(now, window, largest_sent, min, bw)
                    }
                }
            }
        };
        tracing::debug!(
            ?entry,
            window = competition.cwnd() as u64,
            bw_pps = self.bandwidth_pkts() as u64,
            srtt = ?self.srtt,
            watch = ?self.watch.readings(),
            "model: competing as a CUBIC flow"
        );
        self.competing = Some(competition);
        self.watch.competition_began();
    }

    /// Every [`competition::TRIAL`] of competing, try the rate-based model again at the rate
    /// the flow had, after a drain (or the probe RTT under way) whose verdict resumes the
    /// competition if the queue is still near full: if the competitors left, the queue
    /// empties, no loss comes with a full queue, and it stays.
    fn try_model(&mut self, now: Instant) {
        if !self.competing.as_ref().is_some_and(|c| c.trial_due(now)) {
            return;
        }
        if let Some(c) = self.leave_competition(now, false) {
            self.suspended = Some((now, c));
            self.trial_drain = true;
            if self.mode == ModelMode::ProbeBandwidth {
                self.enter(now, ModelMode::Drain);
            }
        }
    }

    /// A loss while competing with the queue empty: a drop-tail queue drops only when full,
    /// so the loss is random and the competitors were the model's own queue. Back to the
    /// rate-based model at the estimate it had, forgetting the competition.
    fn judge_random_loss(&mut self, now: Instant) {
        if self.competing.is_none() || !self.watch.queue_empty_while_competing(self.srtt) {
            return;
        }
        if self.leave_competition(now, true).is_some() {
            self.suspended = None;
            // Counted for the random-loss guard though the recent RTT may show a queue: alone
            // at 1 Gbit/s × 10 ms with 0.1% random loss in the lab, it read 2-9 ms over the
            // floor, the guard never engaged, and the flow competed two to four times a
            // second, each time for 100-300 ms at a CUBIC window cut to β, ended by a loss
            // that only the smoothed RTT showed random (644 and 714 Mbit/s in two runs).
            self.watch.count_random_loss(now);
        }
    }

    /// Back to the rate-based model at the rate the CUBIC window held (after a timeout, the
    /// window it was heading for: [`Competition::held_window`]; at least the estimate it had
    /// on entering, with `at_least_entry`), restarting the gain cycle; returns the
    /// competition left, if there was one.
    ///
    /// The window's rate is the window over the round trip, but no more than the delivery
    /// rate the estimate measured while competing: the smoothed RTT can be far below the
    /// round trip the window met. Right after probe RTT had emptied a 10 ms queue on a
    /// 45 Mbit/s veth path it read 25 µs, so 121 packets became 4.9 million a second; the
    /// flow then sent at ten times the link (85% loss, 5,000 retransmissions a second) while
    /// its back-offs came down by a fifth at a time.
    fn leave_competition(&mut self, now: Instant, at_least_entry: bool) -> Option<Competition> {
        let c = self.competing.take()?;
        let rtt = self.srtt.max(self.min_rtt()).as_secs_f64().max(1e-6);
        let held = c.held_window() * self.sparse_ack_scale();
        let (window_rate, delivered) = (held / rtt, self.bw.max());
        let rate = if delivered > 0.0 {
            window_rate.min(delivered)
        } else {
            window_rate
        };
        let floor = if at_least_entry { c.bw_at_entry() } else { 0.0 };
        tracing::debug!(
            random_loss = at_least_entry,
            window = c.cwnd() as u64,
            held = c.held_window() as u64,
            bw_pps = rate.max(floor) as u64,
            watch = ?self.watch.readings(),
            "model: back to the rate-based model"
        );
        self.bw.reset(self.round, rate.max(floor));
        if self.mode == ModelMode::ProbeBandwidth {
            self.enter(now, ModelMode::ProbeBandwidth);
        }
        Some(c)
    }

    /// Holes reported and repaired so far, for the sampler.
    fn tally(&self) -> HoleTally {
        HoleTally {
            lost: self.lost_total,
            repaired: self.holes.repaired(),
        }
    }

    /// Feed the sampler the receiver's front and fold its samples into the model; returns
    /// the packets newly delivered.
    fn absorb(
        &mut self,
        now: Instant,
        front: SeqNumber,
        recv_rate_pkts: u32,
        receiver_time: Option<u32>,
    ) -> u64 {
        self.arrival_max = self.arrival_max.max(f64::from(recv_rate_pkts));
        if recv_rate_pkts != self.arrival_seen {
            self.arrival_seen = recv_rate_pkts;
            self.arrival_changed_round = self.round;
            self.arrival_reports = self.arrival_reports.saturating_add(1);
        }
        // Not in start-up: a token bucket lets its burst through at line rate, the
        // receiver's stamps show that burst, and taken for the path's rate it tripled a
        // 45 Mbit/s `tbf` path's start-up estimate (the start-up then lost 66-90% of a round,
        // three times). The longer of the two spans instead (what stamps cannot undercut)
        // changed the start-up of the simulator's flows beside CUBIC enough to move them
        // out of their bars.
        let receiver_time = receiver_time.filter(|_| self.filled);
        let sample =
            self.sampler
                .on_progress(now, front, self.min_rtt() / 2, self.tally(), receiver_time);
        self.update_min_rtt(now, sample.rtt);
        if let Some(rtt) = sample.rtt.filter(|_| self.config.shares_fairly()) {
            self.share.on_rtt(now, rtt);
        }
        if let Some(rtt) = sample.rtt.filter(|r| !r.is_zero()) {
            self.watch.on_rtt(now, rtt, self.competing.is_some());
            if self.competing.is_some() {
                self.watch.on_competing(self.srtt);
            }
        }
        if self.ceiling.is_some_and(|(_, until)| now >= until) {
            self.ceiling = None;
        }
        let ceiling = self.ceiling.map_or(f64::INFINITY, |(rate, _)| rate);
        if let Some(rate) = sample.rate_pkts.filter(|r| r.is_finite()) {
            let rate = self.cap_sample(rate, ceiling);
            // While a queue test runs, samples may not lift the rate it set.
            if self.queue_test.is_none() {
                self.bw.update(self.round, rate);
            }
        }
        // Probe RTT's own low rate says nothing about the path: with the RTT far below UDT's
        // 10 ms ACK period, its 200 ms span more rounds than the filter remembers.
        if let Some(rate) = sample.limited_rate_pkts.filter(|r| r.is_finite()) {
            let rate = self.cap_sample(rate, ceiling);
            if rate >= self.bw.max() && self.queue_test.is_none() {
                self.bw.update(self.round, rate);
            }
        }
        sample.newly_acked
    }

    /// Whether the ACK `ack` still falls in an application-limited stretch; ends the
    /// stretch once the ACK passes its last packet.
    fn note_app_limited(&mut self, ack: SeqNumber) {
        if let Some(until) = self.app_limited_until {
            self.round_app_limited = true;
            if until < ack {
                self.app_limited_until = None;
            }
        }
    }

    /// Whether the smoothed arrival report has had [`ARRIVAL_SETTLE_REPORTS`] reports to
    /// come near the receiver's rate. The sender folds each report in by 1/8 from 4.11's
    /// initial 16, so after `k` reports it still lacks `(7/8)^k` of the rate: in the first
    /// tens of milliseconds it reads a fraction of what arrives. A `tbf` at 200 Mbit/s
    /// whose burst startup overflowed cut the estimate to 1.1 times a report of 2,868
    /// pkt/s, a sixth of the 16,500 arriving, and the flow took a second to measure its
    /// way back.
    fn arrival_settled(&self) -> bool {
        self.arrival_reports >= ARRIVAL_SETTLE_REPORTS && self.arrival_peak() > 16.0
    }

    /// The highest arrival rate the receiver reported this round and the last, packets per
    /// second (16, 4.11's initial value, or less: no report yet).
    fn arrival_peak(&self) -> f64 {
        self.arrival_max.max(self.prev_arrival_max)
    }

    /// Once the pipe is full, a delivery-rate sample may not exceed the receiver's
    /// arrival-rate reports by more than [`ARRIVAL_SLACK`]: cumulative ACKs jump when a hole
    /// is repaired, and a sample that catches such a jump during a 1.25 probe would otherwise
    /// ratchet the estimate up. (In startup the smoothed report lags the doubling rate, and
    /// for its first reports it lags any rate: see [`ModelBased::arrival_settled`].)
    ///
    /// The cap is the highest report of this round and the previous one, not the latest:
    /// the sender smooths the reports by 1/8 per ACK, so with prompt ACKs (one every
    /// millisecond or so) the latest spans only ~8 ms and follows the gain cycle's 0.75
    /// phase and each back-off down. Capping at it held every sample to the flow's current
    /// low, so a flow that fell behind could not measure its way back (4 flows on a shared
    /// bottleneck: Jain 0.85 instead of 0.96).
    ///
    /// While the smoothed report has not changed for [`STALE_ARRIVAL_ROUNDS`] rounds (the
    /// receiver reports nothing new) the cap is the probe gain over the estimate instead: a
    /// stale value held a simulated flow near 1,000 pkt/s on an 85,000 pkt/s link for 20 s.
    fn cap_by_arrival_rate(&self, rate: f64) -> f64 {
        if !self.filled || !self.arrival_settled() {
            return rate;
        }
        if self.round > self.arrival_changed_round + STALE_ARRIVAL_ROUNDS {
            // Without a current report, at most what one probe can show.
            return rate.min(self.bandwidth_pkts() * CYCLE[0]);
        }
        let cap = self.arrival_peak() * ARRIVAL_SLACK;
        if rate > cap {
            tracing::trace!(
                sample_pps = rate as u64,
                arrival_pps = self.arrival_peak() as u64,
                "model: sample capped at the arrival rate"
            );
        }
        rate.min(cap)
    }

    /// A delivery sample as the bandwidth filter takes it: held to the receiver's arrival
    /// reports, or once the pipe is full on a short path to the recent delivery rate
    /// instead, and to `ceiling` (what a queue test measured, while it holds).
    ///
    /// On a short path the arrival reports do not cap: beside a kernel CUBIC flow at
    /// 1 Gbit/s × 0 ms (lab) they read 2,050-2,240 pkt/s while 2,500 arrived (the receiver
    /// leaves the shortest gaps between arrivals out of its mean, and a shared queue
    /// bunches a paced flow's packets), and 10% over them held every 1.25 probe's sample to
    /// the estimate: the flow sat at 30 Mbit/s for seconds with no back-off to explain it,
    /// 13-20 s of a 20 s run in three runs of four. The recent delivery rate counts the
    /// front's advance less the holes it passed, so a repair's jump of the cumulative ACK
    /// cannot lift it either.
    fn cap_sample(&self, rate: f64, ceiling: f64) -> f64 {
        let rate = rate.min(MAX_BW_PKTS).min(ceiling);
        if self.filled && self.short_path() {
            self.cap_on_short_path(rate)
        } else {
            self.cap_by_arrival_rate(rate)
        }
    }

    /// Once the pipe is full, on a short path, a delivery sample may exceed the delivery rate
    /// over the sampler's last 16 ACKs by at most [`ModelBased::short_path_slack`] (the
    /// caller, [`ModelBased::cap_sample`], applies it only there).
    fn cap_on_short_path(&self, rate: f64) -> f64 {
        self.sampler
            .recent_rate()
            .map_or(rate, |recent| rate.min(recent * self.short_path_slack()))
    }

    /// How far a delivery sample may exceed the recent delivery rate on a short path:
    /// [`SHORT_PATH_SAMPLE_SLACK`] for each [`SHORT_PATH_SLACK_PHASE`] of the gain cycle's
    /// phase (at least one), no more than the probe's gain.
    fn short_path_slack(&self) -> f64 {
        let phases = self.phase_length().as_secs_f64() / SHORT_PATH_SLACK_PHASE.as_secs_f64();
        SHORT_PATH_SAMPLE_SLACK.powf(phases.max(1.0)).min(CYCLE[0])
    }

    /// The window the model wants, in packets: the gain times the BDP, one ACK period of
    /// data (or the standing queue, if longer), the time a lost retransmission waits to be
    /// reported again, and the packets between the cumulative ACK and the receiver's front
    /// (received beyond a hole, or holes being repaired), which the connection counts as in
    /// flight.
    ///
    /// The repair term is for short paths. The connection counts everything from the
    /// cumulative ACK as in flight, and a hole whose retransmission is lost too stays open
    /// for the receiver's NAK interval (SYN past the RTO, at least 2 SYN), during which the
    /// sender learns of little beyond it. Where the gain's BDPs span a NAK interval (RTTs
    /// from 10 ms) the term is zero. Without it, at 1 Gbit/s with a 0.3 ms RTT and a
    /// 64-packet queue (lab, 3% drops) the window closed on such holes and the flow moved
    /// 760-780 Mbit/s while paced at 980; with it, 840-860.
    fn target_window(&self) -> f64 {
        let gain = match self.mode {
            ModelMode::Startup | ModelMode::Drain => STARTUP_GAIN,
            _ => self.config.cwnd_gain,
        };
        let bw = self.bandwidth_pkts();
        let queueing = self
            .srtt
            .saturating_sub(self.min_rtt())
            .max(self.ack_period());
        let nak_interval = self.min_rtt().max(SYN) + SYN;
        let repair = nak_interval.as_secs_f64() - gain * self.min_rtt().as_secs_f64();
        let repair_pkts = bw * repair.max(0.0);
        gain * self.bdp_pkts() + bw * queueing.as_secs_f64() + repair_pkts + self.beyond_holes()
    }

    /// The packets between the cumulative ACK and the receiver's known front: arrived
    /// behind holes, or holes being repaired. The connection counts them in flight.
    fn beyond_holes(&self) -> f64 {
        f64::from(self.cum_ack.offset_to(self.sampler.front()).max(0))
    }

    /// How long the peer's receiver lets data wait for an ACK: [`SYN`], or with spaced ACKs
    /// ([`super::sparse_acks`]) once start-up has filled the path (the receiver spaces them
    /// only after a second of data) the period it reckons from its arrival speed, for which
    /// the estimate stands in here (the receiver reckons with a margin, so that it spaces
    /// them no further than this). Reckoned during start-up from its low early estimate,
    /// the period's larger windows overfilled the queue (1,524 losses in a 200 Mbit/s flow
    /// against 76-152).
    fn ack_period(&self) -> Duration {
        if self.sparse_acks && self.filled {
            super::sparse_acks::period_at(self.bandwidth_pkts())
        } else {
            SYN
        }
    }

    /// With spaced ACKs, how much larger a CUBIC window must be to move what it would with
    /// an ACK every [`SYN`]: (smoothed RTT + period) / (smoothed RTT + SYN), 1 otherwise.
    /// A window-limited flow has its rate times the round trip and the wait for the next
    /// ACK in flight; the CUBIC arithmetic stays the competition's (its growth, its cuts,
    /// what it held), and the window sent with is scaled. Behind a 45 Mbit/s `tbf` on the
    /// veth pair, unscaled, flows dipped to 30-34 Mbit/s for half a second at a time in
    /// their first seconds (goodput 41.2-42.9 against 43.0-43.2 Mbit/s); with a floor of
    /// the estimate over a min RTT and the period instead, the CUBIC window dwindled under
    /// the floor (13 packets) and the flow left its competition at a quarter of the link
    /// (BENCHMARKS.md, session 89).
    fn sparse_ack_scale(&self) -> f64 {
        if !self.sparse_acks {
            return 1.0;
        }
        let wait = |period: Duration| (self.srtt + period).as_secs_f64();
        wait(self.ack_period()) / wait(SYN)
    }

    /// Probe RTT's window: half of what the path holds over a min RTT and one ACK period,
    /// at least the minimum window. The queue drains because the flow sends at most half
    /// the estimate, while the ACK period keeps it sending: the receiver acknowledges a
    /// trickle only every SYN (10 ms), so the bare minimum window (4 packets) let through 4
    /// packets per SYN, and behind a 45 Mbit/s `tbf` each probe cost a 200 ms stall, 2% of
    /// the flow's goodput. BBR v2 halves its window the same way (its ACK period is nil).
    fn probe_rtt_window(&self) -> f64 {
        let span = self.min_rtt() + self.ack_period();
        let half = PROBE_RTT_GAIN * self.bandwidth_pkts() * span.as_secs_f64();
        half.max(self.config.min_window_pkts())
    }

    /// Startup grows the window by what each ACK delivers (doubling per round); afterwards it
    /// follows the model directly, since pacing, not the window, sets the rate.
    ///
    /// After start-up the packets between the cumulative ACK and the receiver's known front
    /// come on top, because the connection counts them in flight while a hole holds the
    /// ACK; in start-up too where the peer reports its front. Without them a loss in each
    /// round held start-up's window at what was in flight for most of a round trip: at
    /// 1 Gbit/s x 100 ms with 1% loss (simulator) the flow grew about 1.5 times a round.
    /// With only NAKs to show the front it stays as it was: there the credit made start-ups
    /// beside other flows more aggressive (a 200 ms flow beside a 20 ms one at 200 Mbit/s
    /// kept 18 of the 200 Mbit/s, seed 105; four sharing flows σ/μ 0.122 against 0.1).
    fn update_window(&mut self, newly_acked: u64) {
        let beyond_holes = self.beyond_holes();
        self.cwnd_pkts = if self.mode == ModelMode::ProbeRtt {
            self.probe_rtt_window()
        } else if let Some(c) = &self.competing {
            c.cwnd() * self.sparse_ack_scale() + beyond_holes
        } else if self.filled {
            self.target_window()
        } else if self.fronts_reported {
            if self.grown_pkts + beyond_holes < self.target_window() {
                self.grown_pkts += newly_acked as f64;
            }
            self.grown_pkts + beyond_holes
        } else if self.cwnd_pkts < self.target_window() {
            self.cwnd_pkts + newly_acked as f64
        } else {
            self.cwnd_pkts
        };
        self.clamp_window();
    }

    fn clamp_window(&mut self) {
        let floor = self.config.min_window_pkts();
        let cap = self.max_window_pkts.max(floor);
        self.cwnd_pkts = if self.cwnd_pkts.is_finite() {
            self.cwnd_pkts.clamp(floor, cap)
        } else {
            floor
        };
    }
}

impl Default for ModelBased {
    fn default() -> Self {
        Self::new(ModelConfig::default())
    }
}

impl Controller for ModelBased {
    fn init(&mut self, now: Instant, init: &ControllerInit) {
        *self = Self::fresh(self.config.clone(), now, init);
    }

    fn on_packet_sent(&mut self, now: Instant, info: &SentInfo) {
        if info.app_limited {
            self.app_limited_until = Some(match self.app_limited_until {
                Some(until) => until.max_seq(info.seq),
                None => info.seq,
            });
        }
        if !info.retransmit {
            self.newest_sent = Some(info.seq);
            self.sent_in_round += 1;
            self.sent_total += 1;
            let spacing = self.marker_spacing();
            let limited = self.mode == ModelMode::ProbeRtt || self.app_limited_until.is_some();
            let tally = self.tally();
            self.sampler.on_sent(now, info.seq, spacing, tally, limited);
        }
    }

    fn on_ack(&mut self, now: Instant, ack: &AckInfo) {
        if !ack.rtt.is_zero() {
            self.srtt = ack.rtt;
            if self.config.shares_fairly() {
                self.share.on_rtt(now, ack.rtt);
            }
        }
        self.note_quiet(now);
        self.update_ack_gap(now);
        let min_rtt_expired = self.min_rtt_expired(now);
        self.holes.on_ack(ack.ack);
        let newly = self.absorb(now, ack.ack, ack.recv_rate_pkts, ack.receiver_time);
        self.note_app_limited(ack.ack);
        if self.round_end < ack.ack {
            self.end_round(now);
            self.round_end = ack.largest_sent;
        }
        self.cum_ack = self.cum_ack.max_seq(ack.ack);
        let front = self.sampler.front();
        let inflight = f64::from(front.offset_to(ack.largest_sent.next()).max(0));
        self.update_mode(now, inflight, ack.largest_sent, min_rtt_expired);
        self.judge_drain(now, ack.largest_sent);
        self.judge_queue_test(now, ack.largest_sent);
        if let Some(c) = &mut self.competing {
            c.on_ack(now, newly as f64, inflight, self.srtt);
        }
        self.judge_hold(now, ack.largest_sent);
        self.judge_loss_blind(now);
        self.try_model(now);
        self.update_window(newly);
    }

    fn on_loss(&mut self, now: Instant, loss: &LossInfo<'_>) {
        let lost_before = self.lost_total;
        // Nonsense ranges (the connection rejects them) are evidence of nothing.
        let front = FreshLosses::front(loss);
        let holes = &mut self.holes;
        let (startup_last, mut after_startup) = (self.startup_last, 0u64);
        let lost = self.losses.on_loss_each(loss, |first, last| {
            holes.on_lost(first, last);
            if let Some(end) = startup_last.filter(|&end| end < last) {
                after_startup += u64::from(first.max_seq(end.next()).len_to(last));
            }
        });
        self.after_startup_lost += after_startup;
        self.lost_in_round += lost;
        self.lost_total += lost;
        self.check_startup_loss(now);
        if self.lost_total > lost_before {
            self.watch.lost(now);
            self.trend.clear();
            if self.judging() {
                self.watch.on_loss(now);
            }
            self.judge_random_loss(now);
            self.judge_loss(now, loss.largest_sent);
        }
        if let Some(c) = &mut self.competing {
            let fresh = self.lost_total - lost_before;
            c.on_loss(now, fresh, self.cum_ack, loss.largest_sent);
        } else if self.round_stalled(now) && self.overflowing() {
            // A badly overloaded path holds the cumulative ACK back and rounds stop ending:
            // once a round has lasted two smoothed RTTs, judge its losses at each NAK.
            // (Judging every round at each NAK instead made competing flows back off out of
            // step: two flows on one bottleneck shared it 49:142.)
            self.back_off_once(now);
        }
        if let Some(front) = front {
            let newly = self.absorb(now, front, loss.recv_rate_pkts, loss.receiver_time);
            self.update_window(newly);
        }
    }

    /// A timeout in startup leaves the estimate alone: early on it is most often the tail of
    /// the first window lost (nothing after it arrives, so no NAK reports it), which says
    /// nothing about the path's capacity, and startup's own loss rule ends it where losses do.
    /// Backing off there ended startup at a few hundred packets a second: in the simulator,
    /// one flow at 1 Gbit/s x 50 ms with 1% random loss (seed 90) lost the last of its first
    /// 32 packets, left startup at 512 pkt/s and moved 1.1% of the link in 20 s, the 1.25
    /// probes held back by the arrival-rate cap.
    fn on_timeout(&mut self, now: Instant, info: &TimeoutInfo) {
        match &mut self.competing {
            Some(c) => c.on_timeout(info.largest_sent),
            None if self.mode == ModelMode::Startup || self.hold.is_some() => {}
            None => self.back_off_once(now),
        }
        self.update_window(0);
    }

    /// The front moves the sampler's as a NAK's does (see `model/sampler.rs`): samples
    /// count what arrived behind a hole while its repair is under way.
    fn on_front(&mut self, now: Instant, front: SeqNumber, ack: &AckInfo) {
        if !self.fronts_reported {
            // Start-up's window now counts what lies behind holes: see `update_window`.
            self.fronts_reported = true;
            self.grown_pkts =
                (self.cwnd_pkts - self.beyond_holes()).max(self.config.min_window_pkts());
        }
        let newly = self.absorb(now, front, ack.recv_rate_pkts, ack.receiver_time);
        self.update_window(newly);
    }

    fn window_pkts(&self) -> f64 {
        self.cwnd_pkts
    }

    fn send_period(&self) -> Duration {
        duration_from_micros_f64(self.period_us())
    }

    fn name(&self) -> &'static str {
        ModelFactory::NAME
    }

    /// The window terms that cover the time between ACKs (the target window's queueing
    /// term, probe RTT's span, the scale of a competing CUBIC window) follow the peer's
    /// spaced ACK period (`ModelBased::sparse_ack_scale`).
    fn sizes_for_sparse_acks(&self) -> bool {
        true
    }

    fn set_sparse_acks(&mut self, on: bool) {
        self.sparse_acks = on;
    }

    /// While holding beside flows that ignore loss: their queue is full, and a long train
    /// loses its tail there (see `ModelBased::judge_loss_blind`).
    fn short_trains(&self) -> bool {
        self.hold.is_some()
    }
}

/// Builds [`ModelBased`] controllers with one configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelFactory {
    /// The configuration every controller gets.
    pub config: ModelConfig,
}

impl ModelFactory {
    /// The controller's name in logs, stats and `--cc`.
    pub const NAME: &'static str = "model";
}

impl ControllerFactory for ModelFactory {
    fn build(&self) -> Box<dyn Controller> {
        Box::new(ModelBased::new(self.config.clone()))
    }

    fn name(&self) -> &'static str {
        Self::NAME
    }
}
