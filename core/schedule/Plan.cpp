#include "core/schedule/Plan.h"

#include <algorithm>
#include <numeric>

namespace mario {

int Plan::microbatchCount() const {
    int count = 0;
    for (const auto& device : devices)
        for (const auto& instruction : device.program) count = std::max(count, instruction.microbatch + 1);
    return count;
}

std::size_t Plan::instructionCount() const {
    std::size_t total = 0;
    for (const auto& device : devices) total += device.program.size();
    return total;
}

std::vector<std::vector<int>> Plan::chains() const {
    if (!pipelines.empty()) return pipelines;
    std::vector<int> chain(stages.size());
    std::iota(chain.begin(), chain.end(), 0);
    return {chain};
}

}  // namespace mario
