//! The connection handshake: SYN cookies for listeners, and the caller and rendezvous state
//! machines, as 4.11 runs them (`shared/udt-protocol.md` §2.3–§2.7).
//!
//! Client/server is four messages: request (req 1, cookie 0) → the listener echoes it with a
//! cookie → the request again with req −1 and that cookie → the response (req −1, the client's
//! ISN, min MSS, a new server socket id). The listener keeps no state until the cookie checks
//! out, so a flood of requests costs it nothing but the replies.
//!
//! Rendezvous: both sides send req 0; a side that hears the other switches to −1; a side whose
//! own and peer's types are both non-zero is connected; connected sides answer stray handshakes
//! with −2.

use std::hash::{Hash, Hasher};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use crate::config::{MAX_MSS, MIN_MSS};
use crate::seq::{SeqNumber, SocketId};
use crate::time::Instant;
use crate::wire::{peer_ip_words, HandshakeRepr, ReqType, SocketType};

/// The only UDT version on the wire.
pub(crate) const UDT_VERSION: u32 = 4;
/// How often an unanswered connection request is sent again (4.11: 250 ms).
pub(crate) const REQUEST_RESEND: Duration = Duration::from_millis(250);
/// How long a cookie stays valid: the minute it was made in, and the one after (4.11 means
/// to allow both but, through a bug, accepts only the current one).
const COOKIE_PERIOD_US: u64 = 60_000_000;

/// Makes and checks SYN cookies: a keyed hash of the client's address and the minute.
#[derive(Debug, Clone)]
pub(crate) struct CookieKey {
    secret: [u64; 2],
}

impl CookieKey {
    /// A key from caller-provided randomness (a CSPRNG in the runtime, a seed in tests).
    pub(crate) fn new(secret: [u64; 2]) -> Self {
        Self { secret }
    }

    /// The cookie for `remote` at time `now`.
    pub(crate) fn cookie(&self, now: Instant, remote: SocketAddr) -> u32 {
        self.cookie_for_period(now.as_micros() / COOKIE_PERIOD_US, remote)
    }

    /// Whether `cookie` was made for `remote` this minute or the previous one.
    pub(crate) fn verify(&self, now: Instant, remote: SocketAddr, cookie: u32) -> bool {
        let period = now.as_micros() / COOKIE_PERIOD_US;
        self.cookie_for_period(period, remote) == cookie
            || (period > 0 && self.cookie_for_period(period - 1, remote) == cookie)
    }

    fn cookie_for_period(&self, period: u64, remote: SocketAddr) -> u32 {
        // SipHash (std's DefaultHasher) keyed by mixing the secret in first. Not a MAC
        // standard, but an attacker who cannot see the secret cannot predict the value, which
        // is all a SYN cookie needs.
        let mut h = std::hash::DefaultHasher::new();
        self.secret.hash(&mut h);
        remote.hash(&mut h);
        period.hash(&mut h);
        let v = h.finish();
        (v ^ (v >> 32)) as u32
    }
}

/// Parameters both sides settle on when the handshake completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Negotiated {
    /// Peer's socket id (destination of everything we send).
    pub peer_id: SocketId,
    /// MSS both sides use.
    pub mss: u32,
    /// The peer's advertised flow window (packets): our initial flow window.
    pub peer_window: u32,
    /// First sequence number we send.
    pub send_isn: SeqNumber,
    /// First sequence number we expect from the peer.
    pub recv_isn: SeqNumber,
    /// The round trip of the request that completed the handshake, when it is unambiguous
    /// (that request went out once): the connection's first RTT sample.
    pub rtt: Option<Duration>,
}

/// Why a handshake failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HandshakeFailure {
    /// The listener answered 1002 (version or type mismatch, or backlog full).
    Rejected,
    /// The response did not echo our ISN (4.11 ESECFAIL).
    IsnMismatch,
}

/// What we learned from a handshake received while connecting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Progress {
    /// Nothing changed; ignore.
    Ignored,
    /// Send our (updated) request now.
    Resend,
    /// Connected with these parameters; `reply` says whether to answer the peer once more
    /// (rendezvous: so the peer completes too).
    Connected(Negotiated, bool),
    /// The attempt failed.
    Failed(HandshakeFailure),
}

/// Our side of an outgoing handshake (caller or rendezvous).
#[derive(Debug, Clone)]
pub(crate) struct Connector {
    request: HandshakeRepr,
    rendezvous: bool,
    /// Peer's socket id once a handshake told it (rendezvous sends to it from then on).
    peer_id: SocketId,
    /// Rendezvous: the peer's last handshake, used to complete on data arrival.
    peer: Option<HandshakeRepr>,
    next_resend: Instant,
    deadline: Instant,
    /// When the current request was first sent, and how many times it has been: an answer
    /// to a request sent once times a round trip (Karn: a resent one's answer could be to
    /// either copy).
    sent: Option<(Instant, u32)>,
}

impl Connector {
    /// Start connecting. `request` carries our ISN, MSS, window, id and the peer's address.
    pub(crate) fn new(
        now: Instant,
        request: HandshakeRepr,
        rendezvous: bool,
        timeout: Duration,
    ) -> Self {
        Self {
            request,
            rendezvous,
            peer_id: SocketId::NONE,
            peer: None,
            next_resend: now,
            deadline: now + timeout,
            sent: None,
        }
    }

    /// Builds the first request of a caller or rendezvous side.
    pub(crate) fn request(
        mode_type: SocketType,
        isn: SeqNumber,
        mss: u32,
        window: u32,
        local_id: SocketId,
        remote_ip: IpAddr,
        rendezvous: bool,
    ) -> HandshakeRepr {
        HandshakeRepr {
            version: UDT_VERSION,
            socket_type: mode_type,
            isn,
            mss,
            flow_window: window,
            req_type: if rendezvous {
                ReqType::RENDEZVOUS
            } else {
                ReqType::REGULAR
            },
            socket_id: local_id,
            cookie: 0,
            peer_ip: peer_ip_words(remote_ip),
        }
    }

    /// The handshake to send now and where (peer id, 0 until known).
    pub(crate) fn current_request(&self) -> (SocketId, &HandshakeRepr) {
        (self.peer_id, &self.request)
    }

    /// When the request should be sent again, or the attempt given up.
    pub(crate) fn next_timeout(&self) -> Instant {
        self.next_resend.min(self.deadline)
    }

    /// Whether the attempt has run out of time.
    pub(crate) fn timed_out(&self, now: Instant) -> bool {
        now >= self.deadline
    }

    /// Whether the request is due to be sent again; if so, re-arms the resend timer.
    pub(crate) fn take_resend(&mut self, now: Instant) -> bool {
        if now >= self.next_resend {
            self.next_resend = now + REQUEST_RESEND;
            self.note_sent(now);
            true
        } else {
            false
        }
    }

    /// The current request goes out at `now` (the caller sends what it is told to at once).
    fn note_sent(&mut self, now: Instant) {
        self.sent = Some(match self.sent {
            Some((first, times)) => (first, times.saturating_add(1)),
            None => (now, 1),
        });
    }

    /// The current request changed and goes out at `now`.
    fn note_new_request(&mut self, now: Instant) {
        self.sent = None;
        self.note_sent(now);
    }

    /// The round trip of the current request, answered at `now`, if it went out once.
    fn round_trip(&self, now: Instant) -> Option<Duration> {
        match self.sent {
            Some((at, 1)) => Some(now - at),
            _ => None,
        }
    }

    /// Process a handshake from the peer.
    pub(crate) fn on_handshake(&mut self, hs: &HandshakeRepr, now: Instant) -> Progress {
        if self.rendezvous {
            self.on_rendezvous(hs, now)
        } else {
            self.on_caller(hs, now)
        }
    }

    fn on_caller(&mut self, hs: &HandshakeRepr, now: Instant) -> Progress {
        if hs.req_type == ReqType::REGULAR {
            // Step 2: the listener's cookie echo. Answer with req −1 and the cookie, at once.
            self.request.cookie = hs.cookie;
            self.request.req_type = ReqType::RESPONSE;
            self.next_resend = now + REQUEST_RESEND;
            self.note_new_request(now);
            return Progress::Resend;
        }
        if hs.req_type == ReqType::REJECTED {
            return Progress::Failed(HandshakeFailure::Rejected);
        }
        if hs.req_type != ReqType::RESPONSE
            || hs.socket_id == SocketId::NONE
            || !mss_is_valid(hs.mss)
        {
            return Progress::Ignored;
        }
        // UDT4: a blocking 4.11 client aborts when the ISN is not its own (ESECFAIL).
        if hs.isn != self.request.isn {
            return Progress::Failed(HandshakeFailure::IsnMismatch);
        }
        Progress::Connected(
            Negotiated {
                peer_id: hs.socket_id,
                mss: hs.mss.min(self.request.mss),
                peer_window: hs.flow_window,
                send_isn: self.request.isn,
                recv_isn: self.request.isn,
                rtt: self.round_trip(now),
            },
            false,
        )
    }

    fn on_rendezvous(&mut self, hs: &HandshakeRepr, now: Instant) -> Progress {
        // A regular client must not talk to a rendezvous socket (4.11 ignores it).
        if hs.req_type == ReqType::REGULAR || hs.req_type == ReqType::REJECTED {
            return Progress::Ignored;
        }
        if hs.socket_id == SocketId::NONE || !mss_is_valid(hs.mss) {
            return Progress::Ignored;
        }
        self.peer_id = hs.socket_id;
        self.peer = Some(*hs);
        if self.request.req_type == ReqType::RENDEZVOUS || hs.req_type == ReqType::RENDEZVOUS {
            self.request.req_type = ReqType::RESPONSE;
            self.next_resend = now + REQUEST_RESEND;
            return Progress::Resend;
        }
        // Both non-zero: connected. Answer once more so a peer still at 0 completes.
        Progress::Connected(self.rendezvous_params(hs), true)
    }

    /// Rendezvous: data or a keep-alive from the peer after at least one handshake completes
    /// the connection with the recorded handshake (4.11 §2.7).
    pub(crate) fn complete_on_traffic(&self) -> Option<Negotiated> {
        if !self.rendezvous {
            return None;
        }
        self.peer.as_ref().map(|hs| self.rendezvous_params(hs))
    }

    fn rendezvous_params(&self, hs: &HandshakeRepr) -> Negotiated {
        Negotiated {
            peer_id: hs.socket_id,
            // UDT4 adopts the peer's MSS; we take the smaller of the two so neither side ever
            // sends a datagram the other did not size its buffers for.
            mss: hs.mss.min(self.request.mss),
            peer_window: hs.flow_window,
            send_isn: self.request.isn,
            recv_isn: hs.isn,
            // Both sides send on their own timers: no request is answered as such.
            rtt: None,
        }
    }
}

/// Whether a handshake's MSS is one a connection can run with: room for the IP/UDP and UDT
/// headers and a 48-byte handshake body (4.11's minimum, 76), at most a UDP datagram.
/// Anything else from the network is refused rather than trusted into size arithmetic.
pub(crate) fn mss_is_valid(mss: u32) -> bool {
    (MIN_MSS..=MAX_MSS).contains(&mss)
}

/// The listener's step-2 reply: the request echoed with the cookie filled in.
pub(crate) fn cookie_echo(request: &HandshakeRepr, cookie: u32) -> HandshakeRepr {
    HandshakeRepr { cookie, ..*request }
}

/// The listener's rejection: the request echoed with req type 1002.
pub(crate) fn rejection(request: &HandshakeRepr) -> HandshakeRepr {
    HandshakeRepr {
        req_type: ReqType::REJECTED,
        ..*request
    }
}

/// The server's step-4 response for a new (or repeated) connection.
pub(crate) fn server_response(
    request: &HandshakeRepr,
    server_id: SocketId,
    mss: u32,
    window: u32,
    client_ip: IpAddr,
) -> HandshakeRepr {
    HandshakeRepr {
        version: request.version,
        socket_type: request.socket_type,
        isn: request.isn,
        mss,
        flow_window: window,
        req_type: ReqType::RESPONSE,
        socket_id: server_id,
        cookie: request.cookie,
        peer_ip: peer_ip_words(client_ip),
    }
}

/// A connected socket's answer to a stray handshake (4.11 re-response: version, type, cookie
/// and peer address zero).
pub(crate) fn re_response(
    isn: SeqNumber,
    mss: u32,
    window: u32,
    req_type: ReqType,
    local_id: SocketId,
) -> HandshakeRepr {
    HandshakeRepr {
        version: 0,
        socket_type: SocketType(0),
        isn,
        mss,
        flow_window: window,
        req_type,
        socket_id: local_id,
        cookie: 0,
        peer_ip: [0; 4],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([192, 0, 2, 10], port))
    }

    #[test]
    fn cookie_is_stable_within_a_minute_and_keyed() {
        let k = CookieKey::new([1, 2]);
        let t = Instant::from_micros(5_000_000);
        let c = k.cookie(t, addr(9000));
        assert!(k.verify(t + Duration::from_secs(10), addr(9000), c));
        assert!(!k.verify(t, addr(9001), c));
        assert_ne!(CookieKey::new([3, 4]).cookie(t, addr(9000)), c);
    }

    #[test]
    fn cookie_survives_one_minute_boundary_but_not_two() {
        let k = CookieKey::new([9, 9]);
        let t = Instant::from_micros(59_000_000);
        let c = k.cookie(t, addr(1));
        assert!(k.verify(t + Duration::from_secs(2), addr(1), c));
        assert!(!k.verify(t + Duration::from_secs(62), addr(1), c));
    }

    fn request(rendezvous: bool) -> HandshakeRepr {
        Connector::request(
            SocketType::STREAM,
            SeqNumber::new(1000),
            1500,
            8192,
            SocketId(7),
            IpAddr::from([127, 0, 0, 1]),
            rendezvous,
        )
    }

    #[test]
    fn caller_runs_the_four_message_exchange() {
        let now = Instant::ZERO;
        let mut c = Connector::new(now, request(false), false, Duration::from_secs(3));
        let echo = cookie_echo(c.current_request().1, 0xdead_beef);
        assert_eq!(c.on_handshake(&echo, now), Progress::Resend);
        let (_, req) = c.current_request();
        assert_eq!((req.req_type, req.cookie), (ReqType::RESPONSE, 0xdead_beef));
        let resp = server_response(req, SocketId(99), 1400, 4096, IpAddr::from([127, 0, 0, 1]));
        match c.on_handshake(&resp, now) {
            Progress::Connected(n, false) => {
                assert_eq!(n.peer_id, SocketId(99));
                assert_eq!(n.mss, 1400);
                assert_eq!(n.peer_window, 4096);
                assert_eq!(n.send_isn, SeqNumber::new(1000));
                assert_eq!(n.recv_isn, SeqNumber::new(1000));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    /// The answer to a request sent once times the round trip; an answer to a resent request
    /// could be to either copy (Karn), so it gives none.
    #[test]
    fn caller_times_the_last_request_only_when_it_went_out_once() {
        let rtt = Duration::from_micros(60);
        let at = |us| Instant::from_micros(us);
        let respond = |c: &mut Connector, now| {
            let req = *c.current_request().1;
            let resp = server_response(&req, SocketId(99), 1500, 4096, IpAddr::from([1, 1, 1, 1]));
            match c.on_handshake(&resp, now) {
                Progress::Connected(n, false) => n.rtt,
                other => panic!("unexpected {other:?}"),
            }
        };
        // Sent once: the cookie echo at 1 ms, the answer 60 µs later.
        let mut c = Connector::new(at(0), request(false), false, Duration::from_secs(3));
        assert!(c.take_resend(at(0)));
        let echo = cookie_echo(c.current_request().1, 1);
        assert_eq!(c.on_handshake(&echo, at(1_000)), Progress::Resend);
        assert_eq!(respond(&mut c, at(1_000) + rtt), Some(rtt));
        // The request with the cookie resent after 250 ms: no sample.
        let mut c = Connector::new(at(0), request(false), false, Duration::from_secs(3));
        assert!(c.take_resend(at(0)));
        assert_eq!(c.on_handshake(&echo, at(1_000)), Progress::Resend);
        assert!(c.take_resend(at(251_000)));
        assert_eq!(respond(&mut c, at(251_000) + rtt), None);
    }

    #[test]
    fn caller_refuses_foreign_isn_and_rejection() {
        let now = Instant::ZERO;
        let mut c = Connector::new(now, request(false), false, Duration::from_secs(3));
        let mut resp = server_response(
            c.current_request().1,
            SocketId(5),
            1500,
            10,
            IpAddr::from([1, 1, 1, 1]),
        );
        resp.isn = SeqNumber::new(1);
        assert_eq!(
            c.on_handshake(&resp, now),
            Progress::Failed(HandshakeFailure::IsnMismatch)
        );
        let rej = rejection(c.current_request().1);
        assert_eq!(
            c.on_handshake(&rej, now),
            Progress::Failed(HandshakeFailure::Rejected)
        );
    }

    #[test]
    fn rendezvous_moves_0_to_minus1_then_connects() {
        let now = Instant::ZERO;
        let mut a = Connector::new(now, request(true), true, Duration::from_secs(30));
        let mut peer = request(true);
        peer.socket_id = SocketId(8);
        peer.isn = SeqNumber::new(555);
        assert_eq!(a.on_handshake(&peer, now), Progress::Resend);
        assert_eq!(a.current_request().0, SocketId(8));
        assert_eq!(a.current_request().1.req_type, ReqType::RESPONSE);
        peer.req_type = ReqType::RESPONSE;
        match a.on_handshake(&peer, now) {
            Progress::Connected(n, true) => {
                assert_eq!(n.send_isn, SeqNumber::new(1000));
                assert_eq!(n.recv_isn, SeqNumber::new(555));
            }
            other => panic!("unexpected {other:?}"),
        }
        let mut regular = peer;
        regular.req_type = ReqType::REGULAR;
        assert_eq!(a.on_handshake(&regular, now), Progress::Ignored);
    }

    #[test]
    fn resend_and_deadline_timers() {
        let now = Instant::ZERO;
        let mut c = Connector::new(now, request(false), false, Duration::from_secs(3));
        assert!(c.take_resend(now));
        assert!(!c.take_resend(now + Duration::from_millis(100)));
        assert!(c.take_resend(now + REQUEST_RESEND));
        assert!(!c.timed_out(now + Duration::from_millis(2999)));
        assert!(c.timed_out(now + Duration::from_secs(3)));
    }
}
