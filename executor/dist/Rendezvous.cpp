#include "executor/dist/Rendezvous.h"

#include <algorithm>
#include <cstdint>
#include <thread>

#include "executor/dist/Wire.h"

namespace mario::dist {
namespace {

// Magic numbers open the registration, the reply and the mesh hello. A connection that does not
// start with one is a stranger (a port scanner, a health check, a stale client of an earlier
// run) and is dropped rather than allowed to fail the run.
constexpr std::uint32_t kRendezvousMagic = 0x315A524D;  // "MRZ1"
constexpr std::uint32_t kHelloMagic = 0x31534D4D;       // "MMS1"
constexpr std::size_t kRegistrationBytes = 16;          // magic, rank, world, mesh port
constexpr std::size_t kReplyHeaderBytes = 12;           // magic, status, body bytes
constexpr std::size_t kHelloBytes = 12;                 // magic, rank, world
constexpr std::uint32_t kReplyTable = 0;
constexpr std::uint32_t kReplyError = 1;
constexpr std::uint32_t kMaxReplyBytes = 64u << 20;  // a table for ~a million ranks

std::string rankName(int rank) { return "rank " + std::to_string(rank); }
std::string endpoint(const std::string& host, int port) { return host + ":" + std::to_string(port); }

// "ranks 2, 3" / "rank 2": the ranks whose slot is still empty.
template <class Slots>
std::string missingRanks(const Slots& slots, int from) {
    std::string list;
    int count = 0;
    for (int r = from; r < static_cast<int>(slots.size()); ++r) {
        if (slots[static_cast<std::size_t>(r)]) continue;
        list += (count++ ? ", " : "") + std::to_string(r);
    }
    return (count == 1 ? "rank " : "ranks ") + list;
}

std::vector<std::byte> reply(std::uint32_t status, const std::vector<std::byte>& body) {
    std::vector<std::byte> out;
    putU32(out, kRendezvousMagic);
    putU32(out, status);
    putU32(out, static_cast<std::uint32_t>(body.size()));
    out.insert(out.end(), body.begin(), body.end());
    return out;
}

Result<bool> writeBytes(const Socket& socket, const std::vector<std::byte>& bytes) {
    const std::span<const std::byte> parts[] = {bytes};
    return socket.writeAll(parts);
}

// Rank 0's side: a bad registration fails the run for everyone who registered, with one message.
Result<std::vector<PeerAddress>> host(const LaunchEnv& env, int meshPort, SteadyTime deadline, double timeout) {
    auto listener = Socket::listenOn(env.rendezvous_port);
    if (!listener)
        return makeError("rank 0 could not listen for the rendezvous on port " + std::to_string(env.rendezvous_port) +
                         ": " + listener.error().message + " (another job on this port? set MARIO_RDZV_PORT)");
    const int world = env.world_size;
    std::vector<std::optional<Socket>> members(static_cast<std::size_t>(world));
    std::vector<PeerAddress> table(static_cast<std::size_t>(world));
    table[0] = {env.master_addr, meshPort};
    members[0].emplace();  // rank 0 itself: present, no connection

    auto fail = [&](const std::string& message, const Socket* newcomer) -> Error {
        const auto bytes = reply(kReplyError, [&] {
            std::vector<std::byte> b;
            putString(b, message);
            return b;
        }());
        for (auto& member : members)
            if (member && member->valid()) (void)writeBytes(*member, bytes);
        if (newcomer) (void)writeBytes(*newcomer, bytes);
        return makeError(message);
    };
    auto timedOut = [&] {
        return fail("rank 0 waited " + formatSeconds(timeout) + " s at the rendezvous on port " +
                        std::to_string(env.rendezvous_port) + " but " + missingRanks(members, 1) + " never registered",
                    nullptr);
    };

    for (int registered = 1; registered < world;) {
        auto accepted = listener->acceptUntil(deadline);
        if (!accepted) return fail("rank 0 could not accept at the rendezvous: " + accepted.error().message, nullptr);
        if (!*accepted) return timedOut();
        Socket socket = std::move(**accepted);
        socket.tuneForMessages();
        std::byte bytes[kRegistrationBytes];
        auto read = socket.readExact(bytes, sizeof bytes, deadline);
        if (read.kind == Socket::ReadOutcome::Kind::TimedOut) return timedOut();
        if (read.kind != Socket::ReadOutcome::Kind::Done) continue;  // hung up at once: a stranger
        WireReader in(bytes);
        const auto magic = in.u32();
        const int rank = *in.i32();
        const int theirWorld = *in.i32();
        const int port = static_cast<int>(*in.u32());
        if (magic != kRendezvousMagic) continue;
        if (theirWorld != world)
            return fail(rankName(rank) + " says WORLD_SIZE=" + std::to_string(theirWorld) + " but rank 0 has " +
                            std::to_string(world),
                        &socket);
        if (rank < 0 || rank >= world)
            return fail(rankName(rank) + " registered but WORLD_SIZE=" + std::to_string(world), &socket);
        if (members[static_cast<std::size_t>(rank)]) return fail(rankName(rank) + " registered twice", &socket);
        table[static_cast<std::size_t>(rank)] = {socket.peerHost(), port};
        members[static_cast<std::size_t>(rank)] = std::move(socket);
        ++registered;
    }

    std::vector<std::byte> body;
    putU32(body, static_cast<std::uint32_t>(world));
    for (const auto& entry : table) {
        putU32(body, static_cast<std::uint32_t>(entry.port));
        putString(body, entry.host);
    }
    const auto bytes = reply(kReplyTable, body);
    for (int r = 1; r < world; ++r)
        if (auto sent = writeBytes(*members[static_cast<std::size_t>(r)], bytes); !sent)
            return makeError("rank 0 could not send the address table to rank " + std::to_string(r) + ": " +
                             sent.error().message);
    return table;
}

// Every other rank's side: dial until rank 0 answers, register, wait for the table.
Result<std::vector<PeerAddress>> join(const LaunchEnv& env, int meshPort, SteadyTime deadline, double timeout) {
    const std::string me = rankName(env.rank);
    const std::string where = endpoint(env.master_addr, env.rendezvous_port);
    auto dialled = Socket::connectTo(env.master_addr, env.rendezvous_port, deadline);
    // Back off from 10 ms to 250 ms: quick when rank 0 is a moment late, gentle when it is slow.
    // The last try is at the deadline, so "within 60 s" means a full 60 s of trying.
    for (auto pause = std::chrono::milliseconds(10); !dialled; pause = std::min(pause * 2, decltype(pause)(250))) {
        const auto now = SteadyClock::now();
        if (now >= deadline)
            return makeError(me + " could not reach the rendezvous at " + where + " within " + formatSeconds(timeout) +
                             " s: " + dialled.error().message);
        std::this_thread::sleep_for(std::min<SteadyClock::duration>(pause, deadline - now));
        dialled = Socket::connectTo(env.master_addr, env.rendezvous_port, deadline);
    }
    Socket socket = std::move(*dialled);
    socket.tuneForMessages();

    std::vector<std::byte> registration;
    putU32(registration, kRendezvousMagic);
    putI32(registration, env.rank);
    putI32(registration, env.world_size);
    putU32(registration, static_cast<std::uint32_t>(meshPort));
    if (auto sent = writeBytes(socket, registration); !sent)
        return makeError(me + " lost the rendezvous connection to " + where + ": " + sent.error().message);

    auto broken = [&](const Socket::ReadOutcome& read) -> Error {
        if (read.kind == Socket::ReadOutcome::Kind::TimedOut)
            return makeError(me + " registered at the rendezvous at " + where +
                             " but rank 0 sent no address table within " + formatSeconds(timeout) + " s");
        return makeError(me + " lost the rendezvous connection to " + where + " before rank 0 answered" +
                         (read.error.empty() ? " (did rank 0 fail?)" : ": " + read.error));
    };
    // Once registered, wait a little past our own deadline for rank 0's verdict: when ranks are
    // missing, rank 0 times out at about the same moment and its message names them, which is
    // worth more than this rank's own "no table".
    const SteadyTime verdict = deadline + std::chrono::seconds(1);
    std::byte head[kReplyHeaderBytes];
    if (auto read = socket.readExact(head, sizeof head, verdict); read.kind != Socket::ReadOutcome::Kind::Done)
        return broken(read);
    WireReader headIn(head);
    const auto magic = headIn.u32();
    const auto status = *headIn.u32();
    const auto size = *headIn.u32();
    if (magic != kRendezvousMagic || size > kMaxReplyBytes)
        return makeError(me + " got a garbled answer from the rendezvous at " + where + " (is it a Mario rank 0?)");
    std::vector<std::byte> body(size);
    if (auto read = socket.readExact(body.data(), body.size(), verdict); read.kind != Socket::ReadOutcome::Kind::Done)
        return broken(read);

    WireReader in(body);
    if (status == kReplyError) return makeError(in.string().value_or("rank 0 failed the rendezvous"));
    const auto count = in.u32();
    if (status != kReplyTable || count != static_cast<std::uint32_t>(env.world_size))
        return makeError(me + " got a garbled address table from the rendezvous at " + where);
    std::vector<PeerAddress> table(*count);
    for (auto& entry : table) {
        const auto port = in.u32();
        auto hostName = in.string();
        if (!port || !hostName) return makeError(me + " got a truncated address table from " + where);
        entry = {std::move(*hostName), static_cast<int>(*port)};
    }
    // Rank 0 is reached at the address this rank already used for the rendezvous.
    table[0].host = env.master_addr;
    return table;
}

}  // namespace

Result<std::vector<PeerAddress>> exchangeAddresses(const LaunchEnv& env, int meshPort, SteadyTime deadline,
                                                   double timeoutSeconds) {
    return env.rank == 0 ? host(env, meshPort, deadline, timeoutSeconds)
                         : join(env, meshPort, deadline, timeoutSeconds);
}

Result<std::vector<Socket>> connectPeers(const LaunchEnv& env, const Socket& meshListener,
                                         const std::vector<PeerAddress>& table, SteadyTime deadline,
                                         double timeoutSeconds) {
    const int self = env.rank;
    const int world = env.world_size;
    const std::string me = rankName(self);
    std::vector<Socket> peers(static_cast<std::size_t>(world));

    std::vector<std::byte> hello;
    putU32(hello, kHelloMagic);
    putI32(hello, self);
    putI32(hello, world);
    for (int lower = 0; lower < self; ++lower) {
        const PeerAddress& peer = table[static_cast<std::size_t>(lower)];
        auto dialled = Socket::connectTo(peer.host, peer.port, deadline);
        // Its listener has existed since before it registered, so a refusal is unusual (a
        // loaded host); retry briefly rather than fail the run on one lost SYN.
        while (!dialled && SteadyClock::now() + std::chrono::milliseconds(50) < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            dialled = Socket::connectTo(peer.host, peer.port, deadline);
        }
        if (!dialled)
            return makeError(me + " could not connect to rank " + std::to_string(lower) + " at " +
                             endpoint(peer.host, peer.port) + " within " + formatSeconds(timeoutSeconds) +
                             " s: " + dialled.error().message);
        dialled->tuneForMessages();
        if (auto sent = writeBytes(*dialled, hello); !sent)
            return makeError(me + " lost its new connection to rank " + std::to_string(lower) + ": " +
                             sent.error().message);
        peers[static_cast<std::size_t>(lower)] = std::move(*dialled);
    }

    auto timedOut = [&] {
        std::vector<bool> have(static_cast<std::size_t>(world));
        for (int r = 0; r < world; ++r) have[static_cast<std::size_t>(r)] = peers[static_cast<std::size_t>(r)].valid();
        return makeError(me + " waited " + formatSeconds(timeoutSeconds) + " s for mesh connections but " +
                         missingRanks(have, self + 1) + " never connected");
    };
    for (int accepted = 0; accepted < world - 1 - self;) {
        auto next = meshListener.acceptUntil(deadline);
        if (!next) return makeError(me + " could not accept mesh connections: " + next.error().message);
        if (!*next) return timedOut();
        Socket socket = std::move(**next);
        std::byte bytes[kHelloBytes];
        auto read = socket.readExact(bytes, sizeof bytes, deadline);
        if (read.kind == Socket::ReadOutcome::Kind::TimedOut) return timedOut();
        if (read.kind != Socket::ReadOutcome::Kind::Done) continue;
        WireReader in(bytes);
        const auto magic = in.u32();
        const int rank = *in.i32();
        const int theirWorld = *in.i32();
        if (magic != kHelloMagic) continue;
        if (theirWorld != world || rank <= self || rank >= world)
            return makeError(me + " got a mesh connection from " + rankName(rank) +
                             " of WORLD_SIZE=" + std::to_string(theirWorld) + ", which it does not expect");
        if (peers[static_cast<std::size_t>(rank)].valid())
            return makeError(rankName(rank) + " connected to " + me + " twice");
        socket.tuneForMessages();
        peers[static_cast<std::size_t>(rank)] = std::move(socket);
        ++accepted;
    }
    return peers;
}

}  // namespace mario::dist
