//! Message mode against libudt: whole in-order messages both ways, and messages with a TTL
//! through a lossy relay (some expire: nothing partial may be delivered, and the connection
//! must carry on to the last message, which has no TTL, and close cleanly).

use std::collections::HashSet;
use std::io;
use std::time::Duration;

use udt::{ConnectionConfig, Mode, UdtListener, UdtMessageSocket};

use super::relay::Relay;
use super::*;
use crate::PATIENCE;

const MSGS: u64 = 400;
/// Largest message: up to 7 packets, so a lost packet can leave a message partial.
const MAX_MSG: usize = 10_000;
/// TTL of every message but the last (which never expires).
const TTL: Duration = Duration::from_millis(30);
/// Sender rate cap (bytes/s): messages queue for up to ~1 s, far beyond their TTL, so a
/// lost packet's retransmission finds its message expired.
const MAXBW: u64 = 2_000_000;
/// The relay drops every `DROP_EVERY`-th data packet.
const DROP_EVERY: u64 = 25;

fn message_config(maxbw: Option<u64>) -> ConnectionConfig {
    let mut c = ConnectionConfig::new(Mode::Message);
    c.max_bandwidth(maxbw);
    c
}

/// Send messages 0..MSGS; with `ttl`, all but the last expire after it.
fn send_messages(m: &UdtMessageSocket, ttl: Option<Duration>, in_order: bool) {
    m.set_write_timeout(Some(PATIENCE)).unwrap();
    for k in 0..MSGS {
        let ttl = if k + 1 == MSGS { None } else { ttl };
        m.send_msg(&pattern::message(k, MAX_MSG), ttl, in_order)
            .unwrap_or_else(|e| panic!("send_msg {k}: {e}"));
    }
    m.flush().expect("flush");
}

/// Receive until the peer closes; every message must be a whole, correct one, none twice.
/// Returns the indices in arrival order.
fn recv_messages(m: &UdtMessageSocket) -> Vec<u64> {
    recv_messages_until(m, PATIENCE, false)
}

/// [`recv_messages`], but a `quiet` period without any message also ends it when `quiet_ok`.
fn recv_messages_until(m: &UdtMessageSocket, quiet: Duration, quiet_ok: bool) -> Vec<u64> {
    m.set_read_timeout(Some(quiet)).unwrap();
    let mut buf = vec![0u8; MAX_MSG + 1];
    let mut seen = HashSet::new();
    let mut order = Vec::new();
    loop {
        match m.recv_msg(&mut buf) {
            Ok(n) => {
                let k = pattern::check_message(&buf[..n], MSGS, MAX_MSG)
                    .unwrap_or_else(|| panic!("message #{} is partial or wrong", order.len()));
                assert!(seen.insert(k), "message {k} delivered twice");
                order.push(k);
            }
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return order,
            Err(e) if quiet_ok && e.kind() == io::ErrorKind::TimedOut => return order,
            Err(e) => panic!(
                "recv_msg after {} messages: {e}\n{:?}\n{:?}",
                order.len(),
                m.stats(),
                m.path_stats()
            ),
        }
    }
}

#[test]
fn our_messages_to_libudt_in_order() {
    // libudt 4.11 itself loses an acknowledged message in 1 run in 100-200
    // (`Json::is_libudt_message_skip`): try again then; any other failure fails at once.
    const ATTEMPTS: u32 = udt_interop::peers::LIBUDT_SKIP_ATTEMPTS;
    for attempt in 1..=ATTEMPTS {
        let (mut srv, addr) = server(&[
            "--mode",
            "dgram",
            "--msgs",
            &MSGS.to_string(),
            "--max-msg",
            &MAX_MSG.to_string(),
        ]);
        let m = UdtMessageSocket::connect(addr).expect("connect");
        send_messages(&m, None, true);
        let dropped_by_us = m.stats().messages_dropped_send;
        m.close().expect("close");
        let r = srv.result(RESULT_WAIT);
        if attempt < ATTEMPTS && dropped_by_us == 0 && r.is_libudt_message_skip(MSGS) {
            println!(
                "libudt skipped an acknowledged message (its own race); again: {}",
                r.0
            );
            continue;
        }
        assert_eq!(dropped_by_us, 0, "no TTL, yet we dropped a message");
        assert_ok(&r);
        assert_eq!(r.int("msgs"), Some(MSGS as i64));
        assert_eq!(r.int("out_of_order"), Some(0));
        assert_eq!(r.bool("peer_closed"), Some(true), "{}", r.0);
        return;
    }
}

#[test]
fn libudt_messages_to_us_in_order() {
    let l = UdtListener::bind_with("127.0.0.1:0", message_config(None)).unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let mut cli = client(&[
        "--connect",
        &addr,
        "--mode",
        "dgram",
        "--send",
        "--msgs",
        &MSGS.to_string(),
        "--max-msg",
        &MAX_MSG.to_string(),
    ]);
    let (m, _) = l.accept_message().expect("accept");
    let order = recv_messages(&m);
    assert_eq!(order, (0..MSGS).collect::<Vec<_>>());
    assert_ok(&cli.result(RESULT_WAIT));
}

#[test]
fn our_expiring_messages_to_libudt() {
    let (mut srv, addr) = server(&[
        "--mode",
        "dgram",
        "--allow-drops",
        "--msgs",
        &MSGS.to_string(),
        "--max-msg",
        &MAX_MSG.to_string(),
    ]);
    let relay = Relay::start(addr, DROP_EVERY).unwrap();
    let m =
        UdtMessageSocket::connect_with(relay.addr(), message_config(Some(MAXBW))).expect("connect");
    send_messages(&m, Some(TTL), false);
    let sent = m.stats();
    m.close().expect("close after drops");
    let r = srv.result(RESULT_WAIT);
    println!(
        "ours -> libudt with TTL: relay dropped {} packets; libudt: {}",
        relay.dropped(),
        r.0
    );
    if r.bool("ok") != Some(true) {
        // What the wire carried at the end: how 4.11's read-then-fail race on close was
        // found (interop/README.md), after it failed one CI run in a few.
        println!(
            "our sender: {sent:?}\nthe relay's last packets:\n{}",
            relay.recent()
        );
    }
    // ok: every delivered message whole and correct, the last one among them, clean close.
    assert_ok(&r);
    let missing = r.int("missing").unwrap();
    assert!(missing > 0, "no message expired: the test proves nothing");
    assert_eq!(r.int("msgs").unwrap() + missing, MSGS as i64);
}

/// libudt sends expiring messages to us. 4.11's sender is itself unreliable here: after a
/// drop request it may skip a sequence number (protocol notes §6.6) and shift later packets,
/// and libudt-to-libudt under the same conditions ends with the last message missing or a
/// wrong message delivered, and a sender that never drains (its `close` then lingers). So this
/// test asserts what we can promise against such a peer: whatever we deliver is a whole,
/// correct message, never twice, and our side neither hangs nor breaks: it stops after 10 s
/// without news and the connection must still be up (or cleanly closed by the peer).
#[test]
fn libudt_expiring_messages_to_us() {
    let l = UdtListener::bind_with("127.0.0.1:0", message_config(None)).unwrap();
    let relay = Relay::start(l.local_addr().unwrap(), DROP_EVERY).unwrap();
    let mut cli = client(&[
        "--connect",
        &relay.addr().to_string(),
        "--mode",
        "dgram",
        "--send",
        "--unordered",
        "--ttl",
        &TTL.as_millis().to_string(),
        "--maxbw",
        &MAXBW.to_string(),
        "--msgs",
        &MSGS.to_string(),
        "--max-msg",
        &MAX_MSG.to_string(),
    ]);
    let (m, _) = l.accept_message().expect("accept");
    let order = recv_messages_until(&m, Duration::from_secs(10), true);
    let state = m.state();
    println!(
        "libudt -> ours with TTL: {} of {MSGS} delivered, relay dropped {}, our state {state:?}",
        order.len(),
        relay.dropped(),
    );
    cli.kill();
    assert!(
        matches!(state, udt::State::Connected | udt::State::Closed),
        "{state:?}"
    );
    assert!(!order.is_empty(), "nothing delivered");
    assert!(relay.dropped() > 0, "no loss: the test proves nothing");
    println!("our receiver: {:?}", m.stats());
}
