#include "executor/GpuSharing.h"

#include <map>

namespace mario::exec {

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

}  // namespace mario::exec
