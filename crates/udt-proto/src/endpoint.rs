//! The endpoint: everything one UDP port needs beyond its connections.
//!
//! It demultiplexes datagrams by destination socket id, answers connection requests
//! statelessly with SYN cookies (so a flood of requests, bogus or replayed, allocates nothing),
//! hands valid requests to the application as [`Incoming`], and allocates socket ids and
//! initial sequence numbers.
//!
//! The endpoint does not own connections: [`Endpoint::route`] says which connection a
//! datagram belongs to and the caller passes it on. That keeps each connection independently
//! lockable in a threaded runtime.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::config::{ConnectionConfig, Mode};
use crate::connection::{Connection, Transmit};
use crate::handshake::{self, CookieKey, UDT_VERSION};
use crate::seq::{SeqNumber, SocketId};
use crate::stats::MalformedCounters;
use crate::time::Instant;
use crate::wire::{self, ControlBody, ControlRepr, HandshakeRepr, Packet, ReqType, Timestamp};

/// What to do with a datagram (the raw answer behind [`Endpoint::route`]).
#[derive(Debug)]
pub(crate) enum DatagramEvent {
    /// It belongs to this connection: pass it to `Connection::handle_datagram`.
    Connection(SocketId),
    /// A verified connection request for the listener: `accept` or `reject` it.
    NewConnection(Incoming),
    /// The endpoint answered by itself; the reply's bytes were appended to the buffer.
    Response(Transmit),
}

/// A connection request that passed the cookie check.
#[derive(Debug, Clone)]
pub struct Incoming {
    remote: SocketAddr,
    request: HandshakeRepr,
}

impl Incoming {
    /// The client's address.
    pub fn remote(&self) -> SocketAddr {
        self.remote
    }

    /// The client's handshake.
    pub fn request(&self) -> &HandshakeRepr {
        &self.request
    }
}

/// Why `connect` was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// Rendezvous and listening on one endpoint exclude each other (4.11 error 5007).
    #[error("a rendezvous connection cannot share an endpoint with a listener")]
    RendezvousWithListener,
    /// Another rendezvous connection on this endpoint already has that peer address (the
    /// peers' first handshakes carry no socket id, so two would be ambiguous on the wire).
    #[error("already connecting to {0} from this port")]
    AlreadyConnecting(SocketAddr),
}

impl From<ConnectError> for std::io::Error {
    /// A second rendezvous connection to the same address from one port is `AddrInUse`; mixing
    /// rendezvous with a listener is `InvalidInput`.
    fn from(e: ConnectError) -> Self {
        let kind = match e {
            ConnectError::AlreadyConnecting(_) => std::io::ErrorKind::AddrInUse,
            ConnectError::RendezvousWithListener => std::io::ErrorKind::InvalidInput,
        };
        Self::new(kind, e)
    }
}

/// Endpoint-level counters (datagrams that never reached a connection).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Datagrams the parser refused, by reason.
    pub malformed: MalformedCounters,
    /// Datagrams for a socket id we do not have.
    pub unknown_socket: u64,
    /// Cookie echoes sent (step 2 of the handshake).
    pub cookies_sent: u64,
    /// Requests whose cookie did not verify.
    pub bad_cookies: u64,
    /// Requests refused with 1002 (version/type mismatch or by the application).
    pub rejected: u64,
    /// Non-handshake packets addressed to socket 0.
    pub not_handshake: u64,
}

/// One UDP port's worth of UDT. See the module documentation.
#[derive(Debug)]
pub struct Endpoint {
    cookie: CookieKey,
    rng: Pcg64Mcg,
    next_id: u32,
    listener: Option<ConnectionConfig>,
    live: HashSet<SocketId>,
    /// Accepted connections by (client address, client socket id): a repeated request is
    /// routed to its connection, which repeats its response.
    by_peer: HashMap<(SocketAddr, SocketId), SocketId>,
    /// Rendezvous connections by peer address, for handshakes sent to socket 0. Only
    /// rendezvous needs it: a listener answers a caller at the caller's own socket id, so any
    /// number of caller connections may share one remote, told apart by socket id.
    by_remote: HashMap<SocketAddr, SocketId>,
    stats: EndpointStats,
    /// Tests pin the next ISN to exercise the sequence wrap.
    forced_isn: Option<SeqNumber>,
}

impl Endpoint {
    /// An endpoint whose cookies, socket ids and ISNs derive from `seed`. The runtime seeds it
    /// from the OS's CSPRNG; simulations use fixed seeds.
    pub fn new(seed: u64) -> Self {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let cookie = CookieKey::new([rng.next_u64(), rng.next_u64()]);
        // UDT4: ids count down from a random start in [1, 2^30].
        let next_id = (rng.next_u32() % (1 << 30)) + 1;
        Self {
            cookie,
            rng,
            next_id,
            listener: None,
            live: HashSet::new(),
            by_peer: HashMap::new(),
            by_remote: HashMap::new(),
            stats: EndpointStats::default(),
            forced_isn: None,
        }
    }

    /// Accept connection requests; accepted connections start from `config`.
    pub fn listen(&mut self, config: ConnectionConfig) {
        self.listener = Some(config);
    }

    /// Stop accepting requests (existing connections are unaffected).
    pub fn stop_listening(&mut self) {
        self.listener = None;
    }

    /// Whether requests are being accepted.
    pub fn is_listening(&self) -> bool {
        self.listener.is_some()
    }

    /// Start connecting to `remote` (a listener, or a rendezvous peer if `config` says so).
    /// Several caller connections may go to one remote; a second rendezvous connection to a
    /// remote is refused ([`ConnectError::AlreadyConnecting`]).
    pub fn connect(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        config: ConnectionConfig,
    ) -> Result<Connection, ConnectError> {
        if config.rendezvous {
            if self.listener.is_some() {
                return Err(ConnectError::RendezvousWithListener);
            }
            if self.by_remote.contains_key(&remote) {
                return Err(ConnectError::AlreadyConnecting(remote));
            }
        }
        let id = self.allocate_id();
        let isn = self.random_isn();
        self.live.insert(id);
        if config.rendezvous {
            self.by_remote.insert(remote, id);
        }
        Ok(Connection::connect(now, config, id, remote, isn))
    }

    /// Whether a rendezvous connection lives on this endpoint (a listener would take its
    /// handshakes, which arrive for socket 0: the runtime refuses to listen then).
    pub fn has_rendezvous(&self) -> bool {
        !self.by_remote.is_empty()
    }

    /// Decide where a datagram from `remote` goes. Stateless replies are appended to `buf`.
    pub(crate) fn handle(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        data: &[u8],
        buf: &mut Vec<u8>,
    ) -> Option<DatagramEvent> {
        let Some(dst) = wire::peek_dst_socket(data) else {
            self.stats.malformed.record(wire::Error::Truncated);
            return None;
        };
        if dst != SocketId::NONE {
            if self.live.contains(&dst) {
                return Some(DatagramEvent::Connection(dst));
            }
            self.stats.unknown_socket += 1;
            return None;
        }
        if self.listener.is_some() {
            return self.listener_handshake(now, remote, data, buf);
        }
        if let Some(&id) = self.by_remote.get(&remote) {
            return Some(DatagramEvent::Connection(id));
        }
        self.stats.unknown_socket += 1;
        None
    }

    /// Accept a verified request: the new connection is connected and has its handshake
    /// response queued. `config` overrides the listener's configuration.
    pub(crate) fn accept(
        &mut self,
        now: Instant,
        incoming: Incoming,
        config: Option<ConnectionConfig>,
    ) -> Connection {
        let config = config.or_else(|| self.listener.clone()).unwrap_or_default();
        let id = self.allocate_id();
        self.live.insert(id);
        self.by_peer
            .insert((incoming.remote, incoming.request.socket_id), id);
        Connection::accept(now, config, id, incoming.remote, &incoming.request)
    }

    /// Refuse a verified request (e.g. a full accept backlog): the 1002 reply is appended to
    /// `buf`.
    pub(crate) fn reject(&mut self, incoming: Incoming, buf: &mut Vec<u8>) -> Transmit {
        self.stats.rejected += 1;
        let reply = handshake::rejection(&incoming.request);
        respond(incoming.remote, incoming.request.socket_id, reply, buf)
    }

    /// Forget a finished connection (after `Connection::is_drained`).
    pub fn forget(&mut self, conn: &Connection) {
        self.live.remove(&conn.local_id());
        self.by_peer.remove(&(conn.remote(), conn.peer_id()));
        if self.by_remote.get(&conn.remote()) == Some(&conn.local_id()) {
            self.by_remote.remove(&conn.remote());
        }
    }

    /// Number of live connections.
    pub fn connection_count(&self) -> usize {
        self.live.len()
    }

    /// Endpoint counters.
    pub fn stats(&self) -> EndpointStats {
        self.stats
    }

    fn listener_handshake(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        data: &[u8],
        buf: &mut Vec<u8>,
    ) -> Option<DatagramEvent> {
        let hs = match Packet::parse(data) {
            Ok(Packet::Control(ControlRepr {
                body: ControlBody::Handshake(hs),
                ..
            })) => hs,
            Ok(_) => {
                self.stats.not_handshake += 1;
                return None;
            }
            Err(e) => {
                self.stats.malformed.record(e);
                return None;
            }
        };
        if hs.req_type == ReqType::REGULAR {
            self.stats.cookies_sent += 1;
            let reply = handshake::cookie_echo(&hs, self.cookie.cookie(now, remote));
            return Some(DatagramEvent::Response(respond(
                remote,
                hs.socket_id,
                reply,
                buf,
            )));
        }
        if !self.cookie.verify(now, remote, hs.cookie) {
            self.stats.bad_cookies += 1;
            return None;
        }
        let mode = self.listener.as_ref().map_or(Mode::Stream, |c| c.mode);
        if hs.version != UDT_VERSION
            || Mode::from_socket_type(hs.socket_type) != Some(mode)
            || !handshake::mss_is_valid(hs.mss)
        {
            self.stats.rejected += 1;
            let reply = handshake::rejection(&hs);
            return Some(DatagramEvent::Response(respond(
                remote,
                hs.socket_id,
                reply,
                buf,
            )));
        }
        if let Some(&id) = self.by_peer.get(&(remote, hs.socket_id)) {
            return Some(DatagramEvent::Connection(id));
        }
        Some(DatagramEvent::NewConnection(Incoming {
            remote,
            request: hs,
        }))
    }

    fn allocate_id(&mut self) -> SocketId {
        loop {
            let id = SocketId(self.next_id);
            self.next_id = if self.next_id <= 1 {
                1 << 30
            } else {
                self.next_id - 1
            };
            if !self.live.contains(&id) {
                return id;
            }
        }
    }

    fn random_isn(&mut self) -> SeqNumber {
        self.forced_isn
            .take()
            .unwrap_or_else(|| SeqNumber::new(self.rng.next_u32()))
    }

    /// Use `isn` for the next connection this endpoint starts (tests of the sequence wrap).
    #[doc(hidden)]
    pub fn set_next_isn(&mut self, isn: SeqNumber) {
        self.forced_isn = Some(isn);
    }
}

fn respond(remote: SocketAddr, dst: SocketId, reply: HandshakeRepr, buf: &mut Vec<u8>) -> Transmit {
    let start = buf.len();
    Packet::Control(ControlRepr {
        timestamp: Timestamp(0),
        dst,
        body: ControlBody::Handshake(reply),
    })
    .emit(buf);
    Transmit {
        destination: remote,
        size: buf.len() - start,
    }
}
