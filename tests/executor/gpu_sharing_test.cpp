// Two ranks on one GPU (executor/GpuSharing.h), found on an H200 (issue 33): NCCL refused them with
// only "invalid usage". The ranks compare their GPUs through the store first, and every rank
// names the two that share one; the multi-process path itself is tested in distributed_test.cpp.
#include <gtest/gtest.h>

#include "executor/GpuSharing.h"

namespace {

TEST(GpuSharing, TwoRanksOnOneGpuAreNamedBeforeNcclRefusesThem) {
    EXPECT_FALSE(mario::exec::sharedGpuProblem({"node1/0000:00:06.0", "node1/0000:00:07.0", "node2/0000:00:06.0"}));
    const auto shared = mario::exec::sharedGpuProblem({"a/0000:00:06.0", "a/0000:00:07.0", "a/0000:00:06.0"});
    ASSERT_TRUE(shared);
    EXPECT_EQ(shared->rfind("ranks 0 and 2 both run on GPU a/0000:00:06.0, and NCCL needs a GPU of its own", 0), 0u)
        << *shared;
}

TEST(GpuSharing, TheFirstPairIsNamedWhenSeveralShare) {
    // Ranks 1 and 3 share one GPU, 2 and 4 another: the lowest second rank's pair is named.
    const auto shared = mario::exec::sharedGpuProblem({"h/0", "h/1", "h/2", "h/1", "h/2"});
    ASSERT_TRUE(shared);
    EXPECT_EQ(shared->rfind("ranks 1 and 3 both run on GPU h/1", 0), 0u) << *shared;
}

}  // namespace
