//! `udt-netsim`: a seeded, sans-IO model of one direction of a network path.
//!
//! A [`Link`] has a rate, a propagation delay, jitter, a drop-tail queue, random loss
//! (Bernoulli or bursty Gilbert-Elliott), reordering, duplication, corruption and stalls (the
//! whole link stopping for a moment, as a preempted forwarder does), all
//! configured by a [`LinkConfig`]. It is used in virtual time by the protocol tests and in real
//! time by the lab's TUN forwarder, so simulated and lab results come from the same model.
//!
//! # Contract
//!
//! - **Architecture Invariant:** udt-netsim knows nothing of UDT. A payload is opaque bytes,
//!   carried with an opaque tag `T`.
//! - **Architecture Invariant:** it reads no clock, opens no socket and spawns no thread
//!   (enforced by this crate's `clippy.toml`). Time is `now: Duration` since an epoch the
//!   caller chooses, passed to every call.
//! - Deterministic: the same seed, config and calls give the same result. Each impairment
//!   draws from its own random stream, so enabling one does not change the others' draws.
//! - Cheap: O(log n) per packet, no allocation per packet except when duplicating.
//! - Total: no input makes it panic; absurd values saturate or are clamped (documented on
//!   each field).
//!
//! # Example
//!
//! Drive a link with a virtual clock: push, then jump to each deadline and drain.
//!
//! ```
//! use std::time::Duration;
//! use udt_netsim::{Link, LinkConfig, LossModel, Verdict};
//!
//! let config = LinkConfig::new()
//!     .rate_bps(8_000_000) // one byte per microsecond
//!     .delay(Duration::from_millis(10))
//!     .loss(LossModel::bursty(0.01, 3.0));
//! let mut link: Link<u32> = Link::new(config, 42);
//!
//! let verdict = link.push(Duration::ZERO, 7, vec![0; 1000]);
//! assert_eq!(verdict, Verdict::Queued); // this seed does not lose the first packet
//! // 1000 bytes take 1 ms to serialize, then 10 ms to propagate.
//! assert_eq!(link.next_deadline(), Some(Duration::from_millis(11)));
//! assert!(link.poll_deliver(Duration::from_millis(10)).is_none());
//!
//! let mut now = Duration::ZERO;
//! while let Some(deadline) = link.next_deadline() {
//!     now = deadline;
//!     while let Some((tag, data)) = link.poll_deliver(now) {
//!         assert_eq!((tag, data.len()), (7, 1000));
//!     }
//! }
//! assert_eq!(now, Duration::from_millis(11));
//! assert_eq!(link.stats().delivered, 1);
//! ```

mod config;
mod link;
mod loss;
mod queue;
mod rng;
mod stall;

pub use config::LinkConfig;
pub use link::{Delivery, Link, LinkStats, Verdict};
pub use loss::LossModel;
pub use stall::StallSchedule;
