//! The UDT4 calls in Rust terms, over the socket table: each checks what 4.11 checks, in
//! its order, fails with 4.11's code, and otherwise hands the work to the engine. The C ABI
//! (`api.rs`) only converts pointers; the C++ glue only converts C++ types.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::FromRawFd;
use std::sync::Arc;
use std::time::Duration;

use udt::blocking::UdtPort;
use udt::{Perfmon, Ready, UdtMessageSocket, UdtStream};
use udt_proto::Mode;

use crate::error::{from_io, Code, Op, Result, UdtError};
use crate::settings::{timeout, Opt, Settings, Value};
use crate::table::{self, both, Conn, Entry, Phase, Status};

/// What 4.11 says when asked for a user-defined congestion control class.
pub const CC_UNSUPPORTED: &str = "UDT_CC: user-defined congestion control classes (CCC) \
    cannot run in this libudt, which is the udt engine behind libudt 4.11's interface; \
    connections use UDT's native congestion control";

/// `UDT::socket`.
pub fn socket(af: i32, ty: i32) -> Result<i32> {
    let mode = match ty {
        libc::SOCK_STREAM => Mode::Stream,
        libc::SOCK_DGRAM => Mode::Message,
        _ => return Err(Code::InvParam.into()),
    };
    if af != libc::AF_INET && af != libc::AF_INET6 {
        return Err(Code::InvParam.into());
    }
    Ok(table::insert(af, mode, Phase::Fresh, Settings::default()))
}

/// `UDT::bind`.
pub fn bind(u: i32, addr: SocketAddr) -> Result<()> {
    let entry = table::get(u)?;
    let mut inner = entry.lock();
    if !matches!(inner.phase, Phase::Fresh) {
        return Err(Code::InvOp.into());
    }
    let options = inner.settings.options(entry.mode)?;
    let port = UdtPort::bind(addr, &options).map_err(|e| from_io(&e, Op::Bind))?;
    inner.phase = Phase::Bound(Arc::new(port));
    Ok(())
}

/// `UDT::bind2`: use the application's bound UDP socket `fd`. The socket is duplicated, so
/// the application's descriptor stays valid (closing it is the application's business).
pub fn bind2(u: i32, fd: i32) -> Result<()> {
    let entry = table::get(u)?;
    let mut inner = entry.lock();
    if !matches!(inner.phase, Phase::Fresh) {
        return Err(Code::InvOp.into());
    }
    // SAFETY: F_DUPFD_CLOEXEC on any integer is safe: it fails with EBADF for a bad one.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        return Err(UdtError::with_errno(Code::InvParam, errno()));
    }
    // SAFETY: `dup` is a new descriptor that nothing else owns.
    let socket = unsafe { UdpSocket::from_raw_fd(dup) };
    let options = inner.settings.options(entry.mode)?;
    let port = UdtPort::from_udp_socket(socket, &options).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidInput => UdtError::with_detail(Code::InvParam, e.to_string()),
        _ => from_io(&e, Op::Bind),
    })?;
    inner.phase = Phase::Bound(Arc::new(port));
    Ok(())
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// `UDT::listen`.
pub fn listen(u: i32, backlog: i32) -> Result<()> {
    let entry = table::get(u)?;
    let mut inner = entry.lock();
    let port = match &inner.phase {
        Phase::Listening(_) => return Ok(()),
        Phase::Bound(port) => Arc::clone(port),
        _ => return Err(Code::UnboundSock.into()),
    };
    if inner.settings.rendezvous {
        return Err(Code::RdvNoServ.into());
    }
    if backlog <= 0 {
        return Err(Code::InvParam.into());
    }
    let options = inner.settings.options(entry.mode)?;
    let listener = port.listen(&options).map_err(|e| match e.kind() {
        std::io::ErrorKind::AddrInUse => Code::DupListen.into(),
        _ => from_io(&e, Op::Bind),
    })?;
    inner.phase = Phase::Listening(Arc::new(listener));
    Ok(())
}

/// `UDT::accept`: the new socket's handle and its peer.
pub fn accept(u: i32) -> Result<(i32, SocketAddr)> {
    let entry = table::get(u)?;
    let (listener, settings) = {
        let inner = entry.lock();
        match &inner.phase {
            Phase::Listening(l) => (Arc::clone(l), inner.settings),
            _ => return Err(Code::NoListen.into()),
        }
    };
    let accepted = match entry.mode {
        Mode::Stream => listener.accept().map(|(s, a)| (Conn::Stream(s), a)),
        Mode::Message => listener
            .accept_message()
            .map(|(s, a)| (Conn::Message(s), a)),
    };
    let (conn, peer) = accepted.map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock => Code::AsyncRcv.into(),
        std::io::ErrorKind::NotConnected => Code::NoListen.into(),
        _ => from_io(&e, Op::Accept),
    })?;
    apply_runtime(&conn, &settings)?;
    let id = table::insert(entry.af, entry.mode, Phase::Conn(Arc::new(conn)), settings);
    Ok((id, peer))
}

/// `UDT::connect`. Blocks for the handshake with UDT_RCVSYN on; off, returns at once.
pub fn connect(u: i32, remote: SocketAddr) -> Result<()> {
    let entry = table::get(u)?;
    // The entry stays locked through the handshake, as 4.11 holds the socket's control lock.
    let mut inner = entry.lock();
    let options = inner.settings.options(entry.mode)?;
    let conn = match (&inner.phase, entry.mode) {
        (Phase::Fresh, _) if inner.settings.rendezvous => return Err(Code::RdvUnbound.into()),
        (Phase::Fresh, Mode::Stream) => UdtStream::connect_with(remote, options).map(Conn::Stream),
        (Phase::Fresh, Mode::Message) => {
            UdtMessageSocket::connect_with(remote, options).map(Conn::Message)
        }
        (Phase::Bound(port), Mode::Stream) => {
            port.connect_stream(remote, &options).map(Conn::Stream)
        }
        (Phase::Bound(port), Mode::Message) => {
            port.connect_message(remote, &options).map(Conn::Message)
        }
        _ => return Err(Code::ConnSock.into()),
    }
    .map_err(|e| from_io(&e, Op::Connect))?;
    inner.phase = Phase::Conn(Arc::new(conn));
    Ok(())
}

/// `UDT::close`: the handle is gone at once; a connection lingers as UDT_LINGER says
/// (blocking here with UDT_SNDSYN on), a listener stops accepting.
pub fn close(u: i32) -> Result<()> {
    let entry = table::remove(u)?;
    close_entry(&entry);
    Ok(())
}

fn close_entry(entry: &Entry) {
    match entry.phase() {
        // A linger that runs out is no failure of `close` in 4.11.
        Phase::Conn(conn) => drop(both!(&*conn, s => s.close_shared())),
        Phase::Listening(listener) => listener.close_shared(),
        Phase::Fresh | Phase::Bound(_) => {}
    }
}

/// `UDT::cleanup`: close every socket left, without waiting.
pub fn cleanup() {
    for entry in table::drain() {
        if let Phase::Listening(listener) = entry.phase() {
            listener.close_shared();
        }
    }
}

/// `UDT::getpeername`.
pub fn peer_name(u: i32) -> Result<(i32, SocketAddr)> {
    let entry = table::get(u).map_err(|_| UdtError::new(Code::NoConn))?;
    match entry.phase() {
        Phase::Conn(c) if c.status() == Status::Connected => {
            let addr = both!(&*c, s => s.peer_addr()).map_err(|e| from_io(&e, Op::Recv))?;
            Ok((entry.af, addr))
        }
        _ => Err(Code::NoConn.into()),
    }
}

/// `UDT::getsockname`.
pub fn sock_name(u: i32) -> Result<(i32, SocketAddr)> {
    let entry = table::get(u)?;
    let addr = match entry.phase() {
        Phase::Fresh => return Err(Code::NoConn.into()),
        Phase::Bound(port) => port.local_addr(),
        Phase::Listening(l) => l.local_addr().map_err(|e| from_io(&e, Op::Bind))?,
        Phase::Conn(c) if c.status() == Status::Broken => return Err(Code::InvSock.into()),
        Phase::Conn(c) => both!(&*c, s => s.local_addr()).map_err(|e| from_io(&e, Op::Bind))?,
    };
    Ok((entry.af, addr))
}

/// `UDT::getsockopt`.
pub fn get_option(u: i32, opt: Opt) -> Result<Value> {
    let entry = table::get(u)?;
    let (phase, mut settings) = {
        let inner = entry.lock();
        (inner.phase.clone(), inner.settings)
    };
    let conn = match &phase {
        Phase::Conn(c) => Some(c),
        _ => None,
    };
    match opt {
        Opt::Cc if matches!(phase, Phase::Fresh) => Err(Code::UnboundSock.into()),
        Opt::Cc => Err(UdtError::with_detail(Code::InvOp, CC_UNSUPPORTED)),
        Opt::State => Ok(Value::Int(phase.status() as i32)),
        Opt::Event => Ok(Value::Int(conn.map_or(0, |c| event_bits(c)))),
        Opt::SndData => {
            Ok(Value::Int(conn.map_or(0, |c| {
                clamp(both!(&**c, s => s.send_data_pkts()))
            })))
        }
        Opt::RcvData => {
            Ok(Value::Int(conn.map_or(0, |c| {
                clamp(both!(&**c, s => s.recv_data_pkts()))
            })))
        }
        _ => {
            // Once connected, 4.11 reports (and sizes buffers by) the negotiated MSS.
            if let Some(c) = conn.filter(|c| c.status() != Status::Connecting) {
                settings.mss = clamp(both!(&**c, s => s.path_stats()).mss);
            }
            settings.get(opt)
        }
    }
}

/// 4.11's UDT_EVENT: ERR alone once broken, else IN and OUT as they are.
fn event_bits(conn: &Conn) -> i32 {
    let ready = both!(conn, s => s.events());
    if ready.contains(Ready::ERR) {
        i32::from(Ready::ERR.bits())
    } else {
        i32::from(ready.bits() & (Ready::IN.bits() | Ready::OUT.bits()))
    }
}

fn clamp(v: u32) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// `UDT::setsockopt` (UDT_CC never reaches here with a value: see [`refuse_cc`]).
pub fn set_option(u: i32, opt: Opt, value: Value) -> Result<()> {
    let entry = table::get(u)?;
    let mut inner = entry.lock();
    if let Phase::Conn(c) = &inner.phase {
        if matches!(
            c.status(),
            Status::Broken | Status::Closing | Status::Closed
        ) {
            return Err(Code::ConnLost.into());
        }
    }
    let stage = inner.phase.stage();
    inner.settings.set(opt, value, stage)?;
    match &inner.phase {
        Phase::Conn(c) => apply_runtime(c, &inner.settings)?,
        Phase::Listening(l) => l.set_recv_blocking(inner.settings.rcv_syn),
        Phase::Fresh | Phase::Bound(_) => {}
    }
    Ok(())
}

/// `UDT::setsockopt(UDT_CC)`: 4.11 refuses it once connecting (5001); we always do.
pub fn refuse_cc(u: i32) -> Result<()> {
    let entry = table::get(u)?;
    let code = match entry.phase() {
        Phase::Conn(_) => return Err(Code::BoundSock.into()),
        _ => Code::InvOp,
    };
    Err(UdtError::with_detail(code, CC_UNSUPPORTED))
}

/// Apply the options that may change on a live connection.
fn apply_runtime(conn: &Conn, settings: &Settings) -> Result<()> {
    let bad = |e: std::io::Error| UdtError::with_detail(Code::InvParam, e.to_string());
    both!(conn, s => {
        s.set_send_blocking(settings.snd_syn);
        s.set_recv_blocking(settings.rcv_syn);
        s.set_linger(settings.linger_value());
        s.set_max_bandwidth(settings.max_bw_value());
        s.set_write_timeout(timeout(settings.snd_timeo)).map_err(bad)?;
        s.set_read_timeout(timeout(settings.rcv_timeo)).map_err(bad)?;
    });
    Ok(())
}

/// The connection behind `u` for a data call in `mode`, with 4.11's checks: the wrong type
/// (5009 / 5010), not connected (2002), broken or closed (2001). `sending`: a broken
/// connection fails even with data left to read only when sending.
fn data_conn(u: i32, mode: Mode) -> Result<Arc<Conn>> {
    let entry = table::get(u)?;
    if entry.mode != mode {
        return Err(match mode {
            Mode::Stream => Code::DgramIll,
            Mode::Message => Code::StreamIll,
        }
        .into());
    }
    match entry.phase() {
        Phase::Conn(c) if c.status() != Status::Connecting => Ok(c),
        _ => Err(Code::NoConn.into()),
    }
}

fn stream(conn: &Conn) -> Result<&UdtStream> {
    match conn {
        Conn::Stream(s) => Ok(s),
        Conn::Message(_) => Err(Code::DgramIll.into()),
    }
}

fn message(conn: &Conn) -> Result<&UdtMessageSocket> {
    match conn {
        Conn::Message(s) => Ok(s),
        Conn::Stream(_) => Err(Code::StreamIll.into()),
    }
}

fn refuse_if_ended(conn: &Conn) -> Result<()> {
    match conn.status() {
        Status::Broken | Status::Closing | Status::Closed => Err(Code::ConnLost.into()),
        _ => Ok(()),
    }
}

/// `UDT::send`: bytes queued.
pub fn send(u: i32, buf: &[u8]) -> Result<usize> {
    let conn = data_conn(u, Mode::Stream)?;
    refuse_if_ended(&conn)?;
    if buf.is_empty() {
        return Ok(0);
    }
    let mut s = stream(&conn)?;
    s.write(buf).map_err(|e| from_io(&e, Op::Send))
}

/// `UDT::recv`: bytes read; the end of the stream is 4.11's ECONNLOST.
pub fn recv(u: i32, buf: &mut [u8]) -> Result<usize> {
    let conn = data_conn(u, Mode::Stream)?;
    if buf.is_empty() {
        return Ok(0);
    }
    let mut s = stream(&conn)?;
    match s.read(buf) {
        Ok(0) => Err(Code::ConnLost.into()),
        Ok(n) => Ok(n),
        Err(e) => Err(from_io(&e, Op::Recv)),
    }
}

/// `UDT::sendmsg`: `ttl_ms` < 0 is no limit.
pub fn send_msg(u: i32, buf: &[u8], ttl_ms: i32, in_order: bool) -> Result<usize> {
    let conn = data_conn(u, Mode::Message)?;
    refuse_if_ended(&conn)?;
    if buf.is_empty() {
        return Ok(0);
    }
    let ttl = u64::try_from(ttl_ms)
        .ok()
        .map(|ms| Duration::from_millis(ms.max(1)));
    message(&conn)?
        .send_msg(buf, ttl, in_order)
        .map_err(|e| from_io(&e, Op::Send))?;
    Ok(buf.len())
}

/// `UDT::recvmsg`: the message's length (truncated to `buf`).
pub fn recv_msg(u: i32, buf: &mut [u8]) -> Result<usize> {
    let conn = data_conn(u, Mode::Message)?;
    if buf.is_empty() {
        return Ok(0);
    }
    match message(&conn)?.recv_msg(buf) {
        Ok(0) => Err(Code::ConnLost.into()),
        Ok(n) => Ok(n),
        Err(e) => Err(from_io(&e, Op::Recv)),
    }
}

/// The stream behind `u` for `sendfile` / `recvfile`, with their checks.
pub fn file_stream(u: i32, sending: bool) -> Result<Arc<Conn>> {
    let conn = data_conn(u, Mode::Stream)?;
    if sending {
        refuse_if_ended(&conn)?;
    }
    Ok(conn)
}

/// One block of `sendfile`: all of `buf`, blocking whatever UDT_SNDSYN says.
pub fn send_block(conn: &Conn, buf: &[u8]) -> Result<()> {
    stream(conn)?
        .write_all_blocking(buf)
        .map_err(|e| from_io(&e, Op::Send))
}

/// One read of `recvfile`, blocking whatever UDT_RCVSYN says; the end is ECONNLOST.
pub fn recv_block(conn: &Conn, buf: &mut [u8]) -> Result<usize> {
    match stream(conn)?.read_blocking(buf) {
        Ok(0) if !buf.is_empty() => Err(Code::ConnLost.into()),
        Ok(n) => Ok(n),
        Err(e) => Err(from_io(&e, Op::Recv)),
    }
}

/// `UDT::sendfile2`: send `size` bytes of the file at `path` from `offset`; returns the
/// bytes sent. As in 4.11 (whose `fstream` fails rather than throws), a file that cannot be
/// opened, or holds fewer bytes, is EWRPERM (4004), the latter after sending what it has.
pub fn send_file_path(u: i32, path: &std::path::Path, offset: u64, size: u64) -> Result<u64> {
    let conn = file_stream(u, true)?;
    let s = stream(&conn)?;
    let file = File::open(path).map_err(|e| file_error(Code::WrPerm, &e))?;
    let len = file
        .metadata()
        .map_err(|e| file_error(Code::WrPerm, &e))?
        .len();
    let available = size.min(len.saturating_sub(offset));
    let sent = s
        .send_file(&file, offset, available)
        .map_err(|e| from_io(&e, Op::Send))?;
    if available < size {
        return Err(Code::WrPerm.into());
    }
    Ok(sent)
}

/// `UDT::recvfile2`: create (or truncate) `path` and write `size` bytes at `offset`;
/// ECONNLOST if the stream ends first.
pub fn recv_file_path(u: i32, path: &std::path::Path, offset: u64, size: u64) -> Result<u64> {
    let conn = file_stream(u, false)?;
    let s = stream(&conn)?;
    let file = File::create(path).map_err(|e| file_error(Code::WrPerm, &e))?;
    let got = s
        .recv_file(&file, offset, size)
        .map_err(|e| from_io(&e, Op::Recv))?;
    if got < size {
        return Err(Code::ConnLost.into());
    }
    (&file).flush().map_err(|e| file_error(Code::WrPerm, &e))?;
    Ok(got)
}

fn file_error(code: Code, e: &std::io::Error) -> UdtError {
    UdtError::with_errno(code, e.raw_os_error().unwrap_or(0))
}

/// `UDT::perfmon`.
pub fn perfmon(u: i32, clear: bool) -> Result<Perfmon> {
    let entry = table::get(u)?;
    match entry.phase() {
        Phase::Conn(c) => Ok(both!(&*c, s => s.perfmon(clear))),
        _ => Err(Code::NoConn.into()),
    }
}
