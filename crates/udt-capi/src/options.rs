//! Socket options by number (C) or by name (Python): one table, so both bindings offer the
//! same options with the same units (bytes, milliseconds; a negative value means "none").
//!
//! Only options a binding's user sets before connecting are here; the full UDT4 set stays in
//! [`udt::SocketOptions`] for Rust callers.

use std::ffi::c_char;
use std::time::Duration;

use udt::SocketOptions;

use crate::error::{status, Error};
use crate::strings::c_str;

/// UDT_MSS: the maximum packet size, bytes (including IP and UDP headers).
pub const UDTC_OPT_MSS: i32 = 1;
/// UDT_SNDBUF: the send buffer, bytes.
pub const UDTC_OPT_SEND_BUFFER: i32 = 2;
/// UDT_RCVBUF: the receive buffer, bytes.
pub const UDTC_OPT_RECV_BUFFER: i32 = 3;
/// UDT_FC: the flow window, packets.
pub const UDTC_OPT_FLOW_WINDOW: i32 = 4;
/// UDT_MAXBW: the sending rate cap, bytes per second (negative: none).
pub const UDTC_OPT_MAX_BANDWIDTH: i32 = 5;
/// UDT_LINGER: how long a close waits for unsent data, milliseconds (negative: off).
pub const UDTC_OPT_LINGER_MS: i32 = 6;
/// UDT_SNDTIMEO: the send timeout, milliseconds (negative: none).
pub const UDTC_OPT_SEND_TIMEOUT_MS: i32 = 7;
/// UDT_RCVTIMEO: the receive timeout, milliseconds (negative: none).
pub const UDTC_OPT_RECV_TIMEOUT_MS: i32 = 8;
/// How long a connect may take, milliseconds (default 3000).
pub const UDTC_OPT_CONNECT_TIMEOUT_MS: i32 = 9;
/// UDT_REUSEADDR: share a local port between sockets (0 or 1; default 1).
pub const UDTC_OPT_REUSE_ADDR: i32 = 10;

/// The options with their names (Python's keyword arguments) and numbers (C's constants).
pub const OPTIONS: [(&str, i32); 10] = [
    ("mss", UDTC_OPT_MSS),
    ("send_buffer", UDTC_OPT_SEND_BUFFER),
    ("recv_buffer", UDTC_OPT_RECV_BUFFER),
    ("flow_window", UDTC_OPT_FLOW_WINDOW),
    ("max_bandwidth", UDTC_OPT_MAX_BANDWIDTH),
    ("linger_ms", UDTC_OPT_LINGER_MS),
    ("send_timeout_ms", UDTC_OPT_SEND_TIMEOUT_MS),
    ("recv_timeout_ms", UDTC_OPT_RECV_TIMEOUT_MS),
    ("connect_timeout_ms", UDTC_OPT_CONNECT_TIMEOUT_MS),
    ("reuse_addr", UDTC_OPT_REUSE_ADDR),
];

/// Set option number `option` to `value` (units as in the constants' docs).
pub fn set(options: &mut SocketOptions, option: i32, value: i64) -> Result<(), String> {
    let optional_ms = || u64::try_from(value).ok().map(Duration::from_millis);
    let unsigned =
        || u64::try_from(value).map_err(|_| format!("option {option}: {value} is negative"));
    let small =
        || u32::try_from(value).map_err(|_| format!("option {option}: {value} is out of range"));
    let result = match option {
        UDTC_OPT_MSS => options.set_mss(small()?).map(|_| ()),
        UDTC_OPT_SEND_BUFFER => options.set_send_buffer(unsigned()?).map(|_| ()),
        UDTC_OPT_RECV_BUFFER => options.set_recv_buffer(unsigned()?).map(|_| ()),
        UDTC_OPT_FLOW_WINDOW => options.set_flow_window(small()?).map(|_| ()),
        UDTC_OPT_SEND_TIMEOUT_MS => options.set_send_timeout(optional_ms()).map(|_| ()),
        UDTC_OPT_RECV_TIMEOUT_MS => options.set_recv_timeout(optional_ms()).map(|_| ()),
        UDTC_OPT_MAX_BANDWIDTH => {
            options.set_max_bandwidth(u64::try_from(value).ok());
            Ok(())
        }
        UDTC_OPT_LINGER_MS => {
            options.set_linger(optional_ms());
            Ok(())
        }
        UDTC_OPT_CONNECT_TIMEOUT_MS => {
            options.set_connect_timeout(Duration::from_millis(unsigned()?));
            Ok(())
        }
        UDTC_OPT_REUSE_ADDR => {
            options.set_reuse_addr(value != 0);
            Ok(())
        }
        _ => return Err(format!("unknown option {option}")),
    };
    result.map_err(|e| e.to_string())
}

/// Set the option called `name` (see [`OPTIONS`]).
pub fn set_named(options: &mut SocketOptions, name: &str, value: i64) -> Result<(), String> {
    let (_, number) = OPTIONS
        .iter()
        .find(|(known, _)| *known == name)
        .ok_or_else(|| format!("unknown option {name:?}"))?;
    set(options, *number, value)
}

/// Set the congestion control by name (`native`, UDT4's, the default; or `model`).
pub fn set_congestion(options: &mut SocketOptions, name: &str) -> Result<(), String> {
    options
        .set_controller_named(name, None)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Options for `udtc_connect` and `udtc_listen` (opaque; UDT4's defaults when new).
#[derive(Debug, Default)]
pub struct UdtcOptions {
    pub(crate) inner: SocketOptions,
}

/// New options with UDT4's defaults; free with `udtc_options_free`.
#[no_mangle]
pub extern "C" fn udtc_options_new() -> *mut UdtcOptions {
    Box::into_raw(Box::default())
}

/// Free options from `udtc_options_new` (NULL is ignored).
///
/// # Safety
/// `options` is NULL or a pointer from `udtc_options_new` not freed yet.
#[no_mangle]
pub unsafe extern "C" fn udtc_options_free(options: *mut UdtcOptions) {
    if !options.is_null() {
        // SAFETY: the caller passes a live pointer from udtc_options_new (Box::into_raw).
        drop(unsafe { Box::from_raw(options) });
    }
}

/// Set option `option` (a `UDTC_OPT_*` constant) to `value`. Returns `UDTC_OK` or
/// `UDTC_ERR_INVALID` (unknown option, value out of range: see `udtc_last_error`).
///
/// # Safety
/// `options` is NULL or a live pointer from `udtc_options_new`, not used by another thread.
#[no_mangle]
pub unsafe extern "C" fn udtc_options_set(
    options: *mut UdtcOptions,
    option: i32,
    value: i64,
) -> i32 {
    status(|| {
        // SAFETY: the caller passes NULL or a live, unshared pointer.
        let options =
            unsafe { options.as_mut() }.ok_or_else(|| Error::invalid("options is NULL"))?;
        set(&mut options.inner, option, value).map_err(Error::invalid)
    })
}

/// Set the congestion control by name: "native" (UDT4's, the default) or "model" (holds its
/// rate through random loss; `udt cp`'s default).
///
/// # Safety
/// `options` as for `udtc_options_set`; `name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn udtc_options_set_congestion(
    options: *mut UdtcOptions,
    name: *const c_char,
) -> i32 {
    status(|| {
        // SAFETY: the caller passes NULL or a live, unshared pointer.
        let options =
            unsafe { options.as_mut() }.ok_or_else(|| Error::invalid("options is NULL"))?;
        // SAFETY: the caller passes NULL or a NUL-terminated string.
        let name = unsafe { c_str(name, "name") }?;
        set_congestion(&mut options.inner, name).map_err(Error::invalid)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_set_the_same_option() {
        let mut by_name = SocketOptions::default();
        set_named(&mut by_name, "send_buffer", 1 << 20).unwrap();
        set_named(&mut by_name, "linger_ms", -1).unwrap();
        let mut direct = SocketOptions::default();
        direct.set_send_buffer(1 << 20).unwrap();
        assert_eq!(by_name.send_buffer(), direct.send_buffer());
        assert_ne!(
            by_name.send_buffer(),
            SocketOptions::default().send_buffer()
        );
        assert_eq!(by_name.linger(), None);
        assert!(set_named(&mut by_name, "nonsense", 1).is_err());
        assert!(set(&mut by_name, UDTC_OPT_MSS, -5).is_err());
        assert!(set(&mut by_name, 999, 1).is_err());
    }
}
