#include "executor/dist/Socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

namespace mario::dist {
namespace {

std::string systemError(int code) { return std::strerror(code); }

// Milliseconds left for poll(), rounded up so a deadline 0.4 ms away is not a busy spin.
int pollMillis(SteadyTime deadline) {
    const auto left = deadline - SteadyClock::now();
    if (left <= SteadyClock::duration::zero()) return 0;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    return static_cast<int>(std::min<long long>(ms, INT_MAX));
}

// Waits until fd is ready for `events` or the deadline passes; false on timeout. EINTR (a
// signal, e.g. a profiler's) just waits again with what is left.
Result<bool> waitReady(int fd, short events, SteadyTime deadline) {
    for (;;) {
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, pollMillis(deadline));
        if (n > 0) return true;
        if (n == 0) return false;
        if (errno != EINTR) return makeError(systemError(errno));
    }
}

}  // namespace

SteadyTime deadlineAfter(double seconds) {
    // About three years: far beyond any run, far below steady_clock's ±292-year range.
    constexpr double kLongest = 1e8;
    if (!(seconds > 0)) seconds = 0;  // also catches NaN
    seconds = std::min(seconds, kLongest);
    return SteadyClock::now() +
           std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(seconds));
}

std::string formatSeconds(double seconds) {
    std::ostringstream out;
    out << seconds;  // default 6 significant digits: "30", "0.3", "2.5"
    return out.str();
}

Socket::~Socket() {
    if (fd_ >= 0) ::close(fd_);
}

Socket& Socket::operator=(Socket&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = other.fd_;
        other.fd_ = -1;
    }
    return *this;
}

Result<Socket> Socket::listenOn(int port) {
    Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!s.valid()) return makeError(systemError(errno));
    const int one = 1;
    ::setsockopt(s.fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::bind(s.fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return makeError(systemError(errno));
    // SOMAXCONN: rank 0 of a big world takes world-1 mesh connections that may all arrive
    // before it calls accept; the kernel holds them in this backlog meanwhile.
    if (::listen(s.fd_, SOMAXCONN) != 0) return makeError(systemError(errno));
    return s;
}

Result<Socket> Socket::connectTo(const std::string& host, int port, SteadyTime deadline) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
        return makeError(rc == EAI_SYSTEM ? systemError(errno) : std::string(::gai_strerror(rc)));
    std::string lastError = "no IPv4 address";
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
        Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol));
        if (!s.valid()) {
            lastError = systemError(errno);
            continue;
        }
        int rc = ::connect(s.fd_, a->ai_addr, a->ai_addrlen);
        if (rc != 0 && errno != EINPROGRESS && errno != EINTR) {
            lastError = systemError(errno);
            continue;
        }
        if (rc != 0) {
            auto ready = waitReady(s.fd_, POLLOUT, deadline);
            if (!ready) {
                lastError = ready.error().message;
                continue;
            }
            if (!*ready) {
                lastError = systemError(ETIMEDOUT);
                continue;
            }
            int error = 0;
            socklen_t length = sizeof error;
            ::getsockopt(s.fd_, SOL_SOCKET, SO_ERROR, &error, &length);
            if (error != 0) {
                lastError = systemError(error);
                continue;
            }
        }
        // Blocking from here on: the reader threads block in recv, writers in sendmsg.
        ::fcntl(s.fd_, F_SETFL, ::fcntl(s.fd_, F_GETFL) & ~O_NONBLOCK);
        ::freeaddrinfo(found);
        return s;
    }
    ::freeaddrinfo(found);
    return makeError(lastError);
}

Result<std::optional<Socket>> Socket::acceptUntil(SteadyTime deadline) const {
    for (;;) {
        auto ready = waitReady(fd_, POLLIN, deadline);
        if (!ready) return ready.error();
        if (!*ready) return std::optional<Socket>();
        const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) return std::optional<Socket>(Socket(fd));
        // The connection may have been reset between poll and accept; wait for the next one.
        if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN || errno == EPROTO) continue;
        return makeError(systemError(errno));
    }
}

int Socket::localPort() const {
    sockaddr_in addr{};
    socklen_t length = sizeof addr;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &length) != 0) return 0;
    return ntohs(addr.sin_port);
}

std::string Socket::peerHost() const {
    sockaddr_in addr{};
    socklen_t length = sizeof addr;
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &length) != 0) return {};
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &addr.sin_addr, text, sizeof text);
    return text;
}

void Socket::tuneForMessages() const {
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::setsockopt(fd_, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    // First probe after 10 s of silence, then every 5 s, give up after 3: a vanished machine is
    // noticed in about 25 s instead of the kernel default of over two hours.
    const int idle = 10, interval = 5, count = 3;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    ::setsockopt(fd_, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    ::setsockopt(fd_, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

Result<bool> Socket::writeAll(std::span<const std::span<const std::byte>> parts) const {
    std::vector<iovec> iov;
    for (const auto& part : parts)
        if (!part.empty()) iov.push_back(iovec{const_cast<std::byte*>(part.data()), part.size()});
    std::size_t first = 0;  // iov[first..] is what is left to write
    while (first < iov.size()) {
        msghdr message{};
        message.msg_iov = iov.data() + first;
        message.msg_iovlen = std::min<std::size_t>(iov.size() - first, IOV_MAX);
        const ssize_t n = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return makeError(systemError(errno));
        }
        // A partial write: drop the parts that went out whole, trim the one cut in the middle.
        auto written = static_cast<std::size_t>(n);
        while (first < iov.size() && written >= iov[first].iov_len) written -= iov[first++].iov_len;
        if (first < iov.size()) {
            iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + written;
            iov[first].iov_len -= written;
        }
    }
    return true;
}

Socket::ReadOutcome Socket::readExact(void* data, std::size_t size, std::optional<SteadyTime> deadline) const {
    ReadOutcome outcome;
    auto* bytes = static_cast<char*>(data);
    while (outcome.bytesRead < size) {
        if (deadline) {
            auto ready = waitReady(fd_, POLLIN, *deadline);
            if (!ready) return {ReadOutcome::Kind::Failed, outcome.bytesRead, ready.error().message};
            if (!*ready) return {ReadOutcome::Kind::TimedOut, outcome.bytesRead, {}};
        }
        const ssize_t n = ::recv(fd_, bytes + outcome.bytesRead, size - outcome.bytesRead, 0);
        if (n > 0) {
            outcome.bytesRead += static_cast<std::size_t>(n);
        } else if (n == 0) {
            outcome.kind = ReadOutcome::Kind::Closed;
            return outcome;
        } else if (errno != EINTR) {
            return {ReadOutcome::Kind::Failed, outcome.bytesRead, systemError(errno)};
        }
    }
    return outcome;
}

void Socket::shutdownBoth() const {
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

}  // namespace mario::dist
