//! `udt-lab`: an emulated wide-area link on one machine.
//!
//! Two network namespaces, `a` (`10.201.0.1`) and `b` (`10.201.0.2`), each with a TUN device,
//! and a forwarder in the lab process that moves every IP packet between the two devices
//! through `udt-netsim`'s [`Link`](udt_netsim::Link) in real time, per direction: rate
//! (serialization), one-way delay (half the RTT), jitter without reordering, random loss and a
//! drop-tail queue (one BDP by default). Kernel TCP, UDP and ICMP all cross it, so UDT and TCP
//! are compared on the same link. The kernel here has no netem; this is the replacement.
//!
//! # Map
//!
//! - [`params`]: [`LinkParams`] and the parsers of `1gbit`, `100ms`, `0.1%`, `4MiB`.
//! - [`netns`]: named namespaces (`udtlab-<pid>-<n>-a`), running code or commands inside them,
//!   cleanup (drop, and leftovers of dead labs at the next start).
//! - `tun`: opening a TUN device (one ioctl).
//! - [`forward`]: the two forwarding threads and their [`DirectionStats`].
//! - [`lab`]: [`Lab`], which puts those together.
//! - [`host`]: how busy the machine's CPUs were while a run's flows ran.
//! - [`slow_start`]: how kernel TCP left slow start in a run (HyStart's counters).
//! - [`run`]: `udt lab link`: run commands in the namespaces, with signal handling.
//! - [`probe`]: measuring the emulator (UDP echo RTT, UDP blast rate and loss).
//! - [`calibrate`]: the highest rate the emulator sustains here, as a Markdown report.
//! - [`flows`]: running flows of real programs (`udt perf`, libudt's interop peers, kernel
//!   TCP) across a lab and measuring each ([`flows::run_flows`]).
//! - [`experiment`]: the published UDT-vs-TCP experiments: registry, grid runner, reports.
//!
//! # Contract
//!
//! - Needs root (`CAP_NET_ADMIN` and `CAP_SYS_ADMIN`) and the `ip` command; without the
//!   privileges, [`Lab::start`] fails with [`NotPrivileged`] and changes nothing.
//! - Leaves nothing behind on any exit path: dropping a [`Lab`] stops the forwarder, kills the
//!   processes still in its namespaces and deletes them; TUN devices are non-persistent; child
//!   commands die with the lab (`PR_SET_PDEATHSIG`); after a `SIGKILL` the next start removes
//!   the namespaces whose owning pid is gone.
//! - Faithfulness is measured, not assumed: `tests/` check the idle RTT, the rate and the loss
//!   rate against the settings, and [`calibrate`] reports up to which rate they hold here.

pub mod calibrate;
pub mod experiment;
pub mod flows;
pub mod forward;
pub mod host;
pub mod lab;
pub mod netns;
pub mod params;
pub mod probe;
pub mod run;
pub mod slow_start;
mod tun;

pub use forward::DirectionStats;
pub use lab::{Lab, ADDR_A, ADDR_B, TUN_NAME};
pub use netns::{check_privileges, Namespace, NotPrivileged};
pub use params::{LinkParams, ParseError, QueueLimit};
