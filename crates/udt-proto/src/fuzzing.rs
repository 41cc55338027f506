//! Property bodies shared by the libFuzzer targets and the stable proptests (one property,
//! two drivers). Each function takes arbitrary bytes and panics on a property violation.
//!
//! The targets in the repository's `fuzz/` crate are one-line calls into this module (built
//! with `--cfg fuzzing`); `fuzzing/tests.rs` runs every body on random inputs under
//! `cargo test`, so CI exercises the same properties on stable. Bodies decode their input
//! with the total reader in `input.rs`: any byte string is a valid test case.

use std::fmt::Write as _;

use crate::wire::{self, ControlBody, LossListIter, Packet};

pub(crate) mod congestion_ops;
mod connection;
mod handshake;
mod input;
mod mux_input;
mod nak_loss_list;
mod support;
#[cfg(test)]
mod tests;

pub use congestion_ops::congestion_ops;
pub use connection::{connection, protected_connection};
pub use handshake::handshake;
pub use mux_input::mux_input;
pub use nak_loss_list::nak_loss_list;

/// The wire codec is total and self-consistent on arbitrary bytes:
/// - parsing never panics;
/// - the cheap demux helpers agree with the full parse;
/// - if the bytes parse, `emit` writes exactly `buffer_len` bytes and those parse back to the
///   same packet (`parse ∘ emit ∘ parse == parse`);
/// - `Display` never panics;
/// - the non-allocating loss-list decoder agrees with the NAK parse.
pub fn wire_packet(data: &[u8]) {
    let parsed = Packet::parse(data);
    assert_eq!(
        wire::peek_dst_socket(data).is_some(),
        data.len() >= wire::HEADER_LEN
    );
    let Ok(packet) = parsed else {
        return;
    };
    assert_eq!(wire::peek_dst_socket(data), Some(packet.dst_socket()));
    assert_eq!(
        wire::is_control(data),
        Some(matches!(packet, Packet::Control(_)))
    );

    let mut emitted = Vec::new();
    packet.emit(&mut emitted);
    assert_eq!(emitted.len(), packet.buffer_len(), "buffer_len mismatch");
    // Property (a panic is a finding): what `emit` writes parses.
    let reparsed = Packet::parse(&emitted).expect("emitted packet must parse");
    assert_eq!(reparsed, packet, "round trip changed the packet");

    // Emitting the re-parsed packet is byte-identical: emit output is canonical.
    let mut again = Vec::new();
    reparsed.emit(&mut again);
    assert_eq!(again, emitted);

    let mut line = String::new();
    // Cannot fail: `fmt::Write` for `String` never returns an error.
    write!(line, "{packet}").expect("formatting into a String cannot fail");
    assert!(!line.contains('\n'));

    if let Packet::Control(control) = &packet {
        if let ControlBody::Nak(nak) = &control.body {
            let body = data.get(wire::HEADER_LEN..).unwrap_or_default();
            // Property (a panic is a finding): the iterator accepts every body the parser took.
            let ranges: Result<Vec<_>, _> = LossListIter::new(body)
                .expect("parsed NAK has a body")
                .collect();
            assert_eq!(ranges.as_ref(), Ok(&nak.ranges));
        }
    }
}
