// SM partition planning (executor/SmPartitionPlan.h) against hand-worked splits of real GPUs:
// an H100 SXM has 132 SMs and splits in groups of 8 (compute capability 9.0), an A100 108 SMs in
// groups of 2. The H100 measurement split 2 groups of 64 SMs, which the plan must match.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "executor/GreenContexts.h"
#include "executor/SmPartitionPlan.h"

namespace {

using mario::exec::checkDriverSplit;
using mario::exec::planSmPartitions;
using mario::exec::SmPartitionPlan;
using mario::exec::SmResources;

const SmResources kH100{132, 8, 8};
const SmResources kA100{108, 2, 2};

void expectPlan(const SmResources& gpu, int partitions, int each, int unused) {
    auto plan = planSmPartitions(gpu, partitions);
    ASSERT_TRUE(plan) << plan.error().message;
    EXPECT_EQ(plan->partitions, partitions);
    EXPECT_EQ(plan->sms_per_partition, each) << partitions << " partitions of " << gpu.sm_count;
    EXPECT_EQ(plan->unused_sms, unused);
}

TEST(SmPartitionPlan, H100SplitsInAlignedEqualGroups) {
    expectPlan(kH100, 1, 128, 4);  // 132 is not a multiple of 8: one partition is 128 SMs
    expectPlan(kH100, 2, 64, 4);   // the split: 2 groups of 64
    expectPlan(kH100, 4, 32, 4);   // 33 each would break the 8-SM alignment
    expectPlan(kH100, 8, 16, 4);
    expectPlan(kH100, 16, 8, 4);  // the smallest partition the driver makes
}

TEST(SmPartitionPlan, A100SplitsInPairs) {
    expectPlan(kA100, 2, 54, 0);
    expectPlan(kA100, 3, 36, 0);
    expectPlan(kA100, 5, 20, 8);  // 21.6 each, rounded down to an even 20
}

TEST(SmPartitionPlan, AMinimumAboveTheAlignmentIsRespected) {
    const SmResources gpu{100, 6, 4};
    expectPlan(gpu, 4, 24, 4);
    auto tooMany = planSmPartitions(gpu, 13);  // 100 / 13 = 7, aligned 4 < 6
    ASSERT_FALSE(tooMany);
    // The smallest acceptable group is 8 SMs (6 rounded up to steps of 4): 12 of them fit.
    EXPECT_NE(tooMany.error().message.find("smallest partition is 8 SMs"), std::string::npos)
        << tooMany.error().message;
    EXPECT_NE(tooMany.error().message.find("at most 12 fit"), std::string::npos) << tooMany.error().message;
}

TEST(SmPartitionPlan, TooManyPartitionsSayWhyInOneLine) {
    auto plan = planSmPartitions(kH100, 17);  // 132 / 17 = 7 SMs, below the minimum of 8
    ASSERT_FALSE(plan);
    const std::string& why = plan.error().message;
    EXPECT_EQ(why.find('\n'), std::string::npos);
    EXPECT_NE(why.find("132 SMs"), std::string::npos) << why;
    EXPECT_NE(why.find("17 equal partitions"), std::string::npos) << why;
    EXPECT_NE(why.find("at most 16 fit"), std::string::npos) << why;
}

TEST(SmPartitionPlan, DegenerateRequestsAreErrors) {
    EXPECT_FALSE(planSmPartitions(kH100, 0));
    EXPECT_FALSE(planSmPartitions(SmResources{0, 1, 1}, 2));
    // A driver that reports no rules: every SM is a group of its own.
    expectPlan(SmResources{10, 0, 0}, 3, 3, 1);
}

TEST(SmPartitionPlan, DocumentedRulesByComputeCapability) {
    const auto hopper = mario::exec::smRulesForComputeCapability(9, 132);
    EXPECT_EQ(hopper.sm_count, 132);
    EXPECT_EQ(hopper.min_partition_sms, 8);
    EXPECT_EQ(hopper.alignment_sms, 8);
    const auto blackwell = mario::exec::smRulesForComputeCapability(10, 148);
    EXPECT_EQ(blackwell.min_partition_sms, 8);
    const auto ampere = mario::exec::smRulesForComputeCapability(8, 108);
    EXPECT_EQ(ampere.min_partition_sms, 2);
    EXPECT_EQ(ampere.alignment_sms, 2);
}

TEST(SmPartitionPlan, TheDriverMustMakeExactlyThePlannedGroups) {
    const SmPartitionPlan plan{2, 64, 4};
    EXPECT_TRUE(checkDriverSplit(plan, {64, 64}));
    auto fewer = checkDriverSplit(plan, {64});
    ASSERT_FALSE(fewer);
    EXPECT_NE(fewer.error().message.find("made 1 SM partitions of the 2 planned"), std::string::npos)
        << fewer.error().message;
    auto uneven = checkDriverSplit(plan, {64, 72});
    ASSERT_FALSE(uneven);
    EXPECT_NE(uneven.error().message.find("partition 1 72 SMs"), std::string::npos) << uneven.error().message;
}

TEST(SmPartitionPlan, DescribeNamesSizesAndWaste) {
    EXPECT_EQ(mario::exec::describe(SmPartitionPlan{4, 32, 4}), "4 partitions of 32 SMs (4 of 132 SMs unused)");
    EXPECT_EQ(mario::exec::describe(SmPartitionPlan{1, 128, 4}), "1 partition of 128 SMs (4 of 132 SMs unused)");
}

// Without a GPU (CI) there is no driver; with one, no GPU has 100000 partitions. Either way the
// answer is one line, never a crash.
TEST(GreenContexts, AnImpossibleRequestIsOneLine) {
    auto made = mario::exec::GreenContexts::create(0, 100000);
    ASSERT_FALSE(made);
    const std::string& why = made.error().message;
    EXPECT_FALSE(why.empty());
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
}

}  // namespace
