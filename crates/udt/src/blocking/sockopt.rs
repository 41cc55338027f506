//! The generic, UDT4-style option calls on a connected socket (`setsockopt` /
//! `getsockopt`): what may change after connecting is applied, what may not is
//! [`OptionError::TooLate`], and everything can be read back.

use std::io;
use std::os::fd::BorrowedFd;

use super::socket::Socket;
use crate::options::{OptValue, OptionError, UdtOpt};

impl Socket {
    /// UDT4 `setsockopt` after connecting.
    pub(crate) fn set_option(&self, opt: UdtOpt, value: OptValue) -> io::Result<()> {
        if opt.not_settable() {
            return Err(OptionError::NotSettable(opt.name()).into());
        }
        if opt.before_connect_only() {
            return Err(OptionError::TooLate(opt.name()).into());
        }
        match opt {
            UdtOpt::SndSyn => self.set_send_blocking(value.as_bool(opt)?),
            UdtOpt::RcvSyn => self.set_recv_blocking(value.as_bool(opt)?),
            UdtOpt::Linger => self.set_linger(value.as_linger(opt)?),
            UdtOpt::SndTimeo => self.set_write_timeout(value.as_timeout(opt)?)?,
            UdtOpt::RcvTimeo => self.set_read_timeout(value.as_timeout(opt)?)?,
            UdtOpt::MaxBw => self.set_max_bandwidth(value.as_bandwidth(opt)?),
            // Everything else was refused above.
            _ => return Err(OptionError::NotSettable(opt.name()).into()),
        }
        Ok(())
    }

    /// UDT4 `getsockopt`: the value typed as UDT4 types it (sizes in bytes, timeouts in
    /// ms, -1 for "none"). The UDP options report what the kernel granted (Linux doubles
    /// the buffer sizes it is given).
    pub(crate) fn option(&self, opt: UdtOpt) -> io::Result<OptValue> {
        let int = |v: u64| OptValue::Int(i64::try_from(v).unwrap_or(i64::MAX));
        let (config_pkts, mss) = self.conn_config();
        let payload = u64::from(mss.saturating_sub(udt_proto::config::IP_UDP_OVERHEAD));
        Ok(match opt {
            UdtOpt::Mss => int(mss.into()),
            UdtOpt::SndSyn => OptValue::Bool(self.send_blocking()),
            UdtOpt::RcvSyn => OptValue::Bool(self.recv_blocking()),
            UdtOpt::Fc => int(config_pkts.flow.into()),
            UdtOpt::SndBuf => int(u64::from(config_pkts.send) * payload),
            UdtOpt::RcvBuf => int(u64::from(config_pkts.recv) * payload),
            UdtOpt::Linger => OptValue::Linger(self.linger()),
            UdtOpt::UdpSndBuf => int(self.udp(|s| s.send_buffer_size())? as u64),
            UdtOpt::UdpRcvBuf => int(self.udp(|s| s.recv_buffer_size())? as u64),
            UdtOpt::Rendezvous => OptValue::Bool(config_pkts.rendezvous),
            UdtOpt::SndTimeo => OptValue::timeout(self.write_timeout()),
            UdtOpt::RcvTimeo => OptValue::timeout(self.read_timeout()),
            UdtOpt::ReuseAddr => OptValue::Bool(self.multiplexer().mux().udp_options.reuse_addr),
            UdtOpt::MaxBw => OptValue::bandwidth(self.max_bandwidth()),
            UdtOpt::State => OptValue::State(self.state()),
            UdtOpt::Event => OptValue::Event(self.events()),
            UdtOpt::SndData => int(self.send_data_pkts().into()),
            UdtOpt::RcvData => int(self.recv_data_pkts().into()),
            UdtOpt::Cc | UdtOpt::MaxMsg | UdtOpt::MsgTtl => {
                return Err(OptionError::NotSettable(opt.name()).into())
            }
        })
    }

    /// Ask the multiplexer's UDP socket.
    fn udp<T>(&self, f: impl FnOnce(socket2::SockRef<'_>) -> io::Result<T>) -> io::Result<T> {
        // SAFETY: the descriptor belongs to the multiplexer's socket, which lives at least as
        // long as `self.mux` (held by `self`), so it stays open for this borrow.
        let fd = unsafe { BorrowedFd::borrow_raw(self.multiplexer().mux().fd()) };
        f(socket2::SockRef::from(&fd))
    }
}

/// The buffer sizes and flags of a connection's configuration.
pub(crate) struct ConfigPkts {
    pub(crate) flow: u32,
    pub(crate) send: u32,
    pub(crate) recv: u32,
    pub(crate) rendezvous: bool,
}
