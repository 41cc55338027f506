//! Rows for the experiments' unit tests: a summary is tested on made-up measurements.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{Row, Truth};
use crate::flows::{BufferSizes, FlowResult, FlowSpec, Implementation};

/// A working flow of `implementation` (a label; `protocol` `UDT` or `TCP`) in run `run`
/// that moved `bytes` in `seconds` (one interval) on a `rate_bps` link, with `params`.
pub(super) fn row(
    (run, protocol, implementation): (&str, &str, &str),
    params: &[(&str, f64)],
    (bytes, seconds): (u64, f64),
    rate_bps: u64,
) -> Row {
    let bps = bytes as f64 * 8.0 / seconds;
    Row {
        experiment: "test".to_owned(),
        truth: Truth {
            nominal_rate_bps: rate_bps,
            rate_bps,
            capped: false,
            rtt_ms: 100.0,
            loss: 0.0,
            queue_bytes: 1,
        },
        run: run.to_owned(),
        params: params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), *v))
            .collect::<BTreeMap<_, _>>(),
        flow: 0,
        flows_in_run: 1,
        protocol: protocol.to_owned(),
        implementation: implementation.to_owned(),
        buffers: "default".to_owned(),
        result: Some(FlowResult {
            spec: FlowSpec::timed(Implementation::UdpBlast, Duration::from_secs(1)),
            bytes,
            seconds,
            goodput_bps: bps,
            steady_goodput_bps: bps,
            series: vec![bytes],
            interval_s: vec![seconds],
            sender_cpu_s: 0.0,
            receiver_cpu_s: 0.0,
            rtt_ms: None,
            retransmissions: 0,
            losses: 0,
            duplicates: None,
            udt: None,
            actual_buffers: BufferSizes::default(),
        }),
        error: None,
        link_drops: None,
        intake_drops: None,
        host_busy: None,
        host_steal: None,
        tcp_slow_start: None,
    }
}

/// Settings for building an experiment's cells in a unit test (nothing runs: the binaries
/// are names only).
pub(super) fn settings(quick: bool) -> super::Settings {
    super::Settings {
        quick,
        rate_cap_bps: super::DEFAULT_RATE_CAP_BPS,
        run: crate::flows::RunOptions {
            binaries: crate::flows::Binaries::only_udt("udt".into()),
            warmup: Duration::from_secs(1),
            grace: Duration::ZERO,
        },
        out: std::env::temp_dir(),
        command: "test".to_owned(),
        progress: false,
        flow_time: None,
        resume: false,
        only: Default::default(),
        repeat: 1,
        competitor_start: None,
    }
}
