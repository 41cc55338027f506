// udt_client: connect to a UDT peer with libudt 4.11 and run one transfer.
//
//   udt_client --connect HOST:PORT [--rendezvous LOCALPORT] [--mode stream|dgram]
//              [--send|--recv] [--bytes N | --seconds S] [--msgs N] [--max-msg N] [--ttl MS]
//              [--unordered] [--mss N] [--timeout-ms MS] [--maxbw BYTES_PER_S]
//
// With --rendezvous the socket binds 127.0.0.1:LOCALPORT and connects in rendezvous mode (the
// peer must connect back to that port). Prints {"event":"connected","seconds":T} when the
// handshake is done, then one result line; see peer.h for the data pattern and output.
#include "peer.h"

int main(int argc, char** argv) {
    Options o = parse_options(argc, argv);
    if (o.peer_port == 0) usage(argv[0], "--connect HOST:PORT is required");
    UDT::startup();
    UDTSOCKET s = make_socket(o);
    if (o.rendezvous) {
        bool on = true;
        UDT::setsockopt(s, 0, UDT_RENDEZVOUS, &on, sizeof on);
        sockaddr_in local = ipv4("127.0.0.1", o.port);
        if (UDT::bind(s, (sockaddr*)&local, sizeof local) == UDT::ERROR) die_udt("bind");
    }
    sockaddr_in peer = ipv4(o.host, o.peer_port);
    double t0 = now_s();
    if (UDT::connect(s, (sockaddr*)&peer, sizeof peer) == UDT::ERROR) die_udt("connect");
    std::printf("{\"event\":\"connected\",\"seconds\":%.6f}\n", now_s() - t0);
    std::fflush(stdout);
    Result r;
    r.role = "client";
    run_transfer(s, o, r);
    print_result(o, r);
    UDT::close(s);
    UDT::cleanup();
    return r.ok ? 0 : 1;
}
