//! The receive buffer: reassembles arriving packets by sequence number and hands data to the
//! application as a byte stream or as whole messages (§6.4, §7).
//!
//! Three positions matter, in sequence order: the *read position* (first packet not yet
//! consumed), the *ACK point* (everything before it was acknowledged and is deliverable; the
//! connection moves it when it sends a numbered ACK) and the window end (ACK point +
//! available slots). Slots live in a ring indexed by offset from the read position, created
//! as packets arrive. A packet that arrived in a buffer the runtime lends
//! ([`RecvBuffer::insert_shared`]) is kept as a slice of it instead of copied: the runtime
//! reads whole GRO trains into reference-counted buffers, so the payload's one copy is the
//! reader's. Any other packet (one the runtime did not lend: a lone datagram, a short
//! train's) is copied into the current arena, a shared buffer of 64 KiB that
//! successive copies fill, and kept as a slice of that: a reader that takes chunks
//! ([`RecvBuffer::read_chunks`]) then gets every packet without another copy, and an arena
//! is freed once the last of its packets is read. An empty buffer keeps no arena, so an
//! idle connection holds almost nothing.
//!
//! Message mode (§7): a message is delivered only whole. In-order (O = 1) messages come from
//! the acknowledged region, in sequence order; out-of-order (O = 0) messages are delivered as
//! soon as all their packets are in, even beyond the ACK point. Holes and broken messages
//! left by drop requests are skipped once the ACK point passes them. Deviation from 4.11: a
//! message larger than the receive buffer is never delivered (4.11 returns it partially), so
//! the sender must keep messages smaller than the peer's buffer.

// `pub` items here are the API of the `internals` feature (udt-bench: some exist only for it);
// without it the module is crate-private.
#![cfg_attr(not(feature = "internals"), allow(unreachable_pub, dead_code))]

use std::collections::{BTreeMap, VecDeque};

use bytes::{Bytes, BytesMut};

use crate::send_buffer::PacketMeta;
use crate::seq::{MsgNumber, SeqNumber};

#[cfg(test)]
mod tests;

/// How data is handed to the application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Byte stream (`SOCK_STREAM`): message fields are ignored.
    Stream,
    /// Whole messages (`SOCK_DGRAM`).
    Message,
}

/// What [`RecvBuffer::insert`] did with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insert {
    /// Stored.
    Accepted,
    /// Already received (or already consumed); dropped.
    Duplicate,
    /// Before the ACK point or beyond the free space; dropped silently (§6.4 step 2).
    OutOfWindow,
}

/// Received packets waiting for the application.
#[derive(Debug)]
pub struct RecvBuffer {
    mode: Mode,
    /// `slots[i]` holds sequence number `read_seq + i`.
    slots: VecDeque<Slot>,
    read_seq: SeqNumber,
    /// Slots before the ACK point (`slots[..acked]`, possibly beyond `slots.len()` never).
    acked: usize,
    /// Bytes of `slots[0]` already read (stream mode).
    front_read: usize,
    capacity_pkts: u32,
    readable_bytes: usize,
    filled: u32,
    /// Packet count of the whole message at the front of the acknowledged region, when it is
    /// complete there (message mode); kept up to date by [`Self::clean_front`].
    front_msg_pkts: Option<usize>,
    unordered: Unordered,
    /// Where copied packets go (see the module docs): its spare capacity is what the next
    /// ones fill; what it handed out lives on in the slots' slices.
    arena: BytesMut,
}

#[derive(Debug)]
enum Slot {
    /// Not received (yet), or a hole a drop request left.
    Empty,
    Filled {
        /// The payload: a slice of the runtime's buffer it arrived in, or of an arena.
        data: Bytes,
        meta: PacketMeta,
    },
    /// Delivered out of order or dropped: counts as received, holds nothing.
    Consumed,
}

/// Completion tracking for out-of-order messages, so finding one is not a buffer scan.
#[derive(Debug, Default)]
struct Unordered {
    progress: BTreeMap<u32, Progress>,
    /// First packets of messages seen complete; re-checked before delivery.
    ready: VecDeque<SeqNumber>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Progress {
    received: u32,
    first: Option<SeqNumber>,
    last: Option<SeqNumber>,
}

/// The size of an arena for copied packets (see the module docs): some 45 full packets, so
/// that an allocation serves many, while a packet left unread long (behind a hole, in an
/// unfinished message) keeps at most this much alive.
const ARENA_BYTES: usize = 64 << 10;

impl RecvBuffer {
    /// An empty buffer of `capacity_pkts` slots expecting `isn` first.
    pub fn new(mode: Mode, capacity_pkts: u32, isn: SeqNumber) -> Self {
        Self {
            mode,
            slots: VecDeque::new(),
            read_seq: isn,
            acked: 0,
            front_read: 0,
            capacity_pkts,
            readable_bytes: 0,
            filled: 0,
            front_msg_pkts: None,
            unordered: Unordered::default(),
            arena: BytesMut::new(),
        }
    }

    /// Stores an arriving data packet.
    ///
    /// UDT4 §6.4: offset = seq − ACK point; negative (already acknowledged) or at least the
    /// available slot count → out of window; an occupied slot → duplicate.
    pub fn insert(&mut self, seq: SeqNumber, meta: PacketMeta, payload: &[u8]) -> Insert {
        self.insert_shared(seq, meta, payload, None)
    }

    /// [`Self::insert`] for a payload that lies within `owner` (the datagram's buffer, lent
    /// by the runtime): the packet keeps a slice of `owner` rather than a copy. A payload
    /// outside `owner` (or no owner) is copied as by `insert`.
    pub fn insert_shared(
        &mut self,
        seq: SeqNumber,
        meta: PacketMeta,
        payload: &[u8],
        owner: Option<&Bytes>,
    ) -> Insert {
        let Ok(offset) = usize::try_from(self.ack_point().offset_to(seq)) else {
            return Insert::OutOfWindow;
        };
        if offset >= self.available_pkts() as usize {
            return Insert::OutOfWindow;
        }
        let index = self.acked + offset;
        // In order, one more slot: a push, where `resize_with` was a call per packet.
        while self.slots.len() <= index {
            self.slots.push_back(Slot::Empty);
        }
        if !matches!(self.slots[index], Slot::Empty) {
            return Insert::Duplicate;
        }
        let data = owner
            .and_then(|o| slice_within(o, payload))
            .unwrap_or_else(|| self.copy_in(payload));
        self.slots[index] = Slot::Filled { data, meta };
        self.filled += 1;
        if self.mode == Mode::Message && !meta.in_order {
            self.unordered.on_insert(seq, meta, self.capacity_pkts);
        }
        Insert::Accepted
    }

    /// Makes everything before `ack` deliverable. Ignored if `ack` is not after the current
    /// ACK point; clamped to the buffer size. Holes in between (dropped messages) are skipped.
    ///
    /// Returns whether the newly deliverable packets include the end of a message (in stream
    /// mode: the last packet of one `send` call, UDT4 §1.2): the writer paused there, so the
    /// reader should be told now rather than when more data has gathered (TCP's PSH).
    pub fn set_ack_point(&mut self, ack: SeqNumber) -> bool {
        let Ok(target) = usize::try_from(self.read_seq.offset_to(ack)) else {
            return false;
        };
        let target = target.min(self.capacity_pkts as usize);
        if target <= self.acked {
            return false;
        }
        if target > self.slots.len() {
            self.slots.resize_with(target, || Slot::Empty);
        }
        let mut ends_write = false;
        for slot in self.slots.range(self.acked..target) {
            if let Slot::Filled { data, meta } = slot {
                self.readable_bytes += data.len();
                ends_write |= meta.last;
            }
        }
        self.acked = target;
        self.clean_front();
        ends_write
    }

    /// The ACK point: the first sequence number not yet acknowledged.
    pub fn ack_point(&self) -> SeqNumber {
        self.read_seq + self.acked as u32
    }

    /// The read position: the oldest sequence number not yet consumed.
    pub fn read_position(&self) -> SeqNumber {
        self.read_seq
    }

    /// Free slots to advertise in ACKs (§6.4): capacity − acknowledged-but-unread − 1. The
    /// connection raises it to at least 2 on the wire, as 4.11 does.
    pub fn available_pkts(&self) -> u32 {
        (self.capacity_pkts as usize)
            .saturating_sub(self.acked + 1)
            .try_into()
            .unwrap_or(0)
    }

    /// Changes the capacity (the connection's buffer autotuning). Never below what is held:
    /// everything up to the ACK point and every slot made for an arrival keeps its place, so
    /// a shrink never drops a packet already accepted; an empty buffer also gives back its
    /// slot table.
    pub fn set_capacity_pkts(&mut self, pkts: u32) {
        let held = self.acked.max(self.slots.len()) + 1;
        let held = u32::try_from(held).unwrap_or(u32::MAX);
        self.capacity_pkts = pkts.max(held);
        if self.slots.is_empty() {
            self.slots.shrink_to_fit();
        }
    }

    /// Capacity in packets.
    pub fn capacity_pkts(&self) -> u32 {
        self.capacity_pkts
    }

    /// The delivery mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Stream mode: copies acknowledged bytes into `buf`, across packets, partial packets
    /// allowed. Returns the count copied (0 if nothing is readable).
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let mut copied = 0;
        while self.acked > 0 && copied < buf.len() {
            let Some(Slot::Filled { data, .. }) = self.slots.front() else {
                self.pop_front();
                continue;
            };
            let rest = data.get(self.front_read..).unwrap_or_default();
            let n = rest.len().min(buf.len() - copied);
            buf[copied..copied + n].copy_from_slice(&rest[..n]);
            copied += n;
            self.front_read += n;
            self.readable_bytes -= n;
            if n == rest.len() {
                self.pop_front();
            }
        }
        copied
    }

    /// A copy of `payload` in the current arena, which is replaced by a fresh one when it has
    /// no room left (see the module docs).
    fn copy_in(&mut self, payload: &[u8]) -> Bytes {
        if self.arena.capacity() < payload.len() {
            self.arena = BytesMut::with_capacity(ARENA_BYTES.max(payload.len()));
        }
        self.arena.extend_from_slice(payload);
        self.arena.split().freeze()
    }

    /// Lets the arena go once no packet is held, so that an idle connection keeps no arena
    /// (the memory is freed when the reader drops the last chunk it was handed).
    fn release_arena_if_empty(&mut self) {
        if self.filled == 0 {
            self.arena = BytesMut::new();
        }
    }

    /// Stream mode: moves up to `max` acknowledged bytes into `out` without copying them, as
    /// slices of the buffers they arrived in (the runtime's, or an arena). Returns the bytes
    /// moved.
    pub fn read_chunks(&mut self, out: &mut Vec<Bytes>, max: usize) -> usize {
        let mut moved = 0;
        while self.acked > 0 && moved < max {
            let Some(Slot::Filled { data, .. }) = self.slots.front() else {
                self.pop_front();
                continue;
            };
            let start = self.front_read.min(data.len());
            let n = (data.len() - start).min(max - moved);
            let ends_packet = start + n == data.len();
            out.push(data.slice(start..start + n));
            self.front_read += n;
            self.readable_bytes -= n;
            if ends_packet {
                self.pop_front();
            }
            moved += n;
        }
        moved
    }

    /// Bytes of acknowledged data not yet read (in message mode: of whole and broken
    /// messages alike; use [`Self::has_message`] to know if one can be read).
    pub fn readable_bytes(&self) -> usize {
        self.readable_bytes
    }

    /// Message mode: copies the next deliverable message into `buf` and consumes it.
    ///
    /// Returns (bytes copied, message length); when `buf` is shorter the rest of the
    /// message is discarded (as 4.11's `recvmsg`). The in-order message at the ACK front
    /// comes first, then out-of-order messages in completion order.
    pub fn read_message(&mut self, buf: &mut [u8]) -> Option<(usize, usize)> {
        if let Some(pkts) = self.front_msg_pkts {
            let result = self.copy_message(0, pkts, buf);
            for _ in 0..pkts {
                self.pop_front();
            }
            self.clean_front();
            return Some(result);
        }
        while let Some(first) = self.unordered.ready.pop_front() {
            let Some((index, pkts)) = self.complete_at(first) else {
                continue;
            };
            let result = self.copy_message(index, pkts, buf);
            for i in index..index + pkts {
                self.consume(i);
            }
            self.clean_front();
            return Some(result);
        }
        None
    }

    /// Whether [`Self::read_message`] would return a message.
    pub fn has_message(&self) -> bool {
        self.front_msg_pkts.is_some()
            || self
                .unordered
                .ready
                .iter()
                .any(|&first| self.complete_at(first).is_some())
    }

    /// A drop request (§6.6): discards buffered packets of message `msg` within
    /// `first..=last` (4.11 sends one past the end; any extra packet of another message is
    /// left alone). Moving the ACK point past the hole is up to the connection.
    pub fn drop_message(&mut self, msg: MsgNumber, first: SeqNumber, last: SeqNumber) {
        let start = usize::try_from(self.read_seq.offset_to(first)).unwrap_or(0);
        let Ok(end) = usize::try_from(self.read_seq.offset_to(last)) else {
            return;
        };
        let end = end.min(self.slots.len().saturating_sub(1));
        for index in start..=end {
            if matches!(&self.slots.get(index), Some(Slot::Filled { meta, .. }) if meta.msg == msg)
            {
                self.consume(index);
            }
        }
        self.unordered.progress.remove(&msg.value());
        self.clean_front();
    }

    /// Whether no packet is held (nothing readable or waiting for earlier ones).
    pub fn is_empty(&self) -> bool {
        self.filled == 0
    }

    /// Removes the front slot, moving the read position (and recycling its payload).
    fn pop_front(&mut self) {
        let Some(slot) = self.slots.pop_front() else {
            return;
        };
        let was_acked = self.acked > 0;
        self.read_seq = self.read_seq.next();
        self.acked = self.acked.saturating_sub(1);
        if let Slot::Filled { data, meta } = slot {
            if was_acked {
                // The unread rest of the packet stops being readable.
                self.readable_bytes -= data.len().saturating_sub(self.front_read);
            }
            self.filled -= 1;
            self.release_arena_if_empty();
            if self.mode == Mode::Message && !meta.in_order {
                self.unordered.progress.remove(&meta.msg.value());
            }
        }
        self.front_read = 0;
    }

    /// Empties slot `index` (delivered out of order or dropped) without moving anything.
    fn consume(&mut self, index: usize) {
        let Some(slot) = self.slots.get_mut(index) else {
            return;
        };
        if let Slot::Filled { data, .. } = std::mem::replace(slot, Slot::Consumed) {
            if index < self.acked {
                let already_read = if index == 0 { self.front_read } else { 0 };
                self.readable_bytes -= data.len().saturating_sub(already_read);
            }
            if index == 0 {
                self.front_read = 0;
            }
            self.filled -= 1;
            self.release_arena_if_empty();
        }
    }

    /// Message mode: pops what can never be delivered from the acknowledged front (holes,
    /// consumed slots, broken messages) and records whether a whole message is there.
    fn clean_front(&mut self) {
        self.front_msg_pkts = None;
        if self.mode != Mode::Message {
            return;
        }
        // Out-of-order messages read in order meanwhile leave stale entries: forget those
        // already behind the read position so `has_message` stays cheap.
        while let Some(&first) = self.unordered.ready.front() {
            if self.read_seq.offset_to(first) >= 0 {
                break;
            }
            self.unordered.ready.pop_front();
        }
        while self.acked > 0 {
            match self.scan_front() {
                FrontScan::Complete(pkts) => {
                    self.front_msg_pkts = Some(pkts);
                    return;
                }
                FrontScan::Incomplete => return,
                FrontScan::Broken => self.pop_front(),
            }
        }
    }

    /// Classifies the message starting at the acknowledged front.
    fn scan_front(&self) -> FrontScan {
        let Some(Slot::Filled { meta: head, .. }) = self.slots.front() else {
            return FrontScan::Broken;
        };
        if !head.first {
            return FrontScan::Broken;
        }
        for (i, slot) in self.slots.iter().take(self.acked).enumerate() {
            match slot {
                Slot::Filled { meta, .. } if meta.msg == head.msg && (i == 0 || !meta.first) => {
                    if meta.last {
                        return FrontScan::Complete(i + 1);
                    }
                }
                _ => return FrontScan::Broken,
            }
        }
        FrontScan::Incomplete
    }

    /// If a whole message starts at `first` (still held and unconsumed), its slot index and
    /// packet count.
    fn complete_at(&self, first: SeqNumber) -> Option<(usize, usize)> {
        let start = usize::try_from(self.read_seq.offset_to(first)).ok()?;
        let Some(Slot::Filled { meta: head, .. }) = self.slots.get(start) else {
            return None;
        };
        if !head.first {
            return None;
        }
        for (i, slot) in self.slots.range(start..).enumerate() {
            match slot {
                Slot::Filled { meta, .. } if meta.msg == head.msg && (i == 0 || !meta.first) => {
                    if meta.last {
                        return Some((start, i + 1));
                    }
                }
                _ => return None,
            }
        }
        None
    }

    /// Copies the payloads of `pkts` slots from `index` into `buf` (truncating). Returns
    /// (bytes copied, message length).
    fn copy_message(&self, index: usize, pkts: usize, buf: &mut [u8]) -> (usize, usize) {
        let (mut copied, mut total) = (0, 0);
        for slot in self.slots.range(index..index + pkts) {
            if let Slot::Filled { data, .. } = slot {
                let n = data.len().min(buf.len() - copied);
                buf[copied..copied + n].copy_from_slice(&data[..n]);
                copied += n;
                total += data.len();
            }
        }
        (copied, total)
    }
}

/// `part` as a slice of `owner`, if it lies within it (checked by address, so a caller's
/// mistake costs a copy rather than a panic).
fn slice_within(owner: &Bytes, part: &[u8]) -> Option<Bytes> {
    let start = (part.as_ptr() as usize).checked_sub(owner.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= owner.len()).then(|| owner.slice(start..end))
}

/// What sits at the acknowledged front in message mode.
enum FrontScan {
    /// A whole message of this many packets.
    Complete(usize),
    /// The start of a message whose end is not acknowledged yet.
    Incomplete,
    /// Something that can never be delivered.
    Broken,
}

impl Unordered {
    /// Counts an accepted out-of-order packet; queues its message once all packets are in.
    fn on_insert(&mut self, seq: SeqNumber, meta: PacketMeta, capacity_pkts: u32) {
        let progress = self.progress.entry(meta.msg.value()).or_default();
        progress.received += 1;
        if meta.first {
            progress.first = Some(seq);
        }
        if meta.last {
            progress.last = Some(seq);
        }
        let (Some(first), Some(last)) = (progress.first, progress.last) else {
            return;
        };
        if first <= last && first.len_to(last) == progress.received {
            self.progress.remove(&meta.msg.value());
            if self.ready.len() >= capacity_pkts as usize {
                // Stale entries (delivered in order meanwhile) pile up only if the
                // application never drains; forget the oldest.
                self.ready.pop_front();
            }
            self.ready.push_back(first);
        }
    }
}
