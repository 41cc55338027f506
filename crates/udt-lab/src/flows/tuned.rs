//! The sizes behind [`Buffers::Tuned`], from the link's bandwidth-delay
//! product, the way a careful operator would set them.
//!
//! - UDT (ours and libudt): UDT_SNDBUF and UDT_RCVBUF of at least two BDPs (never below
//!   the 8192-packet default), so the window never limits the rate; libudt also gets
//!   UDT_FC (its flow window, in packets) to match. UDP buffers stay at their defaults.
//! - uTP: its send and receive buffers as UDT's (they cap the flight and the window alike).
//! - Kernel TCP: autotuning stays on, with its ceilings (`net.ipv4.tcp_rmem` and
//!   `tcp_wmem` maxima) raised to four BDPs (at least 32 MiB) in both of the
//!   lab's namespaces, as ESnet's host-tuning guide recommends. These sysctls are per
//!   namespace, so nothing outside the lab changes.

use anyhow::{bail, Context};
use udt_netsim::LinkConfig;

use super::{BufferSizes, Buffers, FlowSpec, Implementation};
use crate::{Lab, LinkParams};

/// The UDT buffer default of both implementations: 8192 packets of 1472 bytes.
pub const UDT_DEFAULT_BUFFER: u64 = 8192 * 1472;

/// The link's bandwidth-delay product in bytes (at least one MTU).
pub fn bdp_bytes(params: &LinkParams) -> u64 {
    (LinkConfig::bdp_bytes(params.rate_bps, params.rtt) as u64).max(u64::from(params.mtu))
}

/// The tuned UDT buffer sizes for `params`.
pub fn udt_buffers(params: &LinkParams) -> BufferSizes {
    let bytes = (2 * bdp_bytes(params)).max(UDT_DEFAULT_BUFFER);
    BufferSizes {
        sndbuf: Some(bytes),
        rcvbuf: Some(bytes),
        udp_sndbuf: None,
        udp_rcvbuf: None,
    }
}

/// The ceiling tuned TCP autotuning gets for `params`, bytes.
pub fn tcp_limit(params: &LinkParams) -> u64 {
    (4 * bdp_bytes(params)).max(32 << 20)
}

/// The explicit sizes a flow asks for, with `Tuned` resolved for UDT and uTP (TCP tuning is
/// the namespace's limits, so nothing per socket).
pub fn resolve(spec: &FlowSpec, params: &LinkParams) -> BufferSizes {
    let per_socket = spec.implementation.is_udt() || spec.implementation == Implementation::Utp;
    match (spec.buffers, per_socket) {
        (Buffers::Default, _) | (Buffers::Tuned, false) => BufferSizes::default(),
        (Buffers::Tuned, true) => udt_buffers(params),
        (Buffers::Explicit(sizes), _) => sizes,
    }
}

/// Raises the TCP autotuning ceilings in both namespaces if any TCP flow of the set is
/// tuned; refuses a set that mixes tuned and untuned TCP flows.
pub fn apply_tcp_limits(lab: &Lab, flows: &[FlowSpec]) -> anyhow::Result<()> {
    let tcp: Vec<&FlowSpec> = flows
        .iter()
        .filter(|f| matches!(f.implementation, Implementation::Tcp { .. }))
        .collect();
    let tuned = tcp.iter().filter(|f| f.buffers == Buffers::Tuned).count();
    if tuned == 0 {
        return Ok(());
    }
    if tuned != tcp.len() {
        bail!("a set of flows cannot mix tuned and untuned TCP flows: tuning changes the lab's namespace-wide TCP limits");
    }
    let limit = tcp_limit(lab.params());
    for ns in [lab.a(), lab.b()] {
        let script = format!(
            "echo '4096 131072 {limit}' > /proc/sys/net/ipv4/tcp_rmem && \
             echo '4096 16384 {limit}' > /proc/sys/net/ipv4/tcp_wmem"
        );
        let status = ns
            .command("/bin/sh")
            .arg("-c")
            .arg(&script)
            .status()
            .with_context(|| format!("raising the TCP limits in {}", ns.name()))?;
        if !status.success() {
            bail!("raising the TCP limits in {} failed: {status}", ns.name());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn tuned_sizes_follow_the_bdp() {
        let p = LinkParams::new(200_000_000, Duration::from_millis(200));
        assert_eq!(bdp_bytes(&p), 5_000_000);
        assert_eq!(udt_buffers(&p).rcvbuf, Some(UDT_DEFAULT_BUFFER));
        let p = LinkParams::new(1_000_000_000, Duration::from_millis(200));
        assert_eq!(udt_buffers(&p).sndbuf, Some(50_000_000));
        assert_eq!(tcp_limit(&p), 100_000_000);
        let p = LinkParams::new(45_000_000, Duration::ZERO);
        assert_eq!(bdp_bytes(&p), 1500);
        assert_eq!(tcp_limit(&p), 32 << 20);
    }
}
