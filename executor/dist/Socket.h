#pragma once
// A TCP socket that closes itself, and the few blocking operations the mesh needs, each bounded
// by a deadline where a silent peer could otherwise hang a rank forever. IPv4 only: MASTER_ADDR
// is an IPv4 address or a host name on every cluster the launch scripts target, and one address
// family keeps "listen on all interfaces" a single socket.
#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "core/util/Result.h"

namespace mario::dist {

using SteadyClock = std::chrono::steady_clock;
using SteadyTime = SteadyClock::time_point;

// now + seconds, clamped so that "wait forever" (1e300, infinity) cannot overflow the clock.
SteadyTime deadlineAfter(double seconds);
// "30", "0.3", "2.5": how timeouts appear in messages, as the user wrote them.
std::string formatSeconds(double seconds);

class Socket {
public:
    // How a bounded read ended. `Closed` is an orderly end of stream (the peer closed or shut
    // down its side); `bytesRead` then tells a clean end between messages (0) from a cut one.
    struct ReadOutcome {
        enum class Kind { Done, Closed, Failed, TimedOut } kind = Kind::Done;
        std::size_t bytesRead = 0;
        std::string error;  // strerror text when Failed
    };

    Socket() = default;
    explicit Socket(int fd) : fd_(fd) {}
    ~Socket();
    Socket(Socket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    Socket& operator=(Socket&& other) noexcept;
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;

    bool valid() const { return fd_ >= 0; }
    int fd() const { return fd_; }

    // Listens on all IPv4 interfaces; port 0 picks an ephemeral one (see localPort). SO_REUSEADDR
    // so that a rerun right after a failed run is not refused by the old run's TIME_WAIT sockets.
    static Result<Socket> listenOn(int port);
    // One connection attempt to host:port, given up at `deadline` (a non-blocking connect, since
    // a blocking one to an unreachable host waits for the kernel's SYN retries, minutes). The
    // error is the bare system text ("Connection refused"): callers retry and word the message.
    static Result<Socket> connectTo(const std::string& host, int port, SteadyTime deadline);

    // The next pending connection, or std::nullopt once `deadline` passes.
    Result<std::optional<Socket>> acceptUntil(SteadyTime deadline) const;

    int localPort() const;
    // The numeric address of the other end as this host sees it: what rank 0 tells the others,
    // so a rank's address is right even on a node whose own idea of its host name is not.
    std::string peerHost() const;

    // TCP_NODELAY (messages are latency-bound pipeline hand-offs, Nagle would add up to 40 ms)
    // and keepalive probes, so that a peer whose machine vanished without a FIN is noticed.
    void tuneForMessages() const;

    // Writes all bytes of all parts (one sendmsg while it can, so header and payload leave
    // together), retrying partial writes and EINTR; MSG_NOSIGNAL, so a dead peer is an error
    // here and never a SIGPIPE that kills the process.
    Result<bool> writeAll(std::span<const std::span<const std::byte>> parts) const;
    // Reads exactly size bytes unless the stream ends, fails or (with a deadline) time runs out.
    ReadOutcome readExact(void* data, std::size_t size, std::optional<SteadyTime> deadline) const;

    // Ends both directions without closing the descriptor: the peer sees end of stream at once,
    // and a thread blocked reading this socket returns, while the descriptor number stays ours
    // (closing it under a running reader could hand the number to an unrelated new file).
    void shutdownBoth() const;

private:
    int fd_ = -1;
};

}  // namespace mario::dist
