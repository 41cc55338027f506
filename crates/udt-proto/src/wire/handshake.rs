//! The handshake body (control type 0): 12 big-endian words, exactly 48 bytes.
//!
//! ```text
//!  0 version        4 flow window     8..11 peer IP (see peer_ip_words)
//!  1 socket type    5 request type
//!  2 ISN            6 socket id
//!  3 MSS            7 SYN cookie
//! ```
//!
//! Parsing checks only the length (a 4.11 listener drops any other size, and a 4.11
//! connector would read stale bytes from a shorter one); version, socket type and request
//! type are kept as received so the connection code can decide (and reject with 1002).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::header::{body_word, put_word};
use super::Error;
use crate::seq::{SeqNumber, SocketId};

/// The socket type word. UDT4: 4.11 uses 1 = STREAM and 2 = DGRAM (the draft says 0/1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SocketType(pub u32);

impl SocketType {
    /// Byte stream (`SOCK_STREAM` in 4.11).
    pub const STREAM: Self = Self(1);
    /// Messages (`SOCK_DGRAM` in 4.11).
    pub const DGRAM: Self = Self(2);
}

/// The request ("connection") type word, a signed 32-bit value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReqType(pub i32);

impl ReqType {
    /// Client request (first request, and the listener's cookie echo).
    pub const REGULAR: Self = Self(1);
    /// Rendezvous request.
    pub const RENDEZVOUS: Self = Self(0);
    /// Response (and the client's second request, carrying the cookie).
    pub const RESPONSE: Self = Self(-1);
    /// Rendezvous re-response.
    pub const RENDEZVOUS_RESPONSE2: Self = Self(-2);
    /// Rejection (version or socket type mismatch, backlog full).
    pub const REJECTED: Self = Self(1002);
}

/// A handshake body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HandshakeRepr {
    /// UDT version; 4.11 sends 4.
    pub version: u32,
    /// Socket type (4.11 values).
    pub socket_type: SocketType,
    /// Initial sequence number. The wire word is 32 bits; it is stored through
    /// [`SeqNumber::new`], which drops bit 31 (4.11 only generates 31-bit ISNs).
    pub isn: SeqNumber,
    /// Maximum segment size in bytes, including the 28-byte IP/UDP header.
    pub mss: u32,
    /// Maximum flow window in packets.
    pub flow_window: u32,
    /// Request type.
    pub req_type: ReqType,
    /// The sender's own socket id (full 32-bit word).
    pub socket_id: SocketId,
    /// SYN cookie, opaque to the client.
    pub cookie: u32,
    /// The recipient's address as seen by the sender, as the four words of §1.8 (use
    /// [`peer_ip_words`] / [`peer_ip_from_words`]).
    pub peer_ip: [u32; 4],
}

impl HandshakeRepr {
    /// Length of the body on the wire.
    pub const BODY_LEN: usize = 48;

    /// Parses a handshake body; [`Error::BadLength`] unless it is exactly 48 bytes.
    pub fn parse(body: &[u8]) -> Result<Self, Error> {
        if body.len() != Self::BODY_LEN {
            return Err(Error::BadLength);
        }
        let mut words = [0u32; 12];
        for (index, word) in words.iter_mut().enumerate() {
            *word = body_word(body, index).ok_or(Error::BadLength)?;
        }
        Ok(Self::from_words(words))
    }

    fn from_words(w: [u32; 12]) -> Self {
        Self {
            version: w[0],
            socket_type: SocketType(w[1]),
            isn: SeqNumber::new(w[2]),
            mss: w[3],
            flow_window: w[4],
            // Reinterpreting the word as 4.11's signed int.
            req_type: ReqType(w[5] as i32),
            socket_id: SocketId(w[6]),
            cookie: w[7],
            peer_ip: [w[8], w[9], w[10], w[11]],
        }
    }

    /// The body length (always 48).
    pub fn buffer_len(&self) -> usize {
        Self::BODY_LEN
    }

    /// Appends the 48-byte body.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let words = [
            self.version,
            self.socket_type.0,
            self.isn.value(),
            self.mss,
            self.flow_window,
            self.req_type.0 as u32,
            self.socket_id.0,
            self.cookie,
            self.peer_ip[0],
            self.peer_ip[1],
            self.peer_ip[2],
            self.peer_ip[3],
        ];
        out.reserve(Self::BODY_LEN);
        for word in words {
            put_word(out, word);
        }
    }

    /// The peer-IP field decoded as an address of the given family.
    pub fn peer_addr(&self, ipv6: bool) -> IpAddr {
        peer_ip_from_words(self.peer_ip, ipv6)
    }
}

/// Encodes an address for the handshake's peer-IP field.
///
/// UDT4 ⚠: 4.11 keeps addresses as host-order words and byte-swaps each; on the
/// little-endian hosts it runs on, every word is the 4 address octets read little-endian.
/// So 127.0.0.1 appears as `01 00 00 7f` on the wire (words 9–11 zero), and for IPv6 each
/// group of 4 octets appears reversed.
pub fn peer_ip_words(ip: IpAddr) -> [u32; 4] {
    match ip {
        IpAddr::V4(v4) => [u32::from_le_bytes(v4.octets()), 0, 0, 0],
        IpAddr::V6(v6) => {
            let o = v6.octets();
            let group = |i: usize| u32::from_le_bytes([o[i], o[i + 1], o[i + 2], o[i + 3]]);
            [group(0), group(4), group(8), group(12)]
        }
    }
}

/// Decodes the peer-IP field (inverse of [`peer_ip_words`]); for IPv4 only word 0 is used.
pub fn peer_ip_from_words(words: [u32; 4], ipv6: bool) -> IpAddr {
    if !ipv6 {
        return IpAddr::V4(Ipv4Addr::from(words[0].to_le_bytes()));
    }
    let mut octets = [0u8; 16];
    for (chunk, word) in octets.chunks_exact_mut(4).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    IpAddr::V6(Ipv6Addr::from(octets))
}
