//! Stable drivers: every fuzz body on random inputs (the wire body also has structured
//! drivers in `wire/proptests.rs`).

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

proptest! {
    #[test]
    fn handshake_on_random_bytes(data in vec(any::<u8>(), 0..2_000)) {
        handshake(&data);
    }

    #[test]
    fn congestion_ops_on_random_bytes(data in vec(any::<u8>(), 0..3_000)) {
        congestion_ops(&data);
    }
}

#[test]
fn congestion_ops_on_degenerate_inputs() {
    congestion_ops(&[]);
    congestion_ops(&[1]);
    congestion_ops(&[0xFF; 4096]);
    congestion_ops(&[0x00; 4096]);
}

/// A NAK body from `(start, len)` pairs, so that the structured driver mostly produces valid
/// loss lists (random bytes rarely do).
fn nak_body(ranges: &[(u32, u32)]) -> Vec<u8> {
    let mut body = Vec::new();
    for &(start, len) in ranges {
        let first = start & 0x7FFF_FFFF;
        if len == 0 {
            body.extend_from_slice(&first.to_be_bytes());
        } else {
            body.extend_from_slice(&(first | 0x8000_0000).to_be_bytes());
            body.extend_from_slice(&((first + len) & 0x7FFF_FFFF).to_be_bytes());
        }
    }
    body
}

/// One encoded `nak_loss_list` operation: a NAK (tag 0) or any other op with random args.
fn nak_op() -> impl Strategy<Value = Vec<u8>> {
    let nak = (
        vec(
            (any::<u32>(), prop_oneof![Just(0u32), 0u32..50, 0u32..5000]),
            1..20,
        ),
        any::<bool>(),
    )
        .prop_map(|(ranges, reported)| {
            let mut body = nak_body(&ranges);
            body.truncate(255);
            let mut op = vec![0, body.len() as u8];
            op.extend_from_slice(&body);
            op.push(u8::from(reported));
            op
        });
    let other = (1u8..8, vec(any::<u8>(), 8)).prop_map(|(tag, args)| {
        let mut op = vec![tag];
        op.extend_from_slice(&args);
        op
    });
    prop_oneof![nak, other]
}

proptest! {
    #[test]
    fn nak_loss_list_on_random_bytes(data in vec(any::<u8>(), 0..2_000)) {
        nak_loss_list(&data);
    }

    #[test]
    fn nak_loss_list_on_valid_naks(
        raw: bool,
        capacity in prop_oneof![1u32..100, 1u32..100_000],
        una: u32,
        ops in vec(nak_op(), 0..60),
    ) {
        let mut data = vec![u8::from(raw)];
        data.extend_from_slice(&capacity.saturating_sub(1).to_le_bytes());
        data.extend_from_slice(&una.to_le_bytes());
        // Open a window first so folded ranges have room.
        data.extend_from_slice(&[2, 0xFF, 0xFF, 0, 0]);
        data.extend(ops.concat());
        nak_loss_list(&data);
    }
}

/// The committed seed corpora (`fuzz/seeds/<target>/`) replay on stable too, so a seed that
/// starts failing shows up in `cargo test`, not only in the nightly fuzz replay.
#[test]
fn seed_corpora_replay() {
    let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    type Body = fn(&[u8]);
    let bodies: [(&str, Body); 7] = [
        ("mux_input", mux_input),
        ("connection", connection),
        ("protected_connection", protected_connection),
        ("handshake", handshake),
        ("wire_packet", wire_packet),
        ("nak_loss_list", nak_loss_list),
        ("congestion_ops", congestion_ops),
    ];
    for (target, body) in bodies {
        let dir = seeds.join(target);
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let mut count = 0;
        for entry in entries {
            let data = std::fs::read(entry.expect("readable seed dir").path()).expect("seed");
            if target == "wire_packet" {
                assert!(Packet::parse(&data).is_ok(), "wire seeds are valid packets");
            }
            body(&data);
            count += 1;
        }
        assert!(count > 0, "no seeds for {target}");
    }
}

/// One encoded `connection` operation: weighted towards genuine traffic (writes, deliveries,
/// settling) so random cases get deep into a transfer, with injections and mutations mixed in.
fn connection_op() -> impl Strategy<Value = Vec<u8>> {
    let op = |tag: u8, args: Vec<u8>| {
        let mut out = vec![tag & 1, tag >> 1];
        out.extend_from_slice(&args);
        out
    };
    prop_oneof![
        2 => (0u8..2, vec(any::<u8>(), 3..80)).prop_map(move |(side, body)| {
            // inject: flags, u16 len, bytes
            let mut args = vec![body[0] & 3, body.len() as u8 - 3, 0];
            args.extend_from_slice(&body[3..]);
            op(side, args)
        }),
        3 => (0u8..2, any::<u8>()).prop_map(move |(side, n)| op(side | (2 << 1), vec![n])),
        1 => (0u8..2, any::<u8>()).prop_map(move |(side, n)| op(side | (4 << 1), vec![n])),
        2 => (0u8..2, vec(any::<u8>(), 12)).prop_map(move |(side, args)| op(side | (5 << 1), args)),
        1 => (0u8..2, any::<u8>()).prop_map(move |(side, n)| op(side | (6 << 1), vec![n])),
        2 => (0u8..2, any::<u16>()).prop_map(move |(side, us)| op(side | (7 << 1), us.to_le_bytes().to_vec())),
        2 => (0u8..2).prop_map(move |side| op(side | (8 << 1), vec![])),
        3 => (0u8..2, any::<u16>()).prop_map(move |(side, len)| op(side | (9 << 1), len.to_le_bytes().to_vec())),
        2 => (0u8..2, any::<u8>()).prop_map(move |(side, n)| op(side | (10 << 1), vec![n])),
        1 => (0u8..2).prop_map(move |side| op(side | (11 << 1), vec![0xC1])),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn connection_on_random_bytes(data in vec(any::<u8>(), 0..1_000)) {
        connection(&data);
    }

    #[test]
    fn protected_connection_on_structured_ops(seed: u16, ops in vec(connection_op(), 0..80)) {
        let mut data = seed.to_le_bytes().to_vec();
        data.extend(ops.concat());
        protected_connection(&data);
    }

    #[test]
    fn connection_on_structured_ops(seed: u16, ops in vec(connection_op(), 0..80)) {
        let mut data = seed.to_le_bytes().to_vec();
        data.extend(ops.concat());
        connection(&data);
    }
}

/// One encoded `mux_input` operation, weighted towards genuine traffic (deliveries, writes,
/// reads, time) so random cases reach established transfers, with strangers mixed in.
fn mux_op() -> impl Strategy<Value = Vec<u8>> {
    let op = |host: u8, tag: u8, args: Vec<u8>| {
        let mut out = vec![host, tag];
        out.extend_from_slice(&args);
        out
    };
    prop_oneof![
        2 => (vec(any::<u8>(), 4..120)).prop_map(move |b| {
            let mut args = vec![b[0], b.len() as u8 - 4, 0];
            args.extend_from_slice(&b[4..]);
            args.extend_from_slice(&[1, 0]);
            op(0, 0, args)
        }),
        1 => (vec(any::<u8>(), 10)).prop_map(move |args| op(0, 2, args)),
        4 => (0u8..3, any::<u8>()).prop_map(move |(h, n)| op(h, 3, vec![n, 1, 0, 1])),
        1 => (0u8..3, any::<u8>()).prop_map(move |(h, n)| op(h, 6, vec![n])),
        1 => (0u8..3, vec(any::<u8>(), 12)).prop_map(move |(h, args)| op(h, 7, args)),
        2 => (0u8..3, any::<u16>()).prop_map(move |(h, us)| op(h, 9, us.to_le_bytes().to_vec())),
        1 => (0u8..3, any::<u8>()).prop_map(move |(h, n)| op(h, 10, vec![n])),
        3 => (0u8..3, any::<u8>(), any::<u16>()).prop_map(move |(h, pick, len)| {
            let mut args = vec![pick];
            args.extend_from_slice(&len.to_le_bytes());
            op(h, 11, args)
        }),
        1 => (0u8..3).prop_map(move |h| op(h, 12, vec![])),
        1 => (0u8..3, any::<u8>()).prop_map(move |(h, pick)| op(h, 13, vec![pick])),
        2 => (0u8..3, any::<u8>()).prop_map(move |(h, n)| op(h, 14, vec![n])),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn mux_input_on_random_bytes(data in vec(any::<u8>(), 0..1_000)) {
        mux_input(&data);
    }

    #[test]
    fn mux_input_on_structured_ops(seed: u16, backlog: u8, ops in vec(mux_op(), 0..80)) {
        let mut data = seed.to_le_bytes().to_vec();
        data.push(backlog);
        data.extend(ops.concat());
        mux_input(&data);
    }
}
