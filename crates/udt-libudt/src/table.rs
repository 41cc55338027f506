//! The process's UDT4 sockets by their integer handle (`UDTSOCKET`), and what each one is:
//! fresh, bound, listening or connected ([`Phase`]), with its 4.11 option [`Settings`].
//!
//! Handles are shared between application threads as in 4.11 (one thread blocked in `recv`
//! while another sends or closes), so an entry hands out `Arc`s of its engine objects and
//! no lock is held across a blocking call. Handles count down from a random start below
//! 2^30, as 4.11's do, so a stale handle rarely names a new socket. Closed handles are
//! remembered (the last 4096) so that `getsockstate` says CLOSED, not NONEXIST.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use udt::blocking::UdtPort;
use udt::{Poller, Ready, Token, UdtListener, UdtMessageSocket, UdtStream};
use udt_proto::{Mode, State};

use crate::error::{Code, Result};
use crate::settings::{Settings, Stage};

/// How many closed handles are remembered for `getsockstate`.
const CLOSED_KEPT: usize = 4096;

/// 4.11's `UDTSTATUS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Status {
    /// Created (INIT).
    Init = 1,
    /// Bound (OPENED).
    Opened,
    /// Listening.
    Listening,
    /// Handshake under way.
    Connecting,
    /// Connected.
    Connected,
    /// Ended by the peer or the network.
    Broken,
    /// Closing.
    Closing,
    /// Closed by the application.
    Closed,
    /// No such socket.
    NonExist,
}

/// A connected socket of either type.
#[derive(Debug)]
pub enum Conn {
    /// SOCK_STREAM.
    Stream(UdtStream),
    /// SOCK_DGRAM.
    Message(UdtMessageSocket),
}

/// Call the same method on either kind of connection.
macro_rules! both {
    ($conn:expr, $s:ident => $body:expr) => {
        match $conn {
            Conn::Stream($s) => $body,
            Conn::Message($s) => $body,
        }
    };
}
pub(crate) use both;

impl Conn {
    /// The 4.11 status of a connection that is still in the table.
    pub fn status(&self) -> Status {
        let (state, events) = both!(self, s => (s.state(), s.events()));
        match state {
            State::Connecting => Status::Connecting,
            State::Connected => Status::Connected,
            State::Closing => Status::Closing,
            State::Closed if events.contains(Ready::ERR) => Status::Broken,
            State::Closed => Status::Closed,
        }
    }

    /// Watch it with `poller`.
    pub fn register(&self, poller: &Poller, token: Token, interest: Ready) -> std::io::Result<()> {
        both!(self, s => poller.add(s, token, interest))
    }
}

/// Where a socket is in its life.
#[derive(Debug, Clone)]
pub enum Phase {
    /// Created by `socket`.
    Fresh,
    /// After `bind` / `bind2`.
    Bound(Arc<UdtPort>),
    /// After `listen`.
    Listening(Arc<UdtListener>),
    /// After `connect` (perhaps still connecting) or `accept`.
    Conn(Arc<Conn>),
}

impl Phase {
    /// The stage that decides which options may still change.
    pub fn stage(&self) -> Stage {
        match self {
            Self::Fresh => Stage::Fresh,
            Self::Bound(_) | Self::Listening(_) => Stage::Opened,
            Self::Conn(_) => Stage::Connected,
        }
    }

    /// The 4.11 status.
    pub fn status(&self) -> Status {
        match self {
            Self::Fresh => Status::Init,
            Self::Bound(_) => Status::Opened,
            Self::Listening(_) => Status::Listening,
            Self::Conn(c) => c.status(),
        }
    }
}

/// One socket.
#[derive(Debug)]
pub struct Entry {
    /// Its handle.
    pub id: i32,
    /// AF_INET or AF_INET6.
    pub af: i32,
    /// SOCK_STREAM or SOCK_DGRAM.
    pub mode: Mode,
    inner: Mutex<Inner>,
}

/// What changes over a socket's life.
#[derive(Debug)]
pub struct Inner {
    /// Where it is.
    pub phase: Phase,
    /// Its options.
    pub settings: Settings,
}

impl Entry {
    /// Lock its changing part (never across a blocking call).
    pub fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The current phase (a cheap clone of `Arc`s).
    pub fn phase(&self) -> Phase {
        self.lock().phase.clone()
    }
}

struct Table {
    sockets: HashMap<i32, Arc<Entry>>,
    closed: VecDeque<i32>,
    next_id: i32,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn with_table<T>(f: impl FnOnce(&mut Table) -> T) -> T {
    let mut guard = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
    let table = guard.get_or_insert_with(|| Table {
        sockets: HashMap::new(),
        closed: VecDeque::new(),
        next_id: random_start(),
    });
    f(table)
}

/// A random first handle in 1..2^30, as 4.11 draws it.
fn random_start() -> i32 {
    let r = RandomState::new().hash_one(std::process::id());
    i32::try_from(r % (1 << 30)).unwrap_or(1).max(1)
}

/// Add a socket in `phase`; returns its handle.
pub fn insert(af: i32, mode: Mode, phase: Phase, settings: Settings) -> i32 {
    with_table(|t| {
        let mut id = t.next_id;
        while t.sockets.contains_key(&id) || id <= 0 {
            id = if id <= 1 { (1 << 30) - 1 } else { id - 1 };
        }
        t.next_id = if id <= 1 { (1 << 30) - 1 } else { id - 1 };
        let inner = Mutex::new(Inner { phase, settings });
        t.sockets.insert(
            id,
            Arc::new(Entry {
                id,
                af,
                mode,
                inner,
            }),
        );
        id
    })
}

/// The socket `id`; EINVSOCK (5004) if there is none.
pub fn get(id: i32) -> Result<Arc<Entry>> {
    with_table(|t| t.sockets.get(&id).cloned()).ok_or_else(|| Code::InvSock.into())
}

/// Take `id` out of the table (it is remembered as closed); EINVSOCK if there is none.
pub fn remove(id: i32) -> Result<Arc<Entry>> {
    with_table(|t| {
        let entry = t.sockets.remove(&id)?;
        if t.closed.len() == CLOSED_KEPT {
            t.closed.pop_front();
        }
        t.closed.push_back(id);
        Some(entry)
    })
    .ok_or_else(|| Code::InvSock.into())
}

/// The 4.11 status of `id`, CLOSED or NONEXIST for sockets no longer or never in the table.
pub fn status(id: i32) -> Status {
    let (entry, was_closed) = with_table(|t| (t.sockets.get(&id).cloned(), t.closed.contains(&id)));
    match entry {
        Some(e) => e.phase().status(),
        None if was_closed => Status::Closed,
        None => Status::NonExist,
    }
}

/// Empty the table (`cleanup`); the entries go to the caller to be closed.
pub fn drain() -> Vec<Arc<Entry>> {
    with_table(|t| {
        let ids: Vec<i32> = t.sockets.keys().copied().collect();
        t.closed.extend(ids.iter().copied());
        while t.closed.len() > CLOSED_KEPT {
            t.closed.pop_front();
        }
        t.sockets.drain().map(|(_, e)| e).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_distinct_and_closed_ones_are_remembered() {
        let a = insert(
            libc::AF_INET,
            Mode::Stream,
            Phase::Fresh,
            Settings::default(),
        );
        let b = insert(
            libc::AF_INET,
            Mode::Message,
            Phase::Fresh,
            Settings::default(),
        );
        assert_ne!(a, b);
        assert!(a > 0 && b > 0);
        assert_eq!(status(a), Status::Init);
        assert_eq!(get(b).unwrap().mode, Mode::Message);
        remove(a).unwrap();
        assert_eq!(status(a), Status::Closed);
        assert_eq!(get(a).unwrap_err().code, Code::InvSock);
        assert!(remove(a).is_err());
        remove(b).unwrap();
    }
}
