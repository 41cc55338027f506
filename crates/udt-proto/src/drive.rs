//! The drive contract: how a runtime moves one UDP port's datagrams through the core.
//!
//! Every user of the core (the threaded runtime, the interop driver, the simulator, the
//! benches, the `mux_input` fuzz target) does the same three things, and does them here:
//!
//! 1. **Route** each arriving datagram with [`Endpoint::route`]: it belongs to a connection
//!    ([`Route::Connection`]: pass it to [`Connection::handle_datagram`]), or it was a verified
//!    request that the endpoint accepted ([`Route::Accepted`]: store the new connection and
//!    queue it for the application), or the endpoint dealt with it alone (a stateless reply or
//!    a refusal went to the [`Sink`], or it was dropped and counted).
//! 2. **Drive** every connection that something happened to (a datagram, an application call,
//!    a deadline) with [`Connection::drive`]: it runs a due timeout, sends everything due
//!    into the sink, drains the events, and reports ([`Driven`]) whether anything woke the
//!    application, when to drive it next, and whether it can be forgotten.
//! 3. **Forget** a connection that reported [`Driven::drained`] with [`Endpoint::forget`],
//!    after what it sent has left.
//!
//! Nothing here needs more than one connection at a time, so a threaded runtime can keep
//! one lock per connection: the endpoint is consulted under the port's lock, each connection
//! is driven under its own.

use std::net::SocketAddr;

use crate::connection::{Connection, Transmit};
use crate::endpoint::{DatagramEvent, Endpoint, Incoming};
use crate::time::Instant;

/// Where the datagrams a drive or a route produces go.
///
/// The core appends each datagram's bytes to [`Sink::buffer`] and then calls
/// [`Sink::commit`] with its destination and length, so a runtime can build a batch in
/// place (one `sendmmsg`) and a simulator can hand each datagram to its link.
pub trait Sink {
    /// The buffer the next datagram is appended to.
    fn buffer(&mut self) -> &mut Vec<u8>;
    /// The last `transmit.size` bytes of the buffer are one datagram for
    /// `transmit.destination`.
    fn commit(&mut self, transmit: Transmit);

    /// Whether this sink takes data packets' payloads where the connection holds them
    /// ([`Sink::commit_lent`]) instead of as a copy in its buffer.
    fn lends(&self) -> bool {
        false
    }

    /// The last `transmit.size` bytes of the buffer are the header of one datagram for
    /// `transmit.destination`, and `payload` is the rest of it, in the connection's send
    /// buffer. Called only when [`Sink::lends`]; this default appends a copy.
    ///
    /// A runtime may keep a pointer to `payload` instead, to send it with an `iovec` of its
    /// own: the bytes stay where they are, unchanged, until it calls
    /// [`Connection::lent_sent`] (after sending them), whatever else the connection is
    /// handed meanwhile; only dropping the connection frees them.
    fn commit_lent(&mut self, transmit: Transmit, payload: &[u8]) {
        self.buffer().extend_from_slice(payload);
        self.commit(Transmit {
            size: transmit.size + payload.len(),
            ..transmit
        });
    }
}

/// A sink that collects datagrams as separate vectors (the simulator and these tests).
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct VecSink {
    buf: Vec<u8>,
    /// Each committed datagram with its destination, oldest first.
    pub(crate) datagrams: Vec<(SocketAddr, Vec<u8>)>,
}

#[cfg(test)]
impl Sink for VecSink {
    fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    fn commit(&mut self, transmit: Transmit) {
        let start = self.buf.len() - transmit.size;
        let datagram = self.buf.split_off(start);
        self.datagrams.push((transmit.destination, datagram));
    }
}

/// What [`Endpoint::route`] decided about a datagram.
#[derive(Debug)]
pub enum Route {
    /// It is for this connection: hand it to [`Connection::handle_datagram`], then drive the
    /// connection.
    Connection(crate::seq::SocketId),
    /// A verified request was accepted: store the connection, drive it (its handshake
    /// response is queued) and offer it to the application. (Boxed: a connection is large
    /// and the other answers are a word.)
    Accepted(Box<Connection>),
    /// Nothing more to do: answered statelessly or refused (through the sink), or dropped.
    Done,
}

/// What one [`Connection::drive`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Driven {
    /// Datagrams committed to the sink.
    pub transmits: usize,
    /// An application-visible event happened (connected, readable, writable, closed): wake
    /// whoever waits on the connection.
    pub events: bool,
    /// When to drive the connection next, if it has a deadline.
    pub timeout: Option<Instant>,
    /// The connection ended and sent its last datagram: forget it
    /// ([`Endpoint::forget`]) once the sink's datagrams have left.
    pub drained: bool,
}

impl Endpoint {
    /// Decide what a datagram that arrived at `arrival` from `from` is for.
    ///
    /// A verified connection request is accepted (as of `now`, with the listener's
    /// configuration) if `admit` says there is room for it (a runtime checks its accept
    /// backlog), and refused with UDT4's rejection otherwise. Stateless replies and
    /// refusals are committed to `sink`.
    pub fn route(
        &mut self,
        now: Instant,
        arrival: Instant,
        from: SocketAddr,
        data: &[u8],
        admit: impl FnOnce(&Incoming) -> bool,
        sink: &mut impl Sink,
    ) -> Route {
        match self.handle(arrival, from, data, sink.buffer()) {
            Some(DatagramEvent::Connection(id)) => Route::Connection(id),
            Some(DatagramEvent::NewConnection(incoming)) if admit(&incoming) => {
                Route::Accepted(Box::new(self.accept(now, incoming, None)))
            }
            Some(DatagramEvent::NewConnection(incoming)) => {
                let refusal = self.reject(incoming, sink.buffer());
                sink.commit(refusal);
                Route::Done
            }
            Some(DatagramEvent::Response(reply)) => {
                sink.commit(reply);
                Route::Done
            }
            None => Route::Done,
        }
    }
}

impl Connection {
    /// Bring the connection up to date at `now`: run its timeout if due, commit every
    /// datagram due into `sink`, and drain its events. Call it after anything happened to
    /// the connection (datagrams handed to it, an application call, its deadline).
    pub fn drive(&mut self, now: Instant, sink: &mut impl Sink) -> Driven {
        if self.poll_timeout().is_some_and(|t| t <= now) {
            self.handle_timeout(now);
        }
        let mut transmits = 0;
        let lend = sink.lends();
        while let Some((t, lent)) = self.poll_transmit_lending(now, sink.buffer(), lend) {
            match lent.and_then(|seq| self.lend_payload(seq)) {
                Some(payload) => sink.commit_lent(t, payload),
                None => sink.commit(t),
            }
            transmits += 1;
        }
        let mut events = false;
        while self.poll_event().is_some() {
            events = true;
        }
        Driven {
            transmits,
            events,
            timeout: self.poll_timeout(),
            drained: self.is_drained(),
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;

    use super::*;
    use crate::config::ConnectionConfig;
    use crate::connection::{Event, State};

    fn addr(last: u8) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, last], 9000))
    }

    /// A caller on endpoint 1 connecting to a listener on endpoint 2 over a perfect
    /// zero-delay network, every datagram routed and every connection driven as a runtime
    /// does; `admit` is the listener's answer to "is there room". Returns the caller, what the
    /// listener accepted, and the listener's endpoint.
    fn handshake(admit: bool) -> (Connection, Vec<Connection>, Endpoint) {
        handshake_with(admit, &ConnectionConfig::default())
    }

    /// [`handshake`] with both sides configured as `config`.
    fn handshake_with(
        admit: bool,
        config: &ConnectionConfig,
    ) -> (Connection, Vec<Connection>, Endpoint) {
        let now = Instant::ZERO;
        let (a, b) = (addr(1), addr(2));
        let mut client = Endpoint::new(1);
        let mut server = Endpoint::new(2);
        server.listen(config.clone());
        let mut caller = client.connect(now, b, config.clone()).unwrap();
        let mut accepted: Vec<Connection> = Vec::new();
        let (mut to_server, mut to_client) = (VecSink::default(), VecSink::default());
        for _ in 0..4 {
            caller.drive(now, &mut to_server);
            for (_, bytes) in std::mem::take(&mut to_server.datagrams) {
                match server.route(now, now, a, &bytes, |_| admit, &mut to_client) {
                    Route::Connection(id) => {
                        let conn = accepted.iter_mut().find(|c| c.local_id() == id).unwrap();
                        conn.handle_datagram(now, a, &bytes);
                        conn.drive(now, &mut to_client);
                    }
                    Route::Accepted(mut conn) => {
                        conn.drive(now, &mut to_client);
                        accepted.push(*conn);
                    }
                    Route::Done => {}
                }
            }
            for (_, bytes) in std::mem::take(&mut to_client.datagrams) {
                let route = client.route(now, now, b, &bytes, |_| true, &mut to_server);
                assert!(matches!(route, Route::Connection(_)));
                caller.handle_datagram(now, b, &bytes);
            }
        }
        (caller, accepted, server)
    }

    /// The whole contract: a handshake through `route` (cookie reply, then acceptance) and
    /// both sides connected after a few drives.
    #[test]
    fn route_and_drive_connect_two_endpoints() {
        let (caller, accepted, server) = handshake(true);
        assert_eq!(caller.state(), State::Connected);
        assert_eq!(accepted.len(), 1);
        assert_eq!(accepted[0].state(), State::Connected);
        assert_eq!(server.connection_count(), 1);
    }

    /// A request that `admit` turns away gets UDT4's rejection through the sink and leaves
    /// no state behind.
    #[test]
    fn a_request_without_room_is_refused_through_the_sink() {
        let (mut caller, accepted, server) = handshake(false);
        assert!(accepted.is_empty());
        assert_eq!(server.connection_count(), 0);
        assert!(server.stats().rejected >= 1);
        let driven = caller.drive(Instant::ZERO, &mut VecSink::default());
        assert_eq!(caller.state(), State::Closed);
        assert!(driven.drained, "a refused caller has nothing left to send");
    }

    /// A sink that takes payloads where the connection holds them, as the threaded runtime
    /// does, and reassembles each datagram from the header in its buffer and the payload.
    #[derive(Default)]
    struct LendingSink {
        buf: Vec<u8>,
        datagrams: Vec<Vec<u8>>,
        lent: usize,
    }

    impl Sink for LendingSink {
        fn buffer(&mut self) -> &mut Vec<u8> {
            &mut self.buf
        }

        fn commit(&mut self, transmit: Transmit) {
            let start = self.buf.len() - transmit.size;
            self.datagrams.push(self.buf.split_off(start));
        }

        fn lends(&self) -> bool {
            true
        }

        fn commit_lent(&mut self, transmit: Transmit, payload: &[u8]) {
            assert_eq!(transmit.size, 16, "only the data header is in the buffer");
            let start = self.buf.len() - transmit.size;
            let mut datagram = self.buf.split_off(start);
            datagram.extend_from_slice(payload);
            self.datagrams.push(datagram);
            self.lent += 1;
        }
    }

    /// Data sent through a lending sink arrives whole: each lent payload completes the
    /// header the connection emitted, and the receiver reads back exactly what was written.
    #[test]
    fn lent_payloads_complete_their_headers() {
        let (mut caller, mut accepted, _server) = handshake(true);
        let mut receiver = accepted.remove(0);
        let data: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        let mut now = Instant::ZERO + std::time::Duration::from_millis(100);
        assert_eq!(caller.send(now, &data), Ok(data.len()));
        let mut sink = LendingSink::default();
        let mut got = Vec::new();
        for _ in 0..200 {
            caller.drive(now, &mut sink);
            caller.lent_sent();
            for datagram in std::mem::take(&mut sink.datagrams) {
                receiver.handle_datagram(now, addr(1), &datagram);
            }
            receiver.drive(now, &mut VecSink::default());
            let mut chunk = [0u8; 4096];
            while let Ok(n) = receiver.recv(&mut chunk) {
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&chunk[..n]);
            }
            if got.len() == data.len() {
                break;
            }
            now += std::time::Duration::from_millis(1);
        }
        assert!(
            sink.lent >= data.len() / 1500,
            "data packets were lent: {}",
            sink.lent
        );
        assert_eq!(got, data);
    }

    /// Sealed data packets handed over as parts of one received train (as the runtime cuts a
    /// GRO train) are opened where they lie, and the receiver keeps their payloads there: every
    /// chunk a reader takes points into the train's allocation, and the bytes are the data.
    #[test]
    fn sealed_payloads_handed_over_lent_stay_in_their_train() {
        let mut config = ConnectionConfig::default();
        config.session_key(Some(crate::protect::SessionKey::from_bytes([5; 32])));
        let (mut caller, mut accepted, _server) = handshake_with(true, &config);
        let mut receiver = accepted.remove(0);
        let data: Vec<u8> = (0..60_000u32).map(|i| (i % 251) as u8).collect();
        let mut now = Instant::ZERO + std::time::Duration::from_millis(100);
        assert_eq!(caller.send(now, &data), Ok(data.len()));
        let (mut to_receiver, mut to_caller) = (VecSink::default(), VecSink::default());
        let (mut got, mut trains, mut outside) = (Vec::new(), Vec::new(), 0);
        for _ in 0..200 {
            caller.drive(now, &mut to_receiver);
            let datagrams = std::mem::take(&mut to_receiver.datagrams);
            let mut train = BytesMut::new();
            for (_, datagram) in &datagrams {
                train.extend_from_slice(datagram);
            }
            let base = train.as_ptr() as usize;
            trains.push(base..base + train.len());
            for (_, datagram) in &datagrams {
                let part = train.split_to(datagram.len());
                receiver.handle_datagram_lent(now, addr(1), part);
            }
            receiver.drive(now, &mut to_caller);
            for (_, datagram) in std::mem::take(&mut to_caller.datagrams) {
                caller.handle_datagram(now, addr(2), &datagram);
            }
            let mut chunks = Vec::new();
            while receiver.recv_chunks(&mut chunks, usize::MAX).unwrap_or(0) > 0 {}
            for chunk in chunks {
                let at = chunk.as_ptr() as usize;
                if !trains.iter().any(|t| t.contains(&at)) {
                    outside += 1;
                }
                got.extend_from_slice(&chunk);
            }
            if got.len() == data.len() {
                break;
            }
            now += std::time::Duration::from_millis(1);
        }
        assert!(
            receiver.is_peer_authenticated(),
            "the packets were sealed and opened"
        );
        assert_eq!(got, data);
        assert_eq!(
            outside, 0,
            "every payload read lies in a train it arrived in"
        );
    }

    /// Events are coalesced: a connection nobody drains holds each kind at most once.
    #[test]
    fn undrained_events_stay_bounded() {
        let now = Instant::ZERO;
        let mut ep = Endpoint::new(3);
        let mut conn = ep
            .connect(now, addr(2), ConnectionConfig::default())
            .unwrap();
        for _ in 0..1000 {
            conn.push_event(Event::Readable);
            conn.push_event(Event::Writable);
        }
        assert_eq!(conn.queue_lens().1, 2);
        let driven = conn.drive(now, &mut VecSink::default());
        assert!(driven.events);
        assert_eq!(conn.queue_lens().1, 0);
    }
}
