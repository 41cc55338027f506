//! [`Implementation::UdpBlast`](super::Implementation::UdpBlast): raw UDP at the link rate,
//! no congestion control, the ceiling any protocol could reach on the emulated link. Runs
//! [`probe::blast`] (b sends to a, like every flow) for the flow's
//! duration and reports it as a [`FlowResult`]: payload counted, the warm-up left out of
//! the steady rate, losses as the datagrams that never arrived.

use std::time::Duration;

use anyhow::bail;

use super::{BufferSizes, FlowLimit, FlowResult, FlowSpec};
use crate::probe::{self, BlastSpec, UDP_OVERHEAD};
use crate::Lab;

/// The largest datagram payload that fits the lab's MTU.
fn payload(lab: &Lab) -> usize {
    (lab.params().mtu as usize)
        .saturating_sub(UDP_OVERHEAD)
        .max(8)
}

/// Runs the blast of `spec` (alone on the link) and measures it.
pub(super) fn run(lab: &Lab, spec: &FlowSpec, warmup: Duration) -> anyhow::Result<FlowResult> {
    let FlowLimit::Duration(duration) = spec.limit else {
        bail!("a UDP blast runs for a duration, not a byte count");
    };
    let payload = payload(lab);
    let mut blast = BlastSpec::for_duration(payload, lab.params().rate_bps, duration);
    blast.warmup = warmup;
    let report = probe::blast(lab, &blast)?;
    let share = payload as f64 / blast.wire_bytes() as f64;
    let bytes = report.received * payload as u64;
    let seconds = duration.as_secs_f64();
    Ok(FlowResult {
        spec: spec.clone(),
        bytes,
        seconds,
        goodput_bps: bytes as f64 * 8.0 / seconds,
        steady_goodput_bps: report.wire_bps * share,
        series: Vec::new(),
        interval_s: Vec::new(),
        sender_cpu_s: 0.0,
        receiver_cpu_s: 0.0,
        rtt_ms: None,
        retransmissions: 0,
        losses: report.sent.saturating_sub(report.received),
        duplicates: None,
        udt: None,
        actual_buffers: BufferSizes::default(),
    })
}
