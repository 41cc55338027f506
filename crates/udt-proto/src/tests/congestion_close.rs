//! `Controller::close`: called once, when the application closes a connected socket (4.11
//! `CUDT::close` calls `CCC::close`), and not when the peer is the one that closes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use udt_netsim::LinkConfig;

use super::sim::Pair;
use crate::config::ConnectionConfig;
use crate::congestion::{
    AckInfo, Controller, ControllerFactory, ControllerInit, LossInfo, Native, TimeoutInfo,
};
use crate::connection::State;
use crate::time::Instant;

/// Native control that counts its `close` calls in a counter its factory shares.
#[derive(Debug)]
struct CountsClose {
    inner: Native,
    closes: Arc<AtomicUsize>,
}

impl Controller for CountsClose {
    fn init(&mut self, now: Instant, init: &ControllerInit) {
        self.inner.init(now, init);
    }
    fn on_ack(&mut self, now: Instant, ack: &AckInfo) {
        self.inner.on_ack(now, ack);
    }
    fn on_loss(&mut self, now: Instant, loss: &LossInfo<'_>) {
        self.inner.on_loss(now, loss);
    }
    fn on_timeout(&mut self, now: Instant, info: &TimeoutInfo) {
        self.inner.on_timeout(now, info);
    }
    fn close(&mut self) {
        self.closes.fetch_add(1, Ordering::SeqCst);
    }
    fn window_pkts(&self) -> f64 {
        self.inner.window_pkts()
    }
    fn send_period(&self) -> Duration {
        self.inner.send_period()
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
        Box::new(CountsClose {
            inner: Native::default(),
            closes: self.closes.clone(),
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
