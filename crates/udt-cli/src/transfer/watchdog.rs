//! A deadline for a whole transfer's progress, not only for each read: [`Watchdog`] and the
//! [`Watched`] stream wrapper that `udt serve` puts around each connection.
//!
//! A per-call timeout cannot stop a client that sends one byte per minute: every read
//! returns in time. The watchdog keeps an allowance of time the peer may keep us waiting
//! (starting at, and never above, [`MAX_WAIT`]). Every read or write call spends the time it
//! blocked, and earns one second per [`MIN_RATE`] bytes it moved; when the allowance is
//! spent the call fails with `TimedOut`. A peer moving at least `MIN_RATE` on average is
//! never cut off, and a stall of up to `MAX_WAIT` (a peer hashing a resumed file, a route
//! change) is survived; a trickle is cut off within about `MAX_WAIT`. Our own work between
//! calls (walking, hashing, writing to disk) costs nothing.
//!
//! Test-only hook: in debug builds `UDT_TEST_MAX_WAIT_MS` replaces `MAX_WAIT`.

use std::cell::Cell;
use std::io::{self, Read, Write};
use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::protocol::FrameSink;

/// The most waiting a peer may have in hand (also the grace at the start).
pub const MAX_WAIT: Duration = Duration::from_secs(120);

/// Bytes a peer must move to earn one more second of waiting.
pub const MIN_RATE: u64 = 4096;

/// The waiting allowance of one connection (see the module doc).
#[derive(Debug, Clone, Copy)]
pub struct Watchdog {
    allowance: Duration,
    cap: Duration,
}

impl Watchdog {
    /// A full allowance of `cap`.
    pub fn new(cap: Duration) -> Self {
        Self {
            allowance: cap,
            cap,
        }
    }

    /// [`MAX_WAIT`], or the test hook's value in debug builds.
    pub fn standard() -> Self {
        Self::new(test_hook().unwrap_or(MAX_WAIT))
    }

    /// Account one call that blocked for `waited` and moved `bytes`.
    pub fn account(&mut self, waited: Duration, bytes: usize) -> io::Result<()> {
        let Some(left) = self.allowance.checked_sub(waited).filter(|l| !l.is_zero()) else {
            self.allowance = Duration::ZERO;
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the peer is too slow (less than {MIN_RATE} bytes/s for {} s)",
                    self.cap.as_secs()
                ),
            ));
        };
        let earned = Duration::from_secs_f64(bytes as f64 / MIN_RATE as f64);
        self.allowance = (left + earned).min(self.cap);
        Ok(())
    }
}

#[cfg(debug_assertions)]
fn test_hook() -> Option<Duration> {
    std::env::var("UDT_TEST_MAX_WAIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
}

#[cfg(not(debug_assertions))]
fn test_hook() -> Option<Duration> {
    None
}

/// A stream whose reads and writes are accounted to a shared [`Watchdog`] (one per
/// connection, shared by its reading and writing halves).
#[derive(Debug)]
pub struct Watched<S> {
    inner: S,
    dog: Rc<Cell<Watchdog>>,
}

impl<S> Watched<S> {
    /// Wrap `inner`.
    pub fn new(inner: S, dog: Rc<Cell<Watchdog>>) -> Self {
        Self { inner, dog }
    }

    fn call<T>(
        &mut self,
        f: impl FnOnce(&mut S) -> io::Result<T>,
        moved: impl Fn(&T) -> usize,
    ) -> io::Result<T> {
        let started = Instant::now();
        let result = f(&mut self.inner);
        let mut dog = self.dog.get();
        let bytes = result.as_ref().map_or(0, moved);
        let verdict = dog.account(started.elapsed(), bytes);
        self.dog.set(dog);
        verdict?;
        result
    }
}

impl<S: Read> Read for Watched<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.call(|s| s.read(buf), |n| *n)
    }
}

impl<S: Write> Write for Watched<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.call(|s| s.write(buf), |n| *n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.call(Write::flush, |()| 0)
    }
}

impl<S: FrameSink> FrameSink for Watched<S> {
    fn write_shared(&mut self, data: &Bytes) -> io::Result<usize> {
        self.call(|s| s.write_shared(data), |n| *n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn a_trickle_is_cut_off_and_a_steady_peer_is_not() {
        // One byte a minute: cut off by the third minute, though every call returned.
        let mut dog = Watchdog::new(MAX_WAIT);
        let calls = (0..10)
            .take_while(|_| dog.account(60 * S, 1).is_ok())
            .count();
        assert_eq!(calls, 2);
        let err = dog.account(S, 1).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        // A frame of MIN_RATE bytes every second, for a day: never.
        let mut dog = Watchdog::new(MAX_WAIT);
        for _ in 0..86_400 {
            dog.account(S, MIN_RATE as usize).unwrap();
        }
        // A long transfer earns no more than the cap: a stall after it is still bounded.
        dog.account(S, 1 << 40).unwrap();
        assert!(dog.account(MAX_WAIT, 0).is_err());
    }

    #[test]
    fn frames_of_a_few_bytes_every_so_often_are_cut_off() {
        // A peer that completes a small frame every 50 s (each read well inside a timeout).
        let mut dog = Watchdog::new(MAX_WAIT);
        let calls = (0..10)
            .take_while(|_| dog.account(50 * S, 100).is_ok())
            .count();
        assert!(calls <= 3, "{calls}");
    }

    #[test]
    fn the_wrapper_accounts_both_directions_to_one_dog() {
        let dog = Rc::new(Cell::new(Watchdog::new(Duration::from_millis(1))));
        let mut w = Watched::new(Vec::new(), Rc::clone(&dog));
        std::thread::sleep(Duration::from_millis(2)); // nothing was blocked meanwhile
        w.write_all(b"x").unwrap();
        let mut r = Watched::new(SlowReader, Rc::clone(&dog));
        assert_eq!(
            r.read(&mut [0; 4]).unwrap_err().kind(),
            io::ErrorKind::TimedOut
        );
        assert!(
            w.write_all(b"y").is_err(),
            "the writer shares the spent allowance"
        );
    }

    struct SlowReader;

    impl Read for SlowReader {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            std::thread::sleep(Duration::from_millis(5));
            buf[0] = 1;
            Ok(1)
        }
    }
}
