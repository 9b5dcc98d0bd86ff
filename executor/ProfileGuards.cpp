#include "executor/ProfileGuards.h"

#include <algorithm>
#include <cstdio>

#include "executor/MemoryLimits.h"
#include "executor/RunMemoryEstimate.h"
#include "executor/ThreadBudget.h"

namespace mario::exec {
namespace {

std::string duration(double seconds) {
    char text[48];
    if (seconds < 120) std::snprintf(text, sizeof text, "%.0f s", seconds);
    else if (seconds < 7200) std::snprintf(text, sizeof text, "%.0f min", seconds / 60);
    else std::snprintf(text, sizeof text, "%.3g h", seconds / 3600);
    return text;
}

}  // namespace

std::optional<std::string> profileRefusal(const ProfileOptions& options, std::optional<int> gpu) {
    if (options.max_blocks > kMaxProfileBlocks)
        return "--max-blocks: expected an integer in [1, " + std::to_string(kMaxProfileBlocks) + "] (got " +
               std::to_string(options.max_blocks) + ")";
    const int neighbours = options.busyNeighbours();
    // The measuring thread and one per neighbour, against the same limit as a run's workers.
    if (neighbours > 0)
        if (auto refused = threadRefusal(neighbours + 1, 1, threadLimit(readMachineThreads())))
            return "--neighbours " + std::to_string(neighbours) + ": " + *refused;
    ProfileScope scope;
    scope.model = options.model;
    scope.model.layers = std::max(scope.model.layers, options.max_blocks);
    scope.max_blocks = options.max_blocks;
    scope.micro_batch_size = options.micro_batch_size;
    scope.dtype = options.dtype;
    scope.adam = options.adam;
    scope.neighbours = neighbours;
    scope.cuda = gpu.has_value();
    const RunMemoryEstimate estimate = estimateProfileMemory(scope);
    std::optional<MemoryLimit> host, device;
    if (auto limit = hostMemoryLimit()) host = *limit;
    if (gpu)
        if (auto limit = gpuMemoryLimit(*gpu)) device = *limit;
    return memoryRefusal(estimate, describe(scope.model), host, device, "the profile");
}

std::optional<std::string> profileTimeRefusal(const ProfileOptions& options, double secondsPerBlockRepeat, int cores) {
    const double k = std::max(1, options.max_blocks);
    const int neighbours = options.busyNeighbours();
    // Stages of 1..K blocks, alone and (with neighbours) again beside them, where N busy threads
    // and the measured one share the cores: (N + 1) / cores times slower once they outnumber
    // them. The embedding and the head count as a block each.
    const double beside = neighbours == 0 ? 0 : cores > 0 ? std::max(1.0, (neighbours + 1.0) / cores) : 1;
    const double blocks = k * (k + 1) / 2 * (1 + beside) + 2;
    const double seconds = secondsPerBlockRepeat * (options.repeats + 1.0) * blocks;
    if (!(seconds > kMaxProfileSeconds)) return std::nullopt;
    char probe[32];
    std::snprintf(probe, sizeof probe, "%.3g", secondsPerBlockRepeat * 1000);
    return "--max-blocks " + std::to_string(options.max_blocks) + " with --repeats " + std::to_string(options.repeats) +
           ": the profile would take about " + duration(seconds) + " (one block took " + probe + " ms a repeat; " +
           std::to_string(static_cast<long long>(blocks)) + " blocks' worth, " + std::to_string(options.repeats + 1) +
           " times each), more than the limit of " + duration(kMaxProfileSeconds) + "; lower --max-blocks or --repeats";
}

}  // namespace mario::exec
