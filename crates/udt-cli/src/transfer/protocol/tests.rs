//! Frame round trips and the hostile-bytes property: parsing never panics.

use proptest::prelude::*;

use super::*;

fn rel(s: &str) -> RelPath {
    RelPath::parse(s.as_bytes()).unwrap()
}

fn samples() -> Vec<Frame> {
    vec![
        Frame::Hello { version: VERSION },
        Frame::Get {
            recursive: true,
            paths: vec![rel("a/b"), rel("ünï")],
        },
        Frame::Put {
            dest: Some(rel("in")),
            force: true,
            resume: false,
        },
        Frame::Put {
            dest: None,
            force: false,
            resume: true,
        },
        Frame::Entry(Entry {
            path: rel("d/f.bin"),
            kind: EntryKind::File,
            size: 1 << 40,
            mode: 0o644,
            mtime: Mtime {
                secs: -5,
                nanos: 999_999_999,
            },
        }),
        Frame::ManifestEnd { count: 10_000 },
        Frame::Resume {
            index: 7,
            offset: 12345,
            digest: [9; 32],
        },
        Frame::Go,
        Frame::FileStart {
            index: 3,
            offset: 0,
        },
        Frame::FileEnd { digest: [1; 32] },
        Frame::End,
        Frame::Done { files: 2, bytes: 3 },
        Frame::Error {
            code: ErrorCode::DiskFull,
            message: "f: no space left on device".into(),
        },
    ]
}

#[test]
fn every_frame_round_trips_through_reader_and_writer() {
    let mut wire = Vec::new();
    {
        let mut w = FrameWriter::new(&mut wire);
        for f in samples() {
            w.send(&f).unwrap();
        }
        let mut data = DataBuf::new();
        data.space()[..3].copy_from_slice(b"xyz");
        data.set_len(3);
        w.send_data(&mut data).unwrap();
        w.flush().unwrap();
    }
    let mut r = FrameReader::new(&wire[..]);
    for f in samples() {
        assert_eq!(r.next_frame().unwrap(), f);
    }
    let Incoming::Data(n) = r.next_incoming().unwrap() else {
        panic!("data expected")
    };
    let mut got = vec![0; n];
    r.read_data(&mut got).unwrap();
    assert_eq!(got, b"xyz");
    assert_eq!(
        r.next_incoming().unwrap_err().code,
        ErrorCode::Io,
        "end of stream"
    );
}

/// A sink that keeps what it is given, as a UDT stream's send buffer does until the peer
/// acknowledges it, taking at most `step` bytes a call.
#[derive(Default)]
struct Holding {
    held: Vec<Bytes>,
    step: usize,
}

impl Write for Holding {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.held.push(Bytes::copy_from_slice(buf));
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl FrameSink for Holding {
    fn write_shared(&mut self, data: &Bytes) -> io::Result<usize> {
        let n = data.len().min(self.step);
        self.held.push(data.slice(..n));
        Ok(n)
    }
}

/// A large data frame goes to the sink whole and uncopied, in as many calls as the sink
/// takes; its buffer comes back only once the sink let go of it. A small one is copied.
#[test]
fn large_data_frames_are_held_uncopied_and_reclaimed_after() {
    let mut w = FrameWriter::new(Holding {
        step: 300_000,
        ..Holding::default()
    });
    let mut big = DataBuf::new();
    let len = GATHER / 4 + 12_345;
    for (k, b) in big.space()[..len].iter_mut().enumerate() {
        *b = k as u8;
    }
    big.set_len(len);
    let payload_at = big.payload().as_ptr();
    let Sent::Held(frame) = w.send_data_shared(big).unwrap() else {
        panic!("a large frame is held")
    };
    let wire: Vec<u8> = w.inner.held.concat();
    assert_eq!(wire.len(), HEADER_LEN + len);
    assert_eq!(
        w.inner.held[0].as_ptr(),
        frame.as_ptr(),
        "the sink has the buffer itself"
    );
    let mut r = FrameReader::new(&wire[..]);
    let Incoming::Data(n) = r.next_incoming().unwrap() else {
        panic!("data expected")
    };
    let mut got = vec![0; n];
    r.read_data(&mut got).unwrap();
    assert!(got.iter().enumerate().all(|(k, &b)| b == k as u8));
    let frame = DataBuf::reclaim(frame).expect_err("still held by the sink");
    w.inner.held.clear();
    let mut again = DataBuf::reclaim(frame).expect("let go");
    assert_eq!(
        again.space().as_ptr(),
        payload_at,
        "the same buffer, reused"
    );
    assert_eq!(again.space().len(), MAX_DATA);
    let mut small = DataBuf::new();
    small.set_len(10);
    assert!(matches!(
        w.send_data_shared(small).unwrap(),
        Sent::Copied(_)
    ));
}

/// File data is read into the payload, so it starts on a page boundary (see [`DataBuf`]),
/// also in a buffer that comes back from the stream after a short frame (a file's tail).
#[test]
fn payloads_start_on_a_page_boundary_and_stay_there() {
    let page_aligned = |buf: &mut DataBuf| buf.space().as_ptr() as usize % 4096 == 0;
    let mut w = FrameWriter::new(Holding {
        step: usize::MAX,
        ..Holding::default()
    });
    for len in [MAX_DATA, GATHER + 1] {
        let mut buf = DataBuf::new();
        assert!(page_aligned(&mut buf));
        buf.set_len(len);
        let Sent::Held(frame) = w.send_data_shared(buf).unwrap() else {
            panic!("a large frame is held")
        };
        w.inner.held.clear();
        let mut again = DataBuf::reclaim(frame).expect("let go");
        assert!(page_aligned(&mut again), "after a frame of {len} bytes");
        assert_eq!(again.space().len(), MAX_DATA);
    }
}

#[test]
fn oversized_lengths_are_refused_before_reading() {
    let mut wire = vec![kind::DATA];
    wire.extend_from_slice(&((MAX_DATA as u32) + 1).to_le_bytes());
    assert_eq!(
        FrameReader::new(&wire[..])
            .next_incoming()
            .unwrap_err()
            .code,
        ErrorCode::Protocol
    );
    let mut wire = vec![kind::ENTRY];
    wire.extend_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(
        FrameReader::new(&wire[..])
            .next_incoming()
            .unwrap_err()
            .code,
        ErrorCode::Protocol
    );
}

#[test]
fn hostile_paths_in_frames_are_refused() {
    let mut payload = vec![0u8];
    payload.extend_from_slice(&5u16.to_le_bytes());
    payload.extend_from_slice(b"../x1");
    let err = Frame::parse(kind::GET, &payload).unwrap_err();
    assert_eq!(err.code, ErrorCode::PathRefused);
}

#[test]
fn magic_is_never_a_classic_name_length() {
    for v in [i32::from_le_bytes(MAGIC), i32::from_be_bytes(MAGIC)] {
        assert!(!(1..=1023).contains(&v), "{v}");
    }
}

proptest! {
    #[test]
    fn parse_never_panics(kind in 0u8..16, payload in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = Frame::parse(kind, &payload);
    }

    #[test]
    fn reader_never_panics(wire in proptest::collection::vec(any::<u8>(), 0..400)) {
        let mut r = FrameReader::new(&wire[..]);
        for _ in 0..8 {
            match r.next_incoming() {
                Ok(Incoming::Data(n)) => {
                    let mut buf = vec![0; n.min(400)];
                    if r.read_data(&mut buf).is_err() { break; }
                }
                Ok(Incoming::Frame(_)) => {}
                Err(_) => break,
            }
        }
    }

    #[test]
    fn entries_round_trip(size in any::<u64>(), mode in any::<u32>(), secs in any::<i64>(), nanos in 0u32..1_000_000_000) {
        let f = Frame::Entry(Entry { path: rel("x/y"), kind: EntryKind::Dir, size, mode, mtime: Mtime { secs, nanos } });
        let mut wire = Vec::new();
        f.emit(&mut wire);
        prop_assert_eq!(Frame::parse(wire[0], &wire[HEADER_LEN..]).unwrap(), f);
    }
}
