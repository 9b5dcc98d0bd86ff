#include "executor/dist/TcpMesh.h"

#include <array>
#include <stdexcept>
#include <system_error>

#include "executor/dist/Frame.h"
#include "executor/dist/Rendezvous.h"

namespace mario::dist {
namespace {

// Reserved kinds (negative: user keys must be >= 0, send() enforces it). `a` carries the
// collective's sequence number, `b` its root, so a timeout names which collective stalled.
constexpr std::int32_t kBroadcast = -1;
constexpr std::int32_t kBarrierArrive = -2;
constexpr std::int32_t kBarrierRelease = -3;
constexpr std::int32_t kGather = -4;
constexpr std::int32_t kFailureNotice = -5;  // payload: the failing rank's one-line reason

}  // namespace

Result<std::unique_ptr<TcpMesh>> TcpMesh::connect(const LaunchEnv& env, double timeout_s) {
    if (env.world_size < 1 || env.rank < 0 || env.rank >= env.world_size)
        return makeError("rank " + std::to_string(env.rank) + " is not in a world of " +
                         std::to_string(env.world_size));
    // readLaunchEnv guarantees these for a world of two or more; a hand-made LaunchEnv might not,
    // and an empty host would otherwise be retried until the timeout.
    if (env.world_size > 1 && (env.rendezvous_port < 1 || env.rendezvous_port > 65535))
        return makeError("rank " + std::to_string(env.rank) +
                         " has no rendezvous port (rendezvous_port=" + std::to_string(env.rendezvous_port) + ")");
    if (env.world_size > 1 && env.rank != 0 && env.master_addr.empty())
        return makeError("rank " + std::to_string(env.rank) + " has no MASTER_ADDR to find rank 0 at");
    // make_unique cannot reach the private constructor.
    std::unique_ptr<TcpMesh> mesh(new TcpMesh(env.rank, env.world_size));
    if (env.world_size == 1) return mesh;

    const SteadyTime deadline = deadlineAfter(timeout_s);
    const std::string me = "rank " + std::to_string(env.rank);
    // The mesh listener exists before this rank registers, so by the time any rank holds the
    // address table every listed port is accepting.
    auto listener = Socket::listenOn(0);
    if (!listener) return makeError(me + " could not open its mesh port: " + listener.error().message);
    auto table = exchangeAddresses(env, listener->localPort(), deadline, timeout_s);
    if (!table) return table.error();
    auto sockets = connectPeers(env, *listener, *table, deadline, timeout_s);
    if (!sockets) return sockets.error();

    for (int r = 0; r < env.world_size; ++r) {
        if (r == env.rank) continue;
        auto& peer = mesh->peers_[static_cast<std::size_t>(r)];
        peer = std::make_unique<Peer>();
        peer->socket = std::move((*sockets)[static_cast<std::size_t>(r)]);
    }
    try {
        mesh->startReaders();
    } catch (const std::system_error& e) {  // out of threads; the destructor joins those started
        return makeError(me + " could not start its reader threads: " + e.what());
    }
    return mesh;
}

TcpMesh::TcpMesh(int rank, int world) : rank_(rank), world_(world), mailbox_(rank, world), peers_(world) {}

TcpMesh::~TcpMesh() {
    stopping_ = true;
    // Shutdown, not close: the readers blocked in recv return at once, the peers see end of
    // stream, and the descriptors stay valid until the readers are joined.
    for (auto& peer : peers_)
        if (peer) peer->socket.shutdownBoth();
    for (auto& peer : peers_)
        if (peer && peer->reader.joinable()) peer->reader.join();
    mailbox_.abort("the mesh of rank " + std::to_string(rank_) + " was shut down");
}

void TcpMesh::startReaders() {
    for (int r = 0; r < world_; ++r)
        if (peers_[static_cast<std::size_t>(r)])
            peers_[static_cast<std::size_t>(r)]->reader = std::thread([this, r] { readLoop(r); });
}

// Runs until the peer's stream ends or breaks. Whatever ends it, the mailbox learns, so that
// waits on this peer fail at once instead of at their timeout.
void TcpMesh::readLoop(int peer) {
    const Socket& socket = peers_[static_cast<std::size_t>(peer)]->socket;
    const std::string who = "rank " + std::to_string(peer);
    using Kind = Socket::ReadOutcome::Kind;
    // Why a read ended early; "" (an orderly close) while this mesh is being torn down.
    auto cut = [&](const Socket::ReadOutcome& read, const char* where) -> std::string {
        if (stopping_) return "";
        if (read.kind == Kind::Failed) return read.error + " (did it die?)";
        return who + " closed its connection in the middle of a message's " + where;
    };
    // An exception must not leave this thread: std::thread would call std::terminate. The one
    // to expect is bad_alloc for a large (but legal) payload on a host short of memory.
    try {
        for (;;) {
            std::array<std::byte, FrameHeader::kSize> head;
            auto read = socket.readExact(head.data(), head.size(), std::nullopt);
            if (read.kind == Kind::Closed && read.bytesRead == 0) {
                mailbox_.closeSender(peer, "");  // an orderly end between messages
                return;
            }
            if (read.kind != Kind::Done) {
                mailbox_.closeSender(peer, cut(read, "header"));
                return;
            }
            auto header = FrameHeader::decode(head);
            if (!header) {
                // The stream cannot be resynchronised; end it so the peer notices too.
                mailbox_.closeSender(peer, who + " sent " + header.error().message);
                socket.shutdownBoth();
                return;
            }
            std::vector<std::byte> payload(static_cast<std::size_t>(header->payloadBytes));
            read = socket.readExact(payload.data(), payload.size(), std::nullopt);
            if (read.kind != Kind::Done) {
                mailbox_.closeSender(peer, cut(read, "payload"));
                return;
            }
            if (header->key.kind == kFailureNotice) {
                mailbox_.abort(std::string(reinterpret_cast<const char*>(payload.data()), payload.size()));
                continue;
            }
            mailbox_.deliver(peer, header->key, std::move(payload));
        }
    } catch (const std::exception& e) {
        mailbox_.closeSender(peer, "receiving from " + who + " failed: " + e.what());
        socket.shutdownBoth();
    }
}

void TcpMesh::checkPeer(int peer, const char* what) const {
    if (peer < 0 || peer >= world_)
        throw std::invalid_argument(std::string(what) + " rank " + std::to_string(peer) +
                                    ", outside WORLD_SIZE=" + std::to_string(world_));
}

void TcpMesh::send(int peer, const MessageKey& key, std::vector<std::byte> payload) {
    checkPeer(peer, "send to");
    if (key.kind < 0)
        throw std::invalid_argument("message kind " + std::to_string(key.kind) +
                                    " is reserved for the mesh's collectives (kinds must be >= 0)");
    sendFrame(peer, key, std::move(payload));
}

void TcpMesh::sendFrame(int peer, const MessageKey& key, std::vector<std::byte> payload) {
    if (peer == rank_) mailbox_.deliver(peer, key, std::move(payload));
    else writeFrame(peer, key, payload);
}

void TcpMesh::writeFrame(int peer, const MessageKey& key, std::span<const std::byte> payload) {
    Peer& target = *peers_[static_cast<std::size_t>(peer)];
    const auto head = FrameHeader{key, payload.size()}.encode();
    const std::span<const std::byte> parts[] = {head, payload};
    Result<bool> written = true;
    {
        std::lock_guard lock(target.writing);
        written = target.socket.writeAll(parts);
    }
    // A half-written frame leaves the stream unusable: end it, and let waits on this peer fail
    // with the reason (the reader, seeing the shutdown, would only report a plain close).
    if (!written) {
        mailbox_.closeSender(peer, "sending " + describe(key) + " to it failed: " + written.error().message);
        target.socket.shutdownBoth();
    }
}

Result<std::vector<std::byte>> TcpMesh::receive(int peer, const MessageKey& key, double timeout_s) {
    if (peer < 0 || peer >= world_)
        return makeError("rank " + std::to_string(rank_) + " cannot receive from rank " + std::to_string(peer) +
                         ", outside WORLD_SIZE=" + std::to_string(world_));
    return receiveUntil(peer, key, deadlineAfter(timeout_s), timeout_s);
}

Result<std::vector<std::byte>> TcpMesh::receiveUntil(int peer, const MessageKey& key, SteadyTime deadline,
                                                     double timeout_s) {
    return mailbox_.take(peer, key, deadline, timeout_s);
}

void TcpMesh::abort(std::string why) { mailbox_.abort(std::move(why)); }

void TcpMesh::reportFailure(std::string why) {
    mailbox_.abort(why);
    const auto* bytes = reinterpret_cast<const std::byte*>(why.data());
    const std::span<const std::byte> payload(bytes, why.size());
    const MessageKey key{kFailureNotice, 0, rank_, 0};
    for (int r = 0; r < world_; ++r)
        if (r != rank_ && peers_[static_cast<std::size_t>(r)]) writeFrame(r, key, payload);
}

MessageKey TcpMesh::nextCollectiveKey(std::int32_t kind, int root) {
    return MessageKey{kind, collectiveSequence_.fetch_add(1), root, 0};
}

Result<std::vector<std::byte>> TcpMesh::broadcast(std::vector<std::byte> fromRankZero, double timeout_s) {
    const MessageKey key = nextCollectiveKey(kBroadcast, 0);
    if (rank_ != 0) return receive(0, key, timeout_s);
    for (int r = 1; r < world_; ++r) writeFrame(r, key, fromRankZero);  // no copy per rank
    return fromRankZero;
}

Result<bool> TcpMesh::barrier(double timeout_s) {
    // Everyone reports to rank 0, which releases everyone once all have arrived. One deadline
    // for the whole barrier, so rank 0's world-1 waits together take at most timeout_s.
    const SteadyTime deadline = deadlineAfter(timeout_s);
    MessageKey arrive = nextCollectiveKey(kBarrierArrive, 0);
    MessageKey release = arrive;
    release.kind = kBarrierRelease;
    if (rank_ != 0) {
        sendFrame(0, arrive, {});
        auto released = receiveUntil(0, release, deadline, timeout_s);
        if (!released) return released.error();
        return true;
    }
    for (int r = 1; r < world_; ++r)
        if (auto arrived = receiveUntil(r, arrive, deadline, timeout_s); !arrived) return arrived.error();
    for (int r = 1; r < world_; ++r) sendFrame(r, release, {});
    return true;
}

Result<std::vector<std::vector<std::byte>>> TcpMesh::gather(std::vector<std::byte> mine, int root, double timeout_s) {
    if (root < 0 || root >= world_)
        return makeError("gather to rank " + std::to_string(root) + ", outside WORLD_SIZE=" + std::to_string(world_));
    const SteadyTime deadline = deadlineAfter(timeout_s);
    const MessageKey key = nextCollectiveKey(kGather, root);
    if (rank_ != root) {
        sendFrame(root, key, std::move(mine));
        return std::vector<std::vector<std::byte>>{};
    }
    std::vector<std::vector<std::byte>> all(static_cast<std::size_t>(world_));
    for (int r = 0; r < world_; ++r) {
        if (r == rank_) {
            all[static_cast<std::size_t>(r)] = std::move(mine);
            continue;
        }
        auto theirs = receiveUntil(r, key, deadline, timeout_s);
        if (!theirs) return theirs.error();
        all[static_cast<std::size_t>(r)] = std::move(*theirs);
    }
    return all;
}

}  // namespace mario::dist
