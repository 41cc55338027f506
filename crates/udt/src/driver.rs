//! The I/O thread of one multiplexer.
//!
//! One loop: receive a batch (`recvmmsg`) and route each datagram through the endpoint to its
//! connection; serve connections the application touched; run due timers; send everything
//! the connections emitted as one batch (`sendmmsg`); wake the applications whose
//! connections had events (after the send and outside the connection locks, so a woken thread
//! does not block on a lock still held); then wait for the socket, a wake-up from the
//! application, or the earliest connection deadline. Routing and driving are udt-proto's
//! drive contract (`Endpoint::route`, `Connection::drive`); this file adds only what a
//! threaded port needs around it: locks, the timer heap, batching, waking the application.
//!
//! Each datagram is handed to its connection with the kernel's arrival time
//! ([`ArrivalClock`]), not the time the batch was read: a batch holds up to 64 datagrams that
//! arrived microseconds apart, and the receiver's arrival-speed and packet-pair estimators
//! (whose results the sender's controller uses) need that spacing.
//!
//! Deadlines: one heap per port ([`Deadlines`]), one live entry per connection.
//!
//! ICMP errors: the socket has `IP_RECVERR` on, so a peer whose port closed (its process
//! died) is reported through the socket's error queue. It is drained when `ppoll` says
//! `POLLERR` and whenever a `recvmmsg`/`sendmmsg` fails only to report such an error (that
//! call is then retried, never taken as a broken socket); each port unreachable is handed to
//! every connection to that address as `Connection::handle_unreachable` (one pass over the
//! connections per `ICMP_EVERY` at most), a hint the connection acts on only if the peer then
//! stays silent.
//!
//! Waiting: `ppoll` with a nanosecond timeout (and 1 ns timer slack), at least `MIN_SLEEP`
//! long. Pacing at 1 Gbit/s needs a packet every 12 µs; rather than spinning to hit each slot
//! (which measured no faster on loopback and burns a core that the receiver and the
//! application need), the thread wakes less often and sends what fell due as one batch. An
//! idle connection's deadlines are hundreds of milliseconds apart, so idle costs almost
//! nothing.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use udt_proto::wire::{peek_dst_socket, Capabilities};
use udt_proto::{Connection, Instant, Route, Sink, Transmit};

use crate::deadlines::Deadlines;
use crate::mux::{Mux, MuxState};
use crate::shared::{ConnShared, ConnState};
use crate::sys::{self, Datagram, ErrorQueue, RecvBatch, SendBatch};

/// At most one pass over the connections for ICMP reports per this long. A dead peer's hint
/// waits at most this much (its grace is at least 1 s), and a flood of forged ICMPs costs at
/// most 100 passes a second however many connections the port has.
const ICMP_EVERY: Duration = Duration::from_millis(10);

/// Shortest timer sleep. Deadlines closer than this are served late, together with the
/// packets that fall due meanwhile: at 1 Gbit/s (a packet every 12 µs) one wake-up and one
/// `sendmmsg` then carry ~16 packets instead of one each. The average rate is unchanged: the
/// core schedules each packet from the previous one's slot, not from when it actually left,
/// and lets a late sender catch up (up to its 500 µs pacing slack).
const MIN_SLEEP: Duration = Duration::from_micros(200);
/// The longest a streaming port leaves arrivals unread (see `Driver::hold`)…
const MAX_HOLD: Duration = Duration::from_millis(4);
/// …and at most this fraction of the smallest smoothed RTT among the connections driven…
const HOLD_RTT_DIVISOR: u32 = 4;
/// …unless a long read's rate says that [`RATE_HOLD_DATAGRAMS`] take longer to arrive: a
/// port may then hold for that long, up to the ACK period (UDT's SYN, 10 ms, or the longer
/// one of a connection that spaces its ACKs; see `rate_hold`), which a receiver's ACKs
/// never wait beyond.
const MAX_RATE_HOLD: Duration = Duration::from_millis(10);
/// See [`MAX_RATE_HOLD`]. 128 rather than 64: at 200 Mbit/s (a 7.7 ms hold rather than 3.8)
/// both ends' CPU per GiB read 1.20 against 1.37 in one sitting; at 1 Gbit/s the same
/// (BENCHMARKS.md, session 78).
const RATE_HOLD_DATAGRAMS: u32 = 128;
/// A read of at least this many datagrams means arrivals outpace the port's wake-ups: it
/// then holds for the whole hold, whatever its next deadline (see `Driver::hold`).
const STREAM_DATAGRAMS: usize = 32;
/// …and only if, at the rate such reads came, at least this many datagrams would arrive
/// during the hold (see `Driver::hold`).
const STREAM_HOLD_DATAGRAMS: f64 = 16.0;
/// A hold whose newest datagram had waited this many of the smallest smoothed RTTs (and
/// half the hold) when it was read held a sender that waited on our ACK (`sender_waited`)…
const SENDER_WAIT_RTTS: u32 = 16;
/// …and rate holds are then off for this long (a hold after that looks again).
const SENDER_WAIT_FOR: Duration = Duration::from_secs(1);
/// Receive batches handled before timers and sends get their turn.
const MAX_RECV_BATCHES: usize = 8;
/// I/O thread stack: the loop needs little, and a process may run a thousand multiplexers.
const STACK_BYTES: usize = 256 << 10;

/// Start the I/O thread of `mux`.
pub(crate) fn spawn(mux: Arc<Mux>) -> io::Result<()> {
    let name = format!("udt-io-{}", mux.local_addr().port());
    thread::Builder::new()
        .name(name)
        .stack_size(STACK_BYTES)
        .spawn(move || Driver::new(mux).run())?;
    Ok(())
}

struct Driver {
    mux: Arc<Mux>,
    rx: RecvBatch,
    out: Output,
    pending: Vec<Arc<ConnShared>>,
    /// When the next pass for ICMP reports may run.
    icmp_pass: Pacing,
    /// The socket may have datagrams: false only after a wait that ended without the socket
    /// becoming readable (a timer), so a timer wake-up costs no `recvmmsg` that fails.
    readable: bool,
    /// Datagrams read since the last wait (a GRO train counts each of its datagrams: it is
    /// one receive slot, and counting slots made a port that reads one train per wake-up
    /// look idle, so it never held).
    received: usize,
    /// The last read emptied the socket (it stopped short of `MAX_RECV_BATCHES` full
    /// batches): only then may the port hold.
    drained: bool,
    /// When the last reads that found datagrams ended, and how many each found: their
    /// spacing tells a stream from trains an ACK apart (see `streams`), and their rate how
    /// long a slow stream may be held (see `rate_hold`).
    reads: RecentReads,
    /// The slow stream's hold granted after the last read with data, which one read that
    /// finds nothing may take again (see `Driver::hold`).
    carried: Option<Duration>,
    /// The newest kernel arrival stamp among the datagrams read since the last wait.
    newest_arrival: Option<Instant>,
    /// When the last sleep began, if it held (the socket unwatched).
    held_since: Option<Instant>,
    /// Until when rate holds are off: a hold held a sender that waited on our ACKs (see
    /// `Driver::hold`).
    sender_waits_until: Option<Instant>,
}

/// Everything a connection's output goes to (split from `Driver` so it can be borrowed while
/// a received batch is read).
struct Output {
    fd: i32,
    tx: SendBatch,
    /// ICMP reports drained from the socket, until `Driver::deliver_icmp` routes them.
    errq: ErrorQueue,
    deadlines: Deadlines,
    retire: Vec<Arc<ConnShared>>,
    /// Connections whose application is to be woken once their locks are released and the
    /// batch has left (with whether threads were blocked on the condition variable).
    wake: Vec<(Arc<ConnShared>, bool)>,
    /// The smallest smoothed RTT among the connections driven since the last wait.
    rtt_floor: Duration,
    /// The longest ACK period among the connections driven since the last wait, at least
    /// [`MAX_RATE_HOLD`] (see [`rate_hold`]).
    ack_period: Duration,
    /// Flushes of the batch so far (see `ConnState::lent_before`).
    flushes: u64,
}

impl Driver {
    fn new(mux: Arc<Mux>) -> Self {
        let slot = mux.max_datagram;
        Self {
            out: Output {
                fd: mux.fd(),
                tx: SendBatch::new(slot, mux.socket_info.gso),
                errq: ErrorQueue::new(),
                deadlines: Deadlines::default(),
                retire: Vec::new(),
                wake: Vec::new(),
                rtt_floor: Duration::MAX,
                ack_period: MAX_RATE_HOLD,
                flushes: 0,
            },
            rx: RecvBatch::new(slot, mux.socket_info.gro),
            pending: Vec::new(),
            icmp_pass: Pacing::new(ICMP_EVERY),
            readable: true,
            drained: true,
            received: 0,
            reads: RecentReads::default(),
            carried: None,
            newest_arrival: None,
            held_since: None,
            sender_waits_until: None,
            mux,
        }
    }

    fn run(mut self) {
        sys::set_precise_timers();
        let span = tracing::debug_span!("udt-io", port = self.mux.local_addr().port());
        let _enter = span.enter();
        while !self.mux.aborted.load(SeqCst) {
            if std::mem::replace(&mut self.readable, true) {
                self.receive();
            }
            let now = self.mux.now();
            self.deliver_icmp(now);
            self.serve_pending(now);
            self.run_timers(now);
            self.out.flush();
            if self.out.errq.has_reports() {
                // Reports the flush drained: routed now rather than after the next wait.
                self.deliver_icmp(now);
                self.out.flush();
            }
            self.out.wake_applications();
            self.retire_drained();
            if self.finished() {
                break;
            }
            self.wait();
        }
        tracing::debug!("I/O thread exits");
    }

    /// Read and route up to `MAX_RECV_BATCHES` batches. Each datagram reaches its connection
    /// stamped with the kernel's arrival time, so the estimators see the true spacing, not
    /// when this thread got around to reading; replies are sent as of the time of reading.
    fn receive(&mut self) {
        self.received = 0;
        self.drained = false;
        for _ in 0..MAX_RECV_BATCHES {
            let n = match self.rx.recv(self.out.fd) {
                Ok(n) => n,
                Err(e) if sys::is_icmp_report(&e) => {
                    // A pending ICMP error, reported instead of the datagrams: read the
                    // queue, then read again.
                    self.out.errq.drain(self.out.fd);
                    continue;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "recvmmsg failed");
                    0
                }
            };
            if n == 0 {
                self.drained = true;
                return;
            }
            let clock = ArrivalClock::read(&self.mux);
            let emptied = n < self.rx.capacity();
            self.rx.lend_trains();
            let mut state = self.mux.lock();
            let newest = &mut self.newest_arrival;
            let mut datagrams = self.rx.datagrams().map(|(info, from, data)| {
                let at = clock.arrival(info.arrival);
                *newest = Some(newest.map_or(at, |n| n.max(at)));
                Arrival { at, from, data }
            });
            // A datagram that ended the previous connection's run, already routed.
            let mut next: Option<(Arrival<'_>, Route)> = None;
            loop {
                let (first, route) = match next.take() {
                    Some(routed) => routed,
                    None => match datagrams.next() {
                        Some(d) => {
                            self.received += 1;
                            let route = self.out.route(&mut state, clock.now, &d);
                            (d, route)
                        }
                        None => break,
                    },
                };
                let conn = match route {
                    Route::Connection(id) => match state.conns.get(&id) {
                        Some(conn) => Arc::clone(conn),
                        None => continue,
                    },
                    Route::Accepted(accepted) => {
                        self.out.accept(&self.mux, &mut state, clock.now, *accepted);
                        continue;
                    }
                    Route::Done => continue,
                };
                // Consecutive datagrams for one connection (a train) are handed over under
                // one lock, and the connection is driven (transmit, events, deadline) once,
                // after the last: a lock per datagram was ~9% of a 200 Mbit/s receiver's CPU,
                // its cache line shared with the reader's thread.
                let mut st = conn.lock();
                hand_over(&mut st.conn, first);
                for d in datagrams.by_ref() {
                    self.received += 1;
                    // Addressed to this live connection: where the endpoint would route it,
                    // without its table lookup (a hash per datagram).
                    if peek_dst_socket(d.data.bytes()) == Some(conn.id) {
                        hand_over(&mut st.conn, d);
                        continue;
                    }
                    match self.out.route(&mut state, clock.now, &d) {
                        Route::Connection(id) if id == conn.id => hand_over(&mut st.conn, d),
                        Route::Done => {}
                        other => {
                            next = Some((d, other));
                            break;
                        }
                    }
                }
                self.out.drive(clock.now, &conn, &mut st);
            }
            drop(state);
            if emptied {
                self.drained = true;
                return;
            }
        }
    }

    /// Hand each port unreachable drained from the error queue to the connections whose
    /// peer has that address: one pass over the connections (a rare event) against the
    /// sorted, deduplicated addresses, so a burst of ICMPs costs no more than one, and at
    /// most one pass per `ICMP_EVERY` (later reports wait for the next).
    fn deliver_icmp(&mut self, now: Instant) {
        if !self.out.errq.has_reports() || !self.icmp_pass.ready(now) {
            return;
        }
        let mut closed: Vec<SocketAddr> = self
            .out
            .errq
            .take()
            .map(|r| canonical(r.destination))
            .collect();
        closed.sort_unstable();
        closed.dedup();
        tracing::debug!(peers = ?closed, "ICMP port unreachable");
        let state = self.mux.lock();
        for conn in state.conns.values() {
            let mut st = conn.lock();
            if closed.binary_search(&canonical(st.conn.remote())).is_ok() {
                st.conn.handle_unreachable(now);
                self.out.drive(now, conn, &mut st);
            }
        }
    }

    fn serve_pending(&mut self, now: Instant) {
        self.mux.take_pending(&mut self.pending);
        for conn in self.pending.drain(..) {
            let mut st = conn.lock();
            st.dirty = false;
            self.out.drive(now, &conn, &mut st);
        }
    }

    fn run_timers(&mut self, now: Instant) {
        let out = &mut self.out;
        while let Some(conn) = out.deadlines.pop_due(now) {
            let mut st = conn.lock();
            out.drive(now, &conn, &mut st);
        }
    }

    /// Remove connections that ended and have nothing left to send (called after the flush
    /// that sent their last datagrams).
    fn retire_drained(&mut self) {
        if self.out.retire.is_empty() {
            return;
        }
        let mut state = self.mux.lock();
        for conn in self.out.retire.drain(..) {
            if state.conns.remove(&conn.id).is_some() {
                let mut st = conn.lock();
                state.endpoint.forget(&st.conn);
                // Its last datagrams were flushed before this: `close` may return.
                st.retired = true;
                conn.notify(&st);
            }
        }
    }

    fn finished(&self) -> bool {
        self.mux.try_retire()
    }

    /// Sleep until the socket is readable, the application wakes us, or the next deadline
    /// (but at least `MIN_SLEEP`, so paced packets leave in batches).
    fn wait(&mut self) {
        let now = self.mux.now();
        let timer = self
            .out
            .deadlines
            .next()
            .map(|at| at.saturating_duration_since(now));
        let icmp = self
            .out
            .errq
            .has_reports()
            .then(|| self.icmp_pass.left(now));
        let left = match (timer, icmp) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // A read that found nothing never streams, so only reads with data are remembered.
        let (gap, stream) = if self.received > 0 {
            let gap = self.reads.record(now, self.received);
            (gap, self.reads.stream())
        } else {
            (None, None)
        };
        self.note_waiting_sender(now);
        let stream = stream.filter(|_| !self.rate_holds_off(now));
        let hold;
        (hold, self.carried) = self.hold(stream);
        let streaming = hold.is_some_and(|h| streams(self.received, gap, h));
        self.received = 0;
        self.out.rtt_floor = Duration::MAX;
        self.out.ack_period = MAX_RATE_HOLD;
        if left.is_some_and(|l| l.is_zero()) || self.mux.has_pending() {
            return;
        }
        let (watch, left) = sleep_plan(hold, left, streaming);
        let socket = watch.then_some(self.out.fd);
        self.held_since = (!watch).then_some(now);
        self.mux.sleeping.store(true, SeqCst);
        if !self.mux.has_pending() {
            let timeout = left.map(|l| l.max(MIN_SLEEP));
            match sys::wait(socket, self.mux.waker(), timeout) {
                Ok(woken) => {
                    if woken.error {
                        self.out.errq.drain(self.out.fd);
                    }
                    self.readable = woken.readable || socket.is_none();
                }
                Err(e) => {
                    tracing::warn!(error = %e, "ppoll failed");
                    thread::sleep(Duration::from_millis(1));
                }
            }
        }
        self.mux.sleeping.store(false, SeqCst);
    }

    /// After a hold whose read found datagrams: if the newest had waited through most of it
    /// (`sender_waited`), rate holds are off for [`SENDER_WAIT_FOR`].
    fn note_waiting_sender(&mut self, now: Instant) {
        let (Some(since), Some(newest)) = (self.held_since.take(), self.newest_arrival.take())
        else {
            return;
        };
        let slept = now.saturating_duration_since(since);
        let quiet = now.saturating_duration_since(newest);
        if sender_waited(slept, quiet, self.out.rtt_floor) {
            if !self.rate_holds_off(now) {
                tracing::debug!(
                    ?quiet,
                    ?slept,
                    "the sender waits on our ACKs: no rate holds"
                );
            }
            self.sender_waits_until = Some(now + SENDER_WAIT_FOR);
        }
    }

    /// Whether a sender seen waiting on our ACKs keeps rate holds off at `now`.
    fn rate_holds_off(&self, now: Instant) -> bool {
        self.sender_waits_until.is_some_and(|t| now < t)
    }

    /// How long arrivals may be left unread, if at all. A port that just read a train (more
    /// than one datagram) is streaming: if its next deadline (a receiver's next ACK, a
    /// sender's next train) is at most this far off, it sleeps until then with the socket
    /// unwatched and reads everything that came meanwhile in one go, instead of waking for
    /// each train; a deadline further off means watching the socket as usual (a shorter
    /// hold only added a wake-up that often found nothing: 11% of a 45 Mbit/s receiver's).
    /// The kernel's arrival stamps keep the estimators exact; what waits is the reaction (a
    /// NAK at the receiver, a wider window at the sender), by at most a quarter of the
    /// smallest RTT among the connections driven, and `MAX_HOLD`, so short paths (a
    /// loopback) are not held at all unless a slow stream says so (below). A single
    /// datagram (a handshake, a ping, a lone ACK) is never held for, nor a port with a
    /// connection in its first seconds of receiving (`Connection::reads_may_wait`: its
    /// peer's start-up times delivery by our ACKs' spacing, which a hold bunches).
    ///
    /// A port whose last read found a long train ([`STREAM_DATAGRAMS`]) holds for the whole
    /// hold even when its next deadline is further off: at 1 Gbit/s on a shaped path the
    /// receiver's next deadline was mostly its 10 ms ACK timer (a prompt ACK is timed only
    /// once enough packets came), so it watched the socket and woke 1,700 times a second
    /// for 40-50 packets each; holding, 660 times, and both ends' CPU per GiB fell by 1-18%
    /// in four sittings, about a tenth (BENCHMARKS.md, session 70). Shorter reads keep the
    /// rule above: at 200 Mbit/s, holding after reads of 16 cost 12% more. So does a long
    /// read whose rate would not bring [`STREAM_HOLD_DATAGRAMS`] within the hold (`streams`):
    /// at 45 Mbit/s one GRO train of 32 came per ACK cycle, and the hold after it woke to
    /// an empty socket 113 times a second; watching instead, 3, and both ends' CPU per GiB
    /// fell by a few percent (14% and 2% in two sittings with the roles swapped;
    /// BENCHMARKS.md, session 71).
    ///
    /// A long read that came slowly holds longer, whatever the RTT: for as long as
    /// [`RATE_HOLD_DATAGRAMS`] take to arrive at its rate, up to the ACK period
    /// ([`MAX_RATE_HOLD`]; `rate_hold`). Behind a 45 Mbit/s shaper on a veth pair, with an RTT
    /// of a millisecond or two, the quarter-RTT hold was far shorter than the sender's ACK
    /// cycle (one 32-datagram train per ~8.5 ms ACK), so the receiver woke for each train
    /// and again when the ACK fell due; holding until the ACK, it can read the train and
    /// ACK it in one wake-up, and the ACK leaves when it would have anyway. Measured, paired
    /// with the quarter-RTT rule alone: both ends' CPU per GiB 0.89x and 0.92x at
    /// 200 Mbit/s in two sittings, 1.0x at 1 Gbit/s, goodput unchanged; at 45 Mbit/s 0.73x,
    /// 1.19x and 1.01x in three, no change shown, and in one traced pair the receiver woke
    /// as often as before (BENCHMARKS.md, session 78). What waits longer is a NAK, by up to
    /// the ACK period, and only on paths where a stream's rate is low for its RTT. Short reads
    /// that together make a long one within the ACK period count as one
    /// ([`RecentReads::stream`]): a rate-paced sender's quarter-RTT trains on a short path are
    /// a few datagrams each, and the port woke for every one.
    ///
    /// That hold outlasts one read that finds nothing (`plan_hold`). A window-limited
    /// sender behind a slow shaper sends its train when our ACK reaches it, so the train
    /// lands a millisecond or two after each ACK: the port read it, held until the next ACK,
    /// found nothing new there, and watched the socket again, to be woken by the next train
    /// a moment later: two wake-ups per ACK cycle (45 Mbit/s on the veth pair, ~200 a
    /// second). Holding on after the empty read, it reads each train with the ACK that
    /// covers it. The ACKs leave when and with what they would have; a second empty read
    /// (the stream stopped) ends the hold.
    ///
    /// Not for a sender that waits on our ACKs (a window-limited flow on a path of a fraction
    /// of a millisecond): it sends its window when an ACK reaches it, so the window lands
    /// within an RTT or two and nothing more comes until the next ACK, which waited for the
    /// hold. The rate its reads came at is then the hold's own doing, and a rate hold grows
    /// to the ACK period: `--cc cubic` alone at 1 Gbit/s × 0 ms in the lab moved 150 Mbit/s
    /// (a window of 70 packets per 10 ms), and through a 32-packet receive buffer on a
    /// loopback 500-700 Mbit/s where 1.2 Gbit/s went without holds. A hold that found the
    /// newest datagram had waited through most of it (`sender_waited`) turns rate holds off
    /// for a second; the next hold after that looks again.
    ///
    /// Only after a read that emptied the socket: a port that stopped at
    /// `MAX_RECV_BATCHES` has a backlog, and holding then let it fall further behind at every
    /// turn. At 1 Gbit/s × 200 ms in the lab the receiver held 4 ms after each 512-datagram
    /// read, its socket overflowed (2,000-3,400 drops a second) or, with a larger one, its
    /// ACKs lagged, and `model` settled at 880-910 Mbit/s; reading on instead, 960-972.
    /// Returns the hold, and what of it the next read may take again if it finds nothing.
    fn hold(&self, stream: Option<Stream>) -> (Option<Duration>, Option<Duration>) {
        let read = Read {
            drained: self.drained,
            received: self.received,
            stream,
        };
        plan_hold(self.carried, read, self.out.rtt_floor, self.out.ack_period)
    }
}

/// Whether a hold that `slept` that long held a sender waiting on our ACKs (see
/// [`Driver::hold`]): the newest datagram it read had been `quiet` half the hold, and
/// [`SENDER_WAIT_RTTS`] of the smallest smoothed RTT (`rtt_floor`; zero for a connection
/// whose reads may not wait). A paced stream's packets keep coming through a hold; a
/// window-limited sender's stop an RTT or two after our ACK. Sixteen RTTs keep out the paths
/// where a hold is short against the RTT: behind a 45 Mbit/s shaper on the veth pair the
/// RTT was 14 ms, and at 200 Mbit/s 4 ms, against holds of at most 10 ms.
fn sender_waited(slept: Duration, quiet: Duration, rtt_floor: Duration) -> bool {
    !rtt_floor.is_zero()
        && quiet * 2 >= slept
        && quiet >= rtt_floor.saturating_mul(SENDER_WAIT_RTTS)
}

/// How to sleep (see [`Driver::hold`]): whether to watch the socket, and for how long at
/// most, given the `hold` the port may take, the time `left` to its next deadline, and
/// whether its last read was `streaming` (a long train). Holding means sleeping with the
/// socket unwatched: until the deadline if it falls within the hold, or for the hold if
/// streaming; otherwise the socket is watched until the deadline.
fn sleep_plan(
    hold: Option<Duration>,
    left: Option<Duration>,
    streaming: bool,
) -> (bool, Option<Duration>) {
    match (hold, left) {
        (Some(h), Some(l)) if l <= h => (false, Some(l)),
        (Some(h), l) if streaming => (false, Some(l.map_or(h, |l| l.min(h)))),
        _ => (true, left),
    }
}

/// Whether a read of `received` datagrams, `gap` after the read before it, means a stream
/// worth holding for `hold` (see [`Driver::hold`]): a long read, and at that rate enough
/// arrivals within the hold. A window-limited sender behind a slow shaper sends one train
/// per ACK: at 45 Mbit/s a GRO train of 32-33 datagrams every ~8.5 ms, after which a hold
/// of a quarter RTT (~3 ms) found the socket empty at each cycle's second wake-up.
fn streams(received: usize, gap: Option<Duration>, hold: Duration) -> bool {
    if received < STREAM_DATAGRAMS {
        return false;
    }
    gap.is_none_or(|gap| {
        received as f64 * hold.as_secs_f64() >= STREAM_HOLD_DATAGRAMS * gap.as_secs_f64()
    })
}

/// See [`Driver::hold`]: `drained`, whether the last read emptied the socket; `received`,
/// the datagrams it read; `rtt_floor`, the smallest smoothed RTT among the connections (zero
/// for one whose reads may not wait); `stream`, the rate of the last reads
/// ([`RecentReads::stream`]); `ack_period`, the longest ACK period among the connections
/// (see [`rate_hold`]).
fn hold_for(
    drained: bool,
    received: usize,
    rtt_floor: Duration,
    stream: Option<Stream>,
    ack_period: Duration,
) -> Option<Duration> {
    let by_rtt = MAX_HOLD.min(rtt_floor / HOLD_RTT_DIVISOR);
    let by_rate = rate_hold(stream, ack_period).filter(|_| !rtt_floor.is_zero());
    let hold = by_rate.map_or(by_rtt, |h| h.max(by_rtt));
    (drained && received > 1 && hold >= MIN_SLEEP).then_some(hold)
}

/// The last read, as the hold sees it (see [`hold_for`]).
#[derive(Clone, Copy, Debug)]
struct Read {
    drained: bool,
    received: usize,
    stream: Option<Stream>,
}

/// The hold after `read` (see [`Driver::hold`]), and what of it the next read may take
/// again if it finds nothing: the hold, if the stream's rate set it (`rate_hold`). A
/// quarter-RTT hold is not carried: at 1 Gbit/s × 100 ms with 1% loss in the lab, carried
/// too, `model` moved 699 Mbit/s against main's 783. A read that found nothing takes the
/// hold `carried` from the read before it, unless a connection driven meanwhile may not
/// have its reads wait (`rtt_floor` zero), and carries nothing on.
fn plan_hold(
    carried: Option<Duration>,
    read: Read,
    rtt_floor: Duration,
    ack_period: Duration,
) -> (Option<Duration>, Option<Duration>) {
    match carried {
        Some(carried) if read.received == 0 => ((!rtt_floor.is_zero()).then_some(carried), None),
        _ => {
            let hold = hold_for(
                read.drained,
                read.received,
                rtt_floor,
                read.stream,
                ack_period,
            );
            let by_rate = rate_hold(read.stream, ack_period);
            (hold, hold.filter(|&h| by_rate == Some(h)))
        }
    }
}

/// How long [`RATE_HOLD_DATAGRAMS`] take to arrive at a `stream`'s rate, at most the
/// longest `ack_period` among the connections driven ([`MAX_RATE_HOLD`] or more: a
/// receiver that spaces its ACKs waits up to two SYNs for its next one,
/// `Connection::ack_period`); `None` without a stream.
fn rate_hold(stream: Option<Stream>, ack_period: Duration) -> Option<Duration> {
    let Stream { datagrams, span } = stream?;
    let cap = ack_period.max(MAX_RATE_HOLD);
    Some((span * RATE_HOLD_DATAGRAMS / datagrams.max(1)).min(cap))
}

/// At least [`STREAM_DATAGRAMS`] datagrams read in `span` (see [`RecentReads::stream`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stream {
    datagrams: u32,
    span: Duration,
}

/// How many reads [`RecentReads`] remembers: enough for [`STREAM_DATAGRAMS`] of one each.
const RECENT_READS: usize = STREAM_DATAGRAMS;

/// The last reads that found datagrams: when each ended and how many it found.
#[derive(Clone, Debug, Default)]
struct RecentReads {
    reads: [(Option<Instant>, u32); RECENT_READS],
    /// Where the next read goes.
    next: usize,
}

impl RecentReads {
    /// A read of `received` datagrams ended `now`; returns the time since the read before.
    fn record(&mut self, now: Instant, received: usize) -> Option<Duration> {
        let before = self.reads[(self.next + RECENT_READS - 1) % RECENT_READS].0;
        self.reads[self.next] = (Some(now), u32::try_from(received).unwrap_or(u32::MAX));
        self.next = (self.next + 1) % RECENT_READS;
        before.map(|t| now.saturating_duration_since(t))
    }

    /// The newest reads that found [`STREAM_DATAGRAMS`] or more, and the time they took
    /// (from the end of the read before them): one long read, however long after the one
    /// before it (a window-limited sender's train per ACK), or several short ones within
    /// [`MAX_RATE_HOLD`]. A rate-paced sender on a short path sends trains of a quarter of
    /// its RTT, a millisecond or less at 45 Mbit/s: read as they came, four datagrams at a
    /// time, none was long, and the port woke for each.
    fn stream(&self) -> Option<Stream> {
        let newest = (self.next + RECENT_READS - 1) % RECENT_READS;
        let end = self.reads[newest].0?;
        let mut datagrams = 0u32;
        for back in 0..RECENT_READS - 1 {
            let i = (newest + RECENT_READS - back) % RECENT_READS;
            datagrams = datagrams.saturating_add(self.reads[i].1);
            let start = self.reads[(i + RECENT_READS - 1) % RECENT_READS].0?;
            let span = end.saturating_duration_since(start);
            if back > 0 && span > MAX_RATE_HOLD {
                return None;
            }
            if datagrams >= STREAM_DATAGRAMS as u32 {
                return Some(Stream { datagrams, span });
            }
        }
        None
    }
}

impl Output {
    /// What a datagram is for ([`Endpoint::route`](udt_proto::Endpoint::route)); stateless
    /// answers go out through the port's batch.
    fn route(&mut self, state: &mut MuxState, now: Instant, arrival: &Arrival<'_>) -> Route {
        let room = state.accept_queue.len() < state.backlog;
        let mut sink = PortSink {
            out: self,
            gso: false,
            lent: None,
        };
        state.endpoint.route(
            now,
            arrival.at,
            arrival.from,
            arrival.data.bytes(),
            |_| room,
            &mut sink,
        )
    }

    /// A connection the endpoint accepted: into the table and the accept queue.
    fn accept(&mut self, mux: &Mux, state: &mut MuxState, now: Instant, mut accepted: Connection) {
        accepted.set_local_extensions(mux.local_capabilities());
        let conn = ConnShared::new(accepted);
        state.conns.insert(conn.id, Arc::clone(&conn));
        {
            let mut st = conn.lock();
            self.drive(now, &conn, &mut st);
        }
        state.accept_queue.push_back(conn);
        mux.notify_acceptors();
    }

    /// `Connection::drive`, then what the threaded runtime adds: wake the connection's
    /// waiters if something happened, re-arm its deadline in the heap, and queue it for
    /// retirement once drained.
    fn drive(&mut self, now: Instant, conn: &Arc<ConnShared>, st: &mut ConnState) {
        // GSO trains only to a peer that announced it wants them (never to 4.11).
        let gso = self.tx.gso()
            && st
                .conn
                .peer_extensions()
                .is_some_and(|c| c.contains(Capabilities::GSO));
        // Payloads this connection lent have left if a flush came since: the memory of what
        // was acknowledged meanwhile may be reused.
        if st.lent_before.is_some_and(|n| self.flushes > n) {
            st.conn.lent_sent();
            st.lent_before = None;
        }
        let mut sink = PortSink {
            out: self,
            gso,
            lent: None,
        };
        let driven = st.conn.drive(now, &mut sink);
        if let Some(n) = sink.lent {
            st.lent_before = Some(n);
        }
        let floor = if st.conn.reads_may_wait() {
            st.conn.smoothed_rtt()
        } else {
            Duration::ZERO
        };
        self.rtt_floor = self.rtt_floor.min(floor);
        self.ack_period = self.ack_period.max(st.conn.ack_period());
        if driven.events {
            let waiters = st.has_waiters();
            match self.wake.last_mut() {
                Some((last, w)) if Arc::ptr_eq(last, conn) => *w |= waiters,
                _ => self.wake.push((Arc::clone(conn), waiters)),
            }
        }
        // A deadline that is already due was just served: look again next round.
        let deadline = driven
            .timeout
            .map(|at| at.max(now + Duration::from_nanos(1)));
        self.deadlines.arm(conn, st, deadline);
        if driven.drained {
            self.retire.push(Arc::clone(conn));
        }
    }

    /// Wake the applications of the connections that had events, now that no connection
    /// lock is held and the datagrams they caused have left.
    fn wake_applications(&mut self) {
        for (conn, waiters) in self.wake.drain(..) {
            conn.wake(waiters);
        }
    }

    fn commit(&mut self, t: Transmit, gso: bool) {
        self.tx.commit(t.destination, t.size, gso);
        if self.tx.is_full() {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.tx.is_empty() {
            return;
        }
        if let Err(e) = self.tx.flush(self.fd, &mut self.errq) {
            tracing::warn!(error = %e, "sendmmsg failed");
        }
        // Even a failed flush empties the batch: nothing lent is pointed to any more.
        self.flushes += 1;
    }
}

/// The port's send batch as the core's [`Sink`]: datagrams are built in place in the batch,
/// which is flushed whenever it fills.
struct PortSink<'a> {
    out: &'a mut Output,
    /// The destination takes GSO trains.
    gso: bool,
    /// The flush count when a data packet's payload was last lent (to be sent from the
    /// connection's send buffer): it leaves in a later flush.
    lent: Option<u64>,
}

impl Sink for PortSink<'_> {
    fn buffer(&mut self) -> &mut Vec<u8> {
        self.out.tx.buf_mut()
    }

    fn commit(&mut self, transmit: Transmit) {
        self.out.commit(transmit, self.gso);
    }

    fn lends(&self) -> bool {
        true
    }

    fn commit_lent(&mut self, transmit: Transmit, payload: &[u8]) {
        // SAFETY: the payload is in the send buffer of the connection being driven, which
        // keeps it where it is and unchanged until `Connection::lent_sent` (`Sink::
        // commit_lent`), or until the connection is dropped. `Output::drive` calls
        // `lent_sent` only once `Output::flushes` has passed the count recorded here, so
        // after the flush that sent it; a connection is dropped only after `retire_drained`,
        // which runs after the loop's flush.
        self.lent = Some(self.out.flushes);
        unsafe {
            self.out
                .tx
                .commit_lent(transmit.destination, transmit.size, payload, self.gso);
        }
        if self.out.tx.is_full() {
            self.out.flush();
        }
    }
}

/// Lets something happen at most once per period.
struct Pacing {
    every: Duration,
    next: Instant,
}

impl Pacing {
    fn new(every: Duration) -> Self {
        Self {
            every,
            next: Instant::ZERO,
        }
    }

    /// Whether it may happen at `now`; if so, the next time is one period later.
    fn ready(&mut self, now: Instant) -> bool {
        if now < self.next {
            return false;
        }
        self.next = now + self.every;
        true
    }

    /// How long until it may happen again.
    fn left(&self, now: Instant) -> Duration {
        self.next.saturating_duration_since(now)
    }
}

/// An address as compared with an ICMP's destination: an IPv4 peer of a dual-stack socket
/// may appear IPv4-mapped on one side and plain on the other.
fn canonical(a: SocketAddr) -> SocketAddr {
    SocketAddr::new(a.ip().to_canonical(), a.port())
}

/// One datagram of a received batch: when it arrived, from where, and its bytes (in the
/// batch's slot, or its own handle on a lent train).
struct Arrival<'a> {
    at: Instant,
    from: SocketAddr,
    data: Datagram<'a>,
}

/// A routed datagram to its connection, which opens a protected one where it lies; a lent
/// train's data packets keep their payloads in it.
fn hand_over(conn: &mut Connection, arrival: Arrival<'_>) {
    let Arrival { at, from, data } = arrival;
    match data {
        Datagram::Lent(data) => conn.handle_datagram_lent(at, from, data),
        Datagram::InSlot(data) => conn.handle_datagram_mut(at, from, data),
    }
}

/// Turns the kernel's arrival stamps (`CLOCK_REALTIME`, the only clock socket timestamps
/// use) into this port's monotonic [`Instant`]s.
///
/// Only a datagram's *age* is taken from the wall clock: the wall time read just after
/// `recvmmsg` minus the stamp, subtracted from the monotonic time read at the same moment.
/// So the two clocks' offset is measured afresh for every batch, and a wall-clock step
/// (NTP, an administrator) can only distort datagrams that were queued across the step: an
/// age that comes out negative or over `MAX_AGE` is distrusted and the reading time used.
struct ArrivalClock {
    now: Instant,
    wall: Duration,
}

/// Oldest believable arrival stamp (a datagram queued longer than this means a stalled thread
/// or a stepped clock; either way, the reading time is as good as it gets).
const MAX_AGE: Duration = Duration::from_secs(1);

impl ArrivalClock {
    fn read(mux: &Mux) -> Self {
        let now = mux.now();
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Self { now, wall }
    }

    fn arrival(&self, stamp: Option<Duration>) -> Instant {
        match stamp.and_then(|s| self.wall.checked_sub(s)) {
            Some(age) if age <= MAX_AGE => self.now.saturating_sub(age),
            _ => self.now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_holds_only_after_reading_a_train_that_emptied_its_socket() {
        let rtt = Duration::from_millis(200);
        assert_eq!(hold_for(true, 40, rtt, None, MAX_RATE_HOLD), Some(MAX_HOLD));
        assert_eq!(
            hold_for(true, 40, Duration::from_millis(4), None, MAX_RATE_HOLD),
            Some(Duration::from_millis(1))
        );
        // A backlog (the read stopped at its batch limit), a lone datagram, a short path.
        assert_eq!(hold_for(false, 512, rtt, None, MAX_RATE_HOLD), None);
        assert_eq!(hold_for(true, 1, rtt, None, MAX_RATE_HOLD), None);
        assert_eq!(
            hold_for(true, 40, Duration::from_micros(400), None, MAX_RATE_HOLD),
            None
        );
    }

    #[test]
    fn a_slow_stream_holds_until_its_next_train_is_worth_reading() {
        let ms = Duration::from_millis;
        let short_path = Duration::from_micros(400);
        // 45 Mbit/s behind tbf: a 32-datagram train per ~8.5 ms ACK cycle. 128 more would
        // take 34 ms: hold for the ACK period, whatever the path's RTT.
        let slow = stream(32, ms(8) + ms(1) / 2);
        assert_eq!(
            hold_for(true, 32, short_path, slow, MAX_RATE_HOLD),
            Some(MAX_RATE_HOLD)
        );
        // A connection that spaces its ACKs 20 ms apart: the hold reaches its next ACK.
        assert_eq!(hold_for(true, 32, short_path, slow, ms(20)), Some(ms(20)));
        // 1 Gbit/s: 88 datagrams a millisecond; 128 take ~1.5 ms, more than a quarter of
        // a 4 ms RTT but less than a 200 ms path's own hold.
        let fast = stream(88, ms(1));
        let held = hold_for(true, 88, ms(4), fast, MAX_RATE_HOLD).unwrap();
        assert!(held > ms(1) && held < ms(2), "{held:?}");
        assert_eq!(
            hold_for(true, 88, ms(200), fast, MAX_RATE_HOLD),
            Some(MAX_HOLD)
        );
        // No stream, a backlog or a connection whose reads may not wait: the old rule.
        assert_eq!(hold_for(true, 31, short_path, None, MAX_RATE_HOLD), None);
        assert_eq!(hold_for(false, 64, short_path, slow, MAX_RATE_HOLD), None);
        assert_eq!(
            hold_for(true, 64, Duration::ZERO, slow, MAX_RATE_HOLD),
            None
        );
    }

    fn stream(datagrams: u32, span: Duration) -> Option<Stream> {
        Some(Stream { datagrams, span })
    }

    #[test]
    fn a_stream_is_one_long_read_or_short_ones_that_come_fast() {
        let ms = |n: u64| Instant::ZERO + Duration::from_millis(n);
        let mut reads = RecentReads::default();
        assert_eq!(reads.stream(), None);
        // A first read has no span.
        assert_eq!(reads.record(ms(100), 37), None);
        assert_eq!(reads.stream(), None);
        // A window-limited sender's train per ACK, however far apart.
        assert_eq!(reads.record(ms(130), 37), Some(Duration::from_millis(30)));
        assert_eq!(reads.stream(), stream(37, Duration::from_millis(30)));
        // A rate-paced sender's 4-datagram trains a millisecond apart (45 Mbit/s): a stream
        // once eight of them came, over the 8 ms since the read before them.
        let mut t = 130;
        for _ in 0..7 {
            t += 1;
            reads.record(ms(t), 4);
            assert_eq!(reads.stream(), None);
        }
        reads.record(ms(t + 1), 4);
        assert_eq!(reads.stream(), stream(32, Duration::from_millis(8)));
        // Twice as far apart they take 16 ms, longer than a hold: no stream.
        let mut reads = RecentReads::default();
        for n in 0..40 {
            reads.record(ms(2 * n), 4);
            assert_eq!(reads.stream(), None);
        }
        // Single datagrams fill the memory: 32 of them need 33 reads, so none is a stream.
        let mut reads = RecentReads::default();
        for n in 0..40 {
            reads.record(Instant::ZERO + Duration::from_micros(10 * n), 1);
            assert_eq!(reads.stream(), None);
        }
    }

    #[test]
    fn a_hold_that_a_sender_waited_through_means_a_window_limited_sender() {
        let (us, ms) = (Duration::from_micros, Duration::from_millis);
        // 1 Gbit/s × 0 ms in the lab: a 10 ms hold, the window in its first millisecond.
        assert!(sender_waited(ms(10), us(9_600), us(100)));
        // A paced stream: its newest packet came just before the read.
        assert!(!sender_waited(ms(10), us(300), us(100)));
        // Quiet for less than half the hold: the stream may simply be slow.
        assert!(!sender_waited(ms(10), ms(4), us(100)));
        // Long quiet, but against a 4 ms RTT (200 Mbit/s behind a shaper): not sixteen RTTs.
        assert!(!sender_waited(ms(10), ms(8), ms(4)));
        // A connection whose reads may not wait: no verdict.
        assert!(!sender_waited(ms(10), ms(9), Duration::ZERO));
    }

    #[test]
    fn a_slow_streams_hold_outlasts_one_empty_read() {
        let ms = Duration::from_millis;
        let rtt = ms(10);
        let read = |received, stream| Read {
            drained: true,
            received,
            stream,
        };
        // 45 Mbit/s behind tbf: a 37-datagram train per 10 ms ACK cycle. Held until the ACK,
        // which finds nothing new: the hold goes on to the next ACK, once.
        let train = read(37, stream(37, ms(10)));
        let (hold, carried) = plan_hold(None, train, rtt, MAX_RATE_HOLD);
        assert_eq!((hold, carried), (Some(MAX_RATE_HOLD), Some(MAX_RATE_HOLD)));
        let (hold, carried) = plan_hold(carried, read(0, None), rtt, MAX_RATE_HOLD);
        assert_eq!((hold, carried), (Some(MAX_RATE_HOLD), None));
        assert_eq!(
            plan_hold(carried, read(0, None), rtt, MAX_RATE_HOLD),
            (None, None)
        );
        // The next train read renews it; a short read or a backlog ends it.
        assert_eq!(
            plan_hold(None, train, rtt, MAX_RATE_HOLD).1,
            Some(MAX_RATE_HOLD)
        );
        assert_eq!(
            plan_hold(Some(MAX_RATE_HOLD), read(3, None), rtt, MAX_RATE_HOLD).1,
            None
        );
        let backlog = Read {
            drained: false,
            ..train
        };
        assert_eq!(
            plan_hold(Some(MAX_RATE_HOLD), backlog, rtt, MAX_RATE_HOLD),
            (None, None)
        );
        // A quarter-RTT hold is not carried, even after a stream (1 Gbit/s × 100 ms: 128
        // datagrams take 1.5 ms, the hold is 4 ms), nor a hold once a connection driven
        // meanwhile may not have its reads wait.
        assert_eq!(
            plan_hold(None, read(40, None), ms(8), MAX_RATE_HOLD),
            (Some(ms(2)), None)
        );
        let fast = read(88, stream(88, ms(1)));
        assert_eq!(
            plan_hold(None, fast, ms(100), MAX_RATE_HOLD),
            (Some(MAX_HOLD), None)
        );
        assert_eq!(
            plan_hold(
                Some(MAX_RATE_HOLD),
                read(0, None),
                Duration::ZERO,
                MAX_RATE_HOLD
            ),
            (None, None)
        );
    }

    #[test]
    fn a_streaming_port_holds_whatever_its_next_deadline() {
        let hold = Some(Duration::from_millis(2));
        let far = Some(Duration::from_millis(9));
        let near = Some(Duration::from_millis(1));
        // A deadline within the hold: sleep until it, the socket unwatched.
        assert_eq!(sleep_plan(hold, near, false), (false, near));
        assert_eq!(sleep_plan(hold, near, true), (false, near));
        // Further off: a short read watches the socket; a long train holds for the hold.
        assert_eq!(sleep_plan(hold, far, false), (true, far));
        assert_eq!(sleep_plan(hold, far, true), (false, hold));
        assert_eq!(sleep_plan(hold, None, true), (false, hold));
        // No hold (a backlog, a short path): watch the socket.
        assert_eq!(sleep_plan(None, far, true), (true, far));
        assert_eq!(sleep_plan(None, None, true), (true, None));
    }

    #[test]
    fn a_long_read_streams_only_if_its_rate_fills_the_hold() {
        let ms = Duration::from_millis;
        let hold = ms(3);
        // 45 Mbit/s behind tbf: one 32-datagram train per ~8.5 ms ACK cycle; at that rate
        // a 3 ms hold would gather ~11 datagrams, fewer than 16: watch the socket instead.
        assert!(!streams(32, Some(ms(8) + ms(1) / 2), hold));
        // 1 Gbit/s: 44 datagrams a millisecond after the last read, ~130 in the hold.
        assert!(streams(44, Some(ms(1)), hold));
        // Short reads never stream; a first read (no gap yet) does if it is long.
        assert!(!streams(31, Some(Duration::from_micros(10)), hold));
        assert!(streams(32, None, hold));
    }

    #[test]
    fn icmp_passes_are_at_most_one_per_period() {
        let mut p = Pacing::new(ICMP_EVERY);
        let t0 = Instant::ZERO + Duration::from_secs(1);
        assert!(p.ready(t0));
        assert!(!p.ready(t0 + Duration::from_millis(9)));
        assert_eq!(
            p.left(t0 + Duration::from_millis(4)),
            Duration::from_millis(6)
        );
        assert!(p.ready(t0 + ICMP_EVERY));
        assert_eq!(p.left(t0 + ICMP_EVERY + ICMP_EVERY), Duration::ZERO);
    }

    #[test]
    fn icmp_destinations_match_mapped_and_plain_peers() {
        let plain: SocketAddr = "127.0.0.1:9000".parse().unwrap();
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:9000".parse().unwrap();
        assert_eq!(canonical(mapped), plain);
        assert_eq!(canonical(plain), plain);
        assert_ne!(canonical(plain), "127.0.0.1:9001".parse().unwrap());
        let v6: SocketAddr = "[2001:db8::1]:9000".parse().unwrap();
        assert_eq!(canonical(v6), v6);
    }

    #[test]
    fn arrival_stamps_become_ages_on_the_monotonic_clock() {
        let clock = ArrivalClock {
            now: Instant::from_micros(10_000_000),
            wall: Duration::from_secs(1_700_000_000),
        };
        let age = Duration::from_micros(37);
        assert_eq!(
            clock.arrival(Some(clock.wall - age)),
            clock.now.saturating_sub(age)
        );
        // No stamp, a stamp from the future (the wall clock stepped back) or an implausibly
        // old one (stepped forward): the reading time.
        assert_eq!(clock.arrival(None), clock.now);
        assert_eq!(clock.arrival(Some(clock.wall + age)), clock.now);
        assert_eq!(
            clock.arrival(Some(clock.wall - Duration::from_secs(5))),
            clock.now
        );
    }
}
