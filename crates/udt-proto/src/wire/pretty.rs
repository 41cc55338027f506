//! One-line, tcpdump-like `Display` for packets: used by tests, lab traces and `--trace`.
//!
//! ```text
//! data #123 ff=solo o=0 msg5 ts=100 dst=0x1 len=1456
//! ack ack7 #456 rtt=100000us var=50000us buf=8190 rate=1 bw=1000 dst=0x1
//! nak [5, 9..12] dst=0x1
//! hs req=-1 v4 type=1 isn=42 mss=1500 win=8192 id=0xbadf00d cookie=0x0 ip=127.0.0.1 dst=0x0
//! ```
//! Control packets show `ts=` only when it is non-zero (4.11 always sends 0).

use std::fmt::{self, Display, Formatter};

use super::ack::AckRepr;
use super::control::{ControlBody, ControlRepr};
use super::data::{Boundary, DataRepr};
use super::handshake::{peer_ip_from_words, HandshakeRepr};
use super::loss_list::NakRepr;
use super::Packet;

impl Display for Packet<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Self::Data(data) => data.fmt(f),
            Self::Control(control) => control.fmt(f),
        }
    }
}

impl Display for Boundary {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Middle => "middle",
            Self::Last => "last",
            Self::First => "first",
            Self::Solo => "solo",
        })
    }
}

impl Display for DataRepr<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "data #{} ff={} o={} msg{} ts={} dst={} len={}",
            self.seq.value(),
            self.boundary,
            u8::from(self.in_order),
            self.msg.value(),
            self.timestamp.0,
            self.dst,
            self.payload.len()
        )
    }
}

impl Display for ControlRepr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.body.fmt(f)?;
        if self.timestamp.0 != 0 {
            write!(f, " ts={}", self.timestamp.0)?;
        }
        write!(f, " dst={}", self.dst)
    }
}

impl Display for ControlBody {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Self::Handshake(handshake) => handshake.fmt(f),
            Self::KeepAlive => f.write_str("keepalive"),
            Self::Ack(ack) => ack.fmt(f),
            Self::Nak(nak) => nak.fmt(f),
            Self::CongestionWarning => f.write_str("congestion-warning"),
            Self::Shutdown => f.write_str("shutdown"),
            Self::Ack2(number) => write!(f, "ack2 ack{}", number.value()),
            Self::DropRequest { msg, first, last } => write!(
                f,
                "drop msg{} #{}..#{}",
                msg.value(),
                first.value(),
                last.value()
            ),
            Self::Error { code } => write!(f, "error code={code}"),
            Self::UserDefined {
                ext_type,
                info,
                body,
            } => write!(
                f,
                "user ext={ext_type:#x} info={info:#x} len={}",
                body.len()
            ),
        }
    }
}

impl Display for HandshakeRepr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let ipv6 = self.peer_ip[1..] != [0, 0, 0];
        write!(
            f,
            "hs req={} v{} type={} isn={} mss={} win={} id={} cookie={:#x} ip={}",
            self.req_type.0,
            self.version,
            self.socket_type.0,
            self.isn.value(),
            self.mss,
            self.flow_window,
            self.socket_id,
            self.cookie,
            peer_ip_from_words(self.peer_ip, ipv6)
        )
    }
}

impl Display for AckRepr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let Some(details) = self.details else {
            return write!(f, "ack light #{}", self.ack.value());
        };
        write!(
            f,
            "ack ack{} #{} rtt={}us var={}us buf={}",
            self.number.value(),
            self.ack.value(),
            details.rtt_us,
            details.rtt_var_us,
            details.avail_buf_pkts
        )?;
        if let Some(rates) = details.rates {
            write!(
                f,
                " rate={} bw={}",
                rates.recv_rate_pkts, rates.bandwidth_pkts
            )?;
            if let Some(front) = rates.front {
                write!(f, " front=#{}", front.value())?;
            }
        }
        Ok(())
    }
}

impl Display for NakRepr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("nak [")?;
        for (index, range) in self.ranges.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            if range.first == range.last {
                write!(f, "{}", range.first.value())?;
            } else {
                write!(f, "{}..{}", range.first.value(), range.last.value())?;
            }
        }
        f.write_str("]")
    }
}
