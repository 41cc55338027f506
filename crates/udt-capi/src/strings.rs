//! C strings in, checked: NULL and non-UTF-8 become `UDTC_ERR_INVALID` naming the argument.

use std::ffi::{c_char, CStr};

use crate::error::Error;

/// The UTF-8 text behind `ptr`.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn c_str<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, Error> {
    if ptr.is_null() {
        return Err(Error::invalid(format!("{what} is NULL")));
    }
    // SAFETY: not NULL, and the caller promises a NUL-terminated string.
    unsafe { CStr::from_ptr(ptr) }
        .to_str()
        .map_err(|_| Error::invalid(format!("{what} is not UTF-8")))
}

/// Like [`c_str`], but NULL means `None`.
///
/// # Safety
/// As for [`c_str`].
pub(crate) unsafe fn c_str_opt<'a>(
    ptr: *const c_char,
    what: &str,
) -> Result<Option<&'a str>, Error> {
    if ptr.is_null() {
        Ok(None)
    } else {
        // SAFETY: as promised by our caller.
        unsafe { c_str(ptr, what) }.map(Some)
    }
}
