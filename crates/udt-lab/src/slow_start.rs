//! How kernel TCP left slow start during a run: the HyStart counters of the lab's namespaces.
//!
//! Linux CUBIC leaves slow start without a loss by one of two HyStart rules, and counts each
//! exit per network namespace (`/proc/net/netstat`, `TcpExt`): the delay rule (a round's
//! first round-trip samples all `max(4 ms, min(16 ms, min RTT / 8))` above the lowest the
//! flow has seen) and the ACK-train rule (one round's ACKs spread over more than half the min
//! RTT), each with the sum of the windows it exited at. Which rule fired, and at what window,
//! is what decides how a CUBIC flow fares beside a scavenger: one that leaves slow start at a
//! few dozen segments grows by about 5% a round trip until its first loss (the floor Linux
//! puts under the growth of a CUBIC flow that has never lost), and takes seconds to fill a 1 Gbit/s × 50 ms
//! path (BENCHMARKS.md, session 64). A flow's own TCP_INFO shows the window, not why it
//! stopped growing.
//!
//! The counters cover every TCP connection of a namespace, so a run's figures are exact only
//! for runs with one kernel TCP sender; BBR and Reno do not run HyStart and count nothing.

use std::fs;
use std::io;

use serde::{Deserialize, Serialize};

use crate::netns::Namespace;

/// The `TcpExt` counters, as `/proc/net/netstat` names them.
const TRAIN_DETECT: &str = "TCPHystartTrainDetect";
const TRAIN_CWND: &str = "TCPHystartTrainCwnd";
const DELAY_DETECT: &str = "TCPHystartDelayDetect";
const DELAY_CWND: &str = "TCPHystartDelayCwnd";

/// HyStart's slow-start exits: how many by each rule, and the sum of the windows (segments)
/// they exited at. A snapshot of a namespace, or the change over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlowStartExits {
    /// Exits by the ACK-train rule.
    pub train_exits: u64,
    /// The windows those exits left slow start at, summed, segments.
    pub train_cwnd: u64,
    /// Exits by the delay rule.
    pub delay_exits: u64,
    /// The windows those exits left slow start at, summed, segments.
    pub delay_cwnd: u64,
}

impl SlowStartExits {
    /// The counters in a `/proc/net/netstat` text: its `TcpExt:` names line and the values
    /// line after it. `None` if the text has no such pair or lacks a counter (a kernel
    /// without HyStart's counters).
    pub fn parse(netstat: &str) -> Option<Self> {
        let mut lines = netstat.lines();
        let (names, values) = loop {
            let line = lines.next()?;
            if let Some(names) = line.strip_prefix("TcpExt:") {
                break (names, lines.next()?.strip_prefix("TcpExt:")?);
            }
        };
        let pairs: Vec<(&str, &str)> = names
            .split_whitespace()
            .zip(values.split_whitespace())
            .collect();
        let get = |name: &str| -> Option<u64> {
            let (_, value) = pairs.iter().find(|(n, _)| *n == name)?;
            value.parse().ok()
        };
        Some(Self {
            train_exits: get(TRAIN_DETECT)?,
            train_cwnd: get(TRAIN_CWND)?,
            delay_exits: get(DELAY_DETECT)?,
            delay_cwnd: get(DELAY_CWND)?,
        })
    }

    /// The counters of `ns` now. The path names the calling thread's own view, which
    /// follows the namespace it entered (`/proc/net` follows the process's first thread).
    pub fn read_in(ns: &Namespace) -> io::Result<Option<Self>> {
        ns.run(|| fs::read_to_string("/proc/thread-self/net/netstat"))?
            .map(|text| Self::parse(&text))
    }

    /// The exits between `earlier` and `self` (counters only grow; a reset reads as none).
    pub fn since(&self, earlier: &Self) -> Self {
        Self {
            train_exits: self.train_exits.saturating_sub(earlier.train_exits),
            train_cwnd: self.train_cwnd.saturating_sub(earlier.train_cwnd),
            delay_exits: self.delay_exits.saturating_sub(earlier.delay_exits),
            delay_cwnd: self.delay_cwnd.saturating_sub(earlier.delay_cwnd),
        }
    }

    /// Two namespaces' exits together.
    pub fn plus(&self, other: &Self) -> Self {
        Self {
            train_exits: self.train_exits + other.train_exits,
            train_cwnd: self.train_cwnd + other.train_cwnd,
            delay_exits: self.delay_exits + other.delay_exits,
            delay_cwnd: self.delay_cwnd + other.delay_cwnd,
        }
    }

    /// For a report cell: `delay rule at 93 seg`, `ACK train at 4664 seg`, both when both
    /// fired (windows averaged per rule), or `no HyStart exit` (slow start ended by a loss,
    /// or never ended).
    pub fn describe(&self) -> String {
        let rule = |exits: u64, cwnd: u64, name: &str| {
            (exits > 0).then(|| {
                let each = cwnd / exits;
                let times = if exits > 1 {
                    format!(" ({exits} exits, mean)")
                } else {
                    String::new()
                };
                format!("{name} at {each} seg{times}")
            })
        };
        let parts: Vec<String> = [
            rule(self.delay_exits, self.delay_cwnd, "delay rule"),
            rule(self.train_exits, self.train_cwnd, "ACK train"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() {
            "no HyStart exit".to_owned()
        } else {
            parts.join(", ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of `/proc/net/netstat` (trimmed): a names line and a values line per group.
    const NETSTAT: &str = "TcpExt: SyncookiesSent TCPHystartTrainDetect TCPHystartTrainCwnd \
TCPHystartDelayDetect TCPHystartDelayCwnd TCPAckCompressed\n\
TcpExt: 0 1 4664 2 122 9\n\
IpExt: InNoRoutes InTruncatedPkts\n\
IpExt: 0 0\n";

    #[test]
    fn reads_the_hystart_counters_by_name() {
        let exits = SlowStartExits::parse(NETSTAT).expect("counters present");
        assert_eq!(
            exits,
            SlowStartExits {
                train_exits: 1,
                train_cwnd: 4664,
                delay_exits: 2,
                delay_cwnd: 122,
            }
        );
    }

    #[test]
    fn text_without_the_counters_reads_as_none() {
        assert_eq!(SlowStartExits::parse(""), None);
        assert_eq!(SlowStartExits::parse("IpExt: A\nIpExt: 1\n"), None);
        // A names line with no values line, and a kernel without HyStart's counters.
        assert_eq!(
            SlowStartExits::parse("TcpExt: TCPHystartTrainDetect\n"),
            None
        );
        assert_eq!(
            SlowStartExits::parse("TcpExt: SyncookiesSent\nTcpExt: 0\n"),
            None
        );
        // A value that is not a number.
        let garbled = NETSTAT.replace("4664", "x");
        assert_eq!(SlowStartExits::parse(&garbled), None);
    }

    #[test]
    fn a_run_is_the_change_and_reads_as_the_rule_and_window() {
        let before = SlowStartExits {
            train_exits: 1,
            train_cwnd: 4664,
            ..SlowStartExits::default()
        };
        let after = SlowStartExits {
            delay_exits: 1,
            delay_cwnd: 93,
            ..before
        };
        let run = after.since(&before);
        assert_eq!(run.describe(), "delay rule at 93 seg");
        assert_eq!(before.since(&after), SlowStartExits::default());
        assert_eq!(SlowStartExits::default().describe(), "no HyStart exit");
        let both = run.plus(&SlowStartExits {
            train_exits: 2,
            train_cwnd: 9000,
            ..SlowStartExits::default()
        });
        assert_eq!(
            both.describe(),
            "delay rule at 93 seg, ACK train at 4500 seg (2 exits, mean)"
        );
    }
}
