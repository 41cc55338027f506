//! Connection slots: a total limit and a per-address limit, each slot held by a guard
//! ([`Slot`]) that gives it back when dropped, so a handler that panics still frees it.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

/// The slots of one server.
#[derive(Debug)]
pub struct Slots {
    max_total: usize,
    max_per_address: usize,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

/// One connection's slot, given back on drop.
#[derive(Debug)]
pub struct Slot {
    slots: Arc<Slots>,
    ip: IpAddr,
}

impl Slots {
    /// At most `max_total` connections, `max_per_address` from one IP address.
    pub fn new(max_total: usize, max_per_address: usize) -> Self {
        Self {
            max_total,
            max_per_address,
            held: Mutex::new(Held::default()),
        }
    }

    /// A slot for a connection from `ip`, or why not.
    pub fn acquire(self: &Arc<Self>, ip: IpAddr) -> Result<Slot, String> {
        // A poisoned lock only means a panic elsewhere; the counts are still whole.
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if held.total >= self.max_total {
            return Err(format!("{} connections already", self.max_total));
        }
        let mine = held.by_address.entry(ip).or_insert(0);
        if *mine >= self.max_per_address {
            return Err(format!(
                "{} connections from {ip} already",
                self.max_per_address
            ));
        }
        *mine += 1;
        held.total += 1;
        Ok(Slot {
            slots: Arc::clone(self),
            ip,
        })
    }

    /// Connections held now (all, and from `ip`).
    pub fn held(&self, ip: IpAddr) -> (usize, usize) {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        (held.total, held.by_address.get(&ip).copied().unwrap_or(0))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self
            .slots
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        held.total -= 1;
        if let Some(n) = held.by_address.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                held.by_address.remove(&self.ip); // the map holds only addresses in use
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([192, 0, 2, last])
    }

    #[test]
    fn one_address_cannot_take_every_slot() {
        let slots = Arc::new(Slots::new(4, 2));
        let a1 = slots.acquire(ip(1)).unwrap();
        let _a2 = slots.acquire(ip(1)).unwrap();
        let err = slots.acquire(ip(1)).unwrap_err();
        assert!(err.contains("from 192.0.2.1"), "{err}");
        let _b1 = slots.acquire(ip(2)).unwrap();
        let _b2 = slots.acquire(ip(2)).unwrap();
        assert!(slots
            .acquire(ip(3))
            .unwrap_err()
            .contains("4 connections already"));
        drop(a1);
        assert!(slots.acquire(ip(1)).is_ok());
    }

    #[test]
    fn a_panicking_handler_gives_its_slot_back() {
        let slots = Arc::new(Slots::new(1, 1));
        let slot = slots.acquire(ip(1)).unwrap();
        let handler = std::thread::spawn(move || {
            let _slot = slot;
            panic!("a handler bug");
        });
        assert!(handler.join().is_err());
        assert_eq!(slots.held(ip(1)), (0, 0));
        assert!(slots.acquire(ip(1)).is_ok());
    }
}
