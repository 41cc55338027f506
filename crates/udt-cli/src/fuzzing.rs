//! Property bodies shared by the libFuzzer targets (`fuzz/fuzz_targets/cli_*.rs`) and the
//! stable tests in `fuzzing/tests.rs` (one property, two drivers, as in
//! `udt_proto::fuzzing`). Each takes arbitrary bytes and panics on a property violation.
//!
//! - [`cli_frames`]: the frame reader and parser are total, and what parses re-emits to the
//!   same frame.
//! - [`cli_receiver`]: the receiver's state machine fed a hostile sender's byte stream (the
//!   first byte picks the options) never panics, writes nothing outside its destination,
//!   takes nothing but what a download asked for, and leaves no partial file behind unless
//!   `--resume`.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::transfer::paths::RelPath;
use crate::transfer::protocol::{FrameReader, Incoming, HEADER_LEN, MAX_DATA};
use crate::transfer::receiver::{receive, Accept, ReceiveOptions, Replace};
use crate::transfer::resume::PART_SUFFIX;
use crate::transfer::{Link, Quiet};

#[cfg(test)]
mod tests;

/// Names a fuzzed download asks for (`cli_receiver` with the download bit).
pub const REQUESTED: [&str; 2] = ["a", "d"];

/// Frames read from arbitrary bytes: never a panic, and every control frame that parses
/// emits bytes that parse back to it.
pub fn cli_frames(data: &[u8]) {
    let mut reader = FrameReader::new(data);
    let mut payload = vec![0u8; MAX_DATA.min(data.len())];
    for _ in 0..64 {
        match reader.next_incoming() {
            Ok(Incoming::Frame(frame)) => {
                let mut wire = Vec::new();
                frame.emit(&mut wire);
                let again = FrameReader::new(&wire[..]).next_frame();
                assert_eq!(again.as_ref().ok(), Some(&frame), "round trip of {wire:?}");
                assert!(wire.len() >= HEADER_LEN);
            }
            Ok(Incoming::Data(n)) => {
                assert!((1..=MAX_DATA).contains(&n));
                let mut buf = vec![0u8; n.min(payload.len())];
                if reader.read_data(&mut buf).is_err() || buf.len() < n {
                    return;
                }
                payload.clear();
            }
            Err(_) => return,
        }
    }
}

/// The options a fuzz case's first byte picks: bits 0-1 replace, bit 2 resume, bit 3 a
/// download of [`REQUESTED`] (else an upload), bit 4 `-r`, bit 5 a 1000-byte size limit.
fn options(byte: u8) -> (ReceiveOptions, Accept) {
    let replace = match byte & 3 {
        0 => Replace::Never,
        1 => Replace::Refused,
        _ => Replace::Allowed,
    };
    let opts = ReceiveOptions {
        replace,
        resume: byte & 4 != 0,
        max_file_size: (byte & 32 != 0).then_some(1000),
    };
    let accept = if byte & 8 != 0 {
        let paths: Vec<RelPath> = REQUESTED
            .iter()
            .filter_map(|n| RelPath::parse(n.as_bytes()).ok())
            .collect();
        Accept::requested(&paths, byte & 16 != 0)
    } else {
        Accept::Any
    };
    (opts, accept)
}

/// The receiver against a hostile sender (see the module doc). Each case runs in a fresh
/// directory `case/dest` under the system's temporary directory, removed afterwards.
pub fn cli_receiver(data: &[u8]) {
    let Some((&first, stream)) = data.split_first() else {
        return;
    };
    let (opts, accept) = options(first);
    static CASE: AtomicU64 = AtomicU64::new(0);
    let case = std::env::temp_dir().join(format!(
        "udt-fuzz-receiver-{}-{}",
        std::process::id(),
        CASE.fetch_add(1, Ordering::Relaxed)
    ));
    let dest = case.join("dest");
    fs::create_dir_all(&dest).expect("a scratch directory");
    // A file already there, so that replacing and resuming have something to meet.
    let _ = fs::write(dest.join("a"), b"old");
    let mut answers = Vec::new();
    let result = receive(
        &mut Link::over(stream, &mut answers),
        &dest,
        opts,
        &accept,
        &Quiet,
    );
    check_confined(&case, &dest);
    if let Accept::Requested { names, .. } = &accept {
        for top in fs::read_dir(&dest).expect("dest").flatten() {
            let name = top.file_name();
            let ok = name == "a"
                || names.iter().any(|n| n.as_path().as_os_str() == name)
                || part_of_a_requested(&name);
            assert!(ok, "a download created {name:?}");
        }
    }
    if !opts.resume && result.is_err() {
        assert_no_parts(&dest);
    }
    let _ = fs::remove_dir_all(&case);
}

/// Nothing but `dest` appeared beside it.
fn check_confined(case: &Path, dest: &Path) {
    for entry in fs::read_dir(case).expect("case").flatten() {
        assert_eq!(entry.path(), dest, "written outside the destination");
    }
}

/// A partial file of a requested name (kept with `--resume`).
fn part_of_a_requested(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    REQUESTED
        .iter()
        .any(|r| name.starts_with(&format!(".{r}.")) && name.ends_with(PART_SUFFIX))
}

/// No partial file anywhere under `dir`.
fn assert_no_parts(dir: &Path) {
    for entry in fs::read_dir(dir).expect("dir").flatten() {
        let path = entry.path();
        assert!(
            !path.to_string_lossy().ends_with(PART_SUFFIX),
            "left behind: {}",
            path.display()
        );
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            assert_no_parts(&path);
        }
    }
}
