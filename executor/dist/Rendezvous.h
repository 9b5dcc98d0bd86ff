#pragma once
// How the ranks of a run find each other before they can exchange messages, in two steps:
//
// 1. exchangeAddresses: rank 0 listens on the rendezvous port (LaunchEnv::rendezvous_port); every
//    other rank connects there (retrying, since the processes start at different moments) and
//    registers its rank, its WORLD_SIZE and its mesh listening port. Rank 0 records each rank's
//    host as rank 0 sees the connection (getpeername), which is right across nodes without any
//    rank having to know its own routable address, checks the registrations and sends everyone
//    the full table -- or, on a bad registration, the one-line error, so every rank reports the
//    same cause.
// 2. connectPeers: a full mesh, one TCP connection per pair. Rank j connects to every lower
//    rank's mesh port and introduces itself with a hello; each rank accepts the connections of
//    the higher ranks in whatever order they come and files them by the hello. Connecting first
//    and accepting second cannot deadlock: the kernel completes a connection into the listener's
//    backlog before the owner calls accept.
//
// Both steps share one deadline, so TcpMesh::connect's timeout bounds the whole start-up.
#include <optional>
#include <string>
#include <vector>

#include "core/util/Result.h"
#include "executor/dist/LaunchEnv.h"
#include "executor/dist/Socket.h"

namespace mario::dist {

struct PeerAddress {
    std::string host;  // numeric IPv4 address; for rank 0, the MASTER_ADDR the others dialled
    int port = 0;      // the rank's mesh listening port
};

// The mesh address of every rank, indexed by rank. `timeoutSeconds` is the total the caller
// allowed (for messages); `deadline` is when it runs out.
Result<std::vector<PeerAddress>> exchangeAddresses(const LaunchEnv& env, int meshPort, SteadyTime deadline,
                                                   double timeoutSeconds);

// One connected socket per peer, indexed by rank (this rank's own slot stays invalid).
Result<std::vector<Socket>> connectPeers(const LaunchEnv& env, const Socket& meshListener,
                                         const std::vector<PeerAddress>& table, SteadyTime deadline,
                                         double timeoutSeconds);

}  // namespace mario::dist
