#pragma once
// How one GPU's streaming multiprocessors are cut into disjoint, equal partitions, one per
// pipeline device of a single-GPU run (`mario-executor run --partition-sms`) or per neighbour of
// a partitioned profile (`mario-executor profile --partition-sms K`); docs/gpu.md says why.
//
// The CUDA driver splits SMs only in whole groups: a partition has at least `min_partition_sms`
// and a multiple of `alignment_sms` SMs (CUdevSmResource's minSmPartitionSize and
// smCoscheduledAlignment). Equal partitions keep every emulated device equally fast, as the
// simulator assumes; the SMs that do not divide evenly stay unused. Pure and Torch-free, so the
// rules are tested without a GPU (tests/executor/sm_partition_test.cpp); GreenContexts.cpp asks
// the driver for exactly this plan.
#include <string>
#include <vector>

#include "core/util/Result.h"

namespace mario::exec {

// What the driver reports for a GPU's SMs.
struct SmResources {
    int sm_count = 0;
    int min_partition_sms = 1;  // the smallest group the driver creates
    int alignment_sms = 1;      // every group's size is a multiple of this
};

struct SmPartitionPlan {
    int partitions = 0;
    int sms_per_partition = 0;
    int unused_sms = 0;  // sm_count − partitions · sms_per_partition
};

// The rules of CUDA's driver API reference for cuDevSmResourceSplitByCount, for headers and
// drivers older than the fields that report them (CUDA 12.x): compute capability 9.0 and newer
// split in groups of 8 SMs (at least 8), older GPUs in groups of 2 (at least 2).
SmResources smRulesForComputeCapability(int major, int smCount);

// `partitions` equal groups of the largest aligned size that fits, or one line that says why
// the GPU cannot be cut that way (too few SMs for the minimum partition, no partitions).
Result<SmPartitionPlan> planSmPartitions(const SmResources& gpu, int partitions);

// What the driver created against what was planned: as many groups as planned, each of the
// planned size. The driver may round differently from the documented rules (a newer GPU, a
// changed granularity); a mismatch is an error rather than a silently uneven pipeline.
Result<bool> checkDriverSplit(const SmPartitionPlan& plan, const std::vector<int>& groupSms);

// "4 partitions of 32 SMs (4 of 132 SMs unused)", for messages and the profile's notes.
std::string describe(const SmPartitionPlan& plan);

}  // namespace mario::exec
