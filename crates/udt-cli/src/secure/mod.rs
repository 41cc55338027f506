//! Keys and authenticated sessions for `udt serve` as a daemon: long-term key pairs
//! ([`keyfile`]), the server's list of admitted clients with their permissions
//! ([`authorized`]), the client's pinned server keys ([`known`]), and the Noise handshake that
//! turns a plain UDT connection into an authenticated, encrypted one ([`handshake`]).
//!
//! The handshake is Noise XX (X25519, ChaCha20-Poly1305, BLAKE2s) through `snow`, run in the
//! first bytes of the UDT stream: each side proves its long-term key, and the session secret
//! it yields keys the UDT connection's packet protection (`udt::UdtStream::start_protection`),
//! so everything after it (the file protocol) is encrypted and authenticated per packet.

pub mod authorized;
pub mod handshake;
pub mod keyfile;
pub mod known;

pub use authorized::{Access, AuthorizedKeys};
pub use keyfile::{KeyPair, PublicKey};
pub use known::{KnownServers, Pinned};
