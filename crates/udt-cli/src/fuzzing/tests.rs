//! Stable drivers: both bodies on random inputs and on the committed seeds.

use std::path::PathBuf;

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;
use crate::transfer::manifest::{Entry, EntryKind, Mtime};
use crate::transfer::protocol::Frame;

proptest! {
    #[test]
    fn cli_frames_on_random_bytes(data in vec(any::<u8>(), 0..2_000)) {
        cli_frames(&data);
    }
}

proptest! {
    // Each case touches the file system: fewer of them.
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn cli_receiver_on_random_bytes(data in vec(any::<u8>(), 0..600)) {
        cli_receiver(&data);
    }

    /// Mostly well-formed streams (a real manifest, then mutated), so cases get past the
    /// manifest into the data phase.
    #[test]
    fn cli_receiver_on_mutated_seeds(seed in 0..SEEDS, flips in vec((any::<usize>(), any::<u8>()), 0..4), options in any::<u8>()) {
        let mut data = seeds()[seed].1.clone();
        data[0] = options;
        for (at, byte) in flips {
            let at = at % data.len();
            data[at] ^= byte;
        }
        cli_receiver(&data);
    }
}

fn seed_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds")
}

#[test]
fn seed_corpora_replay() {
    for (target, body) in [
        ("cli_frames", cli_frames as fn(&[u8])),
        ("cli_receiver", cli_receiver),
    ] {
        let dir = seed_dir().join(target);
        let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let mut count = 0;
        for entry in entries {
            body(&fs::read(entry.unwrap().path()).unwrap());
            count += 1;
        }
        assert!(count > 0, "no seeds for {target}");
    }
}

/// The committed seeds are what [`seeds`] builds (regenerate with
/// `cargo test -p udt-cli --lib fuzzing -- --ignored`).
#[test]
fn committed_seeds_are_current() {
    for (name, bytes) in seeds() {
        for target in ["cli_frames", "cli_receiver"] {
            let path = seed_dir().join(target).join(name);
            let on_disk = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let expected = if target == "cli_frames" {
                &bytes[1..]
            } else {
                &bytes[..]
            };
            assert_eq!(on_disk, expected, "{} is stale", path.display());
        }
    }
}

#[test]
#[ignore = "writes the seed files"]
fn write_seeds() {
    for (name, bytes) in seeds() {
        for target in ["cli_frames", "cli_receiver"] {
            let dir = seed_dir().join(target);
            fs::create_dir_all(&dir).unwrap();
            let bytes = if target == "cli_frames" {
                &bytes[1..]
            } else {
                &bytes[..]
            };
            fs::write(dir.join(name), bytes).unwrap();
        }
    }
}

const SEEDS: usize = 6;

/// Named receiver cases: an options byte, then a sender's frames (the frame seeds are the
/// same bytes without the options byte).
fn seeds() -> [(&'static str, Vec<u8>); SEEDS] {
    let e = |path: &str, kind, size| {
        Frame::Entry(Entry {
            path: RelPath::parse(path.as_bytes()).unwrap(),
            kind,
            size,
            mode: 0o640,
            mtime: Mtime {
                secs: 1_700_000_000,
                nanos: 5,
            },
        })
    };
    let tree = [
        e("d", EntryKind::Dir, 0),
        e("d/x", EntryKind::File, 5),
        e("d/e", EntryKind::Dir, 0),
        e("d/e/y", EntryKind::File, 0),
    ];
    let file = |index: u32, data: &[u8]| {
        let mut w = Vec::new();
        Frame::FileStart { index, offset: 0 }.emit(&mut w);
        if !data.is_empty() {
            w.push(9);
            w.extend_from_slice(&(data.len() as u32).to_le_bytes());
            w.extend_from_slice(data);
        }
        Frame::FileEnd {
            digest: *blake3::hash(data).as_bytes(),
        }
        .emit(&mut w);
        w
    };
    let stream = |options: u8, entries: &[Frame], files: &[Vec<u8>], end: bool| {
        let mut w = vec![options];
        for f in entries {
            f.emit(&mut w);
        }
        Frame::ManifestEnd {
            count: entries.len() as u64,
        }
        .emit(&mut w);
        for f in files {
            w.extend_from_slice(f);
        }
        if end {
            Frame::End.emit(&mut w);
        }
        w
    };
    // "new" arrives, but the sender's digest is of "neX".
    let mut corrupt = file(0, b"new");
    let at = corrupt.len() - 32;
    corrupt[at..].copy_from_slice(blake3::hash(b"neX").as_bytes());
    let mut resumed = stream(0b0000_0110, &[e("a", EntryKind::File, 6)], &[], false);
    Frame::FileStart {
        index: 0,
        offset: 3,
    }
    .emit(&mut resumed);
    [
        (
            "upload_tree",
            stream(0, &tree, &[file(1, b"hello"), file(3, b"")], true),
        ),
        (
            "download_tree",
            stream(0b0001_1000, &tree, &[file(1, b"hello"), file(3, b"")], true),
        ),
        (
            "planted_file",
            stream(
                0b0000_1000,
                &[e("a", EntryKind::File, 1), e(".bashrc", EntryKind::File, 1)],
                &[file(0, b"x"), file(1, b"y")],
                true,
            ),
        ),
        (
            "duplicate",
            stream(
                2,
                &[e("f", EntryKind::File, 1), e("f", EntryKind::File, 1)],
                &[file(0, b"x"), file(1, b"y")],
                true,
            ),
        ),
        (
            "replace_and_corrupt",
            stream(2, &[e("a", EntryKind::File, 3)], &[corrupt], true),
        ),
        ("resume_offer", resumed),
    ]
}

/// The well-formed seeds really transfer (so mutations of them reach the data phase), and
/// the hostile ones are refused.
#[test]
fn seeds_reach_the_data_phase() {
    for (name, bytes) in seeds() {
        let (opts, accept) = options(bytes[0]);
        let dir = tempfile::tempdir().unwrap();
        let mut answers = Vec::new();
        let mut link = Link::over(&bytes[1..], &mut answers);
        let result = receive(&mut link, dir.path(), opts, &accept, &Quiet);
        let expect_ok = matches!(name, "upload_tree" | "download_tree");
        assert_eq!(result.is_ok(), expect_ok, "{name}: {result:?}");
        if expect_ok {
            assert_eq!(fs::read(dir.path().join("d/x")).unwrap(), b"hello");
        }
    }
}
