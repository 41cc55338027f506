//! Listeners and streams as opaque handles: `udtc_listen` / `udtc_accept` /
//! `udtc_connect`, then `udtc_send` / `udtc_recv` / `udtc_close`.
//!
//! A handle is a `Box` given to C; it is freed exactly once, by the call that says so
//! (`udtc_close`, `udtc_listener_close`). Sending and receiving take the stream by shared
//! reference (the runtime's stream is `Read + Write` through `&`), so one thread may send while
//! another receives on the same handle.

use std::ffi::c_char;
use std::io::{Read, Write};

use udt::{SocketOptions, UdtListener, UdtStream};

use crate::error::{count, guard, status, Error};
use crate::options::UdtcOptions;
use crate::strings::c_str;

/// A listening socket (opaque).
#[derive(Debug)]
pub struct UdtcListener {
    inner: UdtListener,
}

/// A connected stream (opaque).
#[derive(Debug)]
pub struct UdtcStream {
    pub(crate) inner: UdtStream,
}

/// The options behind a nullable pointer: a copy, or the defaults.
///
/// # Safety
/// `options` is NULL or a live pointer from `udtc_options_new`.
unsafe fn options_or_default(options: *const UdtcOptions) -> SocketOptions {
    // SAFETY: as promised by our caller.
    unsafe { options.as_ref() }.map_or_else(SocketOptions::default, |o| o.inner.clone())
}

/// Listen for stream connections on `host`:`port` (port 0: any free port, see
/// `udtc_listener_port`). `options` may be NULL (UDT4's defaults). Returns NULL on failure.
///
/// # Safety
/// `host` is NULL or a NUL-terminated string; `options` is NULL or from `udtc_options_new`.
#[no_mangle]
pub unsafe extern "C" fn udtc_listen(
    host: *const c_char,
    port: u16,
    options: *const UdtcOptions,
) -> *mut UdtcListener {
    guard(std::ptr::null_mut(), || {
        // SAFETY: as promised by our caller.
        let host = unsafe { c_str(host, "host") }?;
        // SAFETY: as promised by our caller.
        let options = unsafe { options_or_default(options) };
        let inner = UdtListener::bind_with((host, port), options)?;
        Ok(Box::into_raw(Box::new(UdtcListener { inner })))
    })
}

/// The local port of a listener (useful after listening on port 0), or a negative code.
///
/// # Safety
/// `listener` is NULL or a live pointer from `udtc_listen`.
#[no_mangle]
pub unsafe extern "C" fn udtc_listener_port(listener: *const UdtcListener) -> i32 {
    count(|| {
        // SAFETY: as promised by our caller.
        let listener =
            unsafe { listener.as_ref() }.ok_or_else(|| Error::invalid("listener is NULL"))?;
        Ok(i64::from(listener.inner.local_addr()?.port()))
    }) as i32
}

/// Wait for the next connection. Returns NULL on failure.
///
/// # Safety
/// `listener` is NULL or a live pointer from `udtc_listen`.
#[no_mangle]
pub unsafe extern "C" fn udtc_accept(listener: *const UdtcListener) -> *mut UdtcStream {
    guard(std::ptr::null_mut(), || {
        // SAFETY: as promised by our caller.
        let listener =
            unsafe { listener.as_ref() }.ok_or_else(|| Error::invalid("listener is NULL"))?;
        let (inner, _peer) = listener.inner.accept()?;
        Ok(Box::into_raw(Box::new(UdtcStream { inner })))
    })
}

/// Stop listening and free the listener (NULL is ignored). Connections already accepted
/// stay open.
///
/// # Safety
/// `listener` is NULL or a live pointer from `udtc_listen`, not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn udtc_listener_close(listener: *mut UdtcListener) {
    if !listener.is_null() {
        // SAFETY: a live pointer from udtc_listen (Box::into_raw), freed once.
        guard((), || {
            drop(unsafe { Box::from_raw(listener) });
            Ok(())
        });
    }
}

/// Connect to a listener at `host`:`port` (a name or an address). `options` may be NULL.
/// Blocks until connected; returns NULL on failure (`UDTC_ERR_REFUSED`, `UDTC_ERR_TIMEOUT`...).
///
/// # Safety
/// `host` is NULL or a NUL-terminated string; `options` is NULL or from `udtc_options_new`.
#[no_mangle]
pub unsafe extern "C" fn udtc_connect(
    host: *const c_char,
    port: u16,
    options: *const UdtcOptions,
) -> *mut UdtcStream {
    guard(std::ptr::null_mut(), || {
        // SAFETY: as promised by our caller.
        let host = unsafe { c_str(host, "host") }?;
        // SAFETY: as promised by our caller.
        let options = unsafe { options_or_default(options) };
        let inner = UdtStream::connect_with((host, port), options)?;
        Ok(Box::into_raw(Box::new(UdtcStream { inner })))
    })
}

/// The stream behind a pointer, or `UDTC_ERR_INVALID`.
///
/// # Safety
/// `stream` is NULL or a live pointer from `udtc_connect` / `udtc_accept`.
pub(crate) unsafe fn stream_ref<'a>(stream: *const UdtcStream) -> Result<&'a UdtStream, Error> {
    // SAFETY: as promised by our caller.
    unsafe { stream.as_ref() }
        .map(|s| &s.inner)
        .ok_or_else(|| Error::invalid("stream is NULL"))
}

/// The bytes behind `(data, len)`; NULL is allowed when `len` is 0.
///
/// # Safety
/// `data` is valid for `len` bytes when `len > 0`.
unsafe fn bytes<'a>(data: *const u8, len: usize) -> Result<&'a [u8], Error> {
    if len == 0 {
        return Ok(&[]);
    }
    if data.is_null() {
        return Err(Error::invalid("buffer is NULL"));
    }
    // SAFETY: not NULL, and the caller promises `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(data, len) })
}

/// Queue up to `len` bytes; blocks while the send buffer is full. Returns the number queued
/// (at least 1 when `len > 0`) or a negative code.
///
/// # Safety
/// `stream` is NULL or a live stream; `data` is valid for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn udtc_send(stream: *const UdtcStream, data: *const u8, len: usize) -> i64 {
    count(|| {
        // SAFETY: as promised by our caller.
        let (mut stream, data) = unsafe { (stream_ref(stream)?, bytes(data, len)?) };
        Ok(stream.write(data)? as i64)
    })
}

/// Queue all `len` bytes (blocking as needed). Returns `UDTC_OK` or a negative code; on an
/// error some bytes may have been queued.
///
/// # Safety
/// As for `udtc_send`.
#[no_mangle]
pub unsafe extern "C" fn udtc_send_all(
    stream: *const UdtcStream,
    data: *const u8,
    len: usize,
) -> i32 {
    status(|| {
        // SAFETY: as promised by our caller.
        let (mut stream, data) = unsafe { (stream_ref(stream)?, bytes(data, len)?) };
        Ok(stream.write_all(data)?)
    })
}

/// Wait until everything sent is acknowledged by the peer.
///
/// # Safety
/// `stream` is NULL or a live stream.
#[no_mangle]
pub unsafe extern "C" fn udtc_flush(stream: *const UdtcStream) -> i32 {
    status(|| {
        // SAFETY: as promised by our caller.
        let mut stream = unsafe { stream_ref(stream) }?;
        Ok(stream.flush()?)
    })
}

/// Receive up to `len` bytes into `buf`; blocks until some arrive. Returns the count, 0 at
/// the end of the stream (the peer closed), or a negative code.
///
/// # Safety
/// `stream` is NULL or a live stream; `buf` is valid for writing `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn udtc_recv(stream: *const UdtcStream, buf: *mut u8, len: usize) -> i64 {
    count(|| {
        // SAFETY: as promised by our caller.
        let mut stream = unsafe { stream_ref(stream) }?;
        if len == 0 {
            return Ok(0);
        }
        if buf.is_null() {
            return Err(Error::invalid("buffer is NULL"));
        }
        // SAFETY: not NULL, and the caller promises `len` writable bytes.
        let buf = unsafe { std::slice::from_raw_parts_mut(buf, len) };
        Ok(stream.read(buf)? as i64)
    })
}

/// Close gracefully (wait, up to the linger time, until unsent data is acknowledged and the
/// peer is told) and free the handle, whatever the result (NULL: `UDTC_ERR_INVALID`).
///
/// # Safety
/// `stream` is NULL or a live stream not in use by another thread; it is freed.
#[no_mangle]
pub unsafe extern "C" fn udtc_close(stream: *mut UdtcStream) -> i32 {
    status(|| {
        if stream.is_null() {
            return Err(Error::invalid("stream is NULL"));
        }
        // SAFETY: a live pointer from udtc_connect/udtc_accept (Box::into_raw), freed once.
        let stream = unsafe { Box::from_raw(stream) };
        Ok(stream.inner.close()?)
    })
}
