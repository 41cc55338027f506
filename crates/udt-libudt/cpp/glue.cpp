// The C++ face of the drop-in libudt.so.0: libudt 4.11's UDT:: functions, CUDTException and
// CCC, compiled against the system's udt.h / ccc.h so that names, class layouts and virtual
// tables are 4.11's by construction. Everything here only converts C++ types (std::set,
// std::vector, std::fstream, CPerfMon, the per-thread exception) and calls the Rust C ABI
// (udtr_*, crates/udt-libudt/src/api.rs), where the work and 4.11's checks are.

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <udt.h>
#include <ccc.h>

extern "C" {
struct udtr_trace {
    int64_t msTimeStamp, pktSentTotal, pktRecvTotal;
    int pktSndLossTotal, pktRcvLossTotal, pktRetransTotal, pktSentACKTotal, pktRecvACKTotal,
        pktSentNAKTotal, pktRecvNAKTotal;
    int64_t usSndDurationTotal, pktSent, pktRecv;
    int pktSndLoss, pktRcvLoss, pktRetrans, pktSentACK, pktRecvACK, pktSentNAK, pktRecvNAK;
    double mbpsSendRate, mbpsRecvRate;
    int64_t usSndDuration;
    double usPktSndPeriod;
    int pktFlowWindow, pktCongestionWindow, pktFlightSize;
    double msRTT, mbpsBandwidth;
    int byteAvailSndBuf, byteAvailRcvBuf;
};
typedef void (*udtr_add_fn)(void*, int);

uint64_t udtr_last_error(int* code, int* err, const char** detail);
int udtr_set_error(int code, int err);
int udtr_startup();
int udtr_cleanup();
int udtr_socket(int af, int type, int protocol);
int udtr_bind(int u, const sockaddr* name, int namelen);
int udtr_bind2(int u, int udpsock);
int udtr_listen(int u, int backlog);
int udtr_accept(int u, sockaddr* addr, int* addrlen);
int udtr_connect(int u, const sockaddr* name, int namelen);
int udtr_close(int u);
int udtr_getpeername(int u, sockaddr* name, int* namelen);
int udtr_getsockname(int u, sockaddr* name, int* namelen);
int udtr_getsockopt(int u, int level, int optname, void* optval, int* optlen);
int udtr_setsockopt(int u, int level, int optname, const void* optval, int optlen);
int udtr_send(int u, const char* buf, int len);
int udtr_recv(int u, char* buf, int len);
int udtr_sendmsg(int u, const char* buf, int len, int ttl, bool inorder);
int udtr_recvmsg(int u, char* buf, int len);
int udtr_file_check(int u, bool sending);
int udtr_send_block(int u, const char* buf, int len);
int udtr_recv_block(int u, char* buf, int len);
int64_t udtr_sendfile_path(int u, const char* path, int64_t* offset, int64_t size);
int64_t udtr_recvfile_path(int u, const char* path, int64_t* offset, int64_t size);
int udtr_select(const int* fds, const unsigned char* sets, int n, int64_t timeout_us, bool ex,
                void* read, void* write, void* except, udtr_add_fn add);
int udtr_epoll_create();
int udtr_epoll_add_usock(int eid, int u, const int* events);
int udtr_epoll_add_ssock(int eid, int s, const int* events);
int udtr_epoll_remove_usock(int eid, int u);
int udtr_epoll_remove_ssock(int eid, int s);
int udtr_epoll_wait(int eid, void* read, void* write, int64_t ms, void* sys_read, void* sys_write,
                    udtr_add_fn add);
int udtr_epoll_release(int eid);
int udtr_perfmon(int u, udtr_trace* out, bool clear);
int udtr_getsockstate(int u);
}

// ---- the per-thread error (UDT::getlasterror) ----

namespace {
thread_local CUDTException tls_error;
thread_local std::string tls_detail;    // our explanation where we depart from 4.11
thread_local uint64_t tls_generation;  // the Rust side's error generation last copied

// Bring tls_error up to date with the last error the Rust side recorded on this thread.
void sync_error() {
    int code = 0, err = 0;
    const char* detail = nullptr;
    uint64_t generation = udtr_last_error(&code, &err, &detail);
    if (generation == tls_generation) return;
    tls_generation = generation;
    // 4.11's class declares a copy constructor but no assignment; the implicit one copies
    // every member, which is what is wanted here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-copy"
    tls_error = CUDTException(code / 1000, code % 1000, err);
#pragma GCC diagnostic pop
    tls_detail = detail ? detail : "";
}

const char* minor_text(int major, int minor) {
    switch (major * 1000 + minor) {
        case 1001: return "connection time out";
        case 1002: return "connection rejected";
        case 1003: return "unable to create/configure UDP socket";
        case 1004: return "abort for security reasons";
        case 3001: return "unable to create new threads";
        case 3002: return "unable to allocate buffers";
        case 4001: return "cannot seek read position";
        case 4002: return "failure in read";
        case 4003: return "cannot seek write position";
        case 4004: return "failure in write";
        case 5001: return "Cannot do this operation on a BOUND socket";
        case 5002: return "Cannot do this operation on a CONNECTED socket";
        case 5003: return "Bad parameters";
        case 5004: return "Invalid socket ID";
        case 5005: return "Cannot do this operation on an UNBOUND socket";
        case 5006: return "Socket is not in listening state";
        case 5007: return "Listen/accept is not supported in rendezous connection setup";
        case 5008: return "Cannot call connect on UNBOUND socket in rendezvous connection setup";
        case 5009: return "This operation is not supported in SOCK_STREAM mode";
        case 5010: return "This operation is not supported in SOCK_DGRAM mode";
        case 5011: return "Another socket is already listening on the same port";
        case 5012:
            return "Message is too large to send (it must be less than the UDT send buffer size)";
        case 5013: return "Invalid epoll ID";
        case 6001: return "no buffer available for sending";
        case 6002: return "no data available for reading";
        default: return nullptr;
    }
}

// 4.11's text for a major code (major 2 has none of its own: its minors are the text).
const char* major_text(int major, int minor) {
    switch (major) {
        case 0: return "Success";
        case 1: return "Connection setup failure";
        case 2:
            return minor == 1 ? "Connection was broken"
                 : minor == 2 ? "Connection does not exist"
                              : "";
        case 3: return "System resource failure";
        case 4: return "File system failure";
        case 5: return "Operation not supported";
        case 6: return "Non-blocking call failure";
        case 7: return "The peer side has signalled an error";
        default: return "Unknown error";
    }
}

void add_to_set(void* set, int fd) { static_cast<std::set<int>*>(set)->insert(fd); }
void add_to_vector(void* vec, int fd) { static_cast<std::vector<int>*>(vec)->push_back(fd); }

// Record a file error of sendfile/recvfile (4.11 gives EWRPERM for all) with errno.
int file_error(int code) {
    udtr_set_error(code, errno);
    return UDT::ERROR;
}
}  // namespace

// ---- CUDTException ----

CUDTException::CUDTException(int major, int minor, int err)
    : m_iMajor(major), m_iMinor(minor), m_iErrno(err == -1 ? errno : err) {}

CUDTException::CUDTException(const CUDTException& e)
    : m_iMajor(e.m_iMajor), m_iMinor(e.m_iMinor), m_iErrno(e.m_iErrno) {}

CUDTException::~CUDTException() {}

const char* CUDTException::getErrorMessage() {
    m_strMsg = major_text(m_iMajor, m_iMinor);
    if (m_iMajor != 2) {
        if (const char* minor = minor_text(m_iMajor, m_iMinor)) {
            m_strMsg += ": ";
            m_strMsg += minor;
        }
    }
    if (m_iMajor != 0 && m_iErrno > 0) {
        // 4.11 appends ": " and then the system's text only if strerror_r returns 0, which
        // the GNU strerror_r (returning the text) Debian builds with never does: the
        // message ends in ": ." and the number stays in the exception. Kept as it is.
        m_strMsg += ": ";
    }
    if (this == &tls_error && !tls_detail.empty()) {
        m_strMsg += ": ";
        m_strMsg += tls_detail;
    }
    m_strMsg += ".";
    return m_strMsg.c_str();
}

int CUDTException::getErrorCode() const { return m_iMajor * 1000 + m_iMinor; }

void CUDTException::clear() {
    m_iMajor = 0;
    m_iMinor = 0;
    m_iErrno = 0;
    if (this == &tls_error) tls_detail.clear();
}

const int CUDTException::SUCCESS = 0;
const int CUDTException::ECONNSETUP = 1000;
const int CUDTException::ENOSERVER = 1001;
const int CUDTException::ECONNREJ = 1002;
const int CUDTException::ESOCKFAIL = 1003;
const int CUDTException::ESECFAIL = 1004;
const int CUDTException::ECONNFAIL = 2000;
const int CUDTException::ECONNLOST = 2001;
const int CUDTException::ENOCONN = 2002;
const int CUDTException::ERESOURCE = 3000;
const int CUDTException::ETHREAD = 3001;
const int CUDTException::ENOBUF = 3002;
const int CUDTException::EFILE = 4000;
const int CUDTException::EINVRDOFF = 4001;
const int CUDTException::ERDPERM = 4002;
const int CUDTException::EINVWROFF = 4003;
const int CUDTException::EWRPERM = 4004;
const int CUDTException::EINVOP = 5000;
const int CUDTException::EBOUNDSOCK = 5001;
const int CUDTException::ECONNSOCK = 5002;
const int CUDTException::EINVPARAM = 5003;
const int CUDTException::EINVSOCK = 5004;
const int CUDTException::EUNBOUNDSOCK = 5005;
const int CUDTException::ENOLISTEN = 5006;
const int CUDTException::ERDVNOSERV = 5007;
const int CUDTException::ERDVUNBOUND = 5008;
const int CUDTException::ESTREAMILL = 5009;
const int CUDTException::EDGRAMILL = 5010;
const int CUDTException::EDUPLISTEN = 5011;
const int CUDTException::ELARGEMSG = 5012;
const int CUDTException::EINVPOLLID = 5013;
const int CUDTException::EASYNCFAIL = 6000;
const int CUDTException::EASYNCSND = 6001;
const int CUDTException::EASYNCRCV = 6002;
const int CUDTException::ETIMEOUT = 6003;
const int CUDTException::EPEERERR = 7000;
const int CUDTException::EUNKNOWN = -1;

// ---- CCC: exported so that programs containing a CCC subclass load; UDT_CC refuses it ----

namespace {
const int32_t kSynInterval = 10000;  // UDT's SYN, microseconds
}

CCC::CCC()
    : m_iSYNInterval(kSynInterval), m_dPktSndPeriod(1.0), m_dCWndSize(16.0), m_iBandwidth(),
      m_dMaxCWndSize(), m_iMSS(), m_iSndCurrSeqNo(), m_iRcvRate(), m_iRTT(), m_pcParam(nullptr),
      m_iPSize(0), m_UDT(), m_iACKPeriod(0), m_iACKInterval(0), m_bUserDefinedRTO(false),
      m_iRTO(-1), m_PerfInfo() {}

CCC::~CCC() { delete[] m_pcParam; }

void CCC::setACKTimer(int msINT) { m_iACKPeriod = msINT > m_iSYNInterval ? m_iSYNInterval : msINT; }
void CCC::setACKInterval(int pktINT) { m_iACKInterval = pktINT; }
void CCC::setRTO(int usRTO) {
    m_bUserDefinedRTO = true;
    m_iRTO = usRTO;
}
void CCC::sendCustomMsg(CPacket&) const {}
const CPerfMon* CCC::getPerfInfo() { return &m_PerfInfo; }
void CCC::setUserParam(const char* param, int size) {
    delete[] m_pcParam;
    m_pcParam = nullptr;
    m_iPSize = 0;
    if (param == nullptr || size <= 0) return;
    m_pcParam = new char[size];
    std::memcpy(m_pcParam, param, size);
    m_iPSize = size;
}
void CCC::setMSS(int mss) { m_iMSS = mss; }
void CCC::setMaxCWndSize(int cwnd) { m_dMaxCWndSize = cwnd; }
void CCC::setBandwidth(int bw) { m_iBandwidth = bw; }
void CCC::setSndCurrSeqNo(int32_t seqno) { m_iSndCurrSeqNo = seqno; }
void CCC::setRcvRate(int rcvrate) { m_iRcvRate = rcvrate; }
void CCC::setRTT(int rtt) { m_iRTT = rtt; }

// ---- UDT:: ----

namespace UDT {

const UDTSOCKET INVALID_SOCK = -1;
const int ERROR = -1;

int startup() { return udtr_startup(); }
int cleanup() { return udtr_cleanup(); }
UDTSOCKET socket(int af, int type, int protocol) { return udtr_socket(af, type, protocol); }
int bind(UDTSOCKET u, const struct sockaddr* name, int namelen) {
    return udtr_bind(u, name, namelen);
}
int bind2(UDTSOCKET u, UDPSOCKET udpsock) { return udtr_bind2(u, udpsock); }
int listen(UDTSOCKET u, int backlog) { return udtr_listen(u, backlog); }
UDTSOCKET accept(UDTSOCKET u, struct sockaddr* addr, int* addrlen) {
    return udtr_accept(u, addr, addrlen);
}
int connect(UDTSOCKET u, const struct sockaddr* name, int namelen) {
    return udtr_connect(u, name, namelen);
}
int close(UDTSOCKET u) { return udtr_close(u); }
int getpeername(UDTSOCKET u, struct sockaddr* name, int* namelen) {
    return udtr_getpeername(u, name, namelen);
}
int getsockname(UDTSOCKET u, struct sockaddr* name, int* namelen) {
    return udtr_getsockname(u, name, namelen);
}
int getsockopt(UDTSOCKET u, int level, SOCKOPT optname, void* optval, int* optlen) {
    return udtr_getsockopt(u, level, optname, optval, optlen);
}
int setsockopt(UDTSOCKET u, int level, SOCKOPT optname, const void* optval, int optlen) {
    return udtr_setsockopt(u, level, optname, optval, optlen);
}
int send(UDTSOCKET u, const char* buf, int len, int) { return udtr_send(u, buf, len); }
int recv(UDTSOCKET u, char* buf, int len, int) { return udtr_recv(u, buf, len); }
int sendmsg(UDTSOCKET u, const char* buf, int len, int ttl, bool inorder) {
    return udtr_sendmsg(u, buf, len, ttl, inorder);
}
int recvmsg(UDTSOCKET u, char* buf, int len) { return udtr_recvmsg(u, buf, len); }

int64_t sendfile(UDTSOCKET u, std::fstream& ifs, int64_t& offset, int64_t size, int block) {
    if (udtr_file_check(u, true) < 0) return ERROR;
    if (size <= 0) return 0;
    // As in 4.11: a stream that cannot be read (not open, bad offset, or ended before
    // `size` bytes) is EWRPERM (4004) at the top of the next block; a clean end stops.
    ifs.seekg(static_cast<std::streamoff>(offset));
    const int64_t unit = block > 0 ? block : 364000;
    std::vector<char> buf(static_cast<size_t>(unit < size ? unit : size));
    int64_t left = size;
    while (left > 0) {
        if (ifs.fail()) return file_error(CUDTException::EWRPERM);
        if (ifs.eof()) break;
        const int64_t want = left < unit ? left : unit;
        ifs.read(buf.data(), static_cast<std::streamsize>(want));
        const int64_t got = ifs.gcount();
        if (got <= 0) continue;  // the checks above end the loop
        if (udtr_send_block(u, buf.data(), static_cast<int>(got)) < 0) return ERROR;
        offset += got;
        left -= got;
    }
    return size - left;
}

int64_t recvfile(UDTSOCKET u, std::fstream& ofs, int64_t& offset, int64_t size, int block) {
    if (udtr_file_check(u, false) < 0) return ERROR;
    if (size <= 0) return 0;
    ofs.seekp(static_cast<std::streamoff>(offset));
    const int64_t unit = block > 0 && block < (1 << 20) ? block : (1 << 20);
    std::vector<char> buf(static_cast<size_t>(unit < size ? unit : size));
    int64_t left = size;
    while (left > 0) {
        if (ofs.fail()) return file_error(CUDTException::EWRPERM);
        const int want = static_cast<int>(left < unit ? left : unit);
        const int got = udtr_recv_block(u, buf.data(), want);
        if (got < 0) return ERROR;
        ofs.write(buf.data(), got);
        offset += got;
        left -= got;
    }
    return size - left;
}

int64_t sendfile2(UDTSOCKET u, const char* path, int64_t* offset, int64_t size, int) {
    return udtr_sendfile_path(u, path, offset, size);
}

int64_t recvfile2(UDTSOCKET u, const char* path, int64_t* offset, int64_t size, int) {
    return udtr_recvfile_path(u, path, offset, size);
}

int select(int, UDSET* readfds, UDSET* writefds, UDSET* exceptfds, const struct timeval* timeout) {
    std::vector<int> fds;
    std::vector<unsigned char> sets;
    std::set<int> all;
    for (UDSET* s : {readfds, writefds, exceptfds})
        if (s) all.insert(s->begin(), s->end());
    for (int fd : all) {
        fds.push_back(fd);
        sets.push_back((readfds && readfds->count(fd) ? UDT_EPOLL_IN : 0) |
                       (writefds && writefds->count(fd) ? UDT_EPOLL_OUT : 0) |
                       (exceptfds && exceptfds->count(fd) ? UDT_EPOLL_ERR : 0));
    }
    const int64_t us = timeout ? int64_t(timeout->tv_sec) * 1000000 + timeout->tv_usec : -1;
    std::set<int> r, w, e;
    const int n = udtr_select(fds.data(), sets.data(), static_cast<int>(fds.size()), us, false,
                              readfds ? &r : nullptr, writefds ? &w : nullptr,
                              exceptfds ? &e : nullptr, add_to_set);
    if (n < 0) return ERROR;
    if (readfds) *readfds = r;
    if (writefds) *writefds = w;
    if (exceptfds) *exceptfds = e;
    return n;
}

int selectEx(const std::vector<UDTSOCKET>& fds, std::vector<UDTSOCKET>* readfds,
             std::vector<UDTSOCKET>* writefds, std::vector<UDTSOCKET>* exceptfds,
             int64_t msTimeOut) {
    const unsigned char bits = (readfds ? UDT_EPOLL_IN : 0) | (writefds ? UDT_EPOLL_OUT : 0) |
                               (exceptfds ? UDT_EPOLL_ERR : 0);
    std::vector<unsigned char> sets(fds.size(), bits);
    if (readfds) readfds->clear();
    if (writefds) writefds->clear();
    if (exceptfds) exceptfds->clear();
    return udtr_select(fds.data(), sets.data(), static_cast<int>(fds.size()),
                       msTimeOut >= 0 ? msTimeOut * 1000 : -1, true, readfds, writefds,
                       exceptfds, add_to_vector);
}

int epoll_create() { return udtr_epoll_create(); }
int epoll_add_usock(int eid, UDTSOCKET u, const int* events) {
    return udtr_epoll_add_usock(eid, u, events);
}
int epoll_add_ssock(int eid, SYSSOCKET s, const int* events) {
    return udtr_epoll_add_ssock(eid, s, events);
}
int epoll_remove_usock(int eid, UDTSOCKET u) { return udtr_epoll_remove_usock(eid, u); }
int epoll_remove_ssock(int eid, SYSSOCKET s) { return udtr_epoll_remove_ssock(eid, s); }

int epoll_wait(int eid, std::set<UDTSOCKET>* readfds, std::set<UDTSOCKET>* writefds,
               int64_t msTimeOut, std::set<SYSSOCKET>* lrfds, std::set<SYSSOCKET>* lwfds) {
    for (std::set<int>* s : {readfds, writefds, lrfds, lwfds})
        if (s) s->clear();
    return udtr_epoll_wait(eid, readfds, writefds, msTimeOut, lrfds, lwfds, add_to_set);
}

namespace {
// epoll_wait2's arrays: at most *num entries; *num becomes how many were written.
void copy_out(const std::set<int>& from, int* to, int* num) {
    if (!to || !num || from.empty()) return;
    int n = 0;
    for (int fd : from) {
        if (n >= *num) break;
        to[n++] = fd;
    }
    *num = n;
}
}  // namespace

int epoll_wait2(int eid, UDTSOCKET* readfds, int* rnum, UDTSOCKET* writefds, int* wnum,
                int64_t msTimeOut, SYSSOCKET* lrfds, int* lrnum, SYSSOCKET* lwfds, int* lwnum) {
    std::set<int> r, w, lr, lw;
    const int ret = epoll_wait(eid, readfds && rnum ? &r : nullptr, writefds && wnum ? &w : nullptr,
                               msTimeOut, lrfds && lrnum ? &lr : nullptr,
                               lwfds && lwnum ? &lw : nullptr);
    if (ret > 0) {
        copy_out(r, readfds, rnum);
        copy_out(w, writefds, wnum);
        copy_out(lr, lrfds, lrnum);
        copy_out(lw, lwfds, lwnum);
    }
    return ret;
}

int epoll_release(int eid) { return udtr_epoll_release(eid); }

ERRORINFO& getlasterror() {
    sync_error();
    return tls_error;
}

int getlasterror_code() { return getlasterror().getErrorCode(); }

const char* getlasterror_desc() { return getlasterror().getErrorMessage(); }

int perfmon(UDTSOCKET u, TRACEINFO* perf, bool clear) {
    if (!perf) {
        udtr_set_error(CUDTException::EINVPARAM, 0);
        return ERROR;
    }
    udtr_trace t;
    if (udtr_perfmon(u, &t, clear) < 0) return ERROR;
    perf->msTimeStamp = t.msTimeStamp;
    perf->pktSentTotal = t.pktSentTotal;
    perf->pktRecvTotal = t.pktRecvTotal;
    perf->pktSndLossTotal = t.pktSndLossTotal;
    perf->pktRcvLossTotal = t.pktRcvLossTotal;
    perf->pktRetransTotal = t.pktRetransTotal;
    perf->pktSentACKTotal = t.pktSentACKTotal;
    perf->pktRecvACKTotal = t.pktRecvACKTotal;
    perf->pktSentNAKTotal = t.pktSentNAKTotal;
    perf->pktRecvNAKTotal = t.pktRecvNAKTotal;
    perf->usSndDurationTotal = t.usSndDurationTotal;
    perf->pktSent = t.pktSent;
    perf->pktRecv = t.pktRecv;
    perf->pktSndLoss = t.pktSndLoss;
    perf->pktRcvLoss = t.pktRcvLoss;
    perf->pktRetrans = t.pktRetrans;
    perf->pktSentACK = t.pktSentACK;
    perf->pktRecvACK = t.pktRecvACK;
    perf->pktSentNAK = t.pktSentNAK;
    perf->pktRecvNAK = t.pktRecvNAK;
    perf->mbpsSendRate = t.mbpsSendRate;
    perf->mbpsRecvRate = t.mbpsRecvRate;
    perf->usSndDuration = t.usSndDuration;
    perf->usPktSndPeriod = t.usPktSndPeriod;
    perf->pktFlowWindow = t.pktFlowWindow;
    perf->pktCongestionWindow = t.pktCongestionWindow;
    perf->pktFlightSize = t.pktFlightSize;
    perf->msRTT = t.msRTT;
    perf->mbpsBandwidth = t.mbpsBandwidth;
    perf->byteAvailSndBuf = t.byteAvailSndBuf;
    perf->byteAvailRcvBuf = t.byteAvailRcvBuf;
    return 0;
}

UDTSTATUS getsockstate(UDTSOCKET u) { return static_cast<UDTSTATUS>(udtr_getsockstate(u)); }

}  // namespace UDT
