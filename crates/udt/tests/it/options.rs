//! Socket options: UDT4 defaults, range errors, options changed while connected, and the
//! options that shape the UDP port.

use std::io::{ErrorKind, Read, Write};
use std::net::UdpSocket;
use std::thread;
use std::time::{Duration, Instant};

use udt::{
    ConfigError, Mode, OptionError, SocketOptions, State, UdtListener, UdtMessageSocket, UdtStream,
};

use udt_proto::congestion::ControllerFactory;

use super::{listener, PATIENCE};

/// A connected pair over loopback with the given options on both sides.
fn pair_with(opts: &SocketOptions) -> (UdtStream, UdtStream) {
    let l = UdtListener::bind_with("127.0.0.1:0", opts.clone()).unwrap();
    let addr = l.local_addr().unwrap();
    let t = thread::spawn(move || l.accept().unwrap().0);
    let c = UdtStream::connect_with(addr, opts.clone()).unwrap();
    (c, t.join().unwrap())
}

#[test]
fn defaults_are_udt4s() {
    let o = SocketOptions::default();
    assert_eq!(o.mode(), Mode::Stream);
    assert_eq!(o.mss(), 1500);
    assert!(o.send_blocking());
    assert!(o.recv_blocking());
    let native = udt_proto::congestion::NativeFactory::default();
    assert_eq!(o.controller().name(), native.name());
    assert_eq!(o.flow_window(), 25_600);
    assert_eq!(o.send_buffer(), 12_058_624);
    assert_eq!(o.recv_buffer(), 12_058_624);
    assert_eq!(o.linger(), Some(Duration::from_secs(180)));
    assert_eq!(o.udp_send_buffer(), None);
    assert_eq!(o.udp_recv_buffer(), None);
    assert!(!o.rendezvous());
    assert_eq!(o.send_timeout(), None);
    assert_eq!(o.recv_timeout(), None);
    assert!(o.reuse_addr());
    assert_eq!(o.max_bandwidth(), None);
}

#[test]
fn out_of_range_values_name_the_allowed_range() {
    let mut o = SocketOptions::default();
    let e = o.set_mss(20).unwrap_err();
    assert_eq!(
        e.to_string(),
        "UDT_MSS = 20 is out of range: allowed 76..=65535"
    );
    assert!(matches!(
        e,
        OptionError::OutOfRange(ConfigError::OutOfRange { min: 76, .. })
    ));
    let e = o.set_flow_window(0).unwrap_err();
    assert!(
        e.to_string().starts_with("UDT_FC = 0 is out of range"),
        "{e}"
    );
    let e = o.set_send_buffer(u64::MAX).unwrap_err();
    assert!(e.to_string().starts_with("UDT_SNDBUF"), "{e}");
    let e = o.set_recv_buffer(u64::MAX).unwrap_err();
    assert!(e.to_string().starts_with("UDT_RCVBUF"), "{e}");
    let e = o.set_udp_send_buffer(Some(100)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "UDP_SNDBUF = 100 is out of range: allowed 1500..=2147483647"
    );
    assert!(o.set_udp_recv_buffer(Some(1000)).is_err());
    assert_eq!(
        o.set_recv_timeout(Some(Duration::ZERO)).unwrap_err(),
        OptionError::ZeroTimeout("UDT_RCVTIMEO")
    );
    assert!(o.set_send_timeout(Some(Duration::ZERO)).is_err());
    // A failed set leaves the old value.
    assert_eq!(o.mss(), 1500);
    // An option error is an InvalidInput io::Error carrying the OptionError.
    let io: std::io::Error = o.set_mss(10).unwrap_err().into();
    assert_eq!(io.kind(), ErrorKind::InvalidInput);
    assert!(io
        .get_ref()
        .unwrap()
        .downcast_ref::<OptionError>()
        .is_some());
}

#[test]
fn mss_cannot_exceed_the_udp_buffers() {
    let mut o = SocketOptions::default();
    o.set_udp_send_buffer(Some(4000)).unwrap();
    let e = o.set_mss(9000).unwrap_err();
    assert!(e.to_string().contains("allowed 76..=4000"), "{e}");
    o.set_mss(1400).unwrap();
}

#[test]
fn buffers_follow_the_mss_like_udt4() {
    let mut o = SocketOptions::default();
    o.set_mss(1028).unwrap();
    o.set_send_buffer(1000 * 100).unwrap();
    assert_eq!(o.send_buffer(), 100_000);
    o.set_recv_buffer(10).unwrap();
    assert_eq!(o.recv_buffer(), 32 * 1000, "at least 32 packets");
    o.set_flow_window(5).unwrap();
    assert_eq!(o.flow_window(), 32, "4.11 raises UDT_FC below 32 to 32");
}

#[test]
fn small_mss_and_buffers_carry_data() {
    let mut o = SocketOptions::default();
    o.set_mss(576)
        .unwrap()
        .set_send_buffer(64 * 548)
        .unwrap()
        .set_recv_buffer(64 * 548)
        .unwrap()
        .set_flow_window(64)
        .unwrap()
        .set_udp_send_buffer(Some(256 << 10))
        .unwrap()
        .set_udp_recv_buffer(Some(256 << 10))
        .unwrap();
    let (mut c, mut s) = pair_with(&o);
    assert_eq!(c.path_stats().mss, 576);
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    let expect = data.clone();
    let t = thread::spawn(move || {
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        got
    });
    c.write_all(&data).unwrap();
    c.close().unwrap();
    assert_eq!(t.join().unwrap(), expect);
}

#[test]
fn timeouts_and_blocking_modes_are_inherited_from_the_listener() {
    let mut o = SocketOptions::default();
    o.set_recv_timeout(Some(Duration::from_millis(40)))
        .unwrap()
        .set_send_timeout(Some(Duration::from_secs(7)))
        .unwrap()
        .set_send_blocking(false);
    let (c, s) = pair_with(&o);
    for sock in [&c, &s] {
        assert_eq!(sock.read_timeout(), Some(Duration::from_millis(40)));
        assert_eq!(sock.write_timeout(), Some(Duration::from_secs(7)));
        assert!(!sock.send_blocking());
        assert!(sock.recv_blocking());
    }
    let err = (&s).read(&mut [0u8; 8]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
}

#[test]
fn max_bandwidth_caps_the_rate_and_changes_while_connected() {
    let mut o = SocketOptions::default();
    o.set_max_bandwidth(Some(2_000_000));
    let (mut c, mut s) = pair_with(&o);
    assert_eq!(c.max_bandwidth(), Some(2_000_000));
    let reader = thread::spawn(move || {
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        let mut n = 0u64;
        let mut buf = vec![0u8; 65536];
        loop {
            match s.read(&mut buf).unwrap() {
                0 => return n,
                k => n += k as u64,
            }
        }
    });
    // 1 MB at 2 MB/s takes ~0.5 s.
    let start = Instant::now();
    c.write_all(&vec![1u8; 1_000_000]).unwrap();
    c.flush().unwrap();
    let capped = start.elapsed();
    assert!(
        capped >= Duration::from_millis(350),
        "capped transfer took {capped:?}"
    );
    // Lift the cap: the next megabyte goes much faster.
    c.set_max_bandwidth(None);
    assert_eq!(c.max_bandwidth(), None);
    let start = Instant::now();
    c.write_all(&vec![2u8; 1_000_000]).unwrap();
    c.flush().unwrap();
    let free = start.elapsed();
    println!("capped {capped:?}, uncapped {free:?}");
    assert!(free < capped, "uncapped {free:?} vs capped {capped:?}");
    c.close().unwrap();
    assert_eq!(reader.join().unwrap(), 2_000_000);
}

#[test]
fn linger_off_closes_at_once_and_discards_unsent_data() {
    let mut o = SocketOptions::default();
    o.set_max_bandwidth(Some(100_000));
    let (mut c, s) = pair_with(&o);
    c.set_linger(None);
    assert_eq!(c.linger(), None);
    c.write_all(&vec![0u8; 500_000]).unwrap();
    let start = Instant::now();
    c.close().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut got = Vec::new();
    (&s).read_to_end(&mut got).unwrap();
    assert!(
        got.len() < 500_000,
        "unsent data was discarded ({} arrived)",
        got.len()
    );
}

#[test]
fn linger_timeout_gives_timed_out() {
    let mut o = SocketOptions::default();
    o.set_max_bandwidth(Some(100_000))
        .set_linger(Some(Duration::from_millis(200)));
    let (mut c, _s) = pair_with(&o);
    c.write_all(&vec![0u8; 1_000_000]).unwrap();
    let err = c.close().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
    assert_eq!(
        udt::connection_error(&err),
        Some(udt::ConnectionError::LingerTimeout)
    );
}

#[test]
fn reuse_addr_off_refuses_a_second_bind() {
    let mut o = SocketOptions::default();
    o.set_reuse_addr(false);
    let l = UdtListener::bind_with("127.0.0.1:0", o.clone()).unwrap();
    let addr = l.local_addr().unwrap();
    let err = UdtListener::bind_with(addr, o).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AddrInUse, "{err}");
    drop(l);
    // A plain UDP socket with SO_REUSEADDR off also conflicts while the listener lives.
    let l2 = listener();
    assert!(UdpSocket::bind(l2.local_addr().unwrap()).is_err());
}

#[test]
fn rendezvous_option_on_a_listener_is_refused() {
    let mut o = SocketOptions::default();
    o.set_rendezvous(true);
    let err = UdtListener::bind_with("127.0.0.1:0", o).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}

#[test]
fn message_options_need_a_message_socket() {
    let err =
        UdtStream::connect_with("127.0.0.1:9", SocketOptions::new(Mode::Message)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let err = UdtMessageSocket::connect_with("127.0.0.1:9", SocketOptions::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}

#[test]
fn read_only_options_report_state_and_buffers() {
    let mut o = SocketOptions::default();
    o.set_max_bandwidth(Some(50_000));
    let (mut c, s) = pair_with(&o);
    assert_eq!(c.state(), State::Connected);
    assert_eq!(c.send_data_pkts(), 0);
    c.write_all(&vec![3u8; 20 * 1456]).unwrap();
    assert!(c.send_data_pkts() > 0, "data pending in the send buffer");
    let start = Instant::now();
    while s.recv_data_pkts() == 0 {
        assert!(start.elapsed() < PATIENCE);
        thread::sleep(Duration::from_millis(5));
    }
    assert!(s.events().contains(udt::Ready::IN));
    c.set_linger(None);
    c.shutdown().unwrap();
    assert_ne!(c.state(), State::Connected);
}

#[test]
fn generic_options_follow_udt4_rules() {
    use udt::{OptValue, UdtOpt};
    assert_eq!(UdtOpt::ALL.len(), 21);
    for (i, opt) in UdtOpt::ALL.iter().enumerate() {
        assert_eq!(opt.number(), i as i32);
        assert_eq!(UdtOpt::from_number(i as i32), Some(*opt));
    }
    assert_eq!(UdtOpt::RcvData.name(), "UDT_RCVDATA");
    assert_eq!(UdtOpt::from_number(21), None);

    let mut o = SocketOptions::default();
    o.set(UdtOpt::Mss, OptValue::Int(1400))
        .unwrap()
        .set(UdtOpt::RcvTimeo, OptValue::Int(250))
        .unwrap()
        .set(UdtOpt::SndTimeo, OptValue::Int(-1))
        .unwrap()
        .set(UdtOpt::MaxBw, OptValue::Int(-1))
        .unwrap();
    assert_eq!(o.mss(), 1400);
    assert_eq!(o.recv_timeout(), Some(Duration::from_millis(250)));
    assert_eq!(
        o.set(UdtOpt::Mss, OptValue::Bool(true)).unwrap_err(),
        OptionError::WrongType("UDT_MSS", "Int")
    );
    assert_eq!(
        o.set(UdtOpt::MaxMsg, OptValue::Int(1)).unwrap_err(),
        OptionError::NotSettable("UDT_MAXMSG")
    );
    assert!(o.set(UdtOpt::Mss, OptValue::Int(-5)).is_err());

    let (c, _s) = pair_with(&o);
    assert_eq!(c.option(UdtOpt::Mss).unwrap(), OptValue::Int(1400));
    assert_eq!(c.option(UdtOpt::RcvTimeo).unwrap(), OptValue::Int(250));
    assert_eq!(c.option(UdtOpt::SndTimeo).unwrap(), OptValue::Int(-1));
    assert_eq!(c.option(UdtOpt::MaxBw).unwrap(), OptValue::Int(-1));
    assert_eq!(
        c.option(UdtOpt::State).unwrap(),
        OptValue::State(State::Connected)
    );
    assert_eq!(c.option(UdtOpt::Fc).unwrap(), OptValue::Int(25_600));
    assert_eq!(
        c.option(UdtOpt::RcvBuf).unwrap(),
        OptValue::Int(8192 * 1372)
    );
    assert_eq!(c.option(UdtOpt::ReuseAddr).unwrap(), OptValue::Bool(true));
    assert!(matches!(c.option(UdtOpt::UdpRcvBuf).unwrap(), OptValue::Int(n) if n > 0));
    assert!(
        matches!(c.option(UdtOpt::Event).unwrap(), OptValue::Event(e) if e.contains(udt::Ready::OUT))
    );
    assert_eq!(c.option(UdtOpt::SndData).unwrap(), OptValue::Int(0));

    // Settable while connected.
    c.set_option(UdtOpt::MaxBw, OptValue::Int(1_000_000))
        .unwrap();
    assert_eq!(c.max_bandwidth(), Some(1_000_000));
    c.set_option(UdtOpt::SndSyn, OptValue::Bool(false)).unwrap();
    assert!(!c.send_blocking());
    c.set_option(UdtOpt::Linger, OptValue::Linger(None))
        .unwrap();
    assert_eq!(c.linger(), None);
    c.set_option(UdtOpt::RcvTimeo, OptValue::Int(-1)).unwrap();
    assert_eq!(c.read_timeout(), None);
    // Too late, read-only, bad value: distinct errors, all InvalidInput.
    let too_late = |opt: UdtOpt, v: OptValue| {
        let e = c.set_option(opt, v).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        e.get_ref()
            .unwrap()
            .downcast_ref::<OptionError>()
            .unwrap()
            .clone()
    };
    for opt in UdtOpt::ALL.into_iter().filter(|o| o.before_connect_only()) {
        assert_eq!(
            too_late(opt, OptValue::Int(1)),
            OptionError::TooLate(opt.name())
        );
    }
    assert_eq!(
        too_late(UdtOpt::Mss, OptValue::Int(1400)).to_string(),
        "UDT_MSS can only be set before bind/connect"
    );
    assert_eq!(
        too_late(UdtOpt::State, OptValue::Int(1)),
        OptionError::NotSettable("UDT_STATE")
    );
    assert_eq!(
        too_late(UdtOpt::RcvTimeo, OptValue::Int(0)),
        OptionError::ZeroTimeout("UDT_RCVTIMEO")
    );
}

/// A reader that empties a small receive buffer only every 100 ms: the space each read frees
/// is advertised at once (a window update), so the sender, stopped by the flow window, never
/// waits for its retransmission timeout (at least 300 ms here). The read itself tells the
/// I/O thread; nothing else drives the receiving connection while the sender is silent
/// (without that: 3 timeouts, reads 200-300 ms apart). `model`, because UDT4's native
/// controller sizes its window from the receiver's arrival speed, which a slow reader keeps
/// low whatever the window updates do.
#[test]
fn a_slow_readers_freed_buffer_is_advertised_at_once() {
    let mut o = SocketOptions::default();
    o.set_recv_buffer(64 * 1456).unwrap();
    o.set_controller_named("model", None).unwrap();
    let (mut c, mut s) = pair_with(&o);
    let data = vec![7u8; 64 * 1456 * 6];
    let total = data.len();
    let reader = thread::spawn(move || {
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let mut got = 0;
        while got < total {
            thread::sleep(Duration::from_millis(100));
            got += s.read(&mut buf).unwrap();
        }
        got
    });
    c.write_all(&data).unwrap();
    assert_eq!(reader.join().unwrap(), total);
    let stats = c.stats();
    assert_eq!(
        stats.timeouts, 0,
        "the sender waited for its timeout: {stats:?}"
    );
}
