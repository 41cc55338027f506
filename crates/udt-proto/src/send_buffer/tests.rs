//! Send buffer tests: chunking, message fields, acknowledgement, TTL drop, wrap.

use super::*;

const MAX: u32 = SeqNumber::MAX;
const T0: Instant = Instant::ZERO;

fn s(v: u32) -> SeqNumber {
    SeqNumber::new(v)
}

/// Sends every unsent packet, returning (seq, meta, payload length) in order.
fn send_all(buf: &mut SendBuffer) -> Vec<(SeqNumber, PacketMeta, usize)> {
    let mut out = Vec::new();
    while let Some(seq) = buf.unsent() {
        let (meta, payload) = buf.packet(seq).expect("unsent packet is held");
        out.push((seq, meta, payload.len()));
        buf.mark_sent();
    }
    out
}

#[test]
fn stream_write_is_cut_into_payload_size_packets() {
    let mut buf = SendBuffer::new(10, 100);
    buf.set_base(s(1000));
    let data: Vec<u8> = (0..25).collect();
    assert_eq!(buf.write_stream(&data, T0), 25);
    assert_eq!(buf.write_stream(b"", T0), 0);
    assert_eq!(buf.buffered_bytes(), 25);
    assert_eq!(buf.unsent_pkts(), 3);
    assert_eq!(buf.packet(s(1001)).map(|(_, p)| p), Some(&data[10..20]));
    let sent = send_all(&mut buf);
    let m1 = MsgNumber::new(1);
    let meta = |first, last| PacketMeta {
        msg: m1,
        first,
        last,
        in_order: false,
    };
    let expect = [
        (s(1000), meta(true, false), 10),
        (s(1001), meta(false, false), 10),
        (s(1002), meta(false, true), 5),
    ];
    assert_eq!(sent, expect);
    assert_eq!(buf.unacked_pkts(), 3);
    assert_eq!(buf.unsent(), None);
    // The tail went out short: the next write starts a packet (and a message) of its own.
    assert_eq!(buf.write_stream(b"hello", T0), 5);
    let sent = send_all(&mut buf);
    assert_eq!(
        sent,
        [(s(1003), PacketMeta::solo(MsgNumber::new(2), false), 5)]
    );
}

#[test]
fn stream_writes_fill_up_a_tail_not_sent_yet() {
    let mut buf = SendBuffer::new(10, 100);
    buf.set_base(s(1));
    assert_eq!(buf.write_stream(&[1; 14], T0), 14);
    // "hello" joins the unsent 4-byte tail, which still ends a write.
    assert_eq!(buf.write_stream(b"hello", T0), 5);
    assert_eq!(buf.unsent_pkts(), 2);
    assert_eq!(
        buf.packet(s(2)).map(|(m, p)| (m.last, p.len())),
        Some((true, 9))
    );
    assert_eq!(
        buf.packet(s(2)).map(|(_, p)| p.to_vec()),
        Some([&[1; 4][..], b"hello"].concat())
    );
    // Three bytes fill it; the rest of the write starts a packet, so the tail no longer
    // ends a write.
    assert_eq!(buf.write_stream(b"abcd", T0), 4);
    let sent = send_all(&mut buf);
    let lens: Vec<_> = sent.iter().map(|&(_, m, len)| (m.last, len)).collect();
    assert_eq!(lens, [(false, 10), (false, 10), (true, 3)]);
    assert_eq!(buf.buffered_bytes(), 23);
}

#[test]
fn stream_write_accepts_what_fits() {
    let mut buf = SendBuffer::new(10, 3);
    assert_eq!(buf.free_bytes(), 30);
    assert_eq!(buf.write_stream(&[7; 12], T0), 12);
    // 2 packets used (one holding 2 bytes, with room for 8): 1 packet free.
    assert_eq!(buf.free_bytes(), 10);
    assert_eq!(buf.write_stream(&[8; 25], T0), 18);
    assert_eq!(buf.write_stream(&[9; 1], T0), 0);
    assert_eq!(buf.free_pkts(), 0);
    assert_eq!(
        buf.packet(s(1)).map(|(m, p)| (m.last, p.len())),
        Some((false, 10))
    );
    assert_eq!(
        buf.packet(s(2)).map(|(m, _)| (m.first, m.last)),
        Some((true, true))
    );
}

#[test]
fn messages_number_from_one_and_keep_flags() {
    let mut buf = SendBuffer::new(4, 10);
    assert_eq!(
        buf.write_message(b"abcdefghi", None, true, T0),
        Ok(MsgNumber::new(1))
    );
    assert_eq!(
        buf.write_message(b"xy", None, false, T0),
        Ok(MsgNumber::new(2))
    );
    let sent = send_all(&mut buf);
    let flags: Vec<_> = sent
        .iter()
        .map(|(_, m, len)| (m.msg.value(), m.first, m.last, m.in_order, *len))
        .collect();
    assert_eq!(
        flags,
        vec![
            (1, true, false, true, 4),
            (1, false, false, true, 4),
            (1, false, true, true, 1),
            (2, true, true, false, 2),
        ]
    );
}

#[test]
fn message_errors() {
    let mut buf = SendBuffer::new(4, 3);
    assert_eq!(
        buf.write_message(b"", None, true, T0),
        Err(SendBufferError::Empty)
    );
    assert_eq!(
        buf.write_message(&[0; 13], None, true, T0),
        Err(SendBufferError::TooLarge)
    );
    assert_eq!(
        buf.write_message(&[0; 12], None, true, T0),
        Ok(MsgNumber::new(1))
    );
    assert_eq!(
        buf.write_message(&[0; 1], None, true, T0),
        Err(SendBufferError::Full)
    );
    // Failed writes consume no message number.
    buf.mark_sent();
    buf.ack(s(1));
    assert_eq!(
        buf.write_message(&[0; 1], None, true, T0),
        Ok(MsgNumber::new(2))
    );
}

#[test]
fn ack_releases_only_sent_packets() {
    let mut buf = SendBuffer::new(10, 8);
    buf.set_base(s(50));
    buf.write_stream(&[1; 80], T0);
    for _ in 0..5 {
        buf.mark_sent();
    }
    assert_eq!(buf.ack(s(49)), 0, "old ack ignored");
    assert_eq!(buf.ack(s(53)), 3);
    assert_eq!(buf.base(), s(53));
    assert_eq!(buf.packet(s(52)), None);
    assert_eq!(buf.unacked_pkts(), 2);
    assert_eq!(buf.free_pkts(), 3);
    assert_eq!(buf.buffered_bytes(), 50);
    // Beyond what was sent: clamps to the sent packets.
    assert_eq!(buf.ack(s(70)), 2);
    assert_eq!(buf.unsent(), Some(s(55)));
    send_all(&mut buf);
    assert_eq!(buf.ack(s(58)), 3);
    assert!(buf.is_empty());
    assert_eq!(buf.free_bytes(), 80);
}

#[test]
fn ttl_expiry_and_drop_of_a_partly_sent_message() {
    let mut buf = SendBuffer::new(4, 20);
    buf.set_base(s(10));
    buf.write_message(b"aaaa", None, true, T0).unwrap();
    let ttl = Some(Duration::from_millis(5));
    // Message 2: five packets, seq 11..=15.
    let m2 = buf.write_message(&[2; 20], ttl, false, T0).unwrap();
    buf.write_message(b"cc", None, true, T0).unwrap();
    for _ in 0..3 {
        buf.mark_sent(); // 10, 11, 12
    }
    buf.ack(s(12));
    let at = |ms: u64| Instant::from_micros(ms * 1000);
    assert_eq!(
        buf.expired(s(12), at(5)),
        None,
        "not after the deadline yet"
    );
    assert_eq!(
        buf.expired(s(13), at(9)),
        None,
        "unsent packets are not checked"
    );
    let dropped = buf.expired(s(12), at(6)).expect("expired");
    // Packet 11 was acked: the drop starts at 12 and runs to the message end.
    assert_eq!(
        dropped,
        DroppedMessage {
            msg: m2,
            first: s(12),
            last: s(15)
        }
    );
    assert_eq!(buf.drop_message(&dropped), Some((s(13), s(15))));
    assert_eq!(buf.packet(s(12)), None);
    assert_eq!(buf.packet(s(14)), None);
    // The next new packet is message 3 at 16; dropped packets stay until acked.
    assert_eq!(buf.unsent(), Some(s(16)));
    assert_eq!(buf.unacked_pkts(), 4);
    // A retransmission request for a dropped packet reports the drop again.
    assert_eq!(buf.expired(s(12), at(6)), Some(dropped));
    assert_eq!(buf.ack(s(16)), 4);
    assert_eq!(buf.packet(s(16)).map(|(m, _)| m.msg.value()), Some(3));
}

#[test]
fn dropping_a_fully_sent_message_skips_nothing() {
    let mut buf = SendBuffer::new(4, 20);
    let ttl = Some(Duration::from_millis(1));
    buf.write_message(&[1; 8], ttl, true, T0).unwrap();
    send_all(&mut buf);
    let dropped = buf.expired(s(1), Instant::from_micros(1001)).unwrap();
    assert_eq!((dropped.first, dropped.last), (s(0), s(1)));
    assert_eq!(buf.drop_message(&dropped), None);
    assert_eq!(buf.expired(s(0), T0), Some(dropped));
    let bogus = DroppedMessage {
        msg: dropped.msg,
        first: s(1),
        last: s(0),
    };
    assert_eq!(buf.drop_message(&bogus), None);
}

#[test]
fn sequence_numbers_wrap_at_2_pow_31() {
    let mut buf = SendBuffer::new(100, 10);
    buf.set_base(s(MAX - 1));
    buf.write_message(&[5; 350], None, true, T0).unwrap();
    let seqs: Vec<u32> = send_all(&mut buf)
        .iter()
        .map(|(seq, ..)| seq.value())
        .collect();
    assert_eq!(seqs, vec![MAX - 1, MAX, 0, 1]);
    assert_eq!(buf.packet(s(1)).map(|(_, p)| p.len()), Some(50));
    assert_eq!(buf.ack(s(1)), 3);
    assert_eq!(buf.base(), s(1));
    assert_eq!(buf.ack(s(2)), 1);
    assert!(buf.is_empty());
}

#[test]
fn chunks_are_recycled_across_many_packets() {
    let mut buf = SendBuffer::new(1456, 64);
    let data = vec![0xAB; 1456 * 50];
    let mut next_ack = s(0);
    for round in 0..100u32 {
        assert_eq!(buf.write_stream(&data, T0), data.len(), "round {round}");
        let sent = send_all(&mut buf);
        for (seq, _, len) in &sent {
            assert_eq!(*len, 1456);
            assert_eq!(buf.packet(*seq).unwrap().1[0], 0xAB);
        }
        next_ack = next_ack + sent.len() as u32;
        buf.ack(next_ack);
    }
    assert!(buf.bytes.chunks.is_empty());
    assert!(buf.bytes.spare.len() <= buf.bytes.max_chunks);
}

/// A steady transfer (refill what the ACKs free, a buffer's worth at a time) allocates its
/// chunks in the first round only; `release_spare` then gives them all back.
#[test]
fn a_steady_transfer_allocates_nothing_after_the_first_buffer() {
    let capacity = 4096u32;
    let mut buf = SendBuffer::new(1456, capacity);
    let data = vec![0x5A; 1456 * capacity as usize];
    let mut next_ack = s(0);
    let mut after_first = 0;
    for round in 0..20u32 {
        assert_eq!(buf.write_stream(&data, T0), data.len(), "round {round}");
        next_ack = next_ack + send_all(&mut buf).len() as u32;
        buf.ack(next_ack);
        if round == 0 {
            after_first = buf.chunk_allocations();
        }
    }
    assert!(after_first > 0);
    assert_eq!(buf.chunk_allocations(), after_first);
    buf.release_spare();
    assert!(buf.bytes.spare.is_empty());
}

/// Shrinking the capacity drops the spares a full buffer of the new size would not need.
#[test]
fn shrinking_the_capacity_drops_spares() {
    let mut buf = SendBuffer::new(1456, 4096);
    let data = vec![1; 1456 * 4096];
    buf.write_stream(&data, T0);
    let sent = send_all(&mut buf).len() as u32;
    buf.ack(s(sent));
    let spares = buf.bytes.spare.len();
    buf.set_capacity_pkts(64);
    assert!(buf.bytes.spare.len() < spares);
    assert!(buf.bytes.spare.len() <= buf.bytes.max_chunks);
}

/// A lent payload's chunk is neither reused nor freed when the ACK releases it: it waits in
/// quarantine, holding the bytes as they were, while new writes take fresh chunks; once the
/// runtime reports the lent payloads sent, it is recycled as usual.
#[test]
fn chunks_released_while_lending_wait_until_the_lent_payloads_are_sent() {
    let mut buf = SendBuffer::new(1456, 256);
    let first = vec![0x11; 1456 * 100];
    assert_eq!(buf.write_stream(&first, T0), first.len());
    let sent = send_all(&mut buf);
    let lent_seq = sent[10].0;
    assert_eq!(buf.lend(lent_seq), Some(&first[..1456]));
    buf.ack(sent.last().unwrap().0.next());
    assert!(buf.is_empty());
    assert!(buf.bytes.spare.is_empty(), "nothing recycled while lending");
    let quarantined = buf.bytes.quarantine.len();
    assert!(quarantined > 0);
    let allocated = buf.chunk_allocations();
    let second = vec![0x22; 1456 * 100];
    assert_eq!(buf.write_stream(&second, T0), second.len());
    assert!(
        buf.chunk_allocations() > allocated,
        "new writes took fresh chunks"
    );
    assert!(buf
        .bytes
        .quarantine
        .iter()
        .all(|c| c.bytes().iter().all(|&b| b == 0x11)));
    buf.lent_sent();
    assert!(buf.bytes.quarantine.is_empty());
    assert_eq!(buf.bytes.spare.len(), quarantined);
}

/// Every packet's payload, in order, as one byte string (the stream the receiver reads).
fn stream_of(buf: &mut SendBuffer) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(seq) = buf.unsent() {
        out.extend_from_slice(buf.packet(seq).expect("unsent packet is held").1);
        buf.mark_sent();
    }
    out
}

/// A shared write queues the same packets as a copied one (a short unsent tail topped up by
/// copying, the rest pointing into the writer's bytes), accepts what fits, and small writes
/// are simply copied.
#[test]
fn shared_writes_queue_the_same_stream_as_copied_ones() {
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let writes = [100, SHARE_MIN_BYTES + 7, 70_000, 50, 100_000];
    let run = |shared: bool| {
        let mut buf = SendBuffer::new(1456, 1_000);
        let mut at = 0;
        let mut accepted = Vec::new();
        for len in writes {
            let piece = &data[at..at + len];
            let n = if shared {
                buf.write_stream_shared(Bytes::copy_from_slice(piece), T0)
            } else {
                buf.write_stream(piece, T0)
            };
            accepted.push(n);
            at += len;
        }
        let mut packets = Vec::new();
        while let Some(seq) = buf.unsent() {
            let (meta, payload) = buf.packet(seq).expect("unsent packet is held");
            packets.push((meta, payload.to_vec()));
            buf.mark_sent();
        }
        (accepted, packets)
    };
    let (copied, shared) = (run(false), run(true));
    assert_eq!(copied.0, shared.0, "bytes accepted per write");
    assert_eq!(copied.1, shared.1, "packets, message fields and payloads");
    // 1,000 packets of 1,456 bytes hold 1,456,000: everything fit.
    let stream: Vec<u8> = shared.1.iter().flat_map(|(_, p)| p.clone()).collect();
    assert_eq!(stream, data[..writes.iter().sum::<usize>()]);

    // A full buffer takes the prefix that fits, uncopied.
    let mut small = SendBuffer::new(1456, 20);
    let big = Bytes::from(data.clone());
    assert_eq!(small.write_stream_shared(big.clone(), T0), 20 * 1456);
    assert_eq!(stream_of(&mut small), data[..20 * 1456]);
    assert_eq!(small.write_stream_shared(big, T0), 0);
}

/// A shared chunk is let go once acknowledged (the writer's `Bytes` is unique again), but not
/// while a payload in it is lent to the runtime; it never joins the spares.
#[test]
fn shared_chunks_are_let_go_once_acknowledged_and_sent() {
    let mut buf = SendBuffer::new(1456, 256);
    let data = Bytes::from(vec![0x33; 1456 * 50]);
    assert_eq!(buf.write_stream_shared(data.clone(), T0), data.len());
    assert_eq!(buf.chunk_allocations(), 0, "nothing copied");
    let sent = send_all(&mut buf);
    assert_eq!(buf.lend(sent[3].0), Some(&data[3 * 1456..4 * 1456]));
    buf.ack(sent.last().unwrap().0.next());
    assert!(buf.is_empty());
    let mut data = data;
    data = match data.try_into_mut() {
        Ok(_) => panic!("released while a payload was lent"),
        Err(still_shared) => still_shared,
    };
    buf.lent_sent();
    assert!(buf.bytes.spare.is_empty(), "a shared chunk is no spare");
    assert!(data.try_into_mut().is_ok(), "the buffer let the bytes go");
}

/// Shared writes copy each write's short last packet into a chunk of ours; those chunks are
/// recycled like any other, so a steady transfer of 128 KiB shared writes (a full buffer,
/// half of it acknowledged at a time) allocates nothing once under way.
#[test]
fn steady_shared_writes_allocate_nothing_once_under_way() {
    let mut buf = SendBuffer::new(1456, 2048);
    let chunk = Bytes::from(vec![7u8; 128 * 1024]);
    let mut under_way = 0;
    for round in 0..200 {
        while buf.write_stream_shared(chunk.clone(), T0) > 0 {}
        let sent = send_all(&mut buf);
        if let Some(mid) = sent.get(sent.len() / 2) {
            buf.ack(mid.0);
        }
        if round == 20 {
            under_way = buf.chunk_allocations();
        }
    }
    assert_eq!(buf.chunk_allocations(), under_way);
}
