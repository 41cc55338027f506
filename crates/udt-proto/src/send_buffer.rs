//! The send buffer: application data cut into packets, kept until acknowledged (§6.1, §7).
//!
//! Packets are held in sequence order. Packet `i` (counting from the oldest unacknowledged
//! one) has sequence number `base + i`, so sequence numbers are implied by position and the
//! connection never has to store them. A cursor marks the first never-sent packet.
//!
//! Storage grows with the data: payload bytes are appended to 64 KiB chunks, and each packet
//! is a small fixed-size slot pointing into a chunk. A writer that hands over a [`Bytes`]
//! ([`SendBuffer::write_stream_shared`]) has it kept as a chunk of its own, uncopied: the
//! copy into the buffer was 14% of a 1 Gbit/s sender's CPU, and the runtime sends payloads
//! from where they lie. A fully acknowledged chunk is kept for
//! reuse as long as the chunks held stay within what a full buffer needs, so queuing, sending
//! and acknowledging allocate nothing in steady state. (Keeping only a few spares made a
//! 1 Gbit/s sender allocate most of each refill afresh: the allocator had meanwhile returned
//! the freed chunks to the kernel, and the first write to each page faulted: 8% of the
//! sender's CPU.) The connection gives the spares back when it idles
//! ([`SendBuffer::release_spare`]), so an idle connection with an 8192-packet buffer holds
//! almost nothing.

// `pub` items here are the API of the `internals` feature (udt-bench: some exist only for it);
// without it the module is crate-private.
#![cfg_attr(not(feature = "internals"), allow(unreachable_pub, dead_code))]

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;

use crate::seq::{MsgNumber, SeqNumber};
use crate::time::Instant;

#[cfg(test)]
mod tests;

/// The message fields of one data packet, as the connection writes them on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketMeta {
    /// The message (or stream `send` call) the packet belongs to.
    pub msg: MsgNumber,
    /// First packet of its message (FF bit `10`; with `last`, solo `11`).
    pub first: bool,
    /// Last packet of its message (FF bit `01`).
    pub last: bool,
    /// The O bit: deliver in order.
    pub in_order: bool,
}

impl PacketMeta {
    /// A single-packet message.
    pub fn solo(msg: MsgNumber, in_order: bool) -> Self {
        Self {
            msg,
            first: true,
            last: true,
            in_order,
        }
    }
}

/// Why a message could not be queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendBufferError {
    /// The message needs more packets than the whole buffer holds (4.11 error 5012).
    #[error("message larger than the send buffer")]
    TooLarge,
    /// The message does not fit in the free space now; retry after acknowledgements.
    #[error("send buffer full")]
    Full,
    /// Zero-length messages are not sent.
    #[error("empty message")]
    Empty,
}

/// A message whose TTL ran out (or that was already dropped), as the drop request reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DroppedMessage {
    /// Its message number.
    pub msg: MsgNumber,
    /// Its first packet still in the buffer (the message may have been partly acknowledged).
    pub first: SeqNumber,
    /// Its last packet, whether sent yet or not.
    pub last: SeqNumber,
}

/// Packets waiting to be sent or acknowledged.
#[derive(Debug)]
pub struct SendBuffer {
    slots: VecDeque<Slot>,
    bytes: ChunkStore,
    /// Sequence number of `slots[0]`.
    base: SeqNumber,
    /// Index in `slots` of the first never-sent packet.
    unsent: usize,
    next_msg: MsgNumber,
    payload_size: usize,
    capacity_pkts: u32,
    buffered_bytes: usize,
}

/// One packet: where its payload lives and what the connection needs to (re)send it.
#[derive(Clone, Copy, Debug)]
struct Slot {
    chunk: u64,
    offset: u32,
    len: u32,
    meta: PacketMeta,
    /// Position in its message and the message's packet count, for drop ranges in O(1).
    index_in_msg: u32,
    msg_pkts: u32,
    /// When the message expires (4.11: dropped if `now − queued > TTL`); `None`: never.
    expires: Option<Instant>,
    dropped: bool,
}

/// How a run of packets is tagged; shared by all packets of one write.
#[derive(Clone, Copy)]
struct MessageSpec {
    msg: MsgNumber,
    in_order: bool,
    expires: Option<Instant>,
}

impl SendBuffer {
    /// An empty buffer of `capacity_pkts` packets of up to `payload_size` bytes (MSS − 44).
    ///
    /// A zero `payload_size` or capacity would make every write fail; both are raised to 1.
    pub fn new(payload_size: usize, capacity_pkts: u32) -> Self {
        let payload_size = payload_size.clamp(1, u32::MAX as usize);
        let capacity_pkts = capacity_pkts.max(1);
        Self {
            slots: VecDeque::new(),
            bytes: ChunkStore::new(payload_size, capacity_pkts),
            base: SeqNumber::new(0),
            unsent: 0,
            next_msg: MsgNumber::FIRST,
            payload_size,
            capacity_pkts,
            buffered_bytes: 0,
        }
    }

    /// Sets the sequence number of the oldest packet (the ISN at connection setup). Call it
    /// before the first [`Self::mark_sent`]: it renumbers everything queued.
    pub fn set_base(&mut self, isn: SeqNumber) {
        self.base = isn;
    }

    /// Queues stream data: accepts as many bytes as fit and cuts them into packets.
    ///
    /// As in UDT4 (§1.2) each call is one "message" on the wire (first packet First, last
    /// Last, a single one Solo, O = 0, no TTL), except that the data first fills up the last
    /// packet queued if that was never sent (see `top_up_unsent_tail`). Returns the
    /// bytes accepted (0 when full or empty).
    pub fn write_stream(&mut self, data: &[u8], now: Instant) -> usize {
        let _ = now; // stream data never expires
        let topped = self.top_up_unsent_tail(data);
        let rest = &data[topped..];
        let fit = self.free_pkts() as usize * self.payload_size;
        let accepted = &rest[..rest.len().min(fit)];
        if !accepted.is_empty() {
            let spec = self.take_spec(false, None);
            self.push_message(accepted, spec);
        }
        topped + accepted.len()
    }

    /// [`Self::write_stream`] without copying: the packets point into `data`, which the buffer
    /// holds until they are acknowledged. The first bytes may still be copied, to fill up an
    /// unsent short tail, and a write shorter than [`SHARE_MIN_BYTES`] is copied whole (a
    /// chunk per small write would cost more than the copy). Returns the bytes accepted.
    pub fn write_stream_shared(&mut self, data: Bytes, now: Instant) -> usize {
        if data.len() < SHARE_MIN_BYTES {
            return self.write_stream(&data, now);
        }
        let topped = self.top_up_unsent_tail(&data);
        let fit = (self.free_pkts() as usize * self.payload_size).min(SHARE_MAX_BYTES);
        let end = data.len().min(topped + fit);
        if end > topped {
            let spec = self.take_spec(false, None);
            self.push_shared_message(data.slice(topped..end), spec);
        }
        end
    }

    /// Stream data joins the last packet queued when that one is still unsent and short (the
    /// tail of the previous write): a deviation from 4.11, which cuts every `send` call into
    /// its own packets. A stream is a byte stream to the receiver (4.11's too), so the wire
    /// is unchanged, but a bulk writer's back-to-back writes then leave full packets, and a
    /// packet ending a write (Last) means the writer had nothing more queued when it was
    /// cut: the pause that the receiver's prompt ACK and reader wake-up are for. With each
    /// 128 KiB write ending in a short packet, a 1 Gbit/s receiver woke its reader at every
    /// ACK, and each short packet ended a GSO train. Returns the bytes taken.
    fn top_up_unsent_tail(&mut self, data: &[u8]) -> usize {
        if self.unsent >= self.slots.len() {
            return 0;
        }
        let Some(slot) = self.slots.back_mut() else {
            return 0;
        };
        if slot.dropped || slot.expires.is_some() || slot.meta.in_order {
            return 0;
        }
        let take = (self.payload_size - slot.len as usize).min(data.len());
        if take == 0 || !self.bytes.extend_back(slot, &data[..take]) {
            return 0;
        }
        slot.len += take as u32;
        slot.meta.last = take == data.len();
        self.buffered_bytes += take;
        take
    }

    /// Queues one message whole, or nothing (§7 DGRAM `sendmsg`).
    ///
    /// `ttl` is counted from `now`; `None` means it never expires. Returns its number.
    pub fn write_message(
        &mut self,
        msg: &[u8],
        ttl: Option<Duration>,
        in_order: bool,
        now: Instant,
    ) -> Result<MsgNumber, SendBufferError> {
        if msg.is_empty() {
            return Err(SendBufferError::Empty);
        }
        let pkts = msg.len().div_ceil(self.payload_size);
        if pkts > self.capacity_pkts as usize {
            return Err(SendBufferError::TooLarge);
        }
        if pkts > self.free_pkts() as usize {
            return Err(SendBufferError::Full);
        }
        let spec = self.take_spec(in_order, ttl.map(|ttl| now + ttl));
        self.push_message(msg, spec);
        Ok(spec.msg)
    }

    /// The sequence number of the next packet to send for the first time, if any. Packets of
    /// dropped messages are skipped (see [`Self::drop_message`]).
    pub fn unsent(&self) -> Option<SeqNumber> {
        (self.unsent < self.slots.len()).then(|| self.base + self.unsent as u32)
    }

    /// Records that the packet [`Self::unsent`] named was sent; moves to the next one.
    pub fn mark_sent(&mut self) {
        if self.unsent < self.slots.len() {
            self.unsent += 1;
            self.skip_dropped_unsent();
        }
    }

    /// The message fields and payload of packet `seq`, for a first send or a retransmission.
    /// `None` if it is acknowledged, dropped, or not queued.
    pub fn packet(&self, seq: SeqNumber) -> Option<(PacketMeta, &[u8])> {
        let slot = self.slot(seq)?;
        if slot.dropped {
            return None;
        }
        Some((slot.meta, self.bytes.get(slot)))
    }

    /// Releases every packet before `ack` (only packets already sent can be acknowledged).
    /// Returns how many were freed.
    pub fn ack(&mut self, ack: SeqNumber) -> usize {
        let Ok(count) = usize::try_from(self.base.offset_to(ack)) else {
            return 0;
        };
        let count = count.min(self.unsent);
        for slot in self.slots.drain(..count) {
            self.buffered_bytes -= slot.len as usize;
        }
        self.base = self.base + count as u32;
        self.unsent -= count;
        match self.slots.front() {
            Some(front) => self.bytes.release_before(front.chunk),
            None => self.bytes.release_all(),
        }
        count
    }

    /// TTL check before retransmitting `seq` (§6.6): the message to drop if its TTL has run
    /// out (`now` later than queue time + TTL) or it was already dropped, else `None`. Only
    /// sent packets are checked: first transmissions always go out.
    pub fn expired(&self, seq: SeqNumber, now: Instant) -> Option<DroppedMessage> {
        let index = self.index(seq)?;
        if index >= self.unsent {
            return None;
        }
        let slot = self.slots[index];
        let timed_out = slot.expires.is_some_and(|deadline| now > deadline);
        if !(timed_out || slot.dropped) {
            return None;
        }
        // Acknowledged packets of the message are gone: start at the oldest one left.
        let back = (slot.index_in_msg as usize).min(index);
        Some(DroppedMessage {
            msg: slot.meta.msg,
            first: seq - back as u32,
            last: seq + (slot.msg_pkts - 1 - slot.index_in_msg),
        })
    }

    /// Drops a message found by [`Self::expired`]: its packets are never sent again, and
    /// [`Self::packet`] returns `None` for them (they stay in the buffer, counted, until the
    /// receiver acknowledges past them after the drop request).
    ///
    /// If some of its packets were never sent, the unsent cursor jumps past them: their
    /// sequence numbers are consumed without being sent. Returns that skipped range, so the
    /// connection can advance its "largest sent" to its end (the drop request tells the
    /// receiver to skip the whole message). `None` if every packet had been sent.
    pub fn drop_message(&mut self, dropped: &DroppedMessage) -> Option<(SeqNumber, SeqNumber)> {
        let first = self.index(dropped.first)?;
        let last = self
            .index(dropped.last)
            .unwrap_or(self.slots.len().saturating_sub(1));
        if last < first {
            return None;
        }
        for slot in self.slots.range_mut(first..=last) {
            if slot.meta.msg == dropped.msg {
                slot.dropped = true;
            }
        }
        let before = self.unsent;
        self.skip_dropped_unsent();
        (self.unsent > before).then(|| {
            (
                self.base + before as u32,
                self.base + (self.unsent - 1) as u32,
            )
        })
    }

    /// Packets sent and not yet acknowledged (including dropped ones awaiting the ACK).
    pub fn unacked_pkts(&self) -> u32 {
        self.unsent as u32
    }

    /// Packets queued and never sent.
    pub fn unsent_pkts(&self) -> u32 {
        (self.slots.len() - self.unsent) as u32
    }

    /// Whether nothing is queued or awaiting acknowledgement (keep-alive condition, §2.8).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Bytes that a stream write would accept now, at least: free packets × payload size
    /// (a write may also fill up an unsent short tail).
    pub fn free_bytes(&self) -> usize {
        self.free_pkts() as usize * self.payload_size
    }

    /// Free packet slots.
    pub fn free_pkts(&self) -> u32 {
        self.capacity_pkts.saturating_sub(self.slots.len() as u32)
    }

    /// Changes the capacity (the connection's buffer autotuning). Never below the packets
    /// held now, so nothing queued is lost and [`Self::free_pkts`] stays meaningful; an empty
    /// buffer also gives back its slot table.
    pub fn set_capacity_pkts(&mut self, pkts: u32) {
        let held = u32::try_from(self.slots.len()).unwrap_or(u32::MAX);
        self.capacity_pkts = pkts.max(held).max(1);
        self.bytes.set_capacity_pkts(self.capacity_pkts);
        if self.slots.is_empty() {
            self.slots.shrink_to_fit();
        }
    }

    /// Packet `seq`'s payload is to be sent from where it lies: until [`SendBuffer::lent_sent`],
    /// no chunk is reused or freed, so the bytes stay where they are and as they are.
    pub fn lend(&mut self, seq: SeqNumber) -> Option<&[u8]> {
        self.bytes.lending = true;
        self.packet(seq).map(|(_, payload)| payload)
    }

    /// Everything lent so far has been sent: chunks released meanwhile are recycled.
    pub fn lent_sent(&mut self) {
        self.bytes.lending = false;
        while let Some(chunk) = self.bytes.quarantine.pop() {
            self.bytes.recycle(chunk);
        }
    }

    /// Chunks of acknowledged data held only because payloads were lent and not yet reported
    /// sent (zero once [`SendBuffer::lent_sent`] has been called).
    pub fn quarantined_chunks(&self) -> usize {
        self.bytes.quarantine.len()
    }

    /// Gives the acknowledged chunks kept for reuse back to the allocator (an idle
    /// connection's memory). The next writes allocate afresh.
    pub fn release_spare(&mut self) {
        self.bytes.spare = Vec::new();
    }

    /// Chunks allocated since the buffer was made: constant in a steady transfer.
    pub fn chunk_allocations(&self) -> u64 {
        self.bytes.allocations
    }

    /// Capacity in packets.
    pub fn capacity_pkts(&self) -> u32 {
        self.capacity_pkts
    }

    /// Payload bytes held (unsent and unacknowledged).
    pub fn buffered_bytes(&self) -> usize {
        self.buffered_bytes
    }

    /// The payload size packets are cut to.
    pub fn payload_size(&self) -> usize {
        self.payload_size
    }

    /// The sequence number of the oldest packet held (the last data ACK).
    pub fn base(&self) -> SeqNumber {
        self.base
    }

    /// The number for the next message, and advances the counter (1, 2, … wrapping to 1).
    fn take_spec(&mut self, in_order: bool, expires: Option<Instant>) -> MessageSpec {
        let msg = self.next_msg;
        self.next_msg = msg.next();
        MessageSpec {
            msg,
            in_order,
            expires,
        }
    }

    /// Appends `data` (known to fit) as one message of payload-size packets.
    fn push_message(&mut self, data: &[u8], spec: MessageSpec) {
        let pkts = data.len().div_ceil(self.payload_size) as u32;
        for (i, piece) in data.chunks(self.payload_size).enumerate() {
            let (chunk, offset) = self.bytes.push(piece);
            self.push_slot(chunk, offset, piece.len(), spec, i as u32, pkts);
        }
        self.buffered_bytes += data.len();
    }

    /// [`Self::push_message`] for data kept as a chunk of its own, but for a short last
    /// packet, which is copied: the next write can then fill it up (see
    /// `top_up_unsent_tail`), as it would after a copied write. Left in the shared chunk, a
    /// 128 KiB write's 32-byte tail went out as a packet of its own, ending a GSO train and
    /// waking the reader, after every write.
    fn push_shared_message(&mut self, data: Bytes, spec: MessageSpec) {
        let len = data.len();
        let pkts = len.div_ceil(self.payload_size) as u32;
        let whole = len - len % self.payload_size;
        let shared = (whole > 0).then(|| self.bytes.push_shared(data.slice(..whole)));
        for i in 0..pkts {
            let offset = i as usize * self.payload_size;
            let piece = self.payload_size.min(len - offset);
            let (chunk, at) = match shared {
                Some(chunk) if offset < whole => (chunk, offset as u32),
                _ => self.bytes.push(&data[offset..]),
            };
            self.push_slot(chunk, at, piece, spec, i, pkts);
        }
        self.buffered_bytes += len;
    }

    /// Packet `index` of a message of `pkts`, `len` bytes at `offset` in chunk `chunk`.
    fn push_slot(
        &mut self,
        chunk: u64,
        offset: u32,
        len: usize,
        spec: MessageSpec,
        index: u32,
        pkts: u32,
    ) {
        self.slots.push_back(Slot {
            chunk,
            offset,
            len: len as u32,
            meta: PacketMeta {
                msg: spec.msg,
                first: index == 0,
                last: index + 1 == pkts,
                in_order: spec.in_order,
            },
            index_in_msg: index,
            msg_pkts: pkts,
            expires: spec.expires,
            dropped: false,
        });
    }

    fn skip_dropped_unsent(&mut self) {
        while self.slots.get(self.unsent).is_some_and(|slot| slot.dropped) {
            self.unsent += 1;
        }
    }

    /// Index of `seq` in `slots`, if held.
    fn index(&self, seq: SeqNumber) -> Option<usize> {
        let index = usize::try_from(self.base.offset_to(seq)).ok()?;
        (index < self.slots.len()).then_some(index)
    }

    fn slot(&self, seq: SeqNumber) -> Option<&Slot> {
        self.slots.get(self.index(seq)?)
    }
}

/// The shortest shared write kept uncopied (see [`SendBuffer::write_stream_shared`]).
pub const SHARE_MIN_BYTES: usize = 16 * 1024;
/// The most one shared write takes at once, so that a packet's offset in its chunk fits the
/// slot's `u32` whatever the buffer's size (the writer comes back for the rest).
const SHARE_MAX_BYTES: usize = 1 << 30;

/// Where a chunk's bytes live: a buffer of ours, filled by copies and reused, or a writer's
/// [`Bytes`], kept as it came and let go once acknowledged.
#[derive(Debug)]
enum Chunk {
    Own(Vec<u8>),
    Shared(Bytes),
}

impl Chunk {
    fn bytes(&self) -> &[u8] {
        match self {
            Self::Own(v) => v,
            Self::Shared(b) => b,
        }
    }
}

/// Payload bytes in a queue of fixed-capacity chunks, addressed by a running chunk id.
///
/// A packet never straddles chunks, so it is always one contiguous slice. Chunks freed by
/// acknowledgements are kept for reuse instead of returned to the allocator, as long as the
/// chunks held (in use and spare) stay within what a full buffer can need.
#[derive(Debug)]
struct ChunkStore {
    chunks: VecDeque<Chunk>,
    /// Id of `chunks[0]`.
    front_id: u64,
    spare: Vec<Vec<u8>>,
    chunk_bytes: usize,
    payload_size: usize,
    /// The most chunks (in use + spare) worth keeping: a full buffer's.
    max_chunks: usize,
    /// Chunks allocated so far.
    allocations: u64,
    /// A payload was lent since the runtime last reported its sends.
    lending: bool,
    /// Chunks released while lending, waiting for [`SendBuffer::lent_sent`].
    quarantine: Vec<Chunk>,
}

impl ChunkStore {
    const CHUNK_BYTES: usize = 64 * 1024;

    fn new(payload_size: usize, capacity_pkts: u32) -> Self {
        let mut store = Self {
            chunks: VecDeque::new(),
            front_id: 0,
            spare: Vec::new(),
            chunk_bytes: Self::CHUNK_BYTES.max(payload_size),
            payload_size,
            max_chunks: 0,
            allocations: 0,
            lending: false,
            quarantine: Vec::new(),
        };
        store.set_capacity_pkts(capacity_pkts);
        store
    }

    /// Sizes the spare pool for `pkts` packets: the chunks a full buffer of full-sized
    /// packets spans (one more for a partly used chunk at each end); spares beyond it go.
    fn set_capacity_pkts(&mut self, pkts: u32) {
        let per_chunk = (self.chunk_bytes / self.payload_size).max(1);
        self.max_chunks = (pkts as usize).div_ceil(per_chunk) + 1;
        let keep = self.max_chunks.saturating_sub(self.chunks.len());
        self.spare.truncate(keep);
    }

    /// Stores `piece` (at most the payload size) and returns (chunk id, offset).
    fn push(&mut self, piece: &[u8]) -> (u64, u32) {
        let chunk_bytes = self.chunk_bytes;
        let back = match self.chunks.back_mut() {
            Some(Chunk::Own(chunk)) if chunk.len() + piece.len() <= chunk_bytes => chunk,
            _ => {
                let chunk = self.spare.pop().unwrap_or_else(|| {
                    self.allocations += 1;
                    Vec::with_capacity(chunk_bytes)
                });
                self.chunks.push_back(Chunk::Own(chunk));
                match self.chunks.back_mut() {
                    Some(Chunk::Own(chunk)) => chunk,
                    _ => unreachable!("an owned chunk was just pushed"),
                }
            }
        };
        let offset = back.len() as u32;
        back.extend_from_slice(piece);
        (self.front_id + self.chunks.len() as u64 - 1, offset)
    }

    /// Keeps `data` as a chunk of its own; returns its id.
    fn push_shared(&mut self, data: Bytes) -> u64 {
        self.chunks.push_back(Chunk::Shared(data));
        self.front_id + self.chunks.len() as u64 - 1
    }

    /// Appends `piece` to `slot`'s bytes if they end the back chunk and it has room.
    fn extend_back(&mut self, slot: &Slot, piece: &[u8]) -> bool {
        let back_id = (self.front_id + self.chunks.len() as u64).checked_sub(1);
        let Some(Chunk::Own(chunk)) = self.chunks.back_mut() else {
            return false;
        };
        let ends_chunk = chunk.len() == (slot.offset + slot.len) as usize;
        if back_id != Some(slot.chunk)
            || !ends_chunk
            || chunk.len() + piece.len() > self.chunk_bytes
        {
            return false;
        }
        chunk.extend_from_slice(piece);
        true
    }

    fn get(&self, slot: &Slot) -> &[u8] {
        let start = slot.offset as usize;
        usize::try_from(slot.chunk - self.front_id)
            .ok()
            .and_then(|index| self.chunks.get(index))
            .and_then(|chunk| chunk.bytes().get(start..start + slot.len as usize))
            .unwrap_or(&[])
    }

    /// Recycles every chunk older than `id`.
    fn release_before(&mut self, id: u64) {
        while self.front_id < id {
            let Some(chunk) = self.chunks.pop_front() else {
                break;
            };
            self.front_id += 1;
            self.recycle(chunk);
        }
    }

    fn release_all(&mut self) {
        while let Some(chunk) = self.chunks.pop_front() {
            self.front_id += 1;
            self.recycle(chunk);
        }
    }

    /// A released chunk: kept while payloads are lent (they may point into it), then reused
    /// if ours and spares are wanted, else let go (a shared one back to its writer's `Bytes`).
    fn recycle(&mut self, chunk: Chunk) {
        if self.lending {
            self.quarantine.push(chunk);
            return;
        }
        if let Chunk::Own(mut chunk) = chunk {
            if self.chunks.len() + self.spare.len() < self.max_chunks {
                chunk.clear();
                self.spare.push(chunk);
            }
        }
    }
}
