// What a profile says a stage holds beyond its activations (issue 33): what a split backward's
// I keeps until W (weight_grad_bytes) and the transient bytes an instruction allocates above
// what it keeps (working_bytes), from the profile file through the cost model to a device's
// peak. Expected values are worked by hand from the rules in StageCost.h and ProgramMemory.h.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/cost/ProfileCostModel.h"
#include "core/io/ProfileJson.h"
#include "core/sim/ProgramMemory.h"
#include "core/sim/Simulator.h"
#include "tests/common/UnitPlans.h"

namespace mario {
namespace {

TEST(WorkingBytes, ADevicePeakAddsTheLargestTransientOfItsStages) {
    // 1F1B, 2 devices, 4 micro-batches, activations of 1000 bytes: device 0 holds 2 micro-batches
    // at its peak, device 1 one (hand-worked 1F1B warm-up: P − d in flight).
    auto plan = test::makeUnitPlan(Scheme::OneFOneB, 2, 4);
    ASSERT_TRUE(plan) << plan.error().message;
    auto before = Simulator::run(*plan);
    ASSERT_TRUE(before);
    EXPECT_DOUBLE_EQ(before->devices[0].peak_bytes, 2000);
    EXPECT_DOUBLE_EQ(before->devices[1].peak_bytes, 1000);
    plan->stages[0].cost.working_bytes = 50;
    plan->stages[1].cost.working_bytes = 70;
    auto after = Simulator::run(*plan);
    ASSERT_TRUE(after);
    EXPECT_DOUBLE_EQ(after->devices[0].peak_bytes, 2050);
    EXPECT_DOUBLE_EQ(after->devices[1].peak_bytes, 1070);
    EXPECT_DOUBLE_EQ(programPeakBytes(*plan, 0), 2050);  // the passes' own reckoning agrees

    // Two stages on a device (interleaved, 2 chunks): one instruction runs at a time, so the
    // larger transient counts, not their sum.
    auto interleaved = test::makeUnitPlan(Scheme::Interleaved, 2, 4, 2);
    ASSERT_TRUE(interleaved) << interleaved.error().message;
    const double floor = staticBytesOf(*interleaved, 0);
    for (auto& stage : interleaved->stages) stage.cost.working_bytes = stage.device == 0 ? 30 + stage.index * 10 : 5;
    double largest = 0;
    for (const auto& stage : interleaved->stages)
        if (stage.device == 0) largest = std::max(largest, stage.cost.working_bytes);
    EXPECT_DOUBLE_EQ(staticBytesOf(*interleaved, 0), floor + largest);
    EXPECT_DOUBLE_EQ(staticBytesPerDevice(*interleaved)[0], floor + largest);
}

ProfileFits measuredFits() {
    ProfileFits fits;
    fits.micro_batch_size = 1;
    fits.forward_ms = {1, 0};
    fits.backward_ms = {2, 0};
    fits.activation_bytes = {150, 0};
    fits.weight_grad_bytes = LinearFit{100, 10};
    fits.working_bytes = 40;
    fits.head.activation_bytes = 20;
    fits.head.working_bytes = 90;
    return fits;
}

TEST(WorkingBytes, TheProfileCostModelHandsStagesWhatIKeepsAndTheirTransients) {
    Config config;
    config.parallel.micro_batch_size = 1;
    // Two blocks and the head; a stage of three blocks alone.
    auto costs = ProfileCostModel(measuredFits()).stageCosts(config, {{0, 2, false, true}, {2, 5, false, false}});
    ASSERT_TRUE(costs) << costs.error().message;
    // I keeps 100·2 + 10 of the blocks and all 20 of the head; F kept 300 + 20.
    ASSERT_TRUE((*costs)[0].weight_grad_bytes);
    EXPECT_DOUBLE_EQ(*(*costs)[0].weight_grad_bytes, 230);
    EXPECT_DOUBLE_EQ((*costs)[0].working_bytes, 90);  // the head's transient is the larger
    EXPECT_DOUBLE_EQ(*(*costs)[1].weight_grad_bytes, 310);
    EXPECT_DOUBLE_EQ((*costs)[1].working_bytes, 40);

    // Twice the micro-batch: slopes and transients double, intercepts stay.
    config.parallel.micro_batch_size = 2;
    costs = ProfileCostModel(measuredFits()).stageCosts(config, {{0, 2, false, true}});
    ASSERT_TRUE(costs);
    EXPECT_DOUBLE_EQ(*(*costs)[0].weight_grad_bytes, 100 * 2 * 2 + 10 + 40);
    EXPECT_DOUBLE_EQ((*costs)[0].working_bytes, 180);

    // Never more than the forward kept (I frees the rest).
    ProfileFits greedy = measuredFits();
    greedy.weight_grad_bytes = LinearFit{400, 0};
    config.parallel.micro_batch_size = 1;
    costs = ProfileCostModel(greedy).stageCosts(config, {{2, 5, false, false}});
    ASSERT_TRUE(costs);
    EXPECT_DOUBLE_EQ(*(*costs)[0].weight_grad_bytes, (*costs)[0].activation_bytes);

    // An older profile without the measurement leaves StageCost's defaults.
    ProfileFits older = measuredFits();
    older.weight_grad_bytes.reset();
    older.working_bytes = 0;
    older.head.working_bytes = 0;
    costs = ProfileCostModel(older).stageCosts(config, {{2, 5, false, false}});
    ASSERT_TRUE(costs);
    EXPECT_FALSE((*costs)[0].weight_grad_bytes);
    EXPECT_DOUBLE_EQ((*costs)[0].working_bytes, 0);
}

TEST(WorkingBytes, TheProfileFormatCarriesBothAndRefusesNegativeOnes) {
    const nlohmann::json written = profileToJson(measuredFits());
    auto read = profileFromJson(written, "");
    ASSERT_TRUE(read) << read.error().message;
    ASSERT_TRUE(read->weight_grad_bytes);
    EXPECT_DOUBLE_EQ(read->weight_grad_bytes->a, 100);
    EXPECT_DOUBLE_EQ(read->weight_grad_bytes->b, 10);
    EXPECT_DOUBLE_EQ(read->working_bytes, 40);
    EXPECT_DOUBLE_EQ(read->head.working_bytes, 90);
    EXPECT_EQ(profileToJson(*read), written);

    nlohmann::json negative = written;
    negative["working_bytes"] = -1;
    auto refused = profileFromJson(negative, "");
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("working_bytes"), std::string::npos) << refused.error().message;
    negative = written;
    negative["head"]["working_bytes"] = -1;
    refused = profileFromJson(negative, "");
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("head.working_bytes"), std::string::npos) << refused.error().message;
}

}  // namespace
}  // namespace mario
