//! The C ABI the C++ glue (`cpp/glue.cpp`) calls: one `udtr_*` function per UDT4 call,
//! taking plain C types. Each converts its pointers, runs the call of [`crate::calls`] inside
//! `catch_unwind` (a panic must never unwind into C++), and on failure records the 4.11
//! error for `UDT::getlasterror` and returns −1, as `UDT::ERROR` is.
//!
//! These symbols are exported from the shared library because the glue lives in it; they
//! are not an API of their own (the header is `udt.h`).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::os::unix::ffi::OsStrExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::Duration;

use crate::calls;
use crate::epoll::{self, Sets, Want};
use crate::error::{set_last, Code, Result, UdtError};
use crate::settings::{Kind, Opt, Value};
use crate::{addr, table};

/// Run `f`; on error (or panic) record it and return `fail`.
fn call<T>(fail: T, f: impl FnOnce() -> Result<T>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            set_last(e);
            fail
        }
        Err(_) => {
            set_last(UdtError::with_detail(
                Code::Unknown,
                "internal error in the udt engine (a bug: please report it)",
            ));
            fail
        }
    }
}

fn ok(r: Result<()>) -> Result<c_int> {
    r.map(|()| 0)
}

fn to_int(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

/// The caller's buffer as a slice (empty for a null pointer or a length ≤ 0).
///
/// # Safety
/// `buf` must point to `len` readable bytes when non-null and `len` > 0.
unsafe fn slice<'a>(buf: *const c_char, len: c_int) -> &'a [u8] {
    match usize::try_from(len) {
        Ok(n) if n > 0 && !buf.is_null() => {
            // SAFETY: as the caller promises.
            unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), n) }
        }
        _ => &[],
    }
}

/// # Safety
/// As [`slice()`], writable.
unsafe fn slice_mut<'a>(buf: *mut c_char, len: c_int) -> &'a mut [u8] {
    match usize::try_from(len) {
        Ok(n) if n > 0 && !buf.is_null() => {
            // SAFETY: as the caller promises.
            unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), n) }
        }
        _ => &mut [],
    }
}

/// This thread's last error for `UDT::getlasterror`: its code (major × 1000 + minor), errno
/// and detail (null if none; valid until the thread's next error); returns the error's
/// generation (0: none yet; a new number for each error).
///
/// # Safety
/// The three pointers must be writable.
#[no_mangle]
pub unsafe extern "C" fn udtr_last_error(
    code: *mut c_int,
    errno: *mut c_int,
    detail: *mut *const c_char,
) -> u64 {
    let (c, e, d, generation) = crate::error::last();
    // SAFETY: the caller passes writable pointers (the glue passes locals).
    unsafe {
        code.write(c);
        errno.write(e);
        detail.write(d);
    }
    generation
}

/// Record an error the C++ side found itself (`sendfile`'s file errors): `code` as
/// [`Code::from_raw`] reads it, with `errno`. Returns −1.
#[no_mangle]
pub extern "C" fn udtr_set_error(code: c_int, errno: c_int) -> c_int {
    set_last(UdtError::with_errno(Code::from_raw(code), errno));
    -1
}

/// `UDT::startup`: nothing to start (the engine starts a port's thread with the port).
#[no_mangle]
pub extern "C" fn udtr_startup() -> c_int {
    0
}

/// `UDT::cleanup`.
#[no_mangle]
pub extern "C" fn udtr_cleanup() -> c_int {
    call(-1, || {
        calls::cleanup();
        Ok(0)
    })
}

/// `UDT::socket`.
#[no_mangle]
pub extern "C" fn udtr_socket(af: c_int, ty: c_int, _protocol: c_int) -> c_int {
    call(-1, || calls::socket(af, ty))
}

fn af_of(u: c_int) -> Result<c_int> {
    Ok(table::get(u)?.af)
}

/// `UDT::bind`.
///
/// # Safety
/// `name` must point to `namelen` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn udtr_bind(u: c_int, name: *const libc::sockaddr, namelen: c_int) -> c_int {
    call(-1, || {
        // SAFETY: as the caller promises.
        let a = unsafe { addr::read(af_of(u)?, name, namelen) }?;
        ok(calls::bind(u, a))
    })
}

/// `UDT::bind2`.
#[no_mangle]
pub extern "C" fn udtr_bind2(u: c_int, udpsock: c_int) -> c_int {
    call(-1, || ok(calls::bind2(u, udpsock)))
}

/// `UDT::listen`.
#[no_mangle]
pub extern "C" fn udtr_listen(u: c_int, backlog: c_int) -> c_int {
    call(-1, || ok(calls::listen(u, backlog)))
}

/// `UDT::accept`: the new handle, −1 on error.
///
/// # Safety
/// `addr` must be null or point to `*addrlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn udtr_accept(
    u: c_int,
    name: *mut libc::sockaddr,
    namelen: *mut c_int,
) -> c_int {
    call(-1, || {
        if !name.is_null() && namelen.is_null() {
            return Err(Code::InvParam.into());
        }
        let (id, peer) = calls::accept(u)?;
        if !name.is_null() {
            // SAFETY: as the caller promises.
            unsafe { addr::write(af_of(id)?, peer, name, namelen) }?;
        }
        Ok(id)
    })
}

/// `UDT::connect`.
///
/// # Safety
/// `name` must point to `namelen` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn udtr_connect(
    u: c_int,
    name: *const libc::sockaddr,
    namelen: c_int,
) -> c_int {
    call(-1, || {
        // SAFETY: as the caller promises.
        let a = unsafe { addr::read(af_of(u)?, name, namelen) }?;
        ok(calls::connect(u, a))
    })
}

/// `UDT::close`.
#[no_mangle]
pub extern "C" fn udtr_close(u: c_int) -> c_int {
    call(-1, || ok(calls::close(u)))
}

/// `UDT::getpeername`.
///
/// # Safety
/// `name` must point to `*namelen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn udtr_getpeername(
    u: c_int,
    name: *mut libc::sockaddr,
    namelen: *mut c_int,
) -> c_int {
    call(-1, || {
        let (af, a) = calls::peer_name(u)?;
        // SAFETY: as the caller promises.
        ok(unsafe { addr::write(af, a, name, namelen) })
    })
}

/// `UDT::getsockname`.
///
/// # Safety
/// `name` must point to `*namelen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn udtr_getsockname(
    u: c_int,
    name: *mut libc::sockaddr,
    namelen: *mut c_int,
) -> c_int {
    call(-1, || {
        let (af, a) = calls::sock_name(u)?;
        // SAFETY: as the caller promises.
        ok(unsafe { addr::write(af, a, name, namelen) })
    })
}

/// `UDT::getsockopt`: writes the value in 4.11's type and its size at `optlen`.
///
/// # Safety
/// `optval` must point to `*optlen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn udtr_getsockopt(
    u: c_int,
    _level: c_int,
    optname: c_int,
    optval: *mut c_void,
    optlen: *mut c_int,
) -> c_int {
    call(-1, || {
        let opt = Opt::from_number(optname).ok_or(Code::InvOp)?;
        let value = calls::get_option(u, opt)?;
        if optval.is_null() || optlen.is_null() {
            return Err(Code::InvParam.into());
        }
        let size = Value::kind_of(opt).size();
        // SAFETY: `optlen` is non-null; the caller says it is writable (so readable).
        let room = unsafe { optlen.read_unaligned() };
        if usize::try_from(room).map_or(true, |r| r < size) {
            return Err(Code::InvParam.into());
        }
        // SAFETY: `optval` has at least `size` writable bytes (checked against *optlen).
        unsafe { write_value(optval, value) };
        // SAFETY: as above; sizes are at most 8.
        unsafe { optlen.write_unaligned(size as c_int) };
        Ok(0)
    })
}

/// # Safety
/// `optval` must have room for the value's type.
unsafe fn write_value(optval: *mut c_void, value: Value) {
    // SAFETY (all arms): room checked by the caller; unaligned writes for any buffer.
    unsafe {
        match value {
            Value::Bool(b) => optval.cast::<bool>().write_unaligned(b),
            Value::Int(i) => optval.cast::<i32>().write_unaligned(i),
            Value::Int64(i) => optval.cast::<i64>().write_unaligned(i),
            Value::Linger(on, secs) => {
                optval.cast::<libc::linger>().write_unaligned(libc::linger {
                    l_onoff: on,
                    l_linger: secs,
                })
            }
        }
    }
}

/// `UDT::setsockopt`: reads the value as 4.11's type for `optname` (EINVPARAM if `optlen`
/// is too small for it).
///
/// # Safety
/// `optval` must point to `optlen` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn udtr_setsockopt(
    u: c_int,
    _level: c_int,
    optname: c_int,
    optval: *const c_void,
    optlen: c_int,
) -> c_int {
    call(-1, || {
        let opt = Opt::from_number(optname).ok_or(Code::InvOp)?;
        if opt == Opt::Cc {
            return ok(calls::refuse_cc(u));
        }
        let kind = Value::kind_of(opt);
        if optval.is_null() || usize::try_from(optlen).map_or(true, |l| l < kind.size()) {
            return Err(Code::InvParam.into());
        }
        // SAFETY: `optval` has at least `kind.size()` readable bytes (checked above).
        let value = unsafe {
            match kind {
                Kind::Bool => Value::Bool(optval.cast::<u8>().read() != 0),
                Kind::Int => Value::Int(optval.cast::<i32>().read_unaligned()),
                Kind::Int64 => Value::Int64(optval.cast::<i64>().read_unaligned()),
                Kind::Linger => {
                    let l = optval.cast::<libc::linger>().read_unaligned();
                    Value::Linger(l.l_onoff, l.l_linger)
                }
            }
        };
        ok(calls::set_option(u, opt, value))
    })
}

/// `UDT::send`.
///
/// # Safety
/// `buf` must point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn udtr_send(u: c_int, buf: *const c_char, len: c_int) -> c_int {
    // SAFETY: as the caller promises.
    let data = unsafe { slice(buf, len) };
    call(-1, || calls::send(u, data).map(to_int))
}

/// `UDT::recv`.
///
/// # Safety
/// `buf` must point to `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn udtr_recv(u: c_int, buf: *mut c_char, len: c_int) -> c_int {
    // SAFETY: as the caller promises.
    let data = unsafe { slice_mut(buf, len) };
    call(-1, || calls::recv(u, data).map(to_int))
}

/// `UDT::sendmsg`.
///
/// # Safety
/// `buf` must point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn udtr_sendmsg(
    u: c_int,
    buf: *const c_char,
    len: c_int,
    ttl: c_int,
    inorder: bool,
) -> c_int {
    // SAFETY: as the caller promises.
    let data = unsafe { slice(buf, len) };
    call(-1, || calls::send_msg(u, data, ttl, inorder).map(to_int))
}

/// `UDT::recvmsg`.
///
/// # Safety
/// `buf` must point to `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn udtr_recvmsg(u: c_int, buf: *mut c_char, len: c_int) -> c_int {
    // SAFETY: as the caller promises.
    let data = unsafe { slice_mut(buf, len) };
    call(-1, || calls::recv_msg(u, data).map(to_int))
}

/// The checks `sendfile` (`sending`) or `recvfile` make before touching the file.
#[no_mangle]
pub extern "C" fn udtr_file_check(u: c_int, sending: bool) -> c_int {
    call(-1, || calls::file_stream(u, sending).map(|_| 0))
}

/// One block of `UDT::sendfile`: send all `len` bytes, blocking; 0 or −1.
///
/// # Safety
/// `buf` must point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn udtr_send_block(u: c_int, buf: *const c_char, len: c_int) -> c_int {
    // SAFETY: as the caller promises.
    let data = unsafe { slice(buf, len) };
    call(-1, || {
        let conn = calls::file_stream(u, true)?;
        calls::send_block(&conn, data).map(|()| 0)
    })
}

/// One read of `UDT::recvfile`, blocking: bytes read or −1.
///
/// # Safety
/// `buf` must point to `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn udtr_recv_block(u: c_int, buf: *mut c_char, len: c_int) -> c_int {
    // SAFETY: as the caller promises.
    let data = unsafe { slice_mut(buf, len) };
    call(-1, || {
        let conn = calls::file_stream(u, false)?;
        calls::recv_block(&conn, data).map(to_int)
    })
}

/// # Safety
/// `path` must be a NUL-terminated string, `offset` a valid `int64_t`.
unsafe fn path_args<'a>(path: *const c_char, offset: *mut i64) -> Result<(&'a Path, u64)> {
    if path.is_null() || offset.is_null() {
        return Err(Code::InvParam.into());
    }
    // SAFETY: as the caller promises.
    let path = Path::new(std::ffi::OsStr::from_bytes(
        unsafe { CStr::from_ptr(path) }.to_bytes(),
    ));
    // SAFETY: as the caller promises.
    let off = u64::try_from(unsafe { offset.read_unaligned() }).map_err(|_| Code::InvParam)?;
    Ok((path, off))
}

/// `UDT::sendfile2`: bytes sent, −1 on error; `*offset` advances by the bytes sent.
///
/// # Safety
/// `path` must be a NUL-terminated string and `offset` point to a writable `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn udtr_sendfile_path(
    u: c_int,
    path: *const c_char,
    offset: *mut i64,
    size: i64,
) -> i64 {
    call(-1, || {
        // SAFETY: as the caller promises.
        let (path, off) = unsafe { path_args(path, offset) }?;
        let Ok(size @ 1..) = u64::try_from(size) else {
            return Ok(0);
        };
        let sent = calls::send_file_path(u, path, off, size)?;
        let sent = i64::try_from(sent).unwrap_or(i64::MAX);
        // SAFETY: checked non-null in `path_args`.
        unsafe { offset.write_unaligned(offset.read_unaligned().saturating_add(sent)) };
        Ok(sent)
    })
}

/// `UDT::recvfile2`: bytes received, −1 on error.
///
/// # Safety
/// As [`udtr_sendfile_path`].
#[no_mangle]
pub unsafe extern "C" fn udtr_recvfile_path(
    u: c_int,
    path: *const c_char,
    offset: *mut i64,
    size: i64,
) -> i64 {
    call(-1, || {
        // SAFETY: as the caller promises.
        let (path, off) = unsafe { path_args(path, offset) }?;
        let Ok(size @ 1..) = u64::try_from(size) else {
            return Ok(0);
        };
        let got = calls::recv_file_path(u, path, off, size)?;
        let got = i64::try_from(got).unwrap_or(i64::MAX);
        // SAFETY: checked non-null in `path_args`.
        unsafe { offset.write_unaligned(offset.read_unaligned().saturating_add(got)) };
        Ok(got)
    })
}

/// Adds one handle to a C++ container (`std::set<int>` or `std::vector<int>`).
pub type AddFn = unsafe extern "C" fn(container: *mut c_void, fd: c_int);

/// `UDT::select` (`ex` false) or `selectEx` (`ex` true): `fds[i]` is in the sets `sets[i]`
/// says (bits IN 0x1, OUT 0x4, ERR 0x8); each ready one is added to `read` / `write` /
/// `except` (when not null) with `add`. `timeout_us` < 0 waits forever. Returns the count.
///
/// # Safety
/// `fds` and `sets` must hold `n` ints; the containers must be what `add` expects.
#[no_mangle]
pub unsafe extern "C" fn udtr_select(
    fds: *const c_int,
    sets: *const u8,
    n: c_int,
    timeout_us: i64,
    ex: bool,
    read: *mut c_void,
    write: *mut c_void,
    except: *mut c_void,
    add: AddFn,
) -> c_int {
    call(-1, || {
        let n = usize::try_from(n).unwrap_or(0);
        let want: Vec<Want> = if n == 0 || fds.is_null() || sets.is_null() {
            Vec::new()
        } else {
            // SAFETY: as the caller promises.
            let (f, s) = unsafe {
                (
                    std::slice::from_raw_parts(fds, n),
                    std::slice::from_raw_parts(sets, n),
                )
            };
            f.iter()
                .zip(s)
                .map(|(&id, &sets)| Want { id, sets })
                .collect()
        };
        let timeout = u64::try_from(timeout_us).ok().map(Duration::from_micros);
        let ready = epoll::select(&want, timeout, ex)?;
        let mut count = 0;
        for (id, bits) in ready {
            for (bit, set) in [(epoll::IN, read), (epoll::OUT, write), (epoll::ERR, except)] {
                if bits & bit != 0 && !set.is_null() {
                    // SAFETY: `set` is a container `add` takes, as the caller promises.
                    unsafe { add(set, id) };
                    count += 1;
                }
            }
        }
        Ok(count)
    })
}

/// `UDT::epoll_create`.
#[no_mangle]
pub extern "C" fn udtr_epoll_create() -> c_int {
    call(-1, || Ok(epoll::create()))
}

/// # Safety
/// `events` must be null or point to an int.
unsafe fn events_arg(events: *const c_int) -> Option<i32> {
    // SAFETY: as the caller promises.
    (!events.is_null()).then(|| unsafe { events.read_unaligned() })
}

/// `UDT::epoll_add_usock`.
///
/// # Safety
/// `events` must be null or point to an int.
#[no_mangle]
pub unsafe extern "C" fn udtr_epoll_add_usock(eid: c_int, u: c_int, events: *const c_int) -> c_int {
    // SAFETY: as the caller promises.
    let ev = unsafe { events_arg(events) };
    call(-1, || ok(epoll::add_usock(eid, u, ev)))
}

/// `UDT::epoll_add_ssock`.
///
/// # Safety
/// `events` must be null or point to an int.
#[no_mangle]
pub unsafe extern "C" fn udtr_epoll_add_ssock(eid: c_int, s: c_int, events: *const c_int) -> c_int {
    // SAFETY: as the caller promises.
    let ev = unsafe { events_arg(events) };
    call(-1, || ok(epoll::add_ssock(eid, s, ev)))
}

/// `UDT::epoll_remove_usock`.
#[no_mangle]
pub extern "C" fn udtr_epoll_remove_usock(eid: c_int, u: c_int) -> c_int {
    call(-1, || ok(epoll::remove_usock(eid, u)))
}

/// `UDT::epoll_remove_ssock`.
#[no_mangle]
pub extern "C" fn udtr_epoll_remove_ssock(eid: c_int, s: c_int) -> c_int {
    call(-1, || ok(epoll::remove_ssock(eid, s)))
}

/// `UDT::epoll_release`.
#[no_mangle]
pub extern "C" fn udtr_epoll_release(eid: c_int) -> c_int {
    call(-1, || ok(epoll::release(eid)))
}

/// `UDT::epoll_wait`: fills the non-null sets with `add`; returns 4.11's count.
///
/// # Safety
/// Each non-null container must be what `add` expects.
#[no_mangle]
pub unsafe extern "C" fn udtr_epoll_wait(
    eid: c_int,
    read: *mut c_void,
    write: *mut c_void,
    ms: i64,
    sys_read: *mut c_void,
    sys_write: *mut c_void,
    add: AddFn,
) -> c_int {
    call(-1, || {
        let sets = Sets {
            read: !read.is_null(),
            write: !write.is_null(),
            sys_read: !sys_read.is_null(),
            sys_write: !sys_write.is_null(),
        };
        let found = epoll::wait(eid, sets, ms)?;
        for (list, set) in [
            (&found.read, read),
            (&found.write, write),
            (&found.sys_read, sys_read),
            (&found.sys_write, sys_write),
        ] {
            for &fd in list {
                // SAFETY: `set` is non-null whenever its list has entries (see `Sets`).
                unsafe { add(set, fd) };
            }
        }
        Ok(to_int(found.total()))
    })
}

/// `TRACEINFO` (`CPerfMon`) field by field; the glue copies it into the C++ struct.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
#[allow(non_snake_case, missing_docs)]
pub struct UdtrTrace {
    pub msTimeStamp: i64,
    pub pktSentTotal: i64,
    pub pktRecvTotal: i64,
    pub pktSndLossTotal: c_int,
    pub pktRcvLossTotal: c_int,
    pub pktRetransTotal: c_int,
    pub pktSentACKTotal: c_int,
    pub pktRecvACKTotal: c_int,
    pub pktSentNAKTotal: c_int,
    pub pktRecvNAKTotal: c_int,
    pub usSndDurationTotal: i64,
    pub pktSent: i64,
    pub pktRecv: i64,
    pub pktSndLoss: c_int,
    pub pktRcvLoss: c_int,
    pub pktRetrans: c_int,
    pub pktSentACK: c_int,
    pub pktRecvACK: c_int,
    pub pktSentNAK: c_int,
    pub pktRecvNAK: c_int,
    pub mbpsSendRate: f64,
    pub mbpsRecvRate: f64,
    pub usSndDuration: i64,
    pub usPktSndPeriod: f64,
    pub pktFlowWindow: c_int,
    pub pktCongestionWindow: c_int,
    pub pktFlightSize: c_int,
    pub msRTT: f64,
    pub mbpsBandwidth: f64,
    pub byteAvailSndBuf: c_int,
    pub byteAvailRcvBuf: c_int,
}

fn int(v: u64) -> c_int {
    c_int::try_from(v).unwrap_or(c_int::MAX)
}

fn long(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

impl From<&udt::Perfmon> for UdtrTrace {
    fn from(p: &udt::Perfmon) -> Self {
        let (t, i, now) = (&p.total, &p.interval, &p.instant);
        let payload = u64::from(now.mss.saturating_sub(28));
        Self {
            msTimeStamp: long(u64::try_from(p.elapsed.as_millis()).unwrap_or(u64::MAX)),
            pktSentTotal: long(t.packets_sent),
            pktRecvTotal: long(t.packets_received),
            pktSndLossTotal: int(t.send_loss),
            pktRcvLossTotal: int(t.recv_loss),
            pktRetransTotal: int(t.retransmitted),
            pktSentACKTotal: int(t.acks_sent),
            pktRecvACKTotal: int(t.acks_received),
            pktSentNAKTotal: int(t.naks_sent),
            pktRecvNAKTotal: int(t.naks_received),
            usSndDurationTotal: micros(t.send_duration),
            pktSent: long(i.packets_sent),
            pktRecv: long(i.packets_received),
            pktSndLoss: int(i.send_loss),
            pktRcvLoss: int(i.recv_loss),
            pktRetrans: int(i.retransmitted),
            pktSentACK: int(i.acks_sent),
            pktRecvACK: int(i.acks_received),
            pktSentNAK: int(i.naks_sent),
            pktRecvNAK: int(i.naks_received),
            mbpsSendRate: p.send_rate_mbps,
            mbpsRecvRate: p.recv_rate_mbps,
            usSndDuration: micros(i.send_duration),
            usPktSndPeriod: now.send_period.as_secs_f64() * 1e6,
            pktFlowWindow: int(now.flow_window_pkts.into()),
            pktCongestionWindow: int(now.congestion_window_pkts.into()),
            pktFlightSize: int(now.flight_pkts.into()),
            msRTT: now.rtt.as_secs_f64() * 1e3,
            mbpsBandwidth: p.bandwidth_mbps,
            byteAvailSndBuf: int(u64::try_from(now.send_buffer_free_bytes).unwrap_or(u64::MAX)),
            byteAvailRcvBuf: int(u64::from(now.recv_buffer_free_pkts) * payload),
        }
    }
}

/// `UDT::perfmon` into `out`.
///
/// # Safety
/// `out` must point to a writable `UdtrTrace`.
#[no_mangle]
pub unsafe extern "C" fn udtr_perfmon(u: c_int, out: *mut UdtrTrace, clear: bool) -> c_int {
    call(-1, || {
        if out.is_null() {
            return Err(Code::InvParam.into());
        }
        let report = calls::perfmon(u, clear)?;
        // SAFETY: non-null and writable, as the caller promises.
        unsafe { out.write(UdtrTrace::from(&report)) };
        Ok(0)
    })
}

/// `UDT::getsockstate`.
#[no_mangle]
pub extern "C" fn udtr_getsockstate(u: c_int) -> c_int {
    table::status(u) as c_int
}
