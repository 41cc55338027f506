//! What a test measured: each end's [`SideReport`], the receiver's [`Interval`]s, and the
//! client's [`Report`] (the `--json` object) with its human lines.
//!
//! [`Report`] uses `udt perf --json`'s field names and meanings for what uTP has (bytes,
//! seconds and goodput at the receiver, the sender's figures, CPU seconds of each process,
//! buffers, intervals), so one reader takes both. What librqbit-utp does not expose
//! (retransmissions, losses, its RTT estimate) is left out or `null`, never a made-up zero.

use serde::{Deserialize, Serialize};

use crate::socket::Buffers;

/// The bytes the receiver read over one interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Start, seconds since the receiver's start.
    pub start_s: f64,
    /// End, seconds since the receiver's start.
    pub end_s: f64,
    /// Payload bytes read in it.
    pub bytes: u64,
    /// `bytes * 8 / (end_s - start_s)`.
    pub goodput_bps: f64,
}

impl Interval {
    /// The interval from `start_s` to `end_s` in which `bytes` arrived.
    pub fn new(start_s: f64, end_s: f64, bytes: u64) -> Self {
        Self {
            start_s,
            end_s,
            bytes,
            goodput_bps: rate(bytes, end_s - start_s),
        }
    }

    /// The human line: `[  1.0-  2.0 s]  11.9 MB  95.3 Mbit/s`.
    pub fn line(&self) -> String {
        format!(
            "[{:5.1}-{:5.1} s] {:7.1} MB {:8.1} Mbit/s",
            self.start_s,
            self.end_s,
            self.bytes as f64 / 1e6,
            self.goodput_bps / 1e6
        )
    }
}

/// One end's account of a finished test.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SideReport {
    /// Payload bytes written (sender) or read (receiver).
    pub bytes: u64,
    /// Seconds from this end's start to its end (receiver: the last byte; sender: the
    /// stream's shutdown, every byte acknowledged).
    pub seconds: f64,
    /// CPU seconds of this process over the test.
    pub cpu_seconds: f64,
    /// The buffers in force on this end.
    pub buffers: Buffers,
}

/// The `--json` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// `utp`.
    pub protocol: String,
    /// The congestion control librqbit-utp ran.
    pub cc: String,
    /// The uTP implementation.
    pub implementation: String,
    /// Streams (always one).
    pub streams: u32,
    /// The server, as `host:port`.
    pub server: String,
    /// Payload bytes the receiver read.
    pub bytes: u64,
    /// Seconds from the receiver's start to its last byte.
    pub seconds: f64,
    /// `bytes * 8 / seconds`.
    pub goodput_bps: f64,
    /// Payload bytes the sender wrote.
    pub sender_bytes: u64,
    /// Seconds from the sender's start until the stream was shut down.
    pub sender_seconds: f64,
    /// CPU seconds (user + system) of the sending process over the test.
    pub sender_cpu_seconds: f64,
    /// CPU seconds of the receiving process.
    pub receiver_cpu_seconds: f64,
    /// The sender's buffers.
    pub sender_buffers: Buffers,
    /// The receiver's buffers.
    pub receiver_buffers: Buffers,
    /// The receiver's intervals, in order.
    pub intervals: Vec<Interval>,
}

impl Report {
    /// The report of a test against `server`, from both ends' accounts.
    pub fn new(
        server: String,
        sender: &SideReport,
        receiver: &SideReport,
        intervals: Vec<Interval>,
    ) -> Self {
        Self {
            protocol: "utp".to_owned(),
            cc: crate::CONGESTION_CONTROL.to_owned(),
            implementation: crate::IMPLEMENTATION.to_owned(),
            streams: 1,
            server,
            bytes: receiver.bytes,
            seconds: receiver.seconds,
            goodput_bps: rate(receiver.bytes, receiver.seconds),
            sender_bytes: sender.bytes,
            sender_seconds: sender.seconds,
            sender_cpu_seconds: sender.cpu_seconds,
            receiver_cpu_seconds: receiver.cpu_seconds,
            sender_buffers: sender.buffers,
            receiver_buffers: receiver.buffers,
            intervals,
        }
    }

    /// The human summary line.
    pub fn summary(&self) -> String {
        format!(
            "uTP ({}, {}): {:.1} MB in {:.2} s = {:.1} Mbit/s at the receiver; CPU {:.2} s sender, {:.2} s receiver",
            self.implementation,
            self.cc,
            self.bytes as f64 / 1e6,
            self.seconds,
            self.goodput_bps / 1e6,
            self.sender_cpu_seconds,
            self.receiver_cpu_seconds
        )
    }
}

/// Bits per second of `bytes` over `seconds`; 0 over no time.
pub fn rate(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 * 8.0 / seconds
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_takes_each_figure_from_its_end() {
        let sender = SideReport {
            bytes: 2_000,
            seconds: 2.5,
            cpu_seconds: 0.25,
            buffers: Buffers::default().in_force(),
        };
        let receiver = SideReport {
            bytes: 1_000,
            seconds: 2.0,
            cpu_seconds: 0.5,
            buffers: Buffers::default(),
        };
        let intervals = vec![Interval::new(0.0, 1.0, 400), Interval::new(1.0, 2.0, 600)];
        let r = Report::new("h:1".to_owned(), &sender, &receiver, intervals);
        assert_eq!((r.bytes, r.sender_bytes), (1_000, 2_000));
        assert_eq!(r.goodput_bps, 4_000.0);
        assert_eq!(r.intervals[1].goodput_bps, 4_800.0);
        assert_eq!((r.sender_cpu_seconds, r.receiver_cpu_seconds), (0.25, 0.5));
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["protocol"], "utp");
        assert_eq!(json["intervals"][0]["bytes"], 400);
        assert_eq!(json["sender_buffers"]["send_buffer_bytes"], 1 << 20);
        assert!(
            r.summary().contains("0.0 MB in 2.00 s = 0.0 Mbit/s"),
            "{}",
            r.summary()
        );
        assert_eq!(rate(5, 0.0), 0.0);
    }
}
