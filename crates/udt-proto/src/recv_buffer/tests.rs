//! Receive buffer tests: stream reassembly, message delivery, drops, window, wrap.

use proptest::prelude::*;

use super::*;

const MAX: u32 = SeqNumber::MAX;

fn s(v: u32) -> SeqNumber {
    SeqNumber::new(v)
}

fn stream_meta() -> PacketMeta {
    PacketMeta::solo(MsgNumber::new(1), false)
}

fn meta(msg: u32, first: bool, last: bool, in_order: bool) -> PacketMeta {
    PacketMeta {
        msg: MsgNumber::new(msg),
        first,
        last,
        in_order,
    }
}

/// Inserts a message of `parts` starting at `seq`; returns the next seq.
fn insert_msg(
    buf: &mut RecvBuffer,
    seq: SeqNumber,
    msg: u32,
    in_order: bool,
    parts: &[&[u8]],
) -> SeqNumber {
    for (i, part) in parts.iter().enumerate() {
        let m = meta(msg, i == 0, i + 1 == parts.len(), in_order);
        assert_eq!(buf.insert(seq + i as u32, m, part), Insert::Accepted);
    }
    seq + parts.len() as u32
}

fn read_msg(buf: &mut RecvBuffer) -> Option<Vec<u8>> {
    let mut out = [0u8; 256];
    let (copied, len) = buf.read_message(&mut out)?;
    assert_eq!(copied, len);
    Some(out[..copied].to_vec())
}

#[test]
fn stream_reads_only_acknowledged_bytes() {
    let mut buf = RecvBuffer::new(Mode::Stream, 16, s(100));
    assert_eq!(
        buf.insert(s(101), stream_meta(), b"world"),
        Insert::Accepted
    );
    assert_eq!(
        buf.insert(s(100), stream_meta(), b"hello "),
        Insert::Accepted
    );
    assert_eq!(
        buf.insert(s(100), stream_meta(), b"hello "),
        Insert::Duplicate
    );
    let mut out = [0u8; 32];
    assert_eq!(buf.read(&mut out), 0, "nothing acknowledged yet");
    buf.set_ack_point(s(101));
    assert_eq!(buf.readable_bytes(), 6);
    assert_eq!(buf.read(&mut out[..4]), 4);
    assert_eq!(&out[..4], b"hell");
    assert_eq!(buf.readable_bytes(), 2);
    buf.set_ack_point(s(102));
    assert_eq!(buf.read(&mut out), 7);
    assert_eq!(&out[..7], b"o world");
    assert_eq!(buf.read_position(), s(102));
    assert!(buf.is_empty());
    buf.set_ack_point(s(90));
    assert_eq!(buf.ack_point(), s(102), "ack never regresses");
}

#[test]
fn window_and_available_accounting() {
    let mut buf = RecvBuffer::new(Mode::Stream, 8, s(0));
    assert_eq!(buf.available_pkts(), 7);
    // Offsets 0..7 from the ACK point fit; 7 does not.
    assert_eq!(buf.insert(s(7), stream_meta(), b"x"), Insert::OutOfWindow);
    assert_eq!(buf.insert(s(6), stream_meta(), b"x"), Insert::Accepted);
    for i in 0..3 {
        buf.insert(s(i), stream_meta(), b"ab");
    }
    buf.set_ack_point(s(3));
    assert_eq!(buf.available_pkts(), 4);
    assert_eq!(
        buf.insert(s(2), stream_meta(), b"x"),
        Insert::OutOfWindow,
        "already acked"
    );
    assert_eq!(buf.insert(s(7), stream_meta(), b"x"), Insert::OutOfWindow);
    assert_eq!(buf.insert(s(5), stream_meta(), b"x"), Insert::Accepted);
    let mut out = [0u8; 3];
    assert_eq!(buf.read(&mut out), 3);
    assert_eq!(buf.available_pkts(), 5, "one whole packet consumed");
    let mut out = [0u8; 10];
    assert_eq!(buf.read(&mut out), 3);
    assert_eq!(buf.available_pkts(), 7);
    assert_eq!(buf.insert(s(9), stream_meta(), b"x"), Insert::Accepted);
    assert!(!buf.is_empty());
}

#[test]
fn stream_wraps_at_2_pow_31() {
    let mut buf = RecvBuffer::new(Mode::Stream, 16, s(MAX - 1));
    for (i, part) in [&b"ab"[..], b"cd", b"ef", b"gh"].iter().enumerate().rev() {
        assert_eq!(
            buf.insert(s(MAX - 1) + i as u32, stream_meta(), part),
            Insert::Accepted
        );
    }
    buf.set_ack_point(s(2));
    let mut out = [0u8; 16];
    assert_eq!(buf.read(&mut out), 8);
    assert_eq!(&out[..8], b"abcdefgh");
    assert_eq!(buf.read_position(), s(2));
}

#[test]
fn in_order_messages_wait_for_the_ack_point() {
    let mut buf = RecvBuffer::new(Mode::Message, 32, s(10));
    let next = insert_msg(&mut buf, s(10), 1, true, &[b"ab", b"cd", b"e"]);
    insert_msg(&mut buf, next, 2, true, &[b"solo"]);
    assert!(!buf.has_message());
    buf.set_ack_point(s(12));
    assert!(!buf.has_message(), "message 1 not fully acknowledged");
    buf.set_ack_point(s(14));
    assert!(buf.has_message());
    assert_eq!(read_msg(&mut buf).as_deref(), Some(&b"abcde"[..]));
    // Truncated read: the rest of the message is discarded.
    let mut small = [0u8; 2];
    assert_eq!(buf.read_message(&mut small), Some((2, 4)));
    assert_eq!(&small, b"so");
    assert_eq!(buf.read_message(&mut small), None);
    assert!(buf.is_empty());
    assert_eq!(buf.readable_bytes(), 0);
}

#[test]
fn out_of_order_messages_bypass_the_ack_point() {
    let mut buf = RecvBuffer::new(Mode::Message, 32, s(0));
    // Message 1 (in order) at 0..=1 misses packet 1; message 2 (O = 0) at 2..=3 is whole.
    buf.insert(s(0), meta(1, true, false, true), b"a1");
    buf.insert(s(3), meta(2, false, true, false), b"b2");
    assert!(!buf.has_message());
    buf.insert(s(2), meta(2, true, false, false), b"b1");
    assert!(buf.has_message());
    assert_eq!(read_msg(&mut buf).as_deref(), Some(&b"b1b2"[..]));
    assert!(!buf.has_message());
    // A late duplicate of a consumed packet is a duplicate.
    assert_eq!(
        buf.insert(s(3), meta(2, false, true, false), b"b2"),
        Insert::Duplicate
    );
    buf.insert(s(1), meta(1, false, true, true), b"a2");
    buf.set_ack_point(s(4));
    assert_eq!(read_msg(&mut buf).as_deref(), Some(&b"a1a2"[..]));
    // The consumed slots of message 2 are skipped.
    assert_eq!(read_msg(&mut buf), None);
    assert_eq!(buf.read_position(), s(4));
    assert!(buf.is_empty());
}

#[test]
fn out_of_order_message_completed_in_order_is_read_once() {
    let mut buf = RecvBuffer::new(Mode::Message, 32, s(0));
    insert_msg(&mut buf, s(0), 7, false, &[b"x", b"y"]);
    buf.set_ack_point(s(2));
    assert_eq!(read_msg(&mut buf).as_deref(), Some(&b"xy"[..]));
    assert!(!buf.has_message());
    assert_eq!(read_msg(&mut buf), None);
}

#[test]
fn dropped_message_is_skipped() {
    let mut buf = RecvBuffer::new(Mode::Message, 32, s(MAX - 2));
    let m2_start = insert_msg(&mut buf, s(MAX - 2), 1, true, &[b"one"]);
    // Message 2 spans MAX-1..=1; only its first and last packets arrived.
    buf.insert(m2_start, meta(2, true, false, true), b"t1");
    buf.insert(m2_start + 3u32, meta(2, false, true, true), b"t4");
    insert_msg(&mut buf, m2_start + 4u32, 3, true, &[b"three"]);
    // 4.11 style drop range: expired seq .. one past the end (covers message 3's packet).
    buf.drop_message(MsgNumber::new(2), m2_start, m2_start + 4u32);
    // The connection moves the ACK point past the hole.
    buf.set_ack_point(m2_start + 5u32);
    assert_eq!(read_msg(&mut buf).as_deref(), Some(&b"one"[..]));
    assert_eq!(read_msg(&mut buf).as_deref(), Some(&b"three"[..]));
    assert_eq!(read_msg(&mut buf), None);
    assert!(buf.is_empty());
    assert_eq!(buf.read_position(), s(3));
}

#[test]
fn broken_message_without_drop_request_is_discarded() {
    let mut buf = RecvBuffer::new(Mode::Message, 32, s(0));
    // The first packet of message 1 never arrives but the ACK point moves past it (as after
    // a drop request whose range the receiver applied): the tail is discarded.
    buf.insert(s(1), meta(1, false, true, true), b"tail");
    insert_msg(&mut buf, s(2), 2, true, &[b"ok"]);
    buf.set_ack_point(s(3));
    assert_eq!(read_msg(&mut buf).as_deref(), Some(&b"ok"[..]));
    assert!(buf.is_empty());
    assert_eq!(buf.readable_bytes(), 0);
}

#[test]
fn drop_of_unrelated_range_is_harmless() {
    let mut buf = RecvBuffer::new(Mode::Message, 8, s(5));
    insert_msg(&mut buf, s(5), 1, true, &[b"a", b"b"]);
    buf.drop_message(MsgNumber::new(9), s(0), s(100));
    buf.drop_message(MsgNumber::new(1), s(50), s(40));
    buf.drop_message(MsgNumber::new(1), s(0), s(3));
    buf.set_ack_point(s(7));
    assert_eq!(read_msg(&mut buf).as_deref(), Some(&b"ab"[..]));
}

proptest! {
    /// Packets arrive shuffled and duplicated; the connection acknowledges the contiguous
    /// prefix as it grows; the application reads with random buffer sizes.
    #[test]
    fn stream_reassembles_shuffled_duplicated_packets(
        isn in prop_oneof![Just(MAX - 20), 0..=MAX],
        sizes in prop::collection::vec(1usize..40, 1..60),
        order_seed in prop::collection::vec(any::<prop::sample::Index>(), 1..200),
        read_sizes in prop::collection::vec(1usize..64, 1..50),
    ) {
        let mut payloads = Vec::new();
        let mut expected = Vec::new();
        for (i, &size) in sizes.iter().enumerate() {
            let p: Vec<u8> = (0..size).map(|j| (i * 31 + j) as u8).collect();
            expected.extend_from_slice(&p);
            payloads.push(p);
        }
        let n = payloads.len();
        // Arrival order: random picks (duplicates likely), then everything once more.
        let arrivals: Vec<usize> = order_seed.iter().map(|ix| ix.index(n)).chain((0..n).rev()).collect();
        let mut buf = RecvBuffer::new(Mode::Stream, n as u32 + 1, s(isn));
        let mut received = vec![false; n];
        let mut contiguous = 0;
        let mut out = Vec::new();
        let mut reads = read_sizes.iter().cycle();
        for &i in &arrivals {
            let result = buf.insert(s(isn) + i as u32, stream_meta(), &payloads[i]);
            let want = if i < contiguous {
                Insert::OutOfWindow
            } else if received[i] {
                Insert::Duplicate
            } else {
                Insert::Accepted
            };
            prop_assert_eq!(result, want);
            received[i] = true;
            while contiguous < n && received[contiguous] {
                contiguous += 1;
            }
            buf.set_ack_point(s(isn) + contiguous as u32);
            let mut chunk = vec![0u8; *reads.next().unwrap()];
            let got = buf.read(&mut chunk);
            out.extend_from_slice(&chunk[..got]);
        }
        let mut rest = vec![0u8; expected.len()];
        let got = buf.read(&mut rest);
        out.extend_from_slice(&rest[..got]);
        prop_assert_eq!(out, expected);
        prop_assert!(buf.is_empty());
        prop_assert_eq!(buf.available_pkts(), n as u32);
    }

    /// Messages with random O bits arrive shuffled; every message comes out exactly once and
    /// whole, in-order ones in order.
    #[test]
    fn messages_come_out_whole_and_once(
        isn in prop_oneof![Just(MAX - 20), 0..=MAX],
        msgs in prop::collection::vec((1usize..5, any::<bool>()), 1..20),
        order in prop::collection::vec(any::<prop::sample::Index>(), 0..100),
    ) {
        let mut packets = Vec::new();
        for (m, &(pkts, in_order)) in msgs.iter().enumerate() {
            for p in 0..pkts {
                let meta = meta(m as u32 + 1, p == 0, p + 1 == pkts, in_order);
                packets.push((meta, vec![m as u8, p as u8]));
            }
        }
        let n = packets.len();
        let arrivals: Vec<usize> = order.iter().map(|ix| ix.index(n)).chain(0..n).collect();
        let mut buf = RecvBuffer::new(Mode::Message, n as u32 + 1, s(isn));
        let mut received = vec![false; n];
        let mut contiguous = 0;
        let mut delivered = Vec::new();
        for &i in &arrivals {
            let (meta, ref payload) = packets[i];
            buf.insert(s(isn) + i as u32, meta, payload);
            received[i] = true;
            while contiguous < n && received[contiguous] {
                contiguous += 1;
            }
            buf.set_ack_point(s(isn) + contiguous as u32);
            while let Some(m) = read_msg(&mut buf) {
                delivered.push(m);
            }
        }
        prop_assert!(buf.is_empty());
        let mut ids: Vec<u8> = delivered.iter().map(|m| m[0]).collect();
        for m in &delivered {
            let id = m[0] as usize;
            let pkts = msgs[id].0;
            let want: Vec<u8> = (0..pkts).flat_map(|p| [id as u8, p as u8]).collect();
            prop_assert_eq!(m, &want);
        }
        let in_order_ids: Vec<u8> = ids.iter().copied().filter(|&id| msgs[id as usize].1).collect();
        prop_assert!(in_order_ids.windows(2).all(|w| w[0] < w[1]));
        ids.sort_unstable();
        prop_assert_eq!(ids, (0..msgs.len() as u8).collect::<Vec<_>>());
    }
}

/// A payload inside its owner is kept as a slice of it until read; one outside is copied,
/// and both read back the same.
#[test]
fn shared_payloads_hold_their_owner_until_read() {
    let mut buf = RecvBuffer::new(Mode::Stream, 16, s(0));
    let owner = Bytes::from(vec![1u8; 48]);
    assert_eq!(
        buf.insert_shared(s(0), stream_meta(), &owner[16..48], Some(&owner)),
        Insert::Accepted
    );
    let elsewhere = [2u8; 8];
    assert_eq!(
        buf.insert_shared(s(1), stream_meta(), &elsewhere, Some(&owner)),
        Insert::Accepted
    );
    assert!(!owner.is_unique(), "the first packet holds a slice");
    buf.set_ack_point(s(2));
    let mut out = [0u8; 64];
    assert_eq!(buf.read(&mut out[..20]), 20);
    assert!(!owner.is_unique(), "a partly read packet is still held");
    assert_eq!(buf.read(&mut out[20..]), 20);
    assert_eq!(&out[..40], [[1u8; 32].as_slice(), &[2u8; 8]].concat());
    assert!(owner.is_unique(), "let go once read");
}

/// Chunks come out as shared slices (a packet cut by `max` in two pieces), copied packets
/// whole, and together they read exactly the stream `read` would.
#[test]
fn chunks_hand_over_the_stream_without_copying_shared_packets() {
    let mut buf = RecvBuffer::new(Mode::Stream, 16, s(0));
    let owner = Bytes::from((0..=255u8).collect::<Vec<u8>>());
    buf.insert_shared(s(0), stream_meta(), &owner[0..100], Some(&owner));
    buf.insert_shared(s(1), stream_meta(), &[7u8; 50], None);
    buf.insert_shared(s(2), stream_meta(), &owner[100..256], Some(&owner));
    buf.set_ack_point(s(2));
    let mut out = Vec::new();
    assert_eq!(buf.read_chunks(&mut out, 60), 60);
    assert_eq!(buf.read_chunks(&mut out, 1000), 90, "up to the ACK point");
    assert_eq!(buf.readable_bytes(), 0);
    buf.set_ack_point(s(3));
    assert_eq!(buf.read_chunks(&mut out, 1000), 156);
    let lens: Vec<usize> = out.iter().map(Bytes::len).collect();
    assert_eq!(lens, [60, 40, 50, 156]);
    assert_eq!(
        out[0].as_ptr(),
        owner.as_ptr(),
        "a slice of the owner, not a copy"
    );
    assert_eq!(out[3].as_ptr(), owner[100..].as_ptr());
    let stream: Vec<u8> = out.concat();
    let expect = [&owner[..100], &[7u8; 50], &owner[100..]].concat();
    assert_eq!(stream, expect);
    assert!(buf.is_empty());
    drop(out);
    assert!(owner.is_unique());
}

/// Copied packets (datagrams the runtime did not lend) go into one arena, back to back, and are
/// read out as slices of it: no second copy for a reader of chunks.
#[test]
fn copied_packets_share_an_arena_that_chunks_hand_over() {
    let mut buf = RecvBuffer::new(Mode::Stream, 16, s(0));
    for (i, fill) in [1u8, 2, 3].into_iter().enumerate() {
        buf.insert(s(i as u32), stream_meta(), &[fill; 10]);
    }
    buf.set_ack_point(s(3));
    let mut out = Vec::new();
    assert_eq!(buf.read_chunks(&mut out, 25), 25);
    assert_eq!(buf.read_chunks(&mut out, 25), 5);
    let lens: Vec<usize> = out.iter().map(Bytes::len).collect();
    assert_eq!(lens, [10, 10, 5, 5]);
    let stream: Vec<u8> = out.concat();
    assert_eq!(stream, [[1u8; 10], [2; 10], [3; 10]].concat());
    let base = out[0].as_ptr() as usize;
    let offsets: Vec<usize> = out.iter().map(|c| c.as_ptr() as usize - base).collect();
    assert_eq!(offsets, [0, 10, 20, 25], "one arena, packets back to back");
    assert_eq!(buf.arena.capacity(), 0, "an empty buffer keeps no arena");
    buf.insert(s(3), stream_meta(), &[4; 10]);
    assert!(buf.arena.capacity() > 0);
}

/// A full arena is replaced, not grown: packets already handed out keep theirs, and a
/// payload larger than an arena gets one of its own size.
#[test]
fn a_full_arena_is_replaced_by_a_fresh_one() {
    let mut buf = RecvBuffer::new(Mode::Stream, 256, s(0));
    let packet = [9u8; 1456];
    let fit = ARENA_BYTES / packet.len();
    for i in 0..=fit {
        buf.insert(s(i as u32), stream_meta(), &packet);
    }
    let big = vec![4u8; ARENA_BYTES + 1];
    buf.insert(s(fit as u32 + 1), stream_meta(), &big);
    buf.set_ack_point(s(fit as u32 + 2));
    let mut out = Vec::new();
    let total = (fit + 1) * packet.len() + big.len();
    assert_eq!(buf.read_chunks(&mut out, usize::MAX), total);
    let base = out[0].as_ptr() as usize;
    let last_of_first = out[fit - 1].as_ptr() as usize;
    assert_eq!(
        last_of_first - base,
        (fit - 1) * packet.len(),
        "the first arena"
    );
    let next = out[fit].as_ptr() as usize;
    assert!(
        next < base || next >= base + ARENA_BYTES,
        "the packet that did not fit is in another arena"
    );
    assert_eq!(out[fit + 1].len(), ARENA_BYTES + 1);
    assert!(out[..=fit].iter().all(|c| c[..] == packet[..]));
    assert!(out[fit + 1].iter().all(|&b| b == 4));
}
