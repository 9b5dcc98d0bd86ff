#include "executor/RunRefusals.h"

#include <memory>

#include "core/model/RankLayout.h"
#include "core/util/HumanBytes.h"
#include "executor/MemoryLimits.h"
#include "executor/RunMemoryEstimate.h"
#include "executor/ThreadBudget.h"

namespace mario::exec {
namespace {

bool distributed(const std::optional<LaunchEnv>& launch) { return launch && launch->world_size > 1; }

// The replicas of the whole run: --dp in one process, WORLD_SIZE over the devices under torchrun.
int replicasOf(const Plan& plan, const ExecutorOptions& options, const std::optional<LaunchEnv>& launch) {
    const int devices = static_cast<int>(plan.devices.size());
    return distributed(launch) && devices > 0 ? launch->world_size / devices : options.data_parallel;
}

// What this process would hold (a rank of a multi-process run holds one device's share) against
// the host's available memory and, on CUDA, the GPU's free memory. Ranks that share a machine
// each check their own share against the same available memory.
std::optional<std::string> oversizedRun(const Plan& plan, const ExecutorOptions& options, Backend backend,
                                        const std::optional<LaunchEnv>& launch) {
    RunScope scope{options.data_parallel, std::nullopt, options.reference, backend == Backend::Cuda};
    if (distributed(launch)) {
        scope.replicas = replicasOf(plan, options, launch);
        scope.device = placeOf(launch->rank, 1, scope.replicas).device;
        scope.reference = options.reference && launch->rank == 0;
    }
    auto estimate = estimateRunMemory(plan, options, scope);
    if (!estimate) return std::nullopt;  // the runner reports the same error
    std::optional<MemoryLimit> host, gpu;
    if (auto limit = hostMemoryLimit()) host = *limit;
    else if (options.on_notice)
        options.on_notice("the run's memory (about " + humanBytes(estimate->bytes(true)) +
                          ") is not checked: " + limit.error().message);
    // Without a usable GPU the run itself says why in one line (torchDevice).
    if (scope.cuda)
        if (auto limit = gpuMemoryLimit(launch ? launch->local_rank : 0)) gpu = *limit;
    return memoryRefusal(*estimate, describe(options.model), host, gpu);
}

// Reads the token file once, bounded by what the run can use, and checks every sample it reads.
std::optional<std::string> badTokens(const Plan& plan, ExecutorOptions& options, int replicas) {
    const std::int64_t samples = runSamples(plan, replicas);
    if (!options.tokens) {
        const std::int64_t tokens = samples * (static_cast<std::int64_t>(options.model.seq) + 1);
        auto read = readTokenFile(options.tokens_file, tokenStreamBytes(options.tokens_file, tokens));
        if (!read) return "--tokens: " + read.error().message;
        options.tokens = std::make_shared<const TokenFile>(std::move(read).value());
    }
    if (auto fits = options.tokens->checkSamples(samples, options.model.seq, options.model.vocab); !fits)
        return "--tokens: " + fits.error().message;
    return std::nullopt;
}

}  // namespace

std::optional<std::string> launchRefusal(const Plan& plan, const ExecutorOptions& options,
                                         const LaunchEnv& launch) {
    if (launch.world_size <= 1) return std::nullopt;
    const int devices = static_cast<int>(plan.devices.size());
    // A plan tuned for tensor parallelism counts tp ranks per pipeline device in WORLD_SIZE;
    // read as data parallelism they would train tp replicas of the whole model instead.
    if (plan.info.tensor_parallel > 1)
        return "the plan was tuned for tensor parallelism (tp = " + std::to_string(plan.info.tensor_parallel) +
               ") and the executor has none: run it with Megatron-LM (megatron_args.txt), or tune with tp 1";
    if (devices == 0 || launch.world_size % devices != 0)
        return "WORLD_SIZE=" + std::to_string(launch.world_size) + " is not a multiple of the plan's " +
               std::to_string(devices) + " pipeline devices (the executor has no tensor parallelism)";
    const int replicas = launch.world_size / devices;
    if (options.data_parallel != 1 && options.data_parallel != replicas)
        return "--dp " + std::to_string(options.data_parallel) +
               " disagrees with WORLD_SIZE=" + std::to_string(launch.world_size) + " over " + std::to_string(devices) +
               " devices";
    return std::nullopt;
}

std::int64_t runSamples(const Plan& plan, int replicas) {
    return static_cast<std::int64_t>(replicas) * plan.microbatchCount() * std::max(1, plan.info.micro_batch_size);
}

std::optional<std::string> refuseRun(const Plan& plan, ExecutorOptions& options, Backend backend,
                                     const std::optional<LaunchEnv>& launch) {
    if (distributed(launch)) {
        if (auto refused = launchRefusal(plan, options, *launch)) return refused;
    } else if (auto refused = threadRefusal(static_cast<int>(plan.devices.size()), options.data_parallel,
                                            threadLimit(readMachineThreads()))) {
        return refused;
    }
    if (auto refused = oversizedRun(plan, options, backend, launch)) return refused;
    if (!options.tokens_file.empty() || options.tokens)
        if (auto refused = badTokens(plan, options, replicasOf(plan, options, launch))) return refused;
    return std::nullopt;
}

}  // namespace mario::exec
