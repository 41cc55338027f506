// interop/peer.h: what udt_server and udt_client share.
//
// Both programs are thin drivers around the Debian libudt 4.11 API, used by the Rust
// interoperability tests (crates/udt-interop) and for libudt-to-libudt baselines. Once a
// connection exists they run the same transfer code, so a "server" can send and a "client"
// can receive.
//
// Data is never random: stream byte i is pattern_byte(i), and message k (0-based) is
// message_size(k) bytes long, starts with k as 8 little-endian bytes, and continues with
// message_byte(k, i). The Rust side (udt_interop::pattern) computes the same functions, so
// every byte is checked without shipping checksums around.
//
// Stream transfers also report the SHA-256 of the bytes sent / received ("sha256").
//
// Output: exactly one JSON object per line on stdout. A server first prints
// {"event":"listening","port":P}; every program ends with one result line
// {"event":"result",...,"ok":true|false}. Exit status 0 = ok, 1 = transfer failed,
// 2 = bad usage or setup error. No SIGTERM handler is installed: SIGTERM (or SIGKILL) ends the
// process at once without a UDT Shutdown, which is what the "peer vanished" tests need.
#ifndef UDT_INTEROP_PEER_H
#define UDT_INTEROP_PEER_H

#include <arpa/inet.h>
#include <sys/resource.h>
#include <udt/udt.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "sha256.h"

// ---- deterministic data ---------------------------------------------------------------

// Stream byte i: the top byte of a Fibonacci hash, so no short period hides a shifted block.
static inline uint8_t pattern_byte(uint64_t i) {
    return static_cast<uint8_t>((i * 0x9E3779B97F4A7C15ull) >> 56);
}

// Length of message k, in [8, max_msg] (the first 8 bytes carry k).
static inline int message_size(uint64_t k, int max_msg) {
    uint64_t h = ((k + 1) * 0x9E3779B97F4A7C15ull) >> 33;
    return 8 + static_cast<int>(h % static_cast<uint64_t>(max_msg - 7));
}

// Byte i (i >= 8) of message k.
static inline uint8_t message_byte(uint64_t k, uint64_t i) {
    return pattern_byte(k * 1000003ull + i);
}

// ---- options ----------------------------------------------------------------------------

struct Options {
    bool dgram = false;       // --mode dgram: SOCK_DGRAM (message mode)
    bool send = false;        // --send: this side sends; --recv (default): it receives
    long long bytes = -1;     // --bytes N: stream bytes to send / expect (-1: until close)
    double seconds = 0;       // --seconds S: stream sender sends for S seconds instead
    long long msgs = 100;     // --msgs N: messages to send / expect
    int max_msg = 10000;      // --max-msg N: largest message
    int ttl_ms = -1;          // --ttl MS: sendmsg TTL (-1: never expire)
    bool inorder = true;      // --unordered clears it
    int mss = 1500;           // --mss N: UDT_MSS
    int port = 0;             // server: --port P to listen on; client: --rendezvous LOCALPORT
    bool rendezvous = false;  // client: --rendezvous LOCALPORT
    std::string host = "127.0.0.1";  // client: --connect HOST:PORT
    int peer_port = 0;
    int timeout_ms = -1;      // --timeout-ms: UDT_RCVTIMEO/UDT_SNDTIMEO (-1: none, 4.11's default)
    long long maxbw = -1;     // --maxbw B: UDT_MAXBW, bytes/s
    int close_delay_ms = 0;   // --close-delay-ms: pause between last ack and close()
    bool bench = false;       // --bench: sender reuses one buffer, receiver skips the checks
    bool allow_drops = false; // --allow-drops: message receiver accepts expired (missing) ones
    std::string bind = "127.0.0.1";  // server: --bind ADDR to listen on
    double interval = 0;      // --interval S: stream receiver prints its bytes every S seconds
    long long sndbuf = -1;    // --sndbuf B: UDT_SNDBUF, bytes
    long long rcvbuf = -1;    // --rcvbuf B: UDT_RCVBUF, bytes
    long long udp_sndbuf = -1;  // --udp-sndbuf B: UDP_SNDBUF
    long long udp_rcvbuf = -1;  // --udp-rcvbuf B: UDP_RCVBUF
    long long fc = -1;        // --fc N: UDT_FC (flow window, packets; caps UDT_RCVBUF in 4.11)
};

[[noreturn]] static inline void usage(const char* prog, const char* why) {
    std::fprintf(stderr,
                 "%s: %s\n"
                 "usage: %s [--port P | --connect HOST:PORT [--rendezvous LOCALPORT]]\n"
                 "  [--mode stream|dgram] [--send|--recv] [--bytes N] [--seconds S]\n"
                 "  [--msgs N] [--max-msg N] [--ttl MS] [--unordered] [--mss N]\n"
                 "  [--timeout-ms MS] [--maxbw BYTES_PER_S] [--close-delay-ms MS]\n"
                 "  [--bench] [--allow-drops] [--bind ADDR] [--interval S]\n"
                 "  [--sndbuf B] [--rcvbuf B] [--udp-sndbuf B] [--udp-rcvbuf B] [--fc N]\n",
                 prog, why, prog);
    std::exit(2);
}

static inline Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(argv[0], ("missing value for " + a).c_str());
            return argv[++i];
        };
        if (a == "--mode") {
            std::string m = value();
            if (m != "stream" && m != "dgram") usage(argv[0], "mode must be stream or dgram");
            o.dgram = m == "dgram";
        } else if (a == "--send") o.send = true;
        else if (a == "--recv") o.send = false;
        else if (a == "--bytes") o.bytes = std::atoll(value().c_str());
        else if (a == "--seconds") o.seconds = std::atof(value().c_str());
        else if (a == "--msgs") o.msgs = std::atoll(value().c_str());
        else if (a == "--max-msg") o.max_msg = std::max(8, std::atoi(value().c_str()));
        else if (a == "--ttl") o.ttl_ms = std::atoi(value().c_str());
        else if (a == "--unordered") o.inorder = false;
        else if (a == "--mss") o.mss = std::atoi(value().c_str());
        else if (a == "--port") o.port = std::atoi(value().c_str());
        else if (a == "--timeout-ms") o.timeout_ms = std::atoi(value().c_str());
        else if (a == "--maxbw") o.maxbw = std::atoll(value().c_str());
        else if (a == "--close-delay-ms") o.close_delay_ms = std::atoi(value().c_str());
        else if (a == "--bench") o.bench = true;
        else if (a == "--allow-drops") o.allow_drops = true;
        else if (a == "--bind") o.bind = value();
        else if (a == "--interval") o.interval = std::atof(value().c_str());
        else if (a == "--sndbuf") o.sndbuf = std::atoll(value().c_str());
        else if (a == "--rcvbuf") o.rcvbuf = std::atoll(value().c_str());
        else if (a == "--udp-sndbuf") o.udp_sndbuf = std::atoll(value().c_str());
        else if (a == "--udp-rcvbuf") o.udp_rcvbuf = std::atoll(value().c_str());
        else if (a == "--fc") o.fc = std::atoll(value().c_str());
        else if (a == "--rendezvous") {
            o.rendezvous = true;
            o.port = std::atoi(value().c_str());
        } else if (a == "--connect") {
            std::string hp = value();
            size_t colon = hp.rfind(':');
            if (colon == std::string::npos) usage(argv[0], "--connect needs HOST:PORT");
            o.host = hp.substr(0, colon);
            o.peer_port = std::atoi(hp.c_str() + colon + 1);
        } else usage(argv[0], ("unknown option " + a).c_str());
    }
    return o;
}

// ---- helpers ----------------------------------------------------------------------------

static inline double now_s() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

static inline double cpu_s(bool user) {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const timeval& t = user ? ru.ru_utime : ru.ru_stime;
    return t.tv_sec + t.tv_usec / 1e6;
}

static inline sockaddr_in ipv4(const std::string& host, int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) {
        std::fprintf(stderr, "bad IPv4 address %s\n", host.c_str());
        std::exit(2);
    }
    return a;
}

[[noreturn]] static inline void die_udt(const char* what) {
    std::printf("{\"event\":\"result\",\"ok\":false,\"error\":\"%s: %d %s\"}\n", what,
                UDT::getlasterror_code(), UDT::getlasterror_desc());
    std::fflush(stdout);
    std::exit(2);
}

// A new socket with the options that must be set before bind/connect.
static inline UDTSOCKET make_socket(const Options& o) {
    UDTSOCKET s = UDT::socket(AF_INET, o.dgram ? SOCK_DGRAM : SOCK_STREAM, 0);
    if (s == UDT::INVALID_SOCK) die_udt("socket");
    UDT::setsockopt(s, 0, UDT_MSS, &o.mss, sizeof o.mss);
    if (o.timeout_ms > 0) {
        UDT::setsockopt(s, 0, UDT_SNDTIMEO, &o.timeout_ms, sizeof o.timeout_ms);
        // 4.11 quirk: with UDT_RCVTIMEO set, a blocking recvmsg() waits for a new-data signal
        // *before* looking at its buffer, so readable messages sit unread (and some are lost
        // when the peer's Shutdown arrives). Message receivers go without one (and read
        // non-blocking: `recvmsg_draining`).
        if (!(o.dgram && !o.send))
            UDT::setsockopt(s, 0, UDT_RCVTIMEO, &o.timeout_ms, sizeof o.timeout_ms);
    }
    if (o.maxbw > 0) UDT::setsockopt(s, 0, UDT_MAXBW, &o.maxbw, sizeof(int64_t));
    // Buffers (all int options in 4.11). UDT_FC first: 4.11 caps UDT_RCVBUF at it.
    auto set_int = [&](UDT::SOCKOPT opt, long long v) {
        if (v <= 0) return;
        int i = (int)std::min(v, (long long)0x7fffffff);
        UDT::setsockopt(s, 0, opt, &i, sizeof i);
    };
    set_int(UDT_FC, o.fc);
    set_int(UDT_SNDBUF, o.sndbuf);
    set_int(UDT_RCVBUF, o.rcvbuf);
    set_int(UDP_SNDBUF, o.udp_sndbuf);
    set_int(UDP_RCVBUF, o.udp_rcvbuf);
    return s;
}

// Wait (up to the configured timeout) until everything sent was acknowledged, so the
// sender's statistics and timing cover the whole transfer before close() destroys them.
static inline void wait_send_drained(UDTSOCKET s, const Options& o) {
    double deadline = now_s() + (o.timeout_ms > 0 ? o.timeout_ms / 1000.0 : 60.0);
    for (;;) {
        int pending = 0;
        int len = sizeof pending;
        if (UDT::getsockopt(s, 0, UDT_SNDDATA, &pending, &len) == UDT::ERROR) return;
        if (pending == 0 || now_s() > deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(o.close_delay_ms));
}

// ---- transfers --------------------------------------------------------------------------

// What a transfer did, printed as the result line.
struct Result {
    const char* role;
    bool ok = true;
    long long bytes = 0;
    long long msgs = 0;
    double seconds = 0;          // first byte queued/accepted connection .. last byte
    std::string end = "none";    // how the data phase ended (peer close, error text)
    bool peer_closed = false;    // receiver: the peer closed cleanly after the data
    long long bad_offset = -1;   // first mismatching byte / message index
    int min_size = 0, max_size = 0;
    long long out_of_order = 0;
    long long skipped = 0;       // in-order receiver: indices jumped over (k beyond the next)
    long long backwards = 0;     // in-order receiver: arrivals of an index below the next
    long long missing = 0;       // --allow-drops: messages that never arrived (TTL expired)
    std::atomic<long long> live_bytes{0};  // stream receiver: bytes so far, for --interval
    Sha256 sha;                  // stream: digest of every byte sent / received (not --bench)
    UDT::TRACEINFO perf{};
};

static inline std::string udt_error() {
    return std::to_string(UDT::getlasterror_code()) + " " + UDT::getlasterror_desc();
}

// A blocking recvmsg without 4.11's read-then-fail race. 4.11's blocking recvmsg loops
// `while (!broken && ... && 0 == (res = readMsg())) wait;` and then throws ECONNLOST if the
// connection is broken or closing, even when readMsg has just handed it a message: when the
// peer's Shutdown lands between the two (the ACK that made the last message readable wakes this
// thread microseconds before it), the message is taken out of the buffer and lost. Traced in
// session 78 (`our_expiring_messages_to_libudt`, the relay's recorder): the last message
// acknowledged, our Shutdown 29 us later, the message never returned. The non-blocking path
// looks at "broken" first and then returns what it read, so read non-blocking and sleep 1 ms
// between empty reads; once the connection broke and nothing is left, it fails with
// ECONNLOST as the blocking call did. (4.11 clears its epoll read event only on its blocking
// and broken paths, so waiting on the event between non-blocking reads could spin.)
static inline int recvmsg_draining(UDTSOCKET s, char* buf, int len) {
    bool blocking = false;
    UDT::setsockopt(s, 0, UDT_RCVSYN, &blocking, sizeof blocking);
    for (;;) {
        int n = UDT::recvmsg(s, buf, len);
        if (n != UDT::ERROR || UDT::getlasterror_code() != CUDTException::EASYNCRCV) return n;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

// Stream receiver: read until `bytes` arrived (or the peer closes when bytes < 0), checking
// every byte; then one more recv must report the peer's close.
// --interval: every S seconds (from t0), one line with the bytes received in that interval
// and the receiver's view (capacity estimate, RTT), until `stop`; then the partial rest.
static inline void print_intervals(UDTSOCKET s, const Options& o, const Result& r, double t0,
                                   const std::atomic<bool>& stop) {
    long long last = 0;
    for (int k = 1; !stop.load(); ++k) {
        double due = t0 + k * o.interval;
        while (!stop.load() && now_s() < due)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (stop.load()) break;
        long long total = r.live_bytes.load();
        UDT::TRACEINFO p{};
        UDT::perfmon(s, &p, false);
        std::printf("{\"event\":\"interval\",\"t\":%.3f,\"bytes\":%lld,"
                    "\"bandwidth_mbps\":%.3f,\"rtt_ms\":%.3f,\"loss_pkts\":%d}\n",
                    now_s() - t0, total - last, p.mbpsBandwidth, p.msRTT, p.pktRcvLossTotal);
        std::fflush(stdout);
        last = total;
    }
    // The last, partial interval, as udt perf reports it too (live_bytes is final by now).
    long long rest = r.live_bytes.load() - last;
    if (rest > 0) {
        std::printf("{\"event\":\"interval\",\"t\":%.3f,\"bytes\":%lld,\"partial\":true}\n",
                    now_s() - t0, rest);
        std::fflush(stdout);
    }
}

static inline void recv_stream(UDTSOCKET s, const Options& o, Result& r) {
    std::vector<char> buf(1 << 20);
    double t0 = now_s();
    std::atomic<bool> stop{false};
    std::thread ticker;
    if (o.interval > 0) ticker = std::thread([&] { print_intervals(s, o, r, t0, stop); });
    while (o.bytes < 0 || r.bytes < o.bytes) {
        long long want = (long long)buf.size();
        if (o.bytes >= 0) want = std::min(want, o.bytes - r.bytes);
        int n = UDT::recv(s, buf.data(), (int)want, 0);
        if (n == UDT::ERROR) {
            r.end = udt_error();
            r.peer_closed = o.bytes < 0 && UDT::getlasterror_code() != CUDTException::ETIMEOUT;
            break;
        }
        if (!o.bench) r.sha.update(buf.data(), n);
        for (int i = 0; !o.bench && i < n; ++i) {
            if ((uint8_t)buf[i] != pattern_byte(r.bytes + i) && r.bad_offset < 0) {
                r.bad_offset = r.bytes + i;
                r.ok = false;
            }
        }
        r.bytes += n;
        r.live_bytes.store(r.bytes);
    }
    r.seconds = now_s() - t0;
    stop.store(true);
    if (ticker.joinable()) ticker.join();
    UDT::perfmon(s, &r.perf);
    if (o.bytes >= 0 && r.bytes == o.bytes) {
        // The sender closes after its data: that must surface as an error on the next read.
        if (UDT::recv(s, buf.data(), 1, 0) == UDT::ERROR) {
            r.end = udt_error();
            r.peer_closed = UDT::getlasterror_code() != CUDTException::ETIMEOUT;
        } else {
            r.end = "unexpected extra data";
            r.ok = false;
        }
    }
    if (o.bytes >= 0 && r.bytes != o.bytes) r.ok = false;
}

// Stream sender: `bytes` bytes (or for `seconds`), then close (lingers until acknowledged).
static inline void send_stream(UDTSOCKET s, const Options& o, Result& r) {
    std::vector<char> buf(1 << 20);
    double t0 = now_s();
    for (;;) {
        long long want = (long long)buf.size();
        if (o.seconds > 0) {
            if (now_s() - t0 >= o.seconds) break;
        } else {
            want = std::min(want, std::max(0LL, o.bytes) - r.bytes);
            if (want == 0) break;
        }
        // --bench: the pattern of offset 0 is sent over and over (the receiver must not check).
        if (!o.bench || r.bytes == 0)
            for (long long i = 0; i < want; ++i) buf[i] = (char)pattern_byte(r.bytes + i);
        int off = 0;
        while (off < want) {
            int n = UDT::send(s, buf.data() + off, (int)(want - off), 0);
            if (n == UDT::ERROR) {
                r.end = udt_error();
                r.ok = false;
                r.seconds = now_s() - t0;
                return;
            }
            off += n;
            r.bytes += n;
        }
        if (!o.bench) r.sha.update(buf.data(), want);
    }
    wait_send_drained(s, o);
    UDT::perfmon(s, &r.perf, false);
    r.end = "sent";
    UDT::close(s);  // lingers until the peer acknowledged everything
    r.seconds = now_s() - t0;
}

// Message receiver: `msgs` messages, each checked by the index in its first 8 bytes.
static inline void recv_dgram(UDTSOCKET s, const Options& o, Result& r) {
    std::vector<char> buf(std::max(o.max_msg, 8) + 1);
    long long expect_next = 0;
    double t0 = now_s();
    while (r.msgs < o.msgs) {
        int n = recvmsg_draining(s, buf.data(), (int)buf.size());
        if (n == UDT::ERROR) {
            r.end = udt_error();
            break;
        }
        uint64_t k = 0;
        if (n >= 8) std::memcpy(&k, buf.data(), 8);  // little-endian host assumed (x86)
        bool good = n >= 8 && k < (uint64_t)o.msgs && n == message_size(k, o.max_msg);
        for (int i = 8; good && i < n; ++i) good = (uint8_t)buf[i] == message_byte(k, i);
        if (!good && r.bad_offset < 0) {
            r.bad_offset = r.msgs;
            r.ok = false;
        }
        if ((long long)k != expect_next) r.out_of_order++;
        if ((long long)k > expect_next) r.skipped += (long long)k - expect_next;
        if ((long long)k < expect_next) r.backwards++;
        expect_next = (long long)k + 1;
        r.min_size = r.msgs == 0 ? n : std::min(r.min_size, n);
        r.max_size = std::max(r.max_size, n);
        r.bytes += n;
        r.msgs++;
    }
    r.seconds = now_s() - t0;
    UDT::perfmon(s, &r.perf);
    if (r.msgs != o.msgs) r.ok = false;
    if (r.msgs == o.msgs) {
        if (recvmsg_draining(s, buf.data(), (int)buf.size()) == UDT::ERROR) {
            r.end = udt_error();
            r.peer_closed = UDT::getlasterror_code() != CUDTException::ETIMEOUT;
        } else {
            r.end = "unexpected extra message";
            r.ok = false;
        }
    }
}

// Message sender: `msgs` messages with the configured TTL and order flag, then close.
static inline void send_dgram(UDTSOCKET s, const Options& o, Result& r) {
    std::vector<char> buf(o.max_msg);
    double t0 = now_s();
    for (long long k = 0; k < o.msgs; ++k) {
        int n = message_size(k, o.max_msg);
        uint64_t k64 = k;
        std::memcpy(buf.data(), &k64, 8);
        for (int i = 8; i < n; ++i) buf[i] = (char)message_byte(k, i);
        // The last message never expires, so a receiver that tolerates drops can tell the
        // connection survived them (--allow-drops requires it).
        int ttl = k == o.msgs - 1 ? -1 : o.ttl_ms;
        if (UDT::sendmsg(s, buf.data(), n, ttl, o.inorder) == UDT::ERROR) {
            r.end = udt_error();
            r.ok = false;
            break;
        }
        r.min_size = k == 0 ? n : std::min(r.min_size, n);
        r.max_size = std::max(r.max_size, n);
        r.bytes += n;
        r.msgs++;
    }
    wait_send_drained(s, o);
    UDT::perfmon(s, &r.perf, false);
    if (r.ok) r.end = "sent";
    UDT::close(s);
    r.seconds = now_s() - t0;
}

// Message receiver with --allow-drops (the sender's TTL may expire some): read until the
// peer closes; every message that arrives must be whole and correct, none twice, and the
// last one (sent without TTL) must be among them.
static inline void recv_dgram_lossy(UDTSOCKET s, const Options& o, Result& r) {
    std::vector<char> buf(std::max(o.max_msg, 8) + 1);
    std::vector<bool> seen(o.msgs, false);
    double t0 = now_s();
    for (;;) {
        int n = recvmsg_draining(s, buf.data(), (int)buf.size());
        if (n == UDT::ERROR) {
            r.end = udt_error();
            r.peer_closed = UDT::getlasterror_code() != CUDTException::ETIMEOUT;
            break;
        }
        uint64_t k = 0;
        if (n >= 8) std::memcpy(&k, buf.data(), 8);  // little-endian host assumed (x86)
        bool good = n >= 8 && k < (uint64_t)o.msgs && n == message_size(k, o.max_msg) && !seen[k];
        for (int i = 8; good && i < n; ++i) good = (uint8_t)buf[i] == message_byte(k, i);
        if (!good) {
            if (r.bad_offset < 0) r.bad_offset = r.msgs;
            r.ok = false;
            continue;
        }
        seen[k] = true;
        r.min_size = r.msgs == 0 ? n : std::min(r.min_size, n);
        r.max_size = std::max(r.max_size, n);
        r.bytes += n;
        r.msgs++;
    }
    r.seconds = now_s() - t0;
    UDT::perfmon(s, &r.perf);
    r.missing = o.msgs - r.msgs;
    if (o.msgs == 0 || !seen[o.msgs - 1] || !r.peer_closed) r.ok = false;
}

static inline void run_transfer(UDTSOCKET s, const Options& o, Result& r) {
    if (o.dgram) {
        if (o.send) send_dgram(s, o, r);
        else if (o.allow_drops) recv_dgram_lossy(s, o, r);
        else recv_dgram(s, o, r);
    } else {
        if (o.send) send_stream(s, o, r);
        else recv_stream(s, o, r);
    }
}

static inline void print_result(const Options& o, Result& r) {
    double mbps = r.seconds > 0 ? r.bytes * 8.0 / r.seconds / 1e6 : 0;
    std::printf(
        "{\"event\":\"result\",\"role\":\"%s\",\"mode\":\"%s\",\"dir\":\"%s\",\"ok\":%s,"
        "\"bytes\":%lld,\"msgs\":%lld,\"seconds\":%.6f,\"mbps\":%.1f,\"peer_closed\":%s,"
        "\"bad_offset\":%lld,\"min_size\":%d,\"max_size\":%d,\"out_of_order\":%lld,"
        "\"skipped\":%lld,\"backwards\":%lld,\"missing\":%lld,"
        "\"cpu_user\":%.3f,\"cpu_sys\":%.3f,\"retrans\":%d,\"sent_pkts\":%lld,"
        "\"recv_pkts\":%lld,\"rtt_ms\":%.3f,\"bandwidth_mbps\":%.3f,\"loss_pkts\":%lld,"
        "\"sha256\":\"%s\",\"end\":\"%s\"}\n",
        r.role, o.dgram ? "dgram" : "stream", o.send ? "send" : "recv", r.ok ? "true" : "false",
        r.bytes, r.msgs, r.seconds, mbps, r.peer_closed ? "true" : "false", r.bad_offset,
        r.min_size, r.max_size, r.out_of_order, r.skipped, r.backwards, r.missing, cpu_s(true),
        cpu_s(false),
        r.perf.pktRetransTotal, (long long)r.perf.pktSentTotal, (long long)r.perf.pktRecvTotal,
        r.perf.msRTT, r.perf.mbpsBandwidth,
        (long long)(o.send ? r.perf.pktSndLossTotal : r.perf.pktRcvLossTotal),
        o.dgram || o.bench ? "" : r.sha.hex().c_str(), r.end.c_str());
    std::fflush(stdout);
}

#endif
