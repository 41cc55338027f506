//! UDT4's error model: every failing call returns `UDT::ERROR` and leaves a per-thread
//! `CUDTException` behind, whose code is major × 1000 + minor (`CUDTException::ECONNLOST` =
//! 2001, ...). [`UdtError`] is that code plus the `errno` 4.11 would attach and, where we
//! depart from 4.11 (an option we cannot honour), a detail the C++ side appends to the
//! message. [`set_last`] stores it for the thread; the glue's `UDT::getlasterror` reads it
//! with `udtr_last_error`, noticing a new error by its generation number.
//!
//! [`from_io`] maps the engine's `io::Error`s to the code 4.11 gives in the same situation,
//! which depends on the call ([`Op`]): a timeout is ENOSERVER (1001) for `connect` but
//! ETIMEOUT (6003) for `recv`.

use std::cell::RefCell;
use std::ffi::CString;
use std::io;

use udt::ConnectionError;

/// The error codes of 4.11's `CUDTException` (major × 1000 + minor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Code {
    /// Connection setup failure (1000).
    ConnSetup = 1000,
    /// Connection timed out: no server (1001).
    NoServer = 1001,
    /// Connection rejected (1002).
    ConnRej = 1002,
    /// Unable to create or configure the UDP socket (1003).
    SockFail = 1003,
    /// Aborted for security reasons (1004).
    SecFail = 1004,
    /// Connection was broken (2001).
    ConnLost = 2001,
    /// Connection does not exist (2002).
    NoConn = 2002,
    /// Unable to allocate buffers (3002).
    NoBuf = 3002,
    /// Cannot seek the read position (4001).
    InvRdOff = 4001,
    /// Failure in read (4002).
    RdPerm = 4002,
    /// Cannot seek the write position (4003).
    InvWrOff = 4003,
    /// Failure in write (4004).
    WrPerm = 4004,
    /// Operation not supported (5000).
    InvOp = 5000,
    /// Cannot do this on a bound socket (5001).
    BoundSock = 5001,
    /// Cannot do this on a connected socket (5002).
    ConnSock = 5002,
    /// Bad parameters (5003).
    InvParam = 5003,
    /// Invalid socket id (5004).
    InvSock = 5004,
    /// Cannot do this on an unbound socket (5005).
    UnboundSock = 5005,
    /// Socket is not listening (5006).
    NoListen = 5006,
    /// Listen/accept not supported in rendezvous mode (5007).
    RdvNoServ = 5007,
    /// Rendezvous connect on an unbound socket (5008).
    RdvUnbound = 5008,
    /// Not supported in SOCK_STREAM mode (5009).
    StreamIll = 5009,
    /// Not supported in SOCK_DGRAM mode (5010).
    DgramIll = 5010,
    /// Another socket already listens on the port (5011).
    DupListen = 5011,
    /// Message too large for the send buffer (5012).
    LargeMsg = 5012,
    /// Invalid epoll id (5013).
    InvPollId = 5013,
    /// Non-blocking send: no buffer space (6001).
    AsyncSnd = 6001,
    /// Non-blocking receive: no data (6002).
    AsyncRcv = 6002,
    /// Timed out (6003).
    Timeout = 6003,
    /// The peer signalled an error (7000).
    PeerErr = 7000,
    /// Unknown error: 4.11's `CUDTException(-1, 0, 0)`, code −1000.
    Unknown = -1000,
}

/// One failed call: its 4.11 code, the `errno` 4.11 attaches (0: none), and our detail
/// where we depart from 4.11.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("UDT error {code:?} (errno {errno}){}", detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
pub struct UdtError {
    /// The 4.11 code.
    pub code: Code,
    /// The system error number, 0 for none.
    pub errno: i32,
    /// Appended to 4.11's message by the C++ side.
    pub detail: Option<String>,
}

impl UdtError {
    /// An error with `code` alone, as 4.11 raises most of them.
    pub fn new(code: Code) -> Self {
        Self {
            code,
            errno: 0,
            detail: None,
        }
    }

    /// With a system error number.
    pub fn with_errno(code: Code, errno: i32) -> Self {
        Self {
            errno,
            ..Self::new(code)
        }
    }

    /// With a detail explaining a departure from 4.11.
    pub fn with_detail(code: Code, detail: impl Into<String>) -> Self {
        Self {
            detail: Some(detail.into()),
            ..Self::new(code)
        }
    }
}

impl Code {
    /// The code numbered `n` (a file error, an invalid parameter: what the C++ side records
    /// itself); anything else is [`Code::Unknown`].
    pub fn from_raw(n: i32) -> Self {
        match n {
            4001 => Self::InvRdOff,
            4002 => Self::RdPerm,
            4003 => Self::InvWrOff,
            4004 => Self::WrPerm,
            5003 => Self::InvParam,
            _ => Self::Unknown,
        }
    }
}

impl From<Code> for UdtError {
    fn from(code: Code) -> Self {
        Self::new(code)
    }
}

/// The result of every call of the C layer.
pub type Result<T> = std::result::Result<T, UdtError>;

/// Which call failed: the same engine error means different 4.11 codes in different calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `bind`, `bind2`, `listen`: opening the UDP port.
    Bind,
    /// `connect`.
    Connect,
    /// `accept`.
    Accept,
    /// `send`, `sendmsg`, `sendfile`.
    Send,
    /// `recv`, `recvmsg`, `recvfile`.
    Recv,
}

/// The 4.11 error for an engine error in `op`.
pub fn from_io(e: &io::Error, op: Op) -> UdtError {
    if let Some(ce) = udt::connection_error(e) {
        return UdtError::new(from_connection(ce, op));
    }
    let errno = e.raw_os_error().unwrap_or(0);
    let code = match (e.kind(), op) {
        (io::ErrorKind::WouldBlock, Op::Send) => Code::AsyncSnd,
        (io::ErrorKind::WouldBlock, _) => Code::AsyncRcv,
        (io::ErrorKind::TimedOut, Op::Connect) => Code::NoServer,
        (io::ErrorKind::TimedOut, _) => Code::Timeout,
        (io::ErrorKind::ConnectionRefused, _) => Code::ConnRej,
        (io::ErrorKind::AddrInUse, Op::Bind) => {
            return UdtError::with_errno(Code::SockFail, non_zero(errno, libc::EADDRINUSE))
        }
        (io::ErrorKind::AddrInUse, Op::Connect) => Code::DupListen,
        (io::ErrorKind::InvalidInput, Op::Send) => Code::LargeMsg,
        (io::ErrorKind::InvalidInput, _) => Code::InvParam,
        (
            io::ErrorKind::NotConnected
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof,
            _,
        ) => Code::ConnLost,
        (_, Op::Bind | Op::Connect) if errno != 0 => Code::SockFail,
        _ => Code::Unknown,
    };
    UdtError::with_errno(code, errno)
}

fn non_zero(errno: i32, default: i32) -> i32 {
    if errno == 0 {
        default
    } else {
        errno
    }
}

/// The 4.11 code for why a connection ended.
fn from_connection(e: ConnectionError, op: Op) -> Code {
    match e {
        ConnectionError::Refused | ConnectionError::NoListener => Code::ConnRej,
        ConnectionError::ConnectTimeout => Code::NoServer,
        ConnectionError::SecurityCheck => Code::SecFail,
        ConnectionError::PeerError(_) => Code::PeerErr,
        _ if op == Op::Connect => Code::ConnSetup,
        _ => Code::ConnLost,
    }
}

/// The thread's last error, as `UDT::getlasterror` shows it.
struct Last {
    error: UdtError,
    /// `error.detail` as C text (valid until the next error on this thread).
    detail: Option<CString>,
    /// Bumped by every error, so the C++ side knows when to refresh its copy.
    generation: u64,
}

thread_local! {
    static LAST: RefCell<Last> = const {
        RefCell::new(Last {
            error: UdtError { code: Code::Unknown, errno: 0, detail: None },
            detail: None,
            generation: 0,
        })
    };
}

/// Record `e` as this thread's last error (4.11 keeps it until the next failure).
pub fn set_last(e: UdtError) {
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        // A detail with a NUL byte cannot be C text: drop it rather than the error.
        last.detail = e.detail.as_deref().and_then(|d| CString::new(d).ok());
        last.error = e;
        last.generation += 1;
    });
}

/// This thread's last error: (code, errno, detail or null, generation); generation 0 means
/// no error yet. The detail pointer stays valid until the thread's next error.
pub fn last() -> (i32, i32, *const libc::c_char, u64) {
    LAST.with(|last| {
        let last = last.borrow();
        let detail = last
            .detail
            .as_ref()
            .map_or(std::ptr::null(), |d| d.as_ptr());
        (
            last.error.code as i32,
            last.error.errno,
            detail,
            last.generation,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_engine_error_means_what_4_11_says_for_the_call() {
        let timeout = io::Error::new(io::ErrorKind::TimedOut, "t");
        assert_eq!(from_io(&timeout, Op::Connect).code, Code::NoServer);
        assert_eq!(from_io(&timeout, Op::Recv).code, Code::Timeout);
        let block = io::Error::new(io::ErrorKind::WouldBlock, "b");
        assert_eq!(from_io(&block, Op::Send).code, Code::AsyncSnd);
        assert_eq!(from_io(&block, Op::Accept).code, Code::AsyncRcv);
        let lost = udt::io_error(ConnectionError::PeerLost);
        assert_eq!(from_io(&lost, Op::Recv).code, Code::ConnLost);
        let refused = udt::io_error(ConnectionError::Refused);
        assert_eq!(from_io(&refused, Op::Connect).code, Code::ConnRej);
        let in_use = io::Error::from_raw_os_error(libc::EADDRINUSE);
        let e = from_io(&in_use, Op::Bind);
        assert_eq!((e.code, e.errno), (Code::SockFail, libc::EADDRINUSE));
    }

    #[test]
    fn each_error_bumps_the_generation_and_keeps_its_detail() {
        let (_, _, _, before) = last();
        set_last(UdtError::with_detail(Code::InvOp, "why"));
        let (code, errno, detail, generation) = last();
        assert_eq!((code, errno, generation), (5000, 0, before + 1));
        // SAFETY: `last` returned the pointer of this thread's CString, alive until the next
        // error on this thread.
        let text = unsafe { std::ffi::CStr::from_ptr(detail) };
        assert_eq!(text.to_str(), Ok("why"));
        set_last(UdtError::new(Code::InvSock));
        assert!(last().2.is_null());
    }
}
