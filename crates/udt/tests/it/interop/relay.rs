//! A lossy UDP relay between two UDT peers on loopback: it forwards everything, except that it
//! drops every `n`-th data packet in each direction. Loss is what makes message TTLs matter:
//! 4.11 checks a message's TTL only before *retransmitting* one of its packets (protocol
//! notes §6.6), so on a lossless loopback no message would ever expire.
//!
//! One client at a time: the relay listens on [`Relay::addr`], forwards to `upstream` from a
//! second socket, and sends replies back to whichever address last wrote to its front.
//!
//! It keeps the last [`RECORDED`] datagrams it saw ([`Relay::recent`]), so a test that fails
//! only now and then (one CI run in a few) can print what was on the wire just before:
//! which packets were dropped, retransmitted, or dropped by request.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use udt_proto::wire::Packet;

/// How often the forwarding threads look at the stop flag.
const POLL: Duration = Duration::from_millis(20);

/// Datagrams the flight recorder keeps (both directions together).
const RECORDED: usize = 600;

/// A running relay; stopped when dropped.
#[derive(Debug)]
pub(super) struct Relay {
    front: SocketAddr,
    stop: Arc<AtomicBool>,
    dropped: Arc<AtomicU64>,
    recorder: Arc<Mutex<Recorder>>,
    threads: Vec<JoinHandle<()>>,
}

impl Relay {
    /// Relay to `upstream`, dropping every `drop_every`-th data packet per direction.
    pub(super) fn start(upstream: SocketAddr, drop_every: u64) -> io::Result<Self> {
        let front = UdpSocket::bind("127.0.0.1:0")?;
        let back = UdpSocket::bind("127.0.0.1:0")?;
        back.connect(upstream)?;
        front.set_read_timeout(Some(POLL))?;
        back.set_read_timeout(Some(POLL))?;
        let front_addr = front.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let dropped = Arc::new(AtomicU64::new(0));
        let recorder = Arc::new(Mutex::new(Recorder::default()));
        let client = Arc::new(Mutex::new(None::<SocketAddr>));
        let ctx = Forward {
            stop: stop.clone(),
            dropped: dropped.clone(),
            drop_every,
            recorder: recorder.clone(),
            direction: Direction::Up,
        };
        let (front2, back2) = (front.try_clone()?, back.try_clone()?);
        let (ctx2, client2) = (
            Forward {
                direction: Direction::Down,
                ..ctx.clone()
            },
            client.clone(),
        );
        let up = thread::spawn(move || {
            ctx.run(&front, |buf, from| {
                *client.lock().unwrap() = Some(from);
                let _ = back.send(buf);
            })
        });
        let down = thread::spawn(move || {
            ctx2.run(&back2, |buf, _| {
                if let Some(to) = *client2.lock().unwrap() {
                    let _ = front2.send_to(buf, to);
                }
            })
        });
        Ok(Self {
            front: front_addr,
            stop,
            dropped,
            recorder,
            threads: vec![up, down],
        })
    }

    /// Where clients send.
    pub(super) fn addr(&self) -> SocketAddr {
        self.front
    }

    /// Data packets dropped so far (both directions).
    pub(super) fn dropped(&self) -> u64 {
        self.dropped.load(Relaxed)
    }

    /// The last datagrams seen, oldest first, one line each (see [`Recorder::render`]).
    pub(super) fn recent(&self) -> String {
        self.recorder.lock().unwrap().render()
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// One forwarding direction's shared settings.
#[derive(Debug, Clone)]
struct Forward {
    stop: Arc<AtomicBool>,
    dropped: Arc<AtomicU64>,
    drop_every: u64,
    recorder: Arc<Mutex<Recorder>>,
    direction: Direction,
}

/// Which way a datagram went: from the client to the upstream peer, or back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Up,
    Down,
}

/// A bounded log of the datagrams the relay saw (copies: at the message tests' 2 MB/s
/// that costs nothing), rendered only when a test asks.
#[derive(Debug)]
struct Recorder {
    start: Instant,
    seen: VecDeque<Seen>,
}

#[derive(Debug)]
struct Seen {
    at: Duration,
    direction: Direction,
    dropped: bool,
    bytes: Box<[u8]>,
}

impl Default for Recorder {
    fn default() -> Self {
        Self {
            start: Instant::now(),
            seen: VecDeque::with_capacity(RECORDED),
        }
    }
}

impl Recorder {
    fn record(&mut self, direction: Direction, dropped: bool, datagram: &[u8]) {
        if self.seen.len() == RECORDED {
            self.seen.pop_front();
        }
        self.seen.push_back(Seen {
            at: self.start.elapsed(),
            direction,
            dropped,
            bytes: datagram.into(),
        });
    }

    /// One line per datagram: seconds since the relay started, direction (`->` towards the
    /// upstream peer), `DROP` if the relay dropped it, and the packet as the
    /// protocol's own one-line form shows it (`udt_proto::wire`'s `Display`).
    fn render(&self) -> String {
        let mut out = String::new();
        for s in &self.seen {
            let dir = if s.direction == Direction::Up {
                "->"
            } else {
                "<-"
            };
            let fate = if s.dropped { "DROP" } else { "" };
            let _ = write!(out, "{:>9.6} {dir} {fate:4} ", s.at.as_secs_f64());
            let _ = match Packet::parse(&s.bytes) {
                Ok(packet) => writeln!(out, "{packet}"),
                Err(e) => writeln!(out, "unparsable: {e}"),
            };
        }
        out
    }
}

impl Forward {
    /// Receive on `from` until stopped; hand each datagram that survives to `send`.
    fn run(&self, from: &UdpSocket, mut send: impl FnMut(&[u8], SocketAddr)) {
        let mut buf = vec![0u8; 65536];
        let mut data_seen = 0u64;
        while !self.stop.load(Relaxed) {
            let Ok((n, addr)) = from.recv_from(&mut buf) else {
                continue;
            };
            // UDT data packets have the top bit of the first byte clear (control: set).
            let drop = n >= 16 && buf[0] & 0x80 == 0 && {
                data_seen += 1;
                data_seen % self.drop_every == 0
            };
            self.recorder
                .lock()
                .unwrap()
                .record(self.direction, drop, &buf[..n]);
            if drop {
                self.dropped.fetch_add(1, Relaxed);
                continue;
            }
            send(&buf[..n], addr);
        }
    }
}
