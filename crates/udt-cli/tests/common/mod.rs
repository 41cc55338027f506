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
