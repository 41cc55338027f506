//! Helpers the end-to-end test binaries share (each binary includes this module and uses
//! what it needs, hence the `dead_code` allowance).
#![allow(dead_code)]

use std::process::Output;

/// Assert that a `udt` command succeeded, showing what it printed if not.
pub(crate) fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "udt cp failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Assert failure with exit code 1 and `needle` in stderr.
pub(crate) fn fails_with(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(err.contains(needle), "expected {needle:?} in {err:?}");
}

/// The port in `udt serve`'s first line (`listening on ADDR, ...`).
pub(crate) fn listening_port(line: &str) -> u16 {
    line.strip_prefix("listening on ")
        .and_then(|rest| rest.split(',').next())
        .and_then(|a| a.parse::<std::net::SocketAddr>().ok())
        .map(|a| a.port())
        .unwrap_or_else(|| panic!("udt serve said {line:?}"))
}

/// A temporary directory on whichever of `/dev/shm` and the system temp directory has the
/// most room. The transfer tests write up to 1 GiB at once from several threads, and a CI
/// machine's disk may hold less than that while its memory-backed `/dev/shm` holds plenty.
pub(crate) fn scratch_dir() -> tempfile::TempDir {
    let candidates = [std::path::PathBuf::from("/dev/shm"), std::env::temp_dir()];
    let roomiest = candidates
        .iter()
        .filter(|dir| dir.is_dir())
        .max_by_key(|dir| free_bytes(dir))
        .expect("the system temp directory exists");
    tempfile::tempdir_in(roomiest).unwrap_or_else(|e| panic!("tempdir in {roomiest:?}: {e}"))
}

/// Bytes an unprivileged writer may still use on `dir`'s file system (0 if unknown).
fn free_bytes(dir: &std::path::Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return 0;
    };
    // SAFETY: statvfs is plain data; zeroed is a valid value for it.
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated and `stats` is a valid out-pointer.
    if unsafe { libc::statvfs(path.as_ptr(), &mut stats) } != 0 {
        return 0;
    }
    stats.f_bavail.saturating_mul(stats.f_frsize)
}
