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
