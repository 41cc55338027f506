//! Message mode both ways: in-order messages of varied sizes (8 B to ~7 packets), no TTL;
//! every message must arrive whole, correct and in order.

use std::time::Duration;

use udt_interop::peers::LIBUDT_SKIP_ATTEMPTS;
use udt_proto::Mode;

use crate::common::*;

#[test]
fn our_client_sends_messages_to_libudt_server() {
    for attempt in 1..=LIBUDT_SKIP_ATTEMPTS {
        let (mut srv, addr) = server(&[
            "--mode",
            "dgram",
            "--msgs",
            &MSGS.to_string(),
            "--max-msg",
            &MAX_MSG.to_string(),
        ]);
        let mut d = driver(11);
        let id = d.connect(addr, config(Mode::Message)).expect("connect");
        wait_connected(&mut d, id);
        send_messages(&mut d, id, MSGS, Duration::from_secs(60));
        let r = srv.result(Duration::from_secs(30));
        println!("ours -> libudt, messages: {}", r.0);
        let dropped_by_us = d.conn(id).stats().messages_dropped_send;
        if attempt < LIBUDT_SKIP_ATTEMPTS && dropped_by_us == 0 && r.is_libudt_message_skip(MSGS) {
            println!("libudt skipped an acknowledged message (its own race); again");
            continue;
        }
        assert_eq!(dropped_by_us, 0, "no TTL, yet we dropped a message");
        assert_eq!(r.bool("ok"), Some(true), "{}", r.0);
        assert_eq!(r.int("msgs"), Some(MSGS as i64));
        assert_eq!(r.int("out_of_order"), Some(0));
        assert_eq!(r.bool("peer_closed"), Some(true), "{}", r.0);
        return;
    }
}

#[test]
fn libudt_client_sends_messages_to_our_server() {
    let mut d = driver(12);
    d.listen(config(Mode::Message));
    let addr = d.local_addr();
    let mut cli = client(&[
        "--connect".into(),
        addr.to_string(),
        "--mode".into(),
        "dgram".into(),
        "--send".into(),
        "--msgs".into(),
        MSGS.to_string(),
        "--max-msg".into(),
        MAX_MSG.to_string(),
    ]);
    let id = wait_accepted(&mut d);
    let sizes = recv_messages(&mut d, id, MSGS, Duration::from_secs(60));
    let r = cli.result(Duration::from_secs(30));
    let (min, max) = (sizes.iter().min(), sizes.iter().max());
    println!(
        "libudt -> ours, messages: {} received, sizes {min:?}..{max:?}; client: {}",
        sizes.len(),
        r.0
    );
    assert_eq!(sizes.len() as u64, MSGS);
    assert_eq!(r.bool("ok"), Some(true), "{}", r.0);
}
