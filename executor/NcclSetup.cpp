#include "executor/NcclSetup.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "core/model/RankLayout.h"
#include "executor/dist/Wire.h"

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
    // Gathered on rank 0, judged there once, and the verdict broadcast: every rank says the same.
    // Strings travel in the mesh's own wire format (dist/Wire.h), read back bounds-checked.
    setup.checkGpus = [&mesh, timeout](const std::string& gpu) -> std::optional<std::string> {
        auto wire = [](const std::string& text) {
            std::vector<std::byte> bytes;
            dist::putString(bytes, text);
            return bytes;
        };
        auto text = [](const std::vector<std::byte>& bytes) {
            auto read = dist::WireReader(bytes).string();
            if (!read) throw std::runtime_error("a rank sent a malformed GPU check");
            return *read;
        };
        auto gathered = mesh.gather(wire(gpu), 0, timeout);
        if (!gathered) throw std::runtime_error(gathered.error().message);
        std::string verdict;
        if (mesh.rank() == 0) {
            std::vector<std::string> gpus;
            for (const auto& bytes : *gathered) gpus.push_back(text(bytes));
            verdict = sharedGpuProblem(gpus).value_or("");
        }
        auto told = mesh.broadcast(wire(verdict), timeout);
        if (!told) throw std::runtime_error(told.error().message);
        verdict = text(*told);
        return verdict.empty() ? std::nullopt : std::optional<std::string>(verdict);
    };
    return setup;
}

std::optional<std::string> sharedGpuProblem(const std::vector<std::string>& gpuOfRank) {
    std::map<std::string, int> firstRank;
    for (int r = 0; r < static_cast<int>(gpuOfRank.size()); ++r) {
        auto [it, fresh] = firstRank.emplace(gpuOfRank[r], r);
        if (fresh) continue;
        return "ranks " + std::to_string(it->second) + " and " + std::to_string(r) + " both run on GPU " +
               gpuOfRank[r] + ", and NCCL needs a GPU of its own per rank (give each its own LOCAL_RANK, or " +
               "CUDA_VISIBLE_DEVICES; one GPU runs a whole pipeline with --backend cuda --partition-sms instead)";
    }
    return std::nullopt;
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
