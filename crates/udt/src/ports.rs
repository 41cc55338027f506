//! The process-wide registry of multiplexers by local address: UDT_REUSEADDR by its 4.11
//! meaning (protocol §2.1).
//!
//! In 4.11 UDT sockets bound to the same UDP port share one multiplexer (one UDP socket, one
//! I/O thread) when both have UDT_REUSEADDR on (the default) and the same MSS. A bind to port
//! 0, or a `connect` without a bind, always gets a new one; every multiplexer is registered
//! under the address it got, so a later explicit bind of that address may join it.
//!
//! The kernel's `SO_REUSEADDR` is never set (see `sys::bind_udp`): it would let a second
//! kernel socket bind the port and split the datagrams between the two, and hand one
//! ephemeral port to two sockets. UDP has no TIME_WAIT, so a restarted server rebinds its
//! port at once without it; a port stays taken only while its multiplexer lives (its
//! connections linger), and a new socket joins that multiplexer rather than colliding.
//!
//! Races: the table's lock is held from the lookup to the registration of a new multiplexer,
//! so two sockets binding one address at once end up sharing. A multiplexer found in the
//! table is joined only if its I/O thread has not decided to exit (`MuxRef::join`); a dying
//! one is never revived: we wait briefly for it to close its socket and bind anew, and if
//! the kernel still holds the port the error says so.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant as StdInstant};

use crate::mux::{Mux, MuxRef};
use crate::sys::UdpOptions;

/// How long a bind waits for a dying multiplexer on its address to close its socket (its I/O
/// thread is exiting, which takes microseconds, unless a poller still holds it).
const DYING_WAIT: Duration = Duration::from_millis(200);

/// Multiplexers by the local address they are bound to. Entries of closed ones are pruned
/// when the table has doubled since the last pruning, so a long-lived process that opens
/// many ephemeral ports keeps it bounded at O(1) amortized cost per bind.
struct Table {
    by_addr: HashMap<SocketAddr, Weak<Mux>>,
    prune_at: usize,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

/// What the registry holds at one address, decided under its lock.
enum Found {
    /// Nothing (or a closed multiplexer): bind a new socket.
    Free,
    /// A live multiplexer to share.
    Joined(MuxRef),
    /// A live multiplexer that may not be shared with this socket.
    Refused(io::Error),
    /// A multiplexer that is stopping: wait for it to let the port go.
    Dying(Weak<Mux>),
}

/// A multiplexer on `addr` for a socket with these options: a live one on that exact address
/// if both sides have UDT_REUSEADDR on and the same datagram size (MSS), else a new one on a
/// new kernel socket. Port 0 always gets a new one.
pub(crate) fn open(addr: SocketAddr, max_datagram: usize, udp: &UdpOptions) -> io::Result<MuxRef> {
    if addr.port() == 0 {
        let mux = MuxRef::bind(addr, max_datagram, udp)?;
        register(&mut lock(), &mux);
        return Ok(mux);
    }
    let mut waited = false;
    loop {
        let mut table = lock();
        let (found, held) = lookup(&table, addr, max_datagram, udp);
        match found {
            Found::Joined(mux) => return Ok(after_unlock(table, held, mux)),
            Found::Refused(e) => return Err(after_unlock(table, held, e)),
            Found::Dying(weak) if !waited => {
                drop(table);
                drop(held);
                wait_closed(&weak);
                waited = true;
            }
            Found::Dying(_) | Found::Free => {
                let result = match MuxRef::bind(addr, max_datagram, udp) {
                    Ok(mux) => {
                        register(&mut table, &mux);
                        Ok(mux)
                    }
                    Err(e) => Err(bind_error(e, addr, waited, &table)),
                };
                return after_unlock(table, held, result);
            }
        }
    }
}

/// A multiplexer on an application's bound UDP socket (4.11 `bind2`), registered under its
/// address so that later binds of that address share it as UDT_REUSEADDR allows. A live
/// multiplexer of ours on the same address cannot exist: the kernel would have refused the
/// application's bind.
pub(crate) fn adopt(
    socket: std::net::UdpSocket,
    max_datagram: usize,
    udp: &UdpOptions,
) -> io::Result<MuxRef> {
    let mux = MuxRef::adopt(socket, max_datagram, udp)?;
    register(&mut lock(), &mux);
    Ok(mux)
}

/// Drop the table's guard, then `held` (the last strong reference to a multiplexer may be
/// the one `lookup` took; its socket closes outside the lock), and hand back `value`.
fn after_unlock<T>(table: impl Sized, held: Option<Arc<Mux>>, value: T) -> T {
    drop(table);
    drop(held);
    value
}

fn lock() -> std::sync::MutexGuard<'static, Option<Table>> {
    TABLE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Decide what to do at `addr`. The multiplexer found, if any, comes back as a strong
/// reference for the caller to drop after unlocking.
fn lookup(
    table: &Option<Table>,
    addr: SocketAddr,
    max_datagram: usize,
    udp: &UdpOptions,
) -> (Found, Option<Arc<Mux>>) {
    let Some(mux) = table
        .as_ref()
        .and_then(|t| t.by_addr.get(&addr))
        .and_then(Weak::upgrade)
    else {
        return (Found::Free, None);
    };
    let found = if mux.is_dying() {
        Found::Dying(Arc::downgrade(&mux))
    } else if let Some(e) = refusal(&mux, addr, max_datagram, udp) {
        if mux.try_retire() {
            // No socket is left on it, only its I/O thread has yet to notice: tell it, and
            // take the port once it is gone, as 4.11 (which closes it synchronously) would.
            mux.waker().wake();
            Found::Dying(Arc::downgrade(&mux))
        } else {
            Found::Refused(e)
        }
    } else {
        match MuxRef::join(&mux) {
            Some(r) => Found::Joined(r),
            None => Found::Dying(Arc::downgrade(&mux)),
        }
    };
    (found, Some(mux))
}

/// Why a socket may not share the live multiplexer `mux` (4.11: both need UDT_REUSEADDR and
/// the same MSS), as the `AddrInUse` error the kernel would give, with the reason.
fn refusal(
    mux: &Mux,
    addr: SocketAddr,
    max_datagram: usize,
    udp: &UdpOptions,
) -> Option<io::Error> {
    let why = if !udp.reuse_addr {
        "UDT_REUSEADDR is off on the new socket".to_owned()
    } else if !mux.udp_options.reuse_addr {
        "UDT_REUSEADDR is off on the socket holding it".to_owned()
    } else if mux.max_datagram != max_datagram {
        format!(
            "sharing needs the same UDT_MSS: it has {}, the new socket {}",
            mss(mux.max_datagram),
            mss(max_datagram)
        )
    } else {
        return None;
    };
    Some(io::Error::new(
        io::ErrorKind::AddrInUse,
        format!("{addr} is in use by another UDT socket and {why}"),
    ))
}

/// UDT_MSS for a largest datagram (MSS counts the 28 bytes of IP and UDP header).
fn mss(max_datagram: usize) -> usize {
    max_datagram + udt_proto::config::IP_UDP_OVERHEAD as usize
}

/// Record `mux` under its bound address (replacing a closed or dying one's entry).
fn register(table: &mut Option<Table>, mux: &MuxRef) {
    let table = table.get_or_insert_with(|| Table {
        by_addr: HashMap::new(),
        prune_at: 64,
    });
    if table.by_addr.len() >= table.prune_at {
        table.by_addr.retain(|_, w| w.strong_count() > 0);
        table.prune_at = (table.by_addr.len() * 2).max(64);
    }
    table
        .by_addr
        .insert(mux.mux().local_addr(), Arc::downgrade(mux.shared()));
}

/// Wait (briefly) until a dying multiplexer is gone, so its socket no longer holds the port.
fn wait_closed(weak: &Weak<Mux>) {
    let until = StdInstant::now() + DYING_WAIT;
    while weak.strong_count() > 0 && StdInstant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A failed bind of a new socket, said more clearly when one of our multiplexers holds the
/// port: one that was stopping, or one bound to another address of that port (sharing needs
/// the same address: `0.0.0.0:9000` and `127.0.0.1:9000` are two different ones).
fn bind_error(e: io::Error, addr: SocketAddr, waited: bool, table: &Option<Table>) -> io::Error {
    if e.kind() != io::ErrorKind::AddrInUse {
        return e;
    }
    if waited {
        return io::Error::new(
            io::ErrorKind::AddrInUse,
            format!("{addr} is still held by a UDT multiplexer that is shutting down: {e}"),
        );
    }
    let other = table.as_ref().and_then(|t| {
        t.by_addr
            .iter()
            .find(|(a, w)| a.port() == addr.port() && **a != addr && w.strong_count() > 0)
            .map(|(a, _)| *a)
    });
    match other {
        Some(other) => io::Error::new(
            io::ErrorKind::AddrInUse,
            format!(
                "{addr} is in use: a UDT socket holds {other} (only sockets bound to the same \
                 address share a port): {e}"
            ),
        ),
        None => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> UdpOptions {
        UdpOptions::default()
    }

    /// Wait until `mux`'s I/O thread has retired it (no owner, no connection left).
    fn wait_dying(mux: &Mux) {
        let until = StdInstant::now() + Duration::from_secs(5);
        while !mux.is_dying() {
            assert!(StdInstant::now() < until, "the multiplexer never retired");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_retired_multiplexer_is_never_joined_and_its_port_is_reported_busy_while_held() {
        let first = open("127.0.0.1:0".parse().unwrap(), 1472, &options()).unwrap();
        let addr = first.mux().local_addr();
        let joined = open(addr, 1472, &options()).unwrap();
        assert!(Arc::ptr_eq(first.shared(), joined.shared()), "shared");
        let held = Arc::clone(first.shared());
        drop((first, joined));
        wait_dying(&held);
        assert!(MuxRef::join(&held).is_none(), "retired: never revived");
        // Our strong reference keeps its socket open: a new bind cannot take the port, and
        // says why.
        let err = open(addr, 1472, &options()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
        assert!(
            err.to_string().contains("shutting down"),
            "unexpected message: {err}"
        );
        drop(held);
        let again = open(addr, 1472, &options()).expect("free once the old one is gone");
        assert_eq!(again.mux().local_addr(), addr);
    }

    #[test]
    fn an_unowned_idle_multiplexer_is_retired_for_a_bind_that_cannot_share_it() {
        let first = open("127.0.0.1:0".parse().unwrap(), 1472, &options()).unwrap();
        let addr = first.mux().local_addr();
        drop(first);
        // Whether or not its I/O thread got there first, a bind with UDT_REUSEADDR off
        // retires the old multiplexer and takes the port.
        let off = UdpOptions {
            reuse_addr: false,
            ..options()
        };
        let second = open(addr, 1472, &off).expect("rebind with reuse off");
        assert!(!second.mux().is_dying());
        // The new one has UDT_REUSEADDR off: nobody may join it.
        let err = open(addr, 1472, &options()).unwrap_err();
        assert!(err
            .to_string()
            .contains("UDT_REUSEADDR is off on the socket holding it"));
    }

    #[test]
    fn the_table_is_pruned_of_closed_multiplexers() {
        for _ in 0..200 {
            drop(open("127.0.0.1:0".parse().unwrap(), 1472, &options()).unwrap());
        }
        let len = lock().as_ref().map_or(0, |t| t.by_addr.len());
        // Closed entries linger until the next pruning, which keeps the table within twice
        // the live count (plus the minimum); other tests may hold a few live ones.
        assert!(len < 200, "{len} entries for ~0 live multiplexers");
    }
}
