// Config → plan: every scheme and preset builds a valid plan whose stages sit where the
// scheme says, and the bundled examples behave as documented.
#include <gtest/gtest.h>

#include "core/io/ConfigJson.h"
#include "core/io/PresetLibrary.h"
#include "core/passes/PassManager.h"
#include "core/schedule/Generators.h"
#include "core/session/InputFile.h"
#include "core/session/PlanBuilder.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"

namespace mario {
namespace {

const std::string kRoot = MARIO_TEST_SOURCE_DIR;
const PresetLibrary kPresets(kRoot + "/profiles");

Config configFor(const std::string& scheme, int pp, int chunks, int global, const std::string& model = "gpt3-1.6b") {
    nlohmann::json json = {{"format", "mario-config"},
                           {"version", 1},
                           {"model", model},
                           {"hardware", "a100-80g"},
                           {"parallel",
                            {{"scheme", scheme},
                             {"pp", pp},
                             {"dp", 1},
                             {"tp", 1},
                             {"chunks", chunks},
                             {"micro_batch_size", 1},
                             {"global_batch_size", global}}}};
    auto config = readConfig(json, kPresets);
    EXPECT_TRUE(config.ok()) << (config.ok() ? "" : config.error().message);
    return *config;
}

TEST(PlanBuilder, EverySchemeBuildsAValidPlanFromPresets) {
    for (const SchemeInfo& info : schemeCatalog()) {
        const std::string scheme(info.name);
        auto plan = buildPlan(configFor(scheme, 4, info.chunked ? 2 : 1, 8));
        ASSERT_TRUE(plan.ok()) << scheme << ": " << plan.error().message;
        EXPECT_TRUE(Validator::validate(*plan).ok()) << scheme << ": " << Validator::validate(*plan).summary();
        Plan withPasses = *plan;
        ASSERT_TRUE(runPasses(withPasses, *parsePassList("all")).ok()) << scheme;
        auto base = Simulator::run(*plan);
        auto mario = Simulator::run(withPasses);
        ASSERT_TRUE(base.ok() && mario.ok());
        EXPECT_GT(base->samples_per_s, 0) << scheme;
        for (std::size_t d = 0; d < base->devices.size(); ++d)
            EXPECT_LE(mario->devices[d].peak_bytes, base->devices[d].peak_bytes + 1) << scheme << " device " << d;
    }
}

TEST(PlanBuilder, StagesHoldTheirLayersAndChimeraReplicatesThem) {
    auto plan = buildPlan(configFor("chimera", 4, 1, 8));
    ASSERT_TRUE(plan.ok());
    ASSERT_EQ(plan->stages.size(), 8u);
    ASSERT_EQ(plan->pipelines.size(), 2u);
    // gpt3-1.6b has 32 layers: 8 per chain position; stage 4 + j replicates stage j on device 3 − j.
    for (int j = 0; j < 4; ++j) {
        EXPECT_EQ(plan->stages[j].device, j);
        EXPECT_EQ(plan->stages[4 + j].device, 3 - j);
        EXPECT_EQ(plan->stages[j].layers, std::make_pair(8 * j, 8 * j + 8));
        EXPECT_EQ(plan->stages[4 + j].layers, plan->stages[j].layers);
    }
    // Replicated stages all-reduce their gradients before the optimizer step.
    const auto& program = plan->devices[0].program;
    EXPECT_EQ(toActionString(program[program.size() - 4]), "0REDUCE_GRAD");
    EXPECT_EQ(toActionString(program.back()), "7OPT");
}

TEST(PlanBuilder, ChimeraGivesNoDeviceTwoExtraLayers) {
    // 40 layers on 32 chain positions: 8 positions get a second layer; a device holds
    // positions d and 31 − d, so no device may get both extras.
    auto plan = buildPlan(configFor("chimera", 32, 1, 64, "gpt3-13b"));
    ASSERT_TRUE(plan.ok());
    std::vector<int> layersOnDevice(32, 0);
    for (const auto& stage : plan->stages) layersOnDevice[stage.device] += stage.layers->second - stage.layers->first;
    for (int layers : layersOnDevice) {
        EXPECT_GE(layers, 2);
        EXPECT_LE(layers, 3);
    }
}

TEST(PlanBuilder, VPlacementGivesNoDeviceTwoExtraLayers) {
    // 40 layers on 2 · 16 V positions: 8 positions get a second layer; device d holds positions
    // d and 31 − d, so an even split favouring the middle would give devices 12..15 two each.
    for (const char* scheme : {"zbv", "dualpipev"}) {
        auto plan = buildPlan(configFor(scheme, 16, 1, 64, "llama2-13b"));
        ASSERT_TRUE(plan.ok()) << plan.error().message;
        std::vector<int> layersOnDevice(16, 0);
        int total = 0;
        for (const auto& stage : plan->stages) {
            layersOnDevice[stage.device] += stage.layers->second - stage.layers->first;
            total += stage.layers->second - stage.layers->first;
        }
        EXPECT_EQ(total, 40) << scheme;
        for (int layers : layersOnDevice) {
            EXPECT_GE(layers, 40 / 16) << scheme;
            EXPECT_LE(layers, 40 / 16 + 1) << scheme;
        }
    }
}

TEST(PlanBuilder, InterleavedPutsStageCTimesPPlusDOnDeviceD) {
    auto plan = buildPlan(configFor("interleaved", 4, 2, 8));
    ASSERT_TRUE(plan.ok());
    ASSERT_EQ(plan->stages.size(), 8u);
    for (const auto& stage : plan->stages) EXPECT_EQ(stage.device, stage.index % 4);
}

TEST(PlanBuilder, BundledExamplesLoadAndTheFigure2ExampleTakes22) {
    for (const char* name : {"figure2", "gpt3-13b-chimera", "llama2-13b-1f1b", "cpu-small-measured"}) {
        auto input = loadInputFile(kRoot + "/resources/examples/" + name + ".config.json", kPresets);
        ASSERT_TRUE(input.ok()) << name << ": " << input.error().message;
        EXPECT_EQ(input->file_passes.size(), 4u) << name;
        ASSERT_TRUE(runPasses(input->plan, input->file_passes).ok()) << name;
        auto sim = Simulator::run(input->plan);
        ASSERT_TRUE(sim.ok());
        if (std::string(name) == "figure2") {
            EXPECT_DOUBLE_EQ(sim->makespan_ms, 22.0);
        }
        // With the Mario passes every example fits its configured memory limit.
        if (input->config->memory_limit_bytes) {
            for (const auto& device : sim->devices)
                EXPECT_LE(device.peak_bytes, *input->config->memory_limit_bytes) << name;
        }
    }
}

TEST(PlanBuilder, ImpossibleShapesAreRefusedWithAReason) {
    ScheduleShape shape{Scheme::Interleaved, 4, 2, 6};
    auto order = checkShape(shape);
    ASSERT_FALSE(order.ok());
    EXPECT_EQ(order.error().message, "interleaved needs micro-batches (6) to be a multiple of the group size (4)");
    shape = {Scheme::Chimera, 3, 1, 4};
    EXPECT_EQ(checkShape(shape).error().message, "chimera needs an even number of pipeline devices, got 3");
}

}  // namespace
}  // namespace mario
