//! The `congestion_ops` body: a built-in controller driven by an operation sequence decoded
//! from bytes, and the operation model it shares with the proptest driver in
//! `congestion/tests.rs` (one model, two drivers: [`Op`], [`run_model`]).
//!
//! Each operation keeps the sender's view consistent (ACKs never pass what was sent, NAKs
//! report sent packets), so a failure is a controller bug and not a model artefact. After
//! every step: the window is finite and at least the controller's minimum (16 packets for
//! both built-ins), the period is positive (and for native at most `Native::MAX_PERIOD_US`),
//! and a requested ACK period is positive.

use std::time::Duration;

use super::input::Input;
use crate::congestion::{
    AckInfo, Controller, ControllerFactory, ControllerInit, FixedRate, FixedRateFactory, LossInfo,
    LossRange, Native, ReceivedInfo, SentInfo, TimeoutInfo,
};
use crate::seq::SeqNumber;
use crate::time::Instant;

/// Upper bound on operations per input, so one input stays fast whatever its length.
const MAX_OPS: usize = 2_000;

/// Runs one controller through the operations encoded in `data` and panics on a violated
/// invariant. Byte 0 picks the controller (even: native, odd: fixed rate).
pub fn congestion_ops(data: &[u8]) {
    let mut input = Input::new(data);
    let outcome = if input.bool() {
        let rate = input.u64() % 20_000_000_000;
        let mut fixed = FixedRateFactory::new(rate).build();
        let init = controller_init(&mut input);
        let ops = decoded_ops(&mut input);
        run_model(
            fixed.as_mut(),
            &init,
            ops,
            FixedRate::MIN_WINDOW_PKTS,
            |_| Ok(()),
        )
    } else {
        let mut native = Native::default();
        let min = native.config().min_window_pkts();
        assert_eq!(min, 16.0);
        let init = controller_init(&mut input);
        let ops = decoded_ops(&mut input);
        run_model(&mut native, &init, ops, min, native_period_in_range)
    };
    if let Err(violation) = outcome {
        panic!("{violation}");
    }
}

/// The native controller's extra invariant: its period stays in `(0, MAX_PERIOD_US]`.
pub(crate) fn native_period_in_range(native: &Native) -> Result<(), String> {
    let period = native.period_us();
    if period > 0.0 && period <= Native::MAX_PERIOD_US {
        Ok(())
    } else {
        Err(format!("native period {period}"))
    }
}

/// Drives `cc` through `ops` from `init`, checking the shared invariants and `extra` after
/// `init` and after every step; the first violation ends the run as an error.
pub(crate) fn run_model<C: Controller + ?Sized>(
    cc: &mut C,
    init: &ControllerInit,
    ops: impl IntoIterator<Item = Op>,
    min_window_pkts: f64,
    extra: impl Fn(&C) -> Result<(), String>,
) -> Result<(), String> {
    let mut model = Model {
        now: Instant::from_micros(1_000_000),
        acked: init.isn,
        next: init.isn,
    };
    cc.init(model.now, init);
    check(cc, min_window_pkts)?;
    extra(cc)?;
    for op in ops {
        model.apply(cc, &op);
        check(cc, min_window_pkts)?;
        extra(cc)?;
    }
    cc.close();
    Ok(())
}

fn check<C: Controller + ?Sized>(cc: &C, min_window_pkts: f64) -> Result<(), String> {
    let window = cc.window_pkts();
    if !(window.is_finite() && window >= min_window_pkts) {
        return Err(format!("{} window {window}", cc.name()));
    }
    if cc.send_period() == Duration::ZERO {
        return Err(format!("{} period {:?}", cc.name(), cc.send_period()));
    }
    if cc.ack_period() == Some(Duration::ZERO) {
        return Err(format!("{} ack period zero", cc.name()));
    }
    Ok(())
}

/// One step of the model. Sizes are fractions or small counts so that every sequence is
/// plausible: ACKs never pass what was sent, NAKs report sent packets.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    /// Time passes.
    Step(Duration),
    /// This many new packets are sent.
    Send(u32),
    /// The first unacknowledged packet is sent again.
    Retransmit,
    /// A packet arrives (the controller sees the receiving side too).
    Receive,
    /// An ACK `frac` of the way through the unacknowledged packets.
    Ack { frac: f64, rates: Rates },
    /// A NAK of up to `span + 1` packets from `frac` of the way through them.
    Loss { frac: f64, span: u32, rates: Rates },
    /// The retransmission timer fires.
    Timeout(Rates),
    /// The receiver reports its front `frac` of the way through the unacknowledged packets
    /// (past the ACK number, within what was sent).
    Front { frac: f64, rates: Rates },
    /// A user-defined control message of this type and body.
    Custom(u16, Vec<u8>),
}

/// RTT and the sender-smoothed receiver reports carried by an ACK, NAK or timeout.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rates {
    pub(crate) rtt: Duration,
    pub(crate) recv_rate_pkts: u32,
    pub(crate) bandwidth_pkts: u32,
    /// The report's receiver stamp: absent (4.11), or any value a peer could put there.
    pub(crate) receiver_time: Option<u32>,
}

/// Operations decoded from the rest of `input`, at most [`MAX_OPS`]. Decoding does not
/// depend on the controller, so decoding them all up front changes nothing.
fn decoded_ops(input: &mut Input<'_>) -> Vec<Op> {
    let mut ops = Vec::new();
    while ops.len() < MAX_OPS && !input.is_empty() {
        ops.push(decode_op(input));
    }
    ops
}

fn decode_op(input: &mut Input<'_>) -> Op {
    match input.u8() % 9 {
        0 => Op::Step(Duration::from_micros(u64::from(input.upto(30_000)))),
        1 => Op::Send(input.upto(62) + 1),
        2 => Op::Retransmit,
        3 => Op::Receive,
        4 => {
            let frac = input.frac();
            Op::Ack {
                frac,
                rates: rates(input),
            }
        }
        5 => {
            let frac = input.frac();
            let span = input.upto(19);
            Op::Loss {
                frac,
                span,
                rates: rates(input),
            }
        }
        6 => Op::Timeout(rates(input)),
        7 => {
            let frac = input.frac();
            Op::Front {
                frac,
                rates: rates(input),
            }
        }
        _ => {
            let ext_type = input.u16();
            let len = usize::from(input.u8() % 16);
            Op::Custom(ext_type, input.bytes(len).to_vec())
        }
    }
}

/// Small values (where the window floor and the `b <= 0` branch matter) or large ones (fast
/// links), chosen by one flag byte.
fn rates(input: &mut Input<'_>) -> Rates {
    let small = input.u8();
    let rtt_us = if small & 1 == 0 {
        input.upto(2_000)
    } else {
        input.upto(2_000_000)
    };
    let recv_max = if small & 2 == 0 { 100 } else { 1_000_000 };
    let bw_max = if small & 4 == 0 { 100 } else { 2_000_000 };
    Rates {
        rtt: Duration::from_micros(u64::from(rtt_us.max(1))),
        recv_rate_pkts: input.upto(recv_max),
        bandwidth_pkts: input.upto(bw_max),
        receiver_time: (small & 8 != 0).then(|| input.u32()),
    }
}

fn controller_init(input: &mut Input<'_>) -> ControllerInit {
    let mss = input.upto(8_999) + 1;
    let max_window_pkts = input.upto(100_000);
    let isn = SeqNumber::new(input.upto(SeqNumber::MAX));
    let rates = rates(input);
    ControllerInit {
        mss,
        max_window_pkts,
        isn,
        rtt: rates.rtt,
        recv_rate_pkts: rates.recv_rate_pkts,
        bandwidth_pkts: rates.bandwidth_pkts,
        seed: input.u64(),
    }
}

/// The sender's view, so that every hook gets consistent arguments.
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
        match op {
            Op::Step(span) => self.now += *span,
            Op::Send(count) => self.send(cc, *count),
            Op::Retransmit => {
                let info = SentInfo {
                    seq: self.acked,
                    len: 1472,
                    retransmit: true,
                    app_limited: false,
                };
                cc.on_packet_sent(self.now, &info);
            }
            Op::Receive => {
                let info = ReceivedInfo {
                    seq: self.acked,
                    len: 64,
                };
                cc.on_packet_received(self.now, &info);
            }
            Op::Ack { frac, rates } => self.ack(cc, *frac, rates),
            Op::Loss { frac, span, rates } => self.loss(cc, *frac, *span, rates),
            Op::Front { frac, rates } => self.front(cc, *frac, rates),
            Op::Timeout(rates) => {
                let info = TimeoutInfo {
                    rtt: rates.rtt,
                    recv_rate_pkts: rates.recv_rate_pkts,
                    largest_sent: self.next.prev(),
                };
                cc.on_timeout(self.now, &info);
            }
            Op::Custom(ext_type, body) => {
                cc.on_custom_message(self.now, *ext_type, body);
                while cc.poll_custom_message().is_some() {}
            }
        }
    }

    fn send<C: Controller + ?Sized>(&mut self, cc: &mut C, count: u32) {
        for i in 0..count {
            // A batch's last packet empties the sender's queue, as a small write would.
            let info = SentInfo {
                seq: self.next,
                len: 1472,
                retransmit: false,
                app_limited: i + 1 == count,
            };
            cc.on_packet_sent(self.now, &info);
            self.next = self.next.next();
        }
    }

    fn ack<C: Controller + ?Sized>(&mut self, cc: &mut C, frac: f64, rates: &Rates) {
        let ack = self.pick(frac);
        if self.outstanding() == 0 || ack == self.acked {
            return; // only ACKs that advance the send buffer reach the controller
        }
        self.acked = ack;
        let info = AckInfo {
            ack,
            rtt: rates.rtt,
            recv_rate_pkts: rates.recv_rate_pkts,
            bandwidth_pkts: rates.bandwidth_pkts,
            largest_sent: self.next.prev(),
            receiver_time: rates.receiver_time,
        };
        cc.on_ack(self.now, &info);
    }

    fn front<C: Controller + ?Sized>(&mut self, cc: &mut C, frac: f64, rates: &Rates) {
        if self.outstanding() == 0 {
            return; // the connection passes on only fronts past the ACK number
        }
        let front = self.pick(frac.min(0.999)).next();
        let info = AckInfo {
            ack: self.acked,
            rtt: rates.rtt,
            recv_rate_pkts: rates.recv_rate_pkts,
            bandwidth_pkts: rates.bandwidth_pkts,
            largest_sent: self.next.prev(),
            receiver_time: rates.receiver_time,
        };
        cc.on_front(self.now, front, &info);
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
            rtt: rates.rtt,
            recv_rate_pkts: rates.recv_rate_pkts,
            bandwidth_pkts: rates.bandwidth_pkts,
            receiver_time: rates.receiver_time,
        };
        cc.on_loss(self.now, &info);
    }
}
