//! The pure halves of UDP segmentation offload: cutting a coalesced receive buffer (`UDP_GRO`)
//! back into datagrams (slices of the batch's slot, or handles on a lent train), and grouping
//! queued datagrams into segmentation-offload sends (`UDP_SEGMENT`). No system calls here, so
//! both are unit-tested on their own.
//!
//! A GRO buffer is a train of datagrams of `gso_size` bytes each, the last possibly shorter;
//! the kernel says `gso_size` in a control message. A GSO send is the mirror image: one
//! buffer, one destination, all segments but the last of equal size.

use std::net::SocketAddr;

use bytes::BytesMut;

/// Most segments one GSO send may carry (the kernel's `UDP_MAX_SEGMENTS` is 64 on older
/// kernels, 128 on newer ones).
pub(crate) const MAX_SEGMENTS: usize = 64;
/// Most bytes one GSO send may carry: a UDP payload must fit a 16-bit IP length with the
/// IPv6 and UDP headers.
pub(crate) const MAX_GSO_BYTES: usize = 65_535 - 40 - 8;

/// One datagram of a received slot, and where its bytes lie.
#[derive(Debug)]
pub(crate) enum Datagram<'a> {
    /// In the batch's own slot, which the next read reuses: it may be changed in place (a
    /// protected packet opened), but what is kept must be copied out.
    InSlot(&'a mut [u8]),
    /// Cut from a lent train: a handle of its own on the train's allocation, which a
    /// connection may keep (a data packet's payload stays there).
    Lent(BytesMut),
}

impl Datagram<'_> {
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Self::InSlot(bytes) => bytes,
            Self::Lent(bytes) => bytes,
        }
    }
}

/// The datagrams in a received slot of `len` bytes whose segment size the kernel reported
/// as `seg` (`None` or 0: not coalesced, one datagram). Total for any input: at most
/// `len / seg + 1` datagrams, each within the slot; an empty slot is one empty datagram, as
/// UDP allows.
#[derive(Debug)]
pub(crate) struct Cut<'a> {
    seg: usize,
    slot: Option<&'a mut [u8]>,
    train: Option<BytesMut>,
}

impl<'a> Cut<'a> {
    /// The datagrams of a slot's bytes, each a mutable slice of them.
    pub(crate) fn slot(buf: &'a mut [u8], seg: Option<usize>) -> Self {
        Self {
            seg: segment_size(buf.len(), seg),
            slot: Some(buf),
            train: None,
        }
    }

    /// The datagrams of a lent train, each a handle of its own on the allocation.
    pub(crate) fn train(buf: BytesMut, seg: Option<usize>) -> Self {
        Self {
            seg: segment_size(buf.len(), seg),
            slot: None,
            train: Some(buf),
        }
    }
}

impl<'a> Iterator for Cut<'a> {
    type Item = Datagram<'a>;

    fn next(&mut self) -> Option<Datagram<'a>> {
        if let Some(train) = &mut self.train {
            if train.len() > self.seg {
                return Some(Datagram::Lent(train.split_to(self.seg)));
            }
            return self.train.take().map(Datagram::Lent);
        }
        let slot = self.slot.take()?;
        if slot.len() > self.seg {
            let (head, tail) = slot.split_at_mut(self.seg);
            self.slot = Some(tail);
            return Some(Datagram::InSlot(head));
        }
        Some(Datagram::InSlot(slot))
    }
}

/// Where to cut a slot of `len` bytes: at the reported size if it is one, else nowhere.
fn segment_size(len: usize, seg: Option<usize>) -> usize {
    match seg {
        Some(s) if s > 0 && s < len => s,
        _ => len.max(1),
    }
}

/// One datagram queued for sending: where to, and where its bytes sit: `len` bytes in the
/// batch buffer from `start`, then `lent` more elsewhere (a data packet's payload left in
/// the connection's send buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Queued {
    pub(crate) to: SocketAddr,
    pub(crate) start: usize,
    pub(crate) len: usize,
    pub(crate) lent: usize,
    /// Its destination accepts GSO trains (the peer announced it).
    pub(crate) gso: bool,
}

impl Queued {
    /// The datagram's size on the wire (its UDP payload).
    pub(crate) fn size(&self) -> usize {
        self.len + self.lent
    }
}

/// Consecutive queued datagrams sent as one message: `count` datagrams from index `first`,
/// as one GSO send of `seg`-byte segments when `count > 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) first: usize,
    pub(crate) count: usize,
    pub(crate) seg: usize,
}

/// Group `queued` into runs, appending them to `out`. With `gso` off, or for datagrams whose
/// destination did not ask for it, every run is a single datagram. A run holds datagrams
/// whose parts in the buffer are adjacent, that go to the same destination, and that all
/// have the first one's size except possibly the last (which ends the run).
pub(crate) fn plan(queued: &[Queued], gso: bool, out: &mut Vec<Run>) {
    let mut i = 0;
    while i < queued.len() {
        let head = queued[i];
        let mut run = Run {
            first: i,
            count: 1,
            seg: head.size(),
        };
        if gso && head.gso && head.size() > 0 {
            let mut end = head.start + head.len;
            let mut bytes = head.size();
            while let Some(next) = queued.get(i + run.count) {
                let fits = next.gso
                    && next.to == head.to
                    && next.start == end
                    && next.size() > 0
                    && next.size() <= run.seg
                    && run.count < MAX_SEGMENTS
                    && bytes + next.size() <= MAX_GSO_BYTES;
                if !fits {
                    break;
                }
                run.count += 1;
                end += next.len;
                bytes += next.size();
                if next.size() < run.seg {
                    break;
                }
            }
        }
        i += run.count;
        out.push(run);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Both kinds of slot cut alike: the datagrams' bytes, in order.
    fn cut(buf: &[u8], seg: Option<usize>) -> Vec<Vec<u8>> {
        let mut slot = buf.to_vec();
        let in_slot: Vec<Vec<u8>> = Cut::slot(&mut slot, seg)
            .map(|d| {
                assert!(matches!(d, Datagram::InSlot(_)));
                d.bytes().to_vec()
            })
            .collect();
        let lent: Vec<Vec<u8>> = Cut::train(BytesMut::from(buf), seg)
            .map(|d| {
                assert!(matches!(d, Datagram::Lent(_)));
                d.bytes().to_vec()
            })
            .collect();
        assert_eq!(in_slot, lent);
        lent
    }

    #[test]
    fn a_train_is_cut_with_a_short_tail() {
        let buf: Vec<u8> = (0..10).collect();
        assert_eq!(cut(&buf, Some(4)), [&buf[0..4], &buf[4..8], &buf[8..10]]);
        // Not coalesced, a segment size of 0 or at least the buffer: one datagram.
        for seg in [None, Some(0), Some(10), Some(99)] {
            assert_eq!(cut(&buf, seg), [&buf[..]]);
        }
        assert_eq!(cut(&[], Some(4)), [&[] as &[u8]]);
    }

    #[test]
    fn datagrams_cut_from_a_train_share_its_allocation_and_change_alone() {
        let mut train = BytesMut::with_capacity(64);
        train.extend_from_slice(&[1; 30]);
        let base = train.as_ptr();
        let mut parts: Vec<BytesMut> = Cut::train(train, Some(10))
            .map(|d| match d {
                Datagram::Lent(b) => b,
                Datagram::InSlot(_) => unreachable!("a train is cut into lent datagrams"),
            })
            .collect();
        assert_eq!(parts.len(), 3);
        for (i, part) in parts.iter().enumerate() {
            assert_eq!(part.as_ptr(), base.wrapping_add(10 * i), "no copy");
        }
        parts[1].fill(2);
        assert_eq!(&parts[0][..], &[1; 10]);
        assert_eq!(&parts[1][..], &[2; 10]);
        assert_eq!(&parts[2][..], &[1; 10]);
    }

    proptest! {
        #[test]
        fn cutting_is_total_and_lossless(len in 0usize..3000, seg in proptest::option::of(0usize..2000)) {
            let buf = vec![7u8; len];
            let parts = cut(&buf, seg);
            prop_assert_eq!(parts.iter().map(Vec::len).sum::<usize>(), len);
            prop_assert!(parts.len() <= len / seg.unwrap_or(1).max(1) + 1);
            if let Some(s) = seg.filter(|&s| s > 0) {
                prop_assert!(parts.iter().all(|p| p.len() <= s.max(len)));
            }
        }
    }

    fn queue(sizes: &[(usize, bool)], to: SocketAddr) -> Vec<Queued> {
        let mut start = 0;
        sizes
            .iter()
            .map(|&(len, gso)| {
                let q = Queued {
                    to,
                    start,
                    len,
                    lent: 0,
                    gso,
                };
                start += len;
                q
            })
            .collect()
    }

    fn runs(q: &[Queued], gso: bool) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        plan(q, gso, &mut out);
        out.iter().map(|r| (r.first, r.count)).collect()
    }

    #[test]
    fn plan_groups_equal_sizes_and_ends_on_a_short_one() {
        let to: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let q = queue(
            &[
                (1472, true),
                (1472, true),
                (1472, true),
                (40, true),
                (1472, true),
                (1000, true),
                (1472, true),
            ],
            to,
        );
        assert_eq!(runs(&q, true), [(0, 4), (4, 2), (6, 1)]);
        assert_eq!(runs(&q, false), (0..7).map(|i| (i, 1)).collect::<Vec<_>>());
    }

    #[test]
    fn plan_respects_destination_opt_in_and_limits() {
        let to: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let other: SocketAddr = "127.0.0.1:10".parse().unwrap();
        let mut q = queue(&[(100, true), (100, false), (100, true), (100, true)], to);
        q[3].to = other;
        assert_eq!(runs(&q, true), [(0, 1), (1, 1), (2, 1), (3, 1)]);
        // 100 datagrams of 1472 bytes: the byte limit (44 segments) cuts first.
        let q = queue(&[(1472, true); 100], to);
        assert_eq!(runs(&q, true), [(0, 44), (44, 44), (88, 12)]);
        // Small datagrams: the segment-count limit.
        let q = queue(&[(20, true); 130], to);
        assert_eq!(runs(&q, true), [(0, 64), (64, 64), (128, 2)]);
    }

    /// Datagrams whose payloads lie outside the buffer (16-byte headers in it) are sized
    /// by header and payload: a train of them groups as the same datagrams copied would.
    #[test]
    fn plan_sizes_lent_datagrams_by_their_whole_length() {
        let to: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let mut q = queue(&[(16, true); 50], to);
        for d in &mut q {
            d.lent = 1456;
        }
        q[5].lent = 100;
        // 44 of 1472 bytes fit a send; the short one at 5 ends the first run.
        assert_eq!(runs(&q, true), [(0, 6), (6, 44)]);
        // A copied datagram of the same size joins a lent train.
        let mut q = queue(&[(16, true), (1472, true), (16, true)], to);
        q[0].lent = 1456;
        q[2].lent = 1456;
        assert_eq!(runs(&q, true), [(0, 3)]);
    }
}
