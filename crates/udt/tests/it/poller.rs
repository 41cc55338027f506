//! `Poller` (UDT4 epoll) and non-blocking mode over many sockets.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::UdpSocket;
use std::thread;
use std::time::{Duration, Instant};

use udt::{
    ConnectionError, Mode, PollEvent, Poller, Ready, SocketOptions, Token, UdtListener,
    UdtMessageSocket, UdtStream,
};

use super::{listener, PATIENCE};

/// Wait for events, failing the test instead of hanging.
fn wait(poller: &Poller, events: &mut Vec<PollEvent>) -> usize {
    let n = poller.wait(events, Some(PATIENCE)).unwrap();
    assert!(n > 0, "poller timed out");
    n
}

#[test]
fn nonblocking_read_write_and_accept_would_block() {
    let mut o = SocketOptions::default();
    o.set_send_blocking(false).set_recv_blocking(false);
    let l = UdtListener::bind_with("127.0.0.1:0", o.clone()).unwrap();
    assert_eq!(l.accept().unwrap_err().kind(), ErrorKind::WouldBlock);
    let addr = l.local_addr().unwrap();
    // Asynchronous connect: returns at once, writable once connected.
    let c = UdtStream::connect_with(addr, o).unwrap();
    let poller = Poller::new();
    poller.add(&l, Token(0), Ready::IN).unwrap();
    poller.add(&c, Token(1), Ready::OUT).unwrap();
    let mut events = Vec::new();
    let mut accepted = None;
    let mut connected = false;
    while accepted.is_none() || !connected {
        wait(&poller, &mut events);
        for ev in &events {
            match ev.token {
                Token(0) => accepted = Some(l.accept().unwrap().0),
                Token(1) => connected = ev.ready.contains(Ready::OUT),
                t => panic!("unexpected {t:?}"),
            }
        }
    }
    let s = accepted.unwrap();
    assert_eq!(
        (&s).read(&mut [0u8; 4]).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
    // Fill the send buffer without blocking.
    let chunk = vec![9u8; 1 << 20];
    let mut queued = 0usize;
    loop {
        match (&c).write(&chunk) {
            Ok(n) => queued += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => panic!("{e}"),
        }
        assert!(queued < 64 << 20, "send buffer never filled");
    }
    assert!(queued >= 1 << 20, "queued {queued}");
    assert_eq!((&c).flush().unwrap_err().kind(), ErrorKind::WouldBlock);
    // Read it all back through the poller.
    poller.add(&s, Token(2), Ready::IN).unwrap();
    poller.modify(Token(1), Ready::EMPTY).unwrap();
    let mut got = 0usize;
    let mut buf = vec![0u8; 1 << 16];
    while got < queued {
        wait(&poller, &mut events);
        for ev in events.iter().filter(|e| e.token == Token(2)) {
            assert!(ev.ready.contains(Ready::IN));
            loop {
                match (&s).read(&mut buf) {
                    Ok(n) => got += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("{e}"),
                }
            }
        }
    }
    assert_eq!(got, queued);
}

#[test]
fn many_streams_echo_through_one_poller() {
    const N: usize = 40;
    let l = listener();
    let addr = l.local_addr().unwrap();
    let server = thread::spawn(move || {
        // Server: accept and echo everything with one poller, non-blocking.
        let poller = Poller::new();
        poller.add(&l, Token(usize::MAX), Ready::IN).unwrap();
        l.set_nonblocking(true).unwrap();
        let mut conns: HashMap<usize, UdtStream> = HashMap::new();
        let mut done = 0;
        let mut events = Vec::new();
        let mut buf = vec![0u8; 4096];
        while done < N {
            wait(&poller, &mut events);
            for ev in events.clone() {
                if ev.token == Token(usize::MAX) {
                    while let Ok((s, _)) = l.accept() {
                        s.set_nonblocking(true).unwrap();
                        let k = conns.len();
                        poller.add(&s, Token(k), Ready::IN).unwrap();
                        conns.insert(k, s);
                    }
                    continue;
                }
                let s = &conns[&ev.token.0];
                loop {
                    match (&*s).read(&mut buf) {
                        Ok(0) => {
                            poller.remove(ev.token).unwrap();
                            done += 1;
                            break;
                        }
                        Ok(n) => {
                            s.set_send_blocking(true);
                            (&*s).write_all(&buf[..n]).unwrap();
                            s.set_send_blocking(false);
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(e) => panic!("{e}"),
                    }
                }
            }
        }
        assert!(poller.is_empty() || poller.len() == 1);
    });
    let clients: Vec<_> = (0..N)
        .map(|i| {
            thread::spawn(move || {
                let mut c = UdtStream::connect(addr).unwrap();
                c.set_read_timeout(Some(PATIENCE)).unwrap();
                let msg = format!("hello from client {i}").repeat(10);
                c.write_all(msg.as_bytes()).unwrap();
                let mut back = vec![0u8; msg.len()];
                c.read_exact(&mut back).unwrap();
                assert_eq!(back, msg.as_bytes());
                c.close().unwrap();
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    server.join().unwrap();
}

#[test]
fn wait_times_out_and_dropped_sockets_leave() {
    let poller = Poller::new();
    let mut events = Vec::new();
    let start = Instant::now();
    assert_eq!(
        poller
            .wait(&mut events, Some(Duration::from_millis(50)))
            .unwrap(),
        0
    );
    assert!(start.elapsed() >= Duration::from_millis(50));
    let l = listener();
    poller.add(&l, Token(7), Ready::IN).unwrap();
    assert_eq!(
        poller.add(&l, Token(7), Ready::IN).unwrap_err().kind(),
        ErrorKind::AlreadyExists
    );
    assert_eq!(
        poller.remove(Token(8)).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(poller.wait(&mut events, Some(Duration::ZERO)).unwrap(), 0);
    drop(l);
    assert_eq!(poller.wait(&mut events, Some(Duration::ZERO)).unwrap(), 0);
    assert!(poller.is_empty(), "a dropped listener leaves the poller");
}

#[test]
fn failed_connect_reports_err() {
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut o = SocketOptions::default();
    o.set_recv_blocking(false)
        .set_connect_timeout(Duration::from_millis(200));
    let c = UdtStream::connect_with(silent.local_addr().unwrap(), o).unwrap();
    let poller = Poller::new();
    poller.add(&c, Token(1), Ready::OUT).unwrap();
    let mut events = Vec::new();
    wait(&poller, &mut events);
    assert!(events[0].ready.contains(Ready::ERR), "{:?}", events[0]);
    let err = (&c).write(b"x").unwrap_err();
    assert_eq!(
        udt::connection_error(&err),
        Some(ConnectionError::ConnectTimeout)
    );
}

#[test]
fn peer_close_wakes_a_waiting_poller() {
    let l = UdtListener::bind_with("127.0.0.1:0", SocketOptions::new(Mode::Message)).unwrap();
    let addr = l.local_addr().unwrap();
    let t = thread::spawn(move || {
        let (m, _) = l.accept_message().unwrap();
        thread::sleep(Duration::from_millis(100));
        m.send_msg(b"one", None, true).unwrap();
        m.close().unwrap();
    });
    let m = UdtMessageSocket::connect(addr).unwrap();
    m.set_recv_blocking(false);
    let poller = Poller::new();
    poller.add(&m, Token(3), Ready::IN).unwrap();
    let mut events = Vec::new();
    wait(&poller, &mut events);
    let mut buf = [0u8; 16];
    assert_eq!(m.recv_msg(&mut buf).unwrap(), 3);
    t.join().unwrap();
    wait(&poller, &mut events);
    assert!(
        events[0].ready.contains(Ready::IN | Ready::ERR),
        "{:?}",
        events[0]
    );
}
