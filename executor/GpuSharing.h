#pragma once
// Two ranks on one GPU: NCCL refuses them with only "invalid usage" (seen on an H200, issue 33),
// so the ranks of a CUDA run compare their GPUs through the run's store first (RankStore.h) and
// every rank names the two that share one. Torch-free, so the rule is tested on every machine.
#include <optional>
#include <string>
#include <vector>

namespace mario::exec {

// `gpuOfRank[r]` is rank r's "host/PCI bus id" (CommGroups.h gpuIdentity); why the ranks cannot
// form NCCL groups, or nullopt.
std::optional<std::string> sharedGpuProblem(const std::vector<std::string>& gpuOfRank);

}  // namespace mario::exec
