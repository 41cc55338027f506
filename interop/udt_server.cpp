// udt_server: accept one libudt 4.11 connection (on 127.0.0.1, or --bind ADDR) and run one
// transfer.
//
//   udt_server [--port P] [--mode stream|dgram] [--send|--recv] [--bytes N | --seconds S]
//              [--msgs N] [--max-msg N] [--ttl MS] [--unordered] [--mss N] [--timeout-ms MS]
//              [--bind ADDR] [--interval S] [--sndbuf B] [--rcvbuf B] [--fc N] ...
//
// Prints {"event":"listening","port":P} once listening (P is the real port when --port 0 or
// no --port was given), then one result line; see peer.h for the data pattern and output.
#include "peer.h"

int main(int argc, char** argv) {
    Options o = parse_options(argc, argv);
    UDT::startup();
    UDTSOCKET listener = make_socket(o);
    sockaddr_in addr = ipv4(o.bind, o.port);
    if (UDT::bind(listener, (sockaddr*)&addr, sizeof addr) == UDT::ERROR) die_udt("bind");
    if (UDT::listen(listener, 4) == UDT::ERROR) die_udt("listen");
    sockaddr_in bound{};
    int len = sizeof bound;
    UDT::getsockname(listener, (sockaddr*)&bound, &len);
    std::printf("{\"event\":\"listening\",\"port\":%d}\n", ntohs(bound.sin_port));
    std::fflush(stdout);

    sockaddr_in peer{};
    int peer_len = sizeof peer;
    UDTSOCKET s = UDT::accept(listener, (sockaddr*)&peer, &peer_len);
    if (s == UDT::INVALID_SOCK) die_udt("accept");
    Result r;
    r.role = "server";
    run_transfer(s, o, r);
    print_result(o, r);
    UDT::close(s);
    UDT::close(listener);
    UDT::cleanup();
    return r.ok ? 0 : 1;
}
