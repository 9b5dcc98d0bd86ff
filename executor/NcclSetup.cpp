#include "executor/NcclSetup.h"

#include <algorithm>
#include <stdexcept>

#include "core/model/RankLayout.h"

namespace mario::exec {

NcclSetup makeNcclSetup(const NcclRankInputs& inputs, dist::TcpMesh& mesh, const dist::PeerWatch& watch) {
    NcclSetup setup;
    const int replicas = inputs.replicas;
    const int replica = placeOf(inputs.rank, 1, replicas).replica;
    setup.rank = inputs.rank;
    setup.device = inputs.device;
    setup.rankOfDevice = [replicas, replica](int device) { return rankOf({device, replica, 0}, 1, replicas); };
    setup.topology = inputs.topology;
    setup.links = inputs.links;
    for (const auto& [key, ranks] : *inputs.groups) setup.reduceGroups.push_back({key, ranks});
    for (int r = 0; r < replicas; ++r)
        for (auto [from, to] : inputs.links->links())
            setup.linkRanks.push_back({rankOf({from, r, 0}, 1, replicas), rankOf({to, r, 0}, 1, replicas)});
    setup.messageShape = inputs.messageShape;
    setup.cudaDevice = inputs.localRank;
    setup.dtype = inputs.dtype;
    setup.timeout_s = inputs.timeout_s;
    const double timeout = std::max(60.0, inputs.timeout_s);
    setup.broadcast = [&mesh, timeout](std::vector<std::byte> bytes) {
        auto got = mesh.broadcast(std::move(bytes), timeout);
        if (!got) throw std::runtime_error(got.error().message);
        return *got;
    };
    setup.peerFailure = watch.hook();
    return setup;
}

std::optional<std::string> watchdogVerdict(const WatchdogObservation& seen) {
    if (seen.peerFailure) return seen.peerFailure;
    const std::string me = "rank " + std::to_string(seen.rank) + ": ";
    if (seen.oldestInFlight_s && *seen.oldestInFlight_s > seen.timeout_s)
        return me + seen.oldestWhat + " did not finish within " + std::to_string(static_cast<int>(seen.timeout_s)) +
               " s (its peer never matched it)";
    if (seen.ncclError) return me + "NCCL reported " + *seen.ncclError;
    return std::nullopt;
}

}  // namespace mario::exec
