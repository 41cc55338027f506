//! `udtc_copy`: `udt cp`'s verified copy to or from a `udt serve` daemon
//! (`udt_cli::copy`), with a progress callback.

use std::ffi::{c_char, c_void, OsStr};
use std::path::PathBuf;
use std::sync::Mutex;

use udt_cli::copy::{copy, CopyOptions, Progress};
use udt_cli::transfer::Summary;

use crate::error::{status, Error};
use crate::strings::{c_str, c_str_opt};

/// Called as bytes move: `done` of `total` bytes of file data (resumed bytes count as done).
/// Calls come from the transfer's threads, one at a time.
pub type UdtcProgressFn = Option<unsafe extern "C" fn(user: *mut c_void, done: u64, total: u64)>;

/// How to copy (start from `udtc_copy_options_default()`). Strings may be NULL.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct UdtcCopyOptions {
    /// Copy directories and their contents.
    pub recursive: bool,
    /// Continue an interrupted copy, sending only what is missing.
    pub resume: bool,
    /// Replace existing files (if the server allows it).
    pub force: bool,
    /// Use no key even if `udt keygen` made one (a keyed server refuses the session).
    pub insecure: bool,
    /// The daemon's port when the URL names none (0: 9000).
    pub port: u16,
    /// Congestion control when this side sends: "model" (NULL: the default) or "native".
    pub cc: *const c_char,
    /// This user's private key file (NULL: the default one, if it exists).
    pub key_file: *const c_char,
    /// Where server keys are pinned (NULL: beside the default key).
    pub known_servers: *const c_char,
}

/// What a finished copy did.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct UdtcCopySummary {
    /// Files and directories copied.
    pub files: u64,
    /// Bytes of file data in them.
    pub bytes: u64,
    /// Bytes that crossed the network in this run.
    pub transferred: u64,
    /// Bytes that were already at the destination (resume) and were not sent again.
    pub resumed: u64,
}

/// The defaults: no flags, port 9000, the default controller and key.
#[no_mangle]
pub extern "C" fn udtc_copy_options_default() -> UdtcCopyOptions {
    UdtcCopyOptions {
        recursive: false,
        resume: false,
        force: false,
        insecure: false,
        port: 0,
        cc: std::ptr::null(),
        key_file: std::ptr::null(),
        known_servers: std::ptr::null(),
    }
}

/// Copy `src` to `dst`, one a local path and the other `udt://host[:port]/path` on a
/// `udt serve` daemon, every file checked with BLAKE3 and placed only once verified.
/// `options`, `progress` and `summary` may be NULL. Returns `UDTC_OK` or a negative code
/// (`UDTC_ERR_NOT_FOUND`, `UDTC_ERR_EXISTS`, `UDTC_ERR_DIGEST_MISMATCH`...).
///
/// # Safety
/// `src` and `dst` are NUL-terminated strings; `options` is NULL or valid (its strings NULL or
/// NUL-terminated); `progress` may be called with `user` from other threads until this
/// returns; `summary` is NULL or valid for writing.
#[no_mangle]
pub unsafe extern "C" fn udtc_copy(
    src: *const c_char,
    dst: *const c_char,
    options: *const UdtcCopyOptions,
    progress: UdtcProgressFn,
    user: *mut c_void,
    summary: *mut UdtcCopySummary,
) -> i32 {
    status(|| {
        // SAFETY: as promised by our caller.
        let (src, dst) = unsafe { (c_str(src, "src")?, c_str(dst, "dst")?) };
        // SAFETY: as promised by our caller.
        let options = match unsafe { options.as_ref() } {
            // SAFETY: as promised by our caller.
            Some(o) => unsafe { copy_options(o) }?,
            None => CopyOptions::default(),
        };
        let callback = Mutex::new((progress, UserData(user)));
        let observer = Progress::new(|done, total| call_back(&callback, done, total));
        let done = copy(OsStr::new(src), OsStr::new(dst), &options, &observer)?;
        // SAFETY: as promised by our caller.
        if let Some(out) = unsafe { summary.as_mut() } {
            *out = summary_of(&done);
        }
        Ok(())
    })
}

/// The library's options from the C struct.
///
/// # Safety
/// The struct's strings are NULL or NUL-terminated.
unsafe fn copy_options(o: &UdtcCopyOptions) -> Result<CopyOptions, Error> {
    let mut options = CopyOptions {
        recursive: o.recursive,
        resume: o.resume,
        force: o.force,
        insecure: o.insecure,
        port: (o.port != 0).then_some(o.port),
        quiet: true,
        ..CopyOptions::default()
    };
    // SAFETY: as promised by our caller.
    unsafe {
        if let Some(cc) = c_str_opt(o.cc, "cc")? {
            options.cc = cc.to_string();
        }
        options.key = c_str_opt(o.key_file, "key_file")?.map(PathBuf::from);
        options.known_servers = c_str_opt(o.known_servers, "known_servers")?.map(PathBuf::from);
    }
    Ok(options)
}

fn summary_of(s: &Summary) -> UdtcCopySummary {
    UdtcCopySummary {
        files: s.files,
        bytes: s.bytes,
        transferred: s.transferred,
        resumed: s.resumed,
    }
}

/// The caller's `user` pointer, handed back untouched.
struct UserData(*mut c_void);

// SAFETY: we never dereference the pointer; udtc_copy's contract lets the callback receive it
// on the transfer's threads, and a mutex makes the calls one at a time.
unsafe impl Send for UserData {}

/// The C callback, called one at a time (the transfer's threads may report concurrently).
fn call_back(callback: &Mutex<(UdtcProgressFn, UserData)>, done: u64, total: u64) {
    let guard = callback.lock().unwrap_or_else(|p| p.into_inner());
    if let (Some(function), user) = (guard.0, &guard.1) {
        // SAFETY: the caller of udtc_copy supplied this function for these arguments.
        unsafe { function(user.0, done, total) };
    }
}
