//! `Controller::close`: called once, when the application closes a connected socket (4.11
//! `CUDT::close` calls `CCC::close`), and not when the peer is the one that closes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use udt_netsim::LinkConfig;

use super::sim::Pair;
use super::watched::{Watched, Watcher};
use crate::config::ConnectionConfig;
use crate::congestion::{Controller, ControllerFactory, Native};
use crate::connection::State;

/// Counts a controller's `close` calls in a counter its factory shares.
#[derive(Debug)]
struct CountsClose {
    closes: Arc<AtomicUsize>,
}

impl Watcher for CountsClose {
    fn closed(&mut self) {
        self.closes.fetch_add(1, Ordering::SeqCst);
    }
    fn name(&self) -> &'static str {
        "counts-close"
    }
}

#[derive(Debug, Default)]
struct CountsCloseFactory {
    closes: Arc<AtomicUsize>,
}

impl ControllerFactory for CountsCloseFactory {
    fn build(&self) -> Box<dyn Controller> {
        Box::new(Watched {
            inner: Box::new(Native::default()),
            watcher: CountsClose {
                closes: self.closes.clone(),
            },
        })
    }
    fn name(&self) -> &'static str {
        "counts-close"
    }
}

fn config(factory: &Arc<CountsCloseFactory>) -> ConnectionConfig {
    let mut config = ConnectionConfig::default();
    config.controller(factory.clone());
    config
}

#[test]
fn congestion_controller_hears_the_application_close_once() {
    let (client_cc, server_cc) = (Arc::default(), Arc::default());
    let link = || LinkConfig::new().delay(Duration::from_millis(5));
    let mut p = Pair::new(link(), link(), config(&server_cc), 11);
    let (c, s) = p.connect(config(&client_cc));
    let (cn, sn) = (p.client, p.server);
    let now = p.sim.now;
    p.sim.conn(cn, c).send(now, &[5u8; 100_000]).unwrap();
    assert_eq!(client_cc.closes.load(Ordering::SeqCst), 0);

    // Data still unsent: the connection lingers, but the controller is told at once.
    p.sim.conn(cn, c).close(now);
    assert_eq!(p.sim.conn(cn, c).state(), State::Closing);
    assert_eq!(client_cc.closes.load(Ordering::SeqCst), 1);
    assert!(p.sim.run_until(Duration::from_secs(10), |sim| {
        sim.conn(cn, c).state() == State::Closed && sim.conn(sn, s).state() == State::Closed
    }));
    let now = p.sim.now;
    p.sim.conn(cn, c).close(now);
    assert_eq!(client_cc.closes.load(Ordering::SeqCst), 1);
    // The peer's Shutdown ends the server's connection; its application closed nothing.
    assert_eq!(server_cc.closes.load(Ordering::SeqCst), 0);
}
