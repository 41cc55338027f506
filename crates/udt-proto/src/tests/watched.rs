//! A controller for scenario tests that wraps a real one and lets the test watch it: every
//! hook and output goes to the wrapped controller, and a [`Watcher`] sees what the test
//! counts (packets sent, closes) or answers what it sets (short trains).

use std::fmt;
use std::time::Duration;

use crate::congestion::{
    AckInfo, Controller, ControllerInit, LossInfo, ReceivedInfo, SentInfo, TimeoutInfo,
};
use crate::seq::SeqNumber;
use crate::time::Instant;

/// What a test sees of the controller it wraps, and what it decides in its place.
pub(crate) trait Watcher: Send + fmt::Debug {
    /// A data packet is about to be sent.
    fn sent(&mut self, _now: Instant, _info: &SentInfo) {}
    /// The application closed the connection.
    fn closed(&mut self) {}
    /// The peer reported its receiver's front.
    fn front(&mut self, _front: SeqNumber) {}
    /// The controller's answer to [`Controller::short_trains`].
    fn short_trains(&self) -> bool {
        false
    }
    /// The name the wrapped controller goes by.
    fn name(&self) -> &'static str;
}

/// `inner`, watched by `watcher`.
#[derive(Debug)]
pub(crate) struct Watched<W> {
    pub(crate) inner: Box<dyn Controller>,
    pub(crate) watcher: W,
}

impl<W: Watcher> Controller for Watched<W> {
    fn init(&mut self, now: Instant, init: &ControllerInit) {
        self.inner.init(now, init);
    }
    fn on_ack(&mut self, now: Instant, ack: &AckInfo) {
        self.inner.on_ack(now, ack);
    }
    fn on_front(&mut self, now: Instant, front: SeqNumber, ack: &AckInfo) {
        self.watcher.front(front);
        self.inner.on_front(now, front, ack);
    }
    fn on_loss(&mut self, now: Instant, loss: &LossInfo<'_>) {
        self.inner.on_loss(now, loss);
    }
    fn on_timeout(&mut self, now: Instant, info: &TimeoutInfo) {
        self.inner.on_timeout(now, info);
    }
    fn on_packet_sent(&mut self, now: Instant, info: &SentInfo) {
        self.watcher.sent(now, info);
        self.inner.on_packet_sent(now, info);
    }
    fn on_packet_received(&mut self, now: Instant, info: &ReceivedInfo) {
        self.inner.on_packet_received(now, info);
    }
    fn on_custom_message(&mut self, now: Instant, ext_type: u16, body: &[u8]) {
        self.inner.on_custom_message(now, ext_type, body);
    }
    fn poll_custom_message(&mut self) -> Option<(u16, Vec<u8>)> {
        self.inner.poll_custom_message()
    }
    fn close(&mut self) {
        self.watcher.closed();
        self.inner.close();
    }
    fn window_pkts(&self) -> f64 {
        self.inner.window_pkts()
    }
    fn send_period(&self) -> Duration {
        self.inner.send_period()
    }
    fn ack_period(&self) -> Option<Duration> {
        self.inner.ack_period()
    }
    fn ack_interval_pkts(&self) -> Option<u32> {
        self.inner.ack_interval_pkts()
    }
    fn rto(&self) -> Option<Duration> {
        self.inner.rto()
    }
    fn name(&self) -> &'static str {
        self.watcher.name()
    }
    fn short_trains(&self) -> bool {
        self.watcher.short_trains()
    }
}
