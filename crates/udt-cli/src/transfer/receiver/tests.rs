//! The receiver against a hostile sender: frames from memory through [`Link::over`].

use std::cell::RefCell;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::transfer::manifest::{Mtime, MANIFEST_BUDGET};
use crate::transfer::paths::{umask, RelPath};
use crate::transfer::Quiet;

fn rel(s: &str) -> RelPath {
    RelPath::parse(s.as_bytes()).unwrap()
}

fn entry(path: &str, kind: EntryKind, size: u64) -> Entry {
    Entry {
        path: rel(path),
        kind,
        size,
        mode: 0o644,
        mtime: Mtime { secs: 0, nanos: 0 },
    }
}

/// A sender's bytes: the manifest, then each file's data whole.
fn wire(entries: &[Entry], files: &[(u32, &[u8])]) -> Vec<u8> {
    let mut w = Vec::new();
    for e in entries {
        Frame::Entry(e.clone()).emit(&mut w);
    }
    Frame::ManifestEnd {
        count: entries.len() as u64,
    }
    .emit(&mut w);
    for &(index, data) in files {
        Frame::FileStart { index, offset: 0 }.emit(&mut w);
        w.extend_from_slice(&data_frame(data));
        Frame::FileEnd {
            digest: *blake3::hash(data).as_bytes(),
        }
        .emit(&mut w);
    }
    Frame::End.emit(&mut w);
    w
}

fn data_frame(data: &[u8]) -> Vec<u8> {
    let mut w = vec![9];
    w.extend_from_slice(&(data.len() as u32).to_le_bytes());
    w.extend_from_slice(data);
    w
}

fn run(input: impl Read, dest: &Path, opts: ReceiveOptions, accept: &Accept) -> Result<Summary> {
    let mut out = Vec::new();
    let mut link = Link::over(input, &mut out);
    receive(&mut link, dest, opts, accept, &Quiet)
}

fn upload() -> ReceiveOptions {
    ReceiveOptions::default()
}

/// Names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// An endless manifest of distinct entries with `name_len`-byte names; counts its frames.
struct EndlessManifest {
    name_len: usize,
    sent: u64,
    pending: Vec<u8>,
}

impl Read for EndlessManifest {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pending.is_empty() {
            let name = format!("{:0width$}", self.sent, width = self.name_len);
            Frame::Entry(entry(&name, EntryKind::Dir, 0)).emit(&mut self.pending);
            self.sent += 1;
        }
        let n = buf.len().min(self.pending.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Ok(n)
    }
}

#[test]
fn a_manifest_cannot_take_more_than_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    for name_len in [20, 255] {
        let mut input = EndlessManifest {
            name_len,
            sent: 0,
            pending: Vec::new(),
        };
        let err = run(&mut input, dir.path(), upload(), &Accept::Any).unwrap_err();
        assert_eq!(err.code, ErrorCode::Unsupported, "{}", err.message);
        assert!(err.message.contains("MiB"), "{}", err.message);
        let per_entry = (2 * size_of::<Entry>() + name_len) as u64;
        assert!(
            input.sent <= MANIFEST_BUDGET as u64 / per_entry + 1,
            "{}",
            input.sent
        );
    }
    assert!(
        listing(dir.path()).is_empty(),
        "nothing created before the manifest is whole"
    );
}

#[test]
fn duplicate_entries_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let e = [
        entry("f", EntryKind::File, 1),
        entry("f", EntryKind::File, 1),
    ];
    let err = run(
        &wire(&e, &[(0, b"a"), (1, b"b")])[..],
        dir.path(),
        upload(),
        &Accept::Any,
    )
    .unwrap_err();
    assert!(err.message.contains("listed twice"), "{}", err.message);
    assert!(listing(dir.path()).is_empty());
}

/// CVE-2019-6111: a server answering `get a` with other files, or with a directory
/// without `-r`, writes nothing.
#[test]
fn a_download_takes_only_what_was_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let asked = Accept::requested(&[rel("sub/a")], false);
    let cases = [
        vec![
            entry("a", EntryKind::File, 1),
            entry(".bashrc", EntryKind::File, 1),
        ],
        vec![entry("a", EntryKind::Dir, 0)],
        vec![entry("a/x", EntryKind::File, 1)],
    ];
    for entries in cases {
        let files: Vec<(u32, &[u8])> = (0..entries.len() as u32).map(|i| (i, &b"x"[..])).collect();
        let err = run(&wire(&entries, &files)[..], dir.path(), upload(), &asked).unwrap_err();
        assert_eq!(err.code, ErrorCode::PathRefused, "{}", err.message);
        assert!(err.message.contains("the server sent"), "{}", err.message);
        assert!(listing(dir.path()).is_empty(), "{:?}", listing(dir.path()));
    }
    // With -r, a tree under the asked name is fine; a sibling is not.
    let asked = Accept::requested(&[rel("a")], true);
    let tree = [
        entry("a", EntryKind::Dir, 0),
        entry("a/x", EntryKind::File, 1),
    ];
    run(&wire(&tree, &[(1, b"x")])[..], dir.path(), upload(), &asked).unwrap();
    assert_eq!(fs::read(dir.path().join("a/x")).unwrap(), b"x");
    let evil = [entry("a", EntryKind::Dir, 0), entry("b", EntryKind::Dir, 0)];
    assert!(run(&wire(&evil, &[])[..], dir.path(), upload(), &asked).is_err());
    assert!(!dir.path().join("b").exists());
}

#[test]
fn sizes_are_checked_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let huge = [entry("f", EntryKind::File, 1 << 55)];
    let err = run(&wire(&huge, &[])[..], dir.path(), upload(), &Accept::Any).unwrap_err();
    assert_eq!(err.code, ErrorCode::DiskFull);
    assert!(err.message.contains("free"), "{}", err.message);
    let opts = ReceiveOptions {
        max_file_size: Some(10),
        ..upload()
    };
    let big = [
        entry("d", EntryKind::Dir, 0),
        entry("d/f", EntryKind::File, 11),
    ];
    let err = run(&wire(&big, &[])[..], dir.path(), opts, &Accept::Any).unwrap_err();
    assert!(err.message.contains("--max-file-size"), "{}", err.message);
    assert!(listing(dir.path()).is_empty());
}

#[test]
fn directories_created_per_transfer_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let deep = vec!["d"; MAX_DIRS_CREATED + 1].join("/");
    let entries = [entry(&deep, EntryKind::Dir, 0)];
    let err = run(&wire(&entries, &[])[..], dir.path(), upload(), &Accept::Any).unwrap_err();
    assert!(err.message.contains("directories"), "{}", err.message);
}

#[test]
fn a_special_file_in_the_way_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo =
        std::ffi::CString::new(dir.path().join("f").into_os_string().into_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let opts = ReceiveOptions {
        replace: Replace::Allowed,
        ..upload()
    };
    let e = [entry("f", EntryKind::File, 1)];
    let err = run(&wire(&e, &[(0, b"x")])[..], dir.path(), opts, &Accept::Any).unwrap_err();
    assert_eq!(err.code, ErrorCode::PathRefused, "{}", err.message);
}

#[test]
fn files_get_the_umask_not_the_senders_mode() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = entry("f", EntryKind::File, 1);
    e.mode = 0o4777; // setuid, world-writable
    run(
        &wire(&[e], &[(0, b"x")])[..],
        dir.path(),
        upload(),
        &Accept::Any,
    )
    .unwrap();
    let mode = fs::metadata(dir.path().join("f"))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(mode, 0o777 & !umask());
}

/// A reader that runs `between` once, after the first `at` bytes of `bytes`.
struct Interrupted<'a> {
    bytes: Vec<u8>,
    pos: usize,
    at: usize,
    between: RefCell<Option<Box<dyn FnOnce() + 'a>>>,
}

impl Read for Interrupted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.at {
            if let Some(f) = self.between.borrow_mut().take() {
                f();
            }
        }
        let end = if self.pos < self.at {
            self.at
        } else {
            self.bytes.len()
        };
        let n = buf.len().min(end - self.pos);
        buf[..n].copy_from_slice(&self.bytes[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Two uploads of one name at once: B completes while A is half way. Each wrote its own
/// partial file (0600), so the result is one of them whole, never a mix: without
/// replacing, A finds B's file and fails; with replacing, A's file replaces B's.
#[test]
fn two_uploads_to_one_path_never_mix() {
    for replace in [Replace::Never, Replace::Refused, Replace::Allowed] {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (vec![b'a'; 200_000], vec![b'b'; 200_000]);
        let e = [entry("f", EntryKind::File, 400_000)];
        let whole = |data: &[u8]| {
            let mut w = Vec::new();
            Frame::Entry(e[0].clone()).emit(&mut w);
            Frame::ManifestEnd { count: 1 }.emit(&mut w);
            Frame::FileStart {
                index: 0,
                offset: 0,
            }
            .emit(&mut w);
            w.extend_from_slice(&data_frame(data));
            let at = w.len();
            w.extend_from_slice(&data_frame(data));
            let mut h = blake3::Hasher::new();
            h.update(data).update(data);
            Frame::FileEnd {
                digest: *h.finalize().as_bytes(),
            }
            .emit(&mut w);
            Frame::End.emit(&mut w);
            (w, at)
        };
        let (wire_a, at) = whole(&a);
        let (wire_b, _) = whole(&b);
        let opts = ReceiveOptions {
            replace,
            ..upload()
        };
        let dest = dir.path();
        let input = Interrupted {
            bytes: wire_a,
            pos: 0,
            at,
            between: RefCell::new(Some(Box::new(|| {
                thread::sleep(std::time::Duration::from_millis(50)); // A's writer opens
                let parts: Vec<_> = listing(dest);
                assert_eq!(parts.len(), 1, "{parts:?}");
                let mode = fs::metadata(dest.join(&parts[0]))
                    .unwrap()
                    .permissions()
                    .mode();
                assert_eq!(mode & 0o777, 0o600, "partial files are private");
                run(&wire_b[..], dest, opts, &Accept::Any).unwrap();
            }))),
        };
        let result = run(input, dest, opts, &Accept::Any);
        let got = fs::read(dest.join("f")).unwrap();
        match replace {
            Replace::Allowed => {
                result.unwrap();
                assert!(got.iter().all(|&c| c == b'a'), "{replace:?}: mixed");
            }
            Replace::Never | Replace::Refused => {
                let err = result.unwrap_err();
                assert_eq!(err.code, ErrorCode::Exists, "{}", err.message);
                assert!(err.message.contains("appeared during"), "{}", err.message);
                assert!(
                    got.iter().all(|&c| c == b'b'),
                    "{replace:?}: mixed or replaced"
                );
            }
        }
        assert_eq!(got.len(), 400_000);
        assert_eq!(listing(dest), ["f"], "no partial file left");
    }
}

#[test]
fn replacing_asked_for_but_not_allowed_says_which_flag() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("f"), b"old").unwrap();
    let e = [entry("f", EntryKind::File, 1)];
    let opts = ReceiveOptions {
        replace: Replace::Refused,
        ..upload()
    };
    let err = run(&wire(&e, &[(0, b"x")])[..], dir.path(), opts, &Accept::Any).unwrap_err();
    assert_eq!(err.code, ErrorCode::Exists);
    assert!(err.message.contains("--allow-overwrite"), "{}", err.message);
    assert_eq!(fs::read(dir.path().join("f")).unwrap(), b"old");
}
