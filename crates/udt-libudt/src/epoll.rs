//! UDT4's `select`, `selectEx` and the `epoll_*` family over the engine's [`Poller`].
//!
//! The engine's poller is level-triggered and wakes on any change of a registered
//! connection or accept queue. 4.11's calls add what it cannot see: sockets not yet
//! connected (registered once they are), system sockets (`epoll_add_ssock`, looked at with
//! `poll(2)`), and 4.11's own readiness rules for `select` (an unconnected or broken socket
//! counts as readable and writable) and `selectEx` (broken ones are exceptions). Where the
//! poller cannot wake us the wait goes in slices of 10 ms, 4.11's own event granularity.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use udt::{PollEvent, Poller, Ready, Token};

use crate::error::{Code, Result};
use crate::table::{self, both, Conn, Phase, Status};

/// The longest sleep without looking again when something cannot wake the poller.
const SLICE: Duration = Duration::from_millis(10);

/// What a socket is ready for, in 4.11's bits.
pub const IN: u8 = 0x1;
/// Writable.
pub const OUT: u8 = 0x4;
/// An exception (selectEx: broken, closed or unknown).
pub const ERR: u8 = 0x8;

/// One socket of a `select` / `selectEx` call: its handle and the sets it is in.
#[derive(Debug, Clone, Copy)]
pub struct Want {
    /// The handle.
    pub id: i32,
    /// IN, OUT, ERR: the read, write and except sets it is in.
    pub sets: u8,
}

/// `UDT::select` (`ex` false) or `selectEx` (`ex` true): which of `want` are ready, as
/// (handle, bits) pairs, waiting up to `timeout` (`None`: forever) for at least one.
pub fn select(want: &[Want], timeout: Option<Duration>, ex: bool) -> Result<Vec<(i32, u8)>> {
    let deadline = timeout.map(|t| Instant::now() + t);
    let poller = Poller::new();
    for (i, w) in want.iter().enumerate() {
        let Ok(entry) = table::get(w.id) else {
            if ex {
                continue;
            }
            return Err(Code::InvSock.into());
        };
        let mut interest = Ready::EMPTY;
        if w.sets & IN != 0 {
            interest |= Ready::IN;
        }
        if w.sets & OUT != 0 {
            interest |= Ready::OUT;
        }
        register(&poller, &entry.phase(), Token(i), interest);
    }
    let mut events = Vec::new();
    loop {
        let ready: Vec<(i32, u8)> = want
            .iter()
            .map(|w| (w.id, select_bits(w, ex)))
            .filter(|&(_, bits)| bits != 0)
            .collect();
        if !ready.is_empty() {
            return Ok(ready);
        }
        let Some(left) = time_left(deadline) else {
            return Ok(ready);
        };
        wait_slice(&poller, &mut events, left, SLICE);
    }
}

/// Sleep until the poller reports something or `slice` (at most `left`) passes; if the
/// poller reports at once what the caller does not count, the rest of the slice is slept
/// so the caller does not spin.
fn wait_slice(poller: &Poller, events: &mut Vec<PollEvent>, left: Duration, slice: Duration) {
    let slice = left.min(slice);
    let start = Instant::now();
    // A poller wait cannot fail; an error would only end the slice early.
    let _ = poller.wait(events, Some(slice));
    if !events.is_empty() {
        std::thread::sleep(slice.saturating_sub(start.elapsed()));
    }
}

fn time_left(deadline: Option<Instant>) -> Option<Duration> {
    match deadline {
        None => Some(Duration::from_secs(3600)),
        Some(d) => {
            let left = d.saturating_duration_since(Instant::now());
            (!left.is_zero()).then_some(left)
        }
    }
}

fn register(poller: &Poller, phase: &Phase, token: Token, interest: Ready) -> bool {
    match phase {
        Phase::Conn(c) => c.register(poller, token, interest).is_ok(),
        Phase::Listening(l) => poller.add(&**l, token, interest).is_ok(),
        Phase::Fresh | Phase::Bound(_) => false,
    }
}

/// 4.11's readiness of one socket of a select call.
fn select_bits(w: &Want, ex: bool) -> u8 {
    let phase = table::get(w.id).ok().map(|e| e.phase());
    let (readable, writable, broken) = match &phase {
        None => (false, false, true),
        Some(Phase::Conn(c)) => conn_ready(c),
        Some(Phase::Listening(l)) => (listener_ready(l), false, false),
        Some(Phase::Fresh | Phase::Bound(_)) => (false, false, false),
    };
    let connected = matches!(&phase, Some(Phase::Conn(c)) if c.status() == Status::Connected);
    let listening = matches!(&phase, Some(Phase::Listening(_)));
    let mut bits = 0;
    if ex {
        if broken && w.sets & ERR != 0 {
            bits |= ERR;
        }
        if !broken && readable && w.sets & IN != 0 {
            bits |= IN;
        }
        if !broken && writable && w.sets & OUT != 0 {
            bits |= OUT;
        }
    } else {
        // select: a socket that is not connected (or broken) reads and writes at once.
        let idle = !connected;
        if w.sets & IN != 0 && (readable || (idle && !listening) || broken) {
            bits |= IN;
        }
        if w.sets & OUT != 0 && (writable || idle || broken) {
            bits |= OUT;
        }
    }
    bits
}

/// (readable, writable, broken) of a connection.
fn conn_ready(c: &Conn) -> (bool, bool, bool) {
    let ready = both!(c, s => s.events());
    let broken = ready.contains(Ready::ERR);
    let connected = c.status() == Status::Connected;
    (
        connected && ready.contains(Ready::IN),
        connected && ready.contains(Ready::OUT),
        broken,
    )
}

fn listener_ready(l: &udt::UdtListener) -> bool {
    let poller = Poller::new();
    let mut events = Vec::new();
    poller.add(l, Token(0), Ready::IN).is_ok()
        && poller.wait(&mut events, Some(Duration::ZERO)).unwrap_or(0) > 0
}

/// One epoll set (`UDT::epoll_create`). The poller is thread-safe on its own; the maps are
/// locked briefly, never across a wait.
struct Epoll {
    poller: Poller,
    socks: Mutex<Socks>,
}

#[derive(Default)]
struct Socks {
    /// UDT sockets: interest, and whether the poller has them yet.
    usocks: BTreeMap<i32, (Ready, bool)>,
    /// System sockets and their `poll(2)` events.
    ssocks: BTreeMap<i32, i16>,
}

impl Epoll {
    fn socks(&self) -> std::sync::MutexGuard<'_, Socks> {
        self.socks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

struct Registry {
    sets: HashMap<i32, Arc<Epoll>>,
    next: i32,
}

static EPOLLS: Mutex<Option<Registry>> = Mutex::new(None);

fn with_registry<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    let mut g = EPOLLS.lock().unwrap_or_else(PoisonError::into_inner);
    f(g.get_or_insert_with(|| Registry {
        sets: HashMap::new(),
        next: 0,
    }))
}

fn find(eid: i32) -> Result<Arc<Epoll>> {
    with_registry(|r| r.sets.get(&eid).cloned()).ok_or_else(|| Code::InvPollId.into())
}

/// `UDT::epoll_create`: ids count up from 1, as 4.11's do.
pub fn create() -> i32 {
    with_registry(|r| {
        r.next = if r.next >= 0x7FFF_FFFE { 1 } else { r.next + 1 };
        let epoll = Epoll {
            poller: Poller::new(),
            socks: Mutex::new(Socks::default()),
        };
        r.sets.insert(r.next, Arc::new(epoll));
        r.next
    })
}

/// The interest of an `events` argument (`None`: 4.11's default, IN and OUT).
fn interest(events: Option<i32>) -> Ready {
    let bits = events.unwrap_or(i32::from(IN | OUT));
    let mut r = Ready::EMPTY;
    if bits & i32::from(IN) != 0 {
        r |= Ready::IN;
    }
    if bits & i32::from(OUT) != 0 {
        r |= Ready::OUT;
    }
    r
}

/// `UDT::epoll_add_usock`.
pub fn add_usock(eid: i32, u: i32, events: Option<i32>) -> Result<()> {
    let epoll = find(eid)?;
    let entry = table::get(u)?;
    let mut socks = epoll.socks();
    let interest = interest(events);
    if let Some((_, true)) = socks.usocks.remove(&u) {
        let _ = epoll.poller.remove(token(u));
    }
    let registered = register(&epoll.poller, &entry.phase(), token(u), interest);
    socks.usocks.insert(u, (interest, registered));
    Ok(())
}

fn token(u: i32) -> Token {
    Token(usize::try_from(u).unwrap_or(0))
}

/// `UDT::epoll_add_ssock`.
pub fn add_ssock(eid: i32, s: i32, events: Option<i32>) -> Result<()> {
    let epoll = find(eid)?;
    let bits = events.unwrap_or(i32::from(IN | OUT | ERR));
    let mut ev = 0;
    if bits & i32::from(IN) != 0 {
        ev |= libc::POLLIN;
    }
    if bits & i32::from(OUT) != 0 {
        ev |= libc::POLLOUT;
    }
    epoll.socks().ssocks.insert(s, ev);
    Ok(())
}

/// `UDT::epoll_remove_usock` (a socket not in the set is no error, as in 4.11).
pub fn remove_usock(eid: i32, u: i32) -> Result<()> {
    let epoll = find(eid)?;
    let mut socks = epoll.socks();
    if let Some((_, true)) = socks.usocks.remove(&u) {
        let _ = epoll.poller.remove(token(u));
    }
    Ok(())
}

/// `UDT::epoll_remove_ssock`.
pub fn remove_ssock(eid: i32, s: i32) -> Result<()> {
    let epoll = find(eid)?;
    epoll.socks().ssocks.remove(&s);
    Ok(())
}

/// `UDT::epoll_release`.
pub fn release(eid: i32) -> Result<()> {
    with_registry(|r| r.sets.remove(&eid))
        .map(drop)
        .ok_or_else(|| Code::InvPollId.into())
}

/// What `epoll_wait` found: UDT sockets readable / writable, system sockets likewise.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// UDT sockets ready to read (or broken).
    pub read: Vec<i32>,
    /// UDT sockets ready to write (or broken).
    pub write: Vec<i32>,
    /// System sockets ready to read.
    pub sys_read: Vec<i32>,
    /// System sockets ready to write.
    pub sys_write: Vec<i32>,
}

impl Found {
    /// 4.11's count: every entry of every set.
    pub fn total(&self) -> usize {
        self.read.len() + self.write.len() + self.sys_read.len() + self.sys_write.len()
    }
}

/// Which result sets the caller passed.
#[derive(Debug, Clone, Copy)]
pub struct Sets {
    /// readfds.
    pub read: bool,
    /// writefds.
    pub write: bool,
    /// lrfds.
    pub sys_read: bool,
    /// lwfds.
    pub sys_write: bool,
}

/// `UDT::epoll_wait`: wait up to `ms` (negative: forever) for something; 4.11 reports a
/// timeout as ETIMEOUT (6003), and an empty set waited on forever as EINVPARAM.
pub fn wait(eid: i32, sets: Sets, ms: i64) -> Result<Found> {
    let epoll = find(eid)?;
    let deadline = u64::try_from(ms)
        .ok()
        .map(|ms| Instant::now() + Duration::from_millis(ms));
    let mut events = Vec::new();
    loop {
        let (found, needs_slices) = {
            let mut socks = epoll.socks();
            if socks.usocks.is_empty() && socks.ssocks.is_empty() && deadline.is_none() {
                return Err(Code::InvParam.into());
            }
            register_late(&epoll.poller, &mut socks);
            let _ = epoll.poller.wait(&mut events, Some(Duration::ZERO));
            let mut found = collect(&socks, &events, sets);
            if sets.sys_read || sets.sys_write {
                poll_system(&socks.ssocks, sets, &mut found);
            }
            let late = socks.usocks.values().any(|&(_, registered)| !registered);
            (found, late || !socks.ssocks.is_empty())
        };
        if found.total() > 0 {
            return Ok(found);
        }
        let Some(left) = time_left(deadline) else {
            return Err(Code::Timeout.into());
        };
        // Sockets the poller cannot watch (system ones, unconnected ones) are looked at
        // every slice; otherwise the poller wakes us, and the longer slice only bounds how
        // late a socket added by another thread meanwhile is seen.
        let slice = if needs_slices { SLICE } else { SLICE * 10 };
        let _ = epoll.poller.wait(&mut events, Some(left.min(slice)));
    }
}

/// Register sockets added before they were connected or listening.
fn register_late(poller: &Poller, socks: &mut Socks) {
    let late: Vec<(i32, Ready)> = socks
        .usocks
        .iter()
        .filter(|(_, &(_, registered))| !registered)
        .map(|(&u, &(interest, _))| (u, interest))
        .collect();
    for (u, interest) in late {
        if let Ok(entry) = table::get(u) {
            if register(poller, &entry.phase(), token(u), interest) {
                socks.usocks.insert(u, (interest, true));
            }
        }
    }
}

fn collect(socks: &Socks, events: &[PollEvent], sets: Sets) -> Found {
    let mut found = Found::default();
    for ev in events {
        let Ok(u) = i32::try_from(ev.token.0) else {
            continue;
        };
        let Some(&(interest, _)) = socks.usocks.get(&u) else {
            continue;
        };
        let err = ev.ready.contains(Ready::ERR);
        if sets.read && (ev.ready.contains(Ready::IN) || (err && interest.contains(Ready::IN))) {
            found.read.push(u);
        }
        if sets.write && (ev.ready.contains(Ready::OUT) || (err && interest.contains(Ready::OUT))) {
            found.write.push(u);
        }
    }
    found
}

/// Look at the system sockets once (`poll(2)`, no wait).
fn poll_system(ssocks: &BTreeMap<i32, i16>, sets: Sets, found: &mut Found) {
    let mut fds: Vec<libc::pollfd> = ssocks
        .iter()
        .map(|(&fd, &events)| libc::pollfd {
            fd,
            events,
            revents: 0,
        })
        .collect();
    let Ok(n) = libc::nfds_t::try_from(fds.len()) else {
        return;
    };
    // SAFETY: `fds` is a valid array of `n` pollfd structures; timeout 0 does not block.
    if unsafe { libc::poll(fds.as_mut_ptr(), n, 0) } <= 0 {
        return;
    }
    for p in fds {
        if sets.sys_read && p.revents & libc::POLLIN != 0 {
            found.sys_read.push(p.fd);
        }
        if sets.sys_write && p.revents & libc::POLLOUT != 0 {
            found.sys_write.push(p.fd);
        }
    }
}
