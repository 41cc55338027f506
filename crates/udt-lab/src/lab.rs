//! [`Lab`]: two namespaces joined by an emulated link, ready for sockets and commands.
//!
//! ```text
//!   namespace a                    lab process (root ns)                    namespace b
//!   10.201.0.1/24 ── udtlab0 ══fd══▶ Link a→b (udt-netsim) ══fd══▶ udtlab0 ── 10.201.0.2/24
//!                             ◀══fd══ Link b→a (udt-netsim) ◀══fd══
//! ```
//!
//! The kernel in `a` routes `10.201.0.0/24` to its TUN device; the lab reads each packet from
//! that device's fd, passes it through the a→b link model, and writes it to b's TUN fd, which
//! injects it into b's stack as if received. Anything IPv4 crosses: kernel TCP, UDP, ICMP.

use std::net::Ipv4Addr;

use anyhow::Context;
use udt_netsim::Link;

use crate::forward::{DirectionStats, Forwarder};
use crate::netns::{self, Namespace};
use crate::params::LinkParams;
use crate::tun;

/// The TUN device's name inside each namespace.
pub const TUN_NAME: &str = "udtlab0";

/// Address of namespace a's end of the link.
pub const ADDR_A: Ipv4Addr = Ipv4Addr::new(10, 201, 0, 1);

/// Address of namespace b's end of the link.
pub const ADDR_B: Ipv4Addr = Ipv4Addr::new(10, 201, 0, 2);

/// Prefix length of the link's subnet.
const PREFIX_LEN: u8 = 24;

/// A running emulated link between two namespaces. Dropping it stops the forwarder, kills
/// whatever still runs in the namespaces and deletes them.
#[derive(Debug)]
pub struct Lab {
    // Field order is drop order: the forwarder (and the TUN fds) go before the namespaces.
    forwarder: Forwarder,
    a: Namespace,
    b: Namespace,
    params: LinkParams,
}

impl Lab {
    /// Creates the namespaces and TUN devices and starts forwarding through `params`' link.
    /// Fails with [`netns::NotPrivileged`] without root. Removes leftovers of dead labs first.
    pub fn start(params: LinkParams) -> anyhow::Result<Self> {
        netns::check_privileges()?;
        netns::clean_leftovers();
        let stem = Namespace::unique_stem();
        let a = Namespace::create(format!("{stem}-a"), ADDR_A)?;
        let b = Namespace::create(format!("{stem}-b"), ADDR_B)?;
        let tun_a = open_tun(&a, params.mtu)?;
        let tun_b = open_tun(&b, params.mtu)?;
        let config = params.link_config();
        let links = [
            Link::new(config.clone(), params.seed),
            Link::new(config, params.seed ^ 0x9E37_79B9_7F4A_7C15),
        ];
        let forwarder =
            Forwarder::start(tun_a, tun_b, links, params.mtu).context("starting the forwarder")?;
        Ok(Self {
            forwarder,
            a,
            b,
            params,
        })
    }

    /// Namespace a (`10.201.0.1`).
    pub fn a(&self) -> &Namespace {
        &self.a
    }

    /// Namespace b (`10.201.0.2`).
    pub fn b(&self) -> &Namespace {
        &self.b
    }

    /// The link's parameters.
    pub fn params(&self) -> &LinkParams {
        &self.params
    }

    /// Counters of each direction, `[a→b, b→a]`, at most 10 ms old.
    pub fn stats(&self) -> [DirectionStats; 2] {
        self.forwarder.stats()
    }

    /// Packets each direction, `[a→b, b→a]`, lost at its intake: the sending namespace's
    /// TUN device drops what arrives while its queue (10,000 packets) is full, which it is
    /// when a sender bursts faster than the forwarder reads (a start-up at 1 Gbit/s x 100 ms
    /// lost 613-26,411 packets there in 19 runs of 37). The link model never sees these, so
    /// its drop counts alone leave them out; they are as lost as the link's own drops.
    pub fn intake_drops(&self) -> anyhow::Result<[u64; 2]> {
        Ok([self.a.tx_dropped(TUN_NAME)?, self.b.tx_dropped(TUN_NAME)?])
    }
}

/// Creates the TUN device inside `ns` (from a thread that entered it) and configures it.
fn open_tun(ns: &Namespace, mtu: u32) -> anyhow::Result<std::fs::File> {
    let file = ns
        .run(|| tun::open(TUN_NAME))
        .and_then(|r| r)
        .with_context(|| format!("creating a TUN device in {}", ns.name()))?;
    ns.configure_tun(TUN_NAME, PREFIX_LEN, mtu)?;
    Ok(file)
}
