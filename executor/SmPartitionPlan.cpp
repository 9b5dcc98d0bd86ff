#include "executor/SmPartitionPlan.h"

#include <algorithm>

namespace mario::exec {

SmResources smRulesForComputeCapability(int major, int smCount) {
    const int group = major >= 9 ? 8 : 2;
    return SmResources{smCount, group, group};
}

Result<SmPartitionPlan> planSmPartitions(const SmResources& gpu, int partitions) {
    if (partitions < 1)
        return makeError("an SM partition plan needs at least one partition (got " + std::to_string(partitions) + ")");
    if (gpu.sm_count < 1) return makeError("the GPU reports no SMs to partition");
    // A driver that reports 0 for either rule has none: every SM is its own group.
    const int alignment = std::max(1, gpu.alignment_sms);
    const int minimum = std::max(1, gpu.min_partition_sms);
    const int fair = gpu.sm_count / partitions;
    const int size = fair / alignment * alignment;
    if (size < minimum) {
        // The smallest group the driver would accept: the minimum, rounded up to the alignment.
        const int smallest = (minimum + alignment - 1) / alignment * alignment;
        return makeError("a GPU of " + std::to_string(gpu.sm_count) + " SMs cannot be cut into " +
                         std::to_string(partitions) + " equal partitions: the driver's smallest partition is " +
                         std::to_string(smallest) + " SMs (at least " + std::to_string(minimum) + ", in steps of " +
                         std::to_string(alignment) + "), so at most " + std::to_string(gpu.sm_count / smallest) +
                         " fit");
    }
    return SmPartitionPlan{partitions, size, gpu.sm_count - partitions * size};
}

Result<bool> checkDriverSplit(const SmPartitionPlan& plan, const std::vector<int>& groupSms) {
    if (static_cast<int>(groupSms.size()) != plan.partitions)
        return makeError("the driver made " + std::to_string(groupSms.size()) + " SM partitions of the " +
                         std::to_string(plan.partitions) + " planned (" + describe(plan) + ")");
    for (std::size_t i = 0; i < groupSms.size(); ++i)
        if (groupSms[i] != plan.sms_per_partition)
            return makeError("the driver gave SM partition " + std::to_string(i) + " " + std::to_string(groupSms[i]) +
                             " SMs, not the " + std::to_string(plan.sms_per_partition) + " planned (" + describe(plan) +
                             "); unequal partitions would make the emulated devices unequally fast");
    return true;
}

std::string describe(const SmPartitionPlan& plan) {
    const int total = plan.partitions * plan.sms_per_partition + plan.unused_sms;
    return std::to_string(plan.partitions) + (plan.partitions == 1 ? " partition" : " partitions") + " of " +
           std::to_string(plan.sms_per_partition) + " SMs (" + std::to_string(plan.unused_sms) + " of " +
           std::to_string(total) + " SMs unused)";
}

}  // namespace mario::exec
