//! The socket options of one UDT4 socket, kept as 4.11 keeps them (`CUDT::setOpt` /
//! `getOpt`): in its units (buffers in packets of the current MSS, timeouts in ms, −1 for
//! none), with its defaults, its rounding and its rules about when each may change, so that
//! `getsockopt` reads back exactly what 4.11 would. [`Settings::options`] turns them into the
//! engine's [`SocketOptions`] when the socket binds or connects.
//!
//! Two values are reported as 4.11 would but not applied unless the application sets them:
//! UDP_SNDBUF and UDP_RCVBUF. 4.11's defaults (64 KiB, 12 288 000 B) were sized for one UDP
//! socket per connection; the engine asks the kernel for 8 MiB each way, which its paced
//! sender needs.

use std::time::Duration;

use udt::SocketOptions;
use udt_proto::Mode;

use crate::error::{Code, Result, UdtError};

/// IP + UDP header bytes counted in UDT_MSS (4.11's `m_iMSS - 28`).
const IP_UDP: i32 = 28;
/// The smallest MSS 4.11 accepts: headers plus a 48-byte handshake.
const MIN_MSS: i32 = IP_UDP + 48;
/// 4.11's minimum receive buffer and flow window, packets.
const MIN_PKTS: i32 = 32;

/// The 4.11 option numbers (`enum UDTOpt`): the `udt` crate's own list, whose
/// [`UdtOpt::from_number`](udt::UdtOpt::from_number) reads the C caller's `optname`.
pub use udt::UdtOpt as Opt;

/// An option value as the C caller passes it (`bool`, `int`, `int64_t`, `struct linger`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// A C++ `bool`.
    Bool(bool),
    /// A C `int` (or `int32_t`).
    Int(i32),
    /// An `int64_t`.
    Int64(i64),
    /// A `struct linger`: on/off and seconds.
    Linger(i32, i32),
}

impl Value {
    /// The type each option takes and reports.
    pub fn kind_of(opt: Opt) -> Kind {
        match opt {
            Opt::SndSyn | Opt::RcvSyn | Opt::Rendezvous | Opt::ReuseAddr => Kind::Bool,
            Opt::MaxBw => Kind::Int64,
            Opt::Linger => Kind::Linger,
            _ => Kind::Int,
        }
    }
}

/// The C type of an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `bool`, 1 byte.
    Bool,
    /// `int`, 4 bytes.
    Int,
    /// `int64_t`, 8 bytes.
    Int64,
    /// `struct linger`, two `int`s.
    Linger,
}

impl Kind {
    /// Its size in bytes.
    pub fn size(self) -> usize {
        match self {
            Self::Bool => 1,
            Self::Int => 4,
            Self::Int64 => 8,
            Self::Linger => size_of::<libc::linger>(),
        }
    }
}

/// How far a socket's life has gone, which decides what may still change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Created, not bound (4.11 INIT).
    Fresh,
    /// Bound or listening (4.11 `m_bOpened`).
    Opened,
    /// Connecting or connected.
    Connected,
}

/// 4.11's option fields of one socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// UDT_MSS (after connecting: the negotiated one, set by the socket table).
    pub mss: i32,
    /// UDT_SNDSYN.
    pub snd_syn: bool,
    /// UDT_RCVSYN.
    pub rcv_syn: bool,
    /// UDT_FC, packets.
    pub fc: i32,
    /// UDT_SNDBUF, packets of `mss - 28` bytes.
    pub snd_buf_pkts: i32,
    /// UDT_RCVBUF, packets.
    pub rcv_buf_pkts: i32,
    /// Which of UDT_FC, UDT_SNDBUF, UDT_RCVBUF the application set: only those are handed
    /// to the engine, whose buffers otherwise size themselves to the path.
    pub buffers_set: (bool, bool, bool),
    /// UDT_LINGER: on, seconds.
    pub linger: (i32, i32),
    /// UDP_SNDBUF, bytes, and whether the application set it.
    pub udp_snd: (i32, bool),
    /// UDP_RCVBUF, bytes, and whether the application set it.
    pub udp_rcv: (i32, bool),
    /// UDT_RENDEZVOUS.
    pub rendezvous: bool,
    /// UDT_SNDTIMEO, ms (−1: none).
    pub snd_timeo: i32,
    /// UDT_RCVTIMEO, ms (−1: none).
    pub rcv_timeo: i32,
    /// UDT_REUSEADDR.
    pub reuse_addr: bool,
    /// UDT_MAXBW, bytes/s (−1: unlimited).
    pub max_bw: i64,
}

impl Default for Settings {
    /// 4.11's `CUDT::CUDT()` defaults.
    fn default() -> Self {
        Self {
            mss: 1500,
            snd_syn: true,
            rcv_syn: true,
            fc: 25600,
            snd_buf_pkts: 8192,
            rcv_buf_pkts: 8192,
            buffers_set: (false, false, false),
            linger: (1, 180),
            udp_snd: (65536, false),
            // 4.11 computes it once, at construction: receive buffer × MSS.
            udp_rcv: (8192 * 1500, false),
            rendezvous: false,
            snd_timeo: -1,
            rcv_timeo: -1,
            reuse_addr: true,
            max_bw: -1,
        }
    }
}

impl Settings {
    /// 4.11 `setOpt`: check and store `value` for `opt` at `stage`. What may change on a live
    /// socket is applied to it by the caller.
    pub fn set(&mut self, opt: Opt, value: Value, stage: Stage) -> Result<()> {
        let opened = stage != Stage::Fresh;
        let connected = stage == Stage::Connected;
        match (opt, value) {
            (Opt::Mss, Value::Int(v)) => {
                refuse_if(opened, Code::BoundSock)?;
                refuse_if(v < MIN_MSS, Code::InvParam)?;
                self.mss = v.min(self.udp_snd.0).min(self.udp_rcv.0);
            }
            (Opt::SndSyn, Value::Bool(b)) => self.snd_syn = b,
            (Opt::RcvSyn, Value::Bool(b)) => self.rcv_syn = b,
            (Opt::Fc, Value::Int(v)) => {
                refuse_if(connected, Code::ConnSock)?;
                refuse_if(v < 1, Code::InvParam)?;
                self.fc = v.max(MIN_PKTS);
                self.buffers_set.0 = true;
            }
            (Opt::SndBuf, Value::Int(v)) => {
                refuse_if(opened, Code::BoundSock)?;
                refuse_if(v <= 0, Code::InvParam)?;
                self.snd_buf_pkts = v / self.payload();
                self.buffers_set.1 = true;
            }
            (Opt::RcvBuf, Value::Int(v)) => {
                refuse_if(opened, Code::BoundSock)?;
                refuse_if(v <= 0, Code::InvParam)?;
                self.rcv_buf_pkts = (v / self.payload()).max(MIN_PKTS).min(self.fc);
                self.buffers_set.2 = true;
            }
            (Opt::Linger, Value::Linger(on, secs)) => self.linger = (on, secs),
            (Opt::UdpSndBuf, Value::Int(v)) => {
                refuse_if(opened, Code::BoundSock)?;
                self.udp_snd = (v.max(self.mss), true);
            }
            (Opt::UdpRcvBuf, Value::Int(v)) => {
                refuse_if(opened, Code::BoundSock)?;
                self.udp_rcv = (v.max(self.mss), true);
            }
            (Opt::Rendezvous, Value::Bool(b)) => {
                refuse_if(connected, Code::BoundSock)?;
                self.rendezvous = b;
            }
            (Opt::SndTimeo, Value::Int(v)) => self.snd_timeo = v,
            (Opt::RcvTimeo, Value::Int(v)) => self.rcv_timeo = v,
            (Opt::ReuseAddr, Value::Bool(b)) => {
                refuse_if(opened, Code::BoundSock)?;
                self.reuse_addr = b;
            }
            (Opt::MaxBw, Value::Int64(v)) => self.max_bw = v,
            _ => return Err(Code::InvOp.into()),
        }
        Ok(())
    }

    /// 4.11 `getOpt` for the options the settings alone answer (not UDT_CC nor the
    /// read-only ones, which need the live socket).
    pub fn get(&self, opt: Opt) -> Result<Value> {
        Ok(match opt {
            Opt::Mss => Value::Int(self.mss),
            Opt::SndSyn => Value::Bool(self.snd_syn),
            Opt::RcvSyn => Value::Bool(self.rcv_syn),
            Opt::Fc => Value::Int(self.fc),
            Opt::SndBuf => Value::Int(self.snd_buf_pkts.saturating_mul(self.payload())),
            Opt::RcvBuf => Value::Int(self.rcv_buf_pkts.saturating_mul(self.payload())),
            Opt::Linger => Value::Linger(self.linger.0, self.linger.1),
            Opt::UdpSndBuf => Value::Int(self.udp_snd.0),
            Opt::UdpRcvBuf => Value::Int(self.udp_rcv.0),
            Opt::Rendezvous => Value::Bool(self.rendezvous),
            Opt::SndTimeo => Value::Int(self.snd_timeo),
            Opt::RcvTimeo => Value::Int(self.rcv_timeo),
            Opt::ReuseAddr => Value::Bool(self.reuse_addr),
            Opt::MaxBw => Value::Int64(self.max_bw),
            _ => return Err(Code::InvOp.into()),
        })
    }

    /// Payload bytes per packet (`m_iMSS - 28`), at least 1.
    fn payload(&self) -> i32 {
        (self.mss - IP_UDP).max(1)
    }

    /// The engine's options for a socket of `mode` with these settings. Buffers the
    /// application did not size are left to the engine, which grows them to the path (4.11's
    /// sizes are where they start); the engine keeps at least 32 packets of send buffer where
    /// 4.11 would take fewer.
    pub fn options(&self, mode: Mode) -> Result<SocketOptions> {
        let bad = |e: udt::OptionError| UdtError::with_detail(Code::InvParam, e.to_string());
        let mut o = SocketOptions::new(mode);
        if self.udp_snd.1 {
            o.set_udp_send_buffer(Some(to_usize(self.udp_snd.0)))
                .map_err(bad)?;
        }
        if self.udp_rcv.1 {
            o.set_udp_recv_buffer(Some(to_usize(self.udp_rcv.0)))
                .map_err(bad)?;
        }
        o.set_mss(u32::try_from(self.mss).unwrap_or(1500))
            .map_err(bad)?;
        let (fc_set, snd_set, rcv_set) = self.buffers_set;
        if fc_set {
            o.set_flow_window(u32::try_from(self.fc).unwrap_or(25600))
                .map_err(bad)?;
        }
        let payload = u64::try_from(self.payload()).unwrap_or(1);
        let pkts = |p: i32| u64::try_from(p.max(MIN_PKTS)).unwrap_or(32) * payload;
        if snd_set {
            o.set_send_buffer(pkts(self.snd_buf_pkts)).map_err(bad)?;
        }
        if rcv_set {
            o.set_recv_buffer(pkts(self.rcv_buf_pkts)).map_err(bad)?;
        }
        o.set_linger(self.linger_value())
            .set_rendezvous(self.rendezvous)
            .set_reuse_addr(self.reuse_addr)
            .set_max_bandwidth(self.max_bw_value())
            .set_send_blocking(self.snd_syn)
            .set_recv_blocking(self.rcv_syn);
        o.set_send_timeout(timeout(self.snd_timeo)).map_err(bad)?;
        o.set_recv_timeout(timeout(self.rcv_timeo)).map_err(bad)?;
        Ok(o)
    }

    /// UDT_LINGER for the engine.
    pub fn linger_value(&self) -> Option<Duration> {
        (self.linger.0 != 0).then(|| Duration::from_secs(u64::try_from(self.linger.1).unwrap_or(0)))
    }

    /// UDT_MAXBW for the engine (≤ 0: unlimited).
    pub fn max_bw_value(&self) -> Option<u64> {
        u64::try_from(self.max_bw).ok().filter(|&b| b > 0)
    }
}

/// A 4.11 timeout in ms for the engine: negative is none; zero (4.11: give up at once) is
/// the shortest wait the engine takes.
pub fn timeout(ms: i32) -> Option<Duration> {
    match u64::try_from(ms) {
        Err(_) => None,
        Ok(0) => Some(Duration::from_nanos(1)),
        Ok(ms) => Some(Duration::from_millis(ms)),
    }
}

fn to_usize(v: i32) -> usize {
    usize::try_from(v).unwrap_or(0)
}

fn refuse_if(cond: bool, code: Code) -> Result<()> {
    if cond {
        Err(code.into())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_whole_packets_of_the_mss_as_in_4_11() {
        let mut s = Settings::default();
        assert_eq!(s.get(Opt::SndBuf), Ok(Value::Int(8192 * 1472)));
        s.set(Opt::Mss, Value::Int(1052), Stage::Fresh).unwrap();
        s.set(Opt::SndBuf, Value::Int(1_000_000), Stage::Fresh)
            .unwrap();
        assert_eq!(s.get(Opt::SndBuf), Ok(Value::Int(1_000_000 / 1024 * 1024)));
        // The receive buffer is at least 32 packets and at most UDT_FC.
        s.set(Opt::RcvBuf, Value::Int(10), Stage::Fresh).unwrap();
        assert_eq!(s.get(Opt::RcvBuf), Ok(Value::Int(32 * 1024)));
        s.set(Opt::Fc, Value::Int(100), Stage::Fresh).unwrap();
        s.set(Opt::RcvBuf, Value::Int(1 << 30), Stage::Fresh)
            .unwrap();
        assert_eq!(s.get(Opt::RcvBuf), Ok(Value::Int(100 * 1024)));
    }

    #[test]
    fn shape_options_are_refused_once_bound_and_unknown_ones_always() {
        let mut s = Settings::default();
        let e = s
            .set(Opt::Mss, Value::Int(1400), Stage::Opened)
            .unwrap_err();
        assert_eq!(e.code, Code::BoundSock);
        let e = s
            .set(Opt::Fc, Value::Int(64), Stage::Connected)
            .unwrap_err();
        assert_eq!(e.code, Code::ConnSock);
        assert_eq!(
            s.set(Opt::Mss, Value::Int(75), Stage::Fresh)
                .unwrap_err()
                .code,
            Code::InvParam
        );
        assert_eq!(
            s.set(Opt::MaxMsg, Value::Int(1), Stage::Fresh)
                .unwrap_err()
                .code,
            Code::InvOp
        );
        assert_eq!(s.get(Opt::MsgTtl).unwrap_err().code, Code::InvOp);
        // What may change on a live socket does.
        s.set(Opt::RcvTimeo, Value::Int(250), Stage::Connected)
            .unwrap();
        assert_eq!(s.get(Opt::RcvTimeo), Ok(Value::Int(250)));
    }

    #[test]
    fn the_engine_gets_the_settings_in_its_units() {
        let mut s = Settings::default();
        s.set(Opt::RcvTimeo, Value::Int(0), Stage::Fresh).unwrap();
        s.set(Opt::Linger, Value::Linger(0, 5), Stage::Fresh)
            .unwrap();
        s.set(Opt::MaxBw, Value::Int64(0), Stage::Fresh).unwrap();
        let o = s.options(Mode::Stream).unwrap();
        assert_eq!(o.recv_timeout(), Some(Duration::from_nanos(1)));
        assert_eq!(o.send_timeout(), None);
        assert_eq!(o.linger(), None);
        assert_eq!(o.max_bandwidth(), None);
        assert_eq!(
            o.udp_send_buffer(),
            None,
            "4.11's 64 KiB is reported, not applied"
        );
        assert_eq!(o.mss(), 1500);
        // Buffers left alone are the engine's to size; one set is handed over, in bytes.
        s.set(Opt::SndBuf, Value::Int(1_000_000), Stage::Fresh)
            .unwrap();
        let sized = s.options(Mode::Stream).unwrap();
        assert_eq!(sized.send_buffer(), 1_000_000 / 1472 * 1472);
        assert_eq!(sized.recv_buffer(), o.recv_buffer());
    }
}
