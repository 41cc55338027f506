//! [`DataStream`]: one data connection of a test, UDT or kernel TCP, behind one interface:
//! open it (connect on the client, accept on the server, each followed by the test's
//! cookie), move bytes, finish, and read the transport's own counters as a
//! [`Sample`].

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, SockRef, Socket, Type};
use udt::{Bytes, UdtListener, UdtStream};

use super::params::{Proto, TestParams};
use super::sample::{Buffers, Sample};
use super::sys;

/// How long a blocked read or write waits before checking whether the test was stopped.
pub(crate) const POLL: Duration = Duration::from_millis(250);

/// How long connecting, accepting and the cookie exchange may take.
pub(crate) const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the server waits for a data stream's cookie (sent right after connecting).
const COOKIE_TIMEOUT: Duration = Duration::from_secs(3);

/// Length of the cookie that opens each data stream and ties it to its test.
pub(crate) const COOKIE_LEN: usize = 16;

/// One data connection.
// One per stream, allocated once (in an Arc): the size difference does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum DataStream {
    /// UDT over UDP.
    Udt(UdtStream),
    /// Kernel TCP.
    Tcp(TcpStream),
}

/// What sampling a stream remembers between samples (TCP counters are cumulative only).
#[derive(Debug, Default)]
pub(crate) struct Probe {
    tcp_retrans: u64,
}

impl DataStream {
    /// Connects a data stream to the server at `addr` and sends the test's cookie.
    pub(crate) fn connect(params: &TestParams, addr: SocketAddr, cookie: &str) -> io::Result<Self> {
        let mut stream = match params.proto {
            Proto::Udt => {
                let options = params.udt_options().map_err(io::Error::other)?;
                Self::Udt(UdtStream::connect_with(addr, options)?)
            }
            Proto::Tcp => {
                let socket =
                    Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
                params.apply_tcp(&socket)?;
                socket.connect_timeout(&addr.into(), SETUP_TIMEOUT)?;
                Self::Tcp(socket.into())
            }
        };
        stream.set_timeouts(Some(POLL))?;
        stream.write_all(cookie.as_bytes())?;
        Ok(stream)
    }

    /// Accepts the next UDT stream on `listener` (its cookie still to be read).
    pub(crate) fn accept_udt(listener: &UdtListener, deadline: Instant) -> io::Result<Self> {
        listener.set_nonblocking(true)?;
        loop {
            match listener.accept() {
                Ok((s, _)) => return Ok(Self::Udt(s)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Err(setup_timeout()),
                Err(e) => return Err(e),
            }
        }
    }

    /// Accepts the next TCP stream on `listener` and applies the test's options (its
    /// cookie still to be read).
    pub(crate) fn accept_tcp(
        listener: &TcpListener,
        params: &TestParams,
        deadline: Instant,
    ) -> io::Result<Self> {
        listener.set_nonblocking(true)?;
        let accepted = accept_until(listener, deadline);
        // The listener also takes control connections, which the server accepts blocking.
        listener.set_nonblocking(false)?;
        let accepted = accepted?;
        accepted.set_nonblocking(false)?;
        params.apply_tcp(&SockRef::from(&accepted))?;
        Ok(Self::Tcp(accepted))
    }

    /// Reads the cookie a client sends first on each data stream. A stream left over from
    /// a client that died sends nothing: it fails within [`COOKIE_TIMEOUT`].
    pub(crate) fn read_cookie(&mut self) -> io::Result<String> {
        self.set_timeouts(Some(COOKIE_TIMEOUT))?;
        let mut cookie = [0u8; COOKIE_LEN];
        self.read_exact(&mut cookie)?;
        self.set_timeouts(Some(POLL))?;
        Ok(String::from_utf8_lossy(&cookie).into_owned())
    }

    fn set_timeouts(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Self::Udt(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            Self::Tcp(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
        }
    }

    /// The sender is done writing: wait until the receiver has everything (UDT: all
    /// acknowledged; TCP: the receiver closed after reading to the end), unless `stop`.
    pub(crate) fn finish_send(&self, stop: &AtomicBool) -> io::Result<()> {
        match self {
            Self::Udt(s) => retry_until(stop, || (&*s).flush()),
            Self::Tcp(s) => {
                s.shutdown(std::net::Shutdown::Write)?;
                let mut buf = [0u8; 64];
                loop {
                    match retry_until(stop, || (&*s).read(&mut buf))? {
                        0 => return Ok(()),
                        _ => continue,
                    }
                }
            }
        }
    }

    /// The receiver read to the end: let a TCP sender know.
    pub(crate) fn finish_recv(&self) {
        if let Self::Tcp(s) = self {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }

    /// The transport's counters since the last sample (`probe` keeps what TCP needs), and its
    /// gauges now. `bytes` is left at 0: the caller counts application bytes.
    pub(crate) fn sample(&self, probe: &mut Probe) -> Sample {
        match self {
            Self::Udt(s) => udt_sample(&s.perfmon(true), false),
            Self::Tcp(s) => tcp_sample(s, probe),
        }
    }

    /// Whole-connection counters (UDT; TCP only has the cumulative retransmissions) and
    /// gauges now.
    pub(crate) fn total_sample(&self) -> Sample {
        match self {
            Self::Udt(s) => udt_sample(&s.perfmon(false), true),
            Self::Tcp(s) => tcp_sample(s, &mut Probe::default()),
        }
    }

    /// The congestion control in use.
    pub(crate) fn cc(&self, params: &TestParams) -> String {
        match self {
            Self::Udt(_) => params.cc_name(),
            Self::Tcp(s) => SockRef::from(s)
                .tcp_congestion()
                .map(|name| {
                    String::from_utf8_lossy(&name)
                        .trim_end_matches('\0')
                        .to_owned()
                })
                .unwrap_or_else(|_| params.cc_name()),
        }
    }

    /// Buffer sizes in effect (see [`Buffers`]).
    pub(crate) fn buffers(&self, params: &TestParams) -> Buffers {
        match self {
            Self::Udt(_) => {
                let o = params.udt_options().unwrap_or_default();
                Buffers {
                    send_buffer_bytes: Some(o.send_buffer()),
                    recv_buffer_bytes: Some(o.recv_buffer()),
                    udp_send_buffer_bytes: o.udp_send_buffer().map(|b| b as u64),
                    udp_recv_buffer_bytes: o.udp_recv_buffer().map(|b| b as u64),
                }
            }
            Self::Tcp(s) => {
                let s = SockRef::from(s);
                Buffers {
                    send_buffer_bytes: s.send_buffer_size().ok().map(|b| b as u64),
                    recv_buffer_bytes: s.recv_buffer_size().ok().map(|b| b as u64),
                    ..Buffers::default()
                }
            }
        }
    }

    /// Writes from the front of `data`, as `write` does. A UDT stream keeps the bytes
    /// uncopied until they are acknowledged ([`UdtStream::write_shared`]): the test sends the
    /// same chunk over and over, as iperf3 does, and TCP copies it once, into the kernel; a
    /// copy into our send buffer on top would measure the copy, not the transport.
    pub(crate) fn write_bytes(&self, data: &Bytes) -> io::Result<usize> {
        match self {
            Self::Udt(s) => s.write_shared(data),
            Self::Tcp(s) => (&*s).write(data),
        }
    }

    /// Reads up to `buf.len()` bytes for the test to count and drop. A UDT stream hands them
    /// over uncopied ([`UdtStream::read_chunks`], into `chunks`, emptied again): TCP's data
    /// is copied once, by the kernel, into `buf`, and ours once, by the kernel, into the
    /// buffer it arrived in; copying it out on top would measure the copy, not the transport.
    pub(crate) fn read_to_drop(
        &self,
        buf: &mut [u8],
        chunks: &mut Vec<Bytes>,
    ) -> io::Result<usize> {
        match self {
            Self::Udt(s) => {
                let n = s.read_chunks(chunks, buf.len());
                chunks.clear();
                n
            }
            Self::Tcp(s) => (&*s).read(buf),
        }
    }

    /// Closes the stream (UDT: waits for the close handshake, bounded by the linger time).
    pub(crate) fn close(self) {
        match self {
            Self::Udt(s) => {
                let _ = s.close();
            }
            Self::Tcp(s) => drop(s),
        }
    }
}

impl Read for DataStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&*self).read(buf)
    }
}

impl Read for &DataStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match *self {
            DataStream::Udt(s) => (&*s).read(buf),
            DataStream::Tcp(s) => (&*s).read(buf),
        }
    }
}

impl Write for DataStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&*self).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        (&*self).flush()
    }
}

impl Write for &DataStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match *self {
            DataStream::Udt(s) => (&*s).write(buf),
            DataStream::Tcp(s) => (&*s).write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match *self {
            DataStream::Udt(s) => (&*s).flush(),
            DataStream::Tcp(s) => (&*s).flush(),
        }
    }
}

/// Polls a non-blocking TCP listener until a connection arrives or `deadline` passes.
fn accept_until(listener: &TcpListener, deadline: Instant) -> io::Result<TcpStream> {
    loop {
        match listener.accept() {
            Ok((s, _)) => return Ok(s),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Err(setup_timeout()),
            Err(e) => return Err(e),
        }
    }
}

/// Whether an error only means "nothing happened within the poll timeout".
pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

/// Repeats `op` while it times out, until `stop` is set.
fn retry_until<T>(stop: &AtomicBool, mut op: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match op() {
            Err(e) if is_timeout(&e) && !stop.load(Relaxed) => continue,
            r => return r,
        }
    }
}

fn setup_timeout() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        "the client's data streams did not arrive in time",
    )
}

fn udt_sample(p: &udt::Perfmon, total: bool) -> Sample {
    let c = if total { &p.total } else { &p.interval };
    let ms = |d: Duration| Some(d.as_secs_f64() * 1e3);
    Sample {
        packets_sent: c.packets_sent,
        retransmitted_packets: c.retransmitted,
        recv_loss_packets: c.recv_loss,
        send_loss_packets: c.send_loss,
        duplicate_packets: c.duplicates,
        rtt_ms: ms(p.instant.rtt),
        rtt_var_ms: ms(p.instant.rtt_var),
        send_period_us: Some(p.instant.send_period.as_secs_f64() * 1e6),
        window_pkts: Some(f64::from(p.instant.congestion_window_pkts)),
        bandwidth_estimate_bps: Some(p.bandwidth_mbps * 1e6),
        ..Sample::default()
    }
}

fn tcp_sample(s: &TcpStream, probe: &mut Probe) -> Sample {
    let Ok(info) = sys::tcp_info(s) else {
        return Sample::default();
    };
    let retrans = u64::from(info.tcpi_total_retrans);
    let delta = retrans.saturating_sub(probe.tcp_retrans);
    probe.tcp_retrans = retrans;
    Sample {
        retransmitted_packets: delta,
        rtt_ms: Some(f64::from(info.tcpi_rtt) / 1e3),
        rtt_var_ms: Some(f64::from(info.tcpi_rttvar) / 1e3),
        window_pkts: Some(f64::from(info.tcpi_snd_cwnd)),
        ..Sample::default()
    }
}
