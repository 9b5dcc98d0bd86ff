// The card's memory on a plan (PlanInfo::device_memory_bytes): the builder takes it from the
// hardware preset, the plan format writes and reads it, and plans written before it existed
// still load (without it, so their memory verdict is what it was).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/io/ConfigJson.h"
#include "core/io/PlanJson.h"
#include "core/io/PresetLibrary.h"
#include "core/session/PlanBuilder.h"
#include "core/sim/MemoryFit.h"
#include "core/sim/Simulator.h"

namespace mario {
namespace {

using json = nlohmann::json;

const std::string kRoot = MARIO_TEST_SOURCE_DIR;

json readJson(const std::string& path) {
    std::ifstream in(path);
    return json::parse(in);
}

// The 13B 1F1B example on 40 GB cards and with no limit: the case the card verdict is for.
Result<Plan> planOnA100WithoutALimit() {
    json document = readJson(kRoot + "/resources/examples/llama2-13b-1f1b.config.json");
    document.erase("memory_limit_gb");
    document["hardware"] = "a100-40g";
    document["passes"] = json::array();
    auto config = readConfig(document, PresetLibrary(kRoot + "/profiles"));
    if (!config) return config.error();
    return buildPlan(*config);
}

// The plan of docs/plan-format.md's example, as a file written before device_memory_bytes.
const char* kOldPlan = R"({
  "format": "mario-plan", "version": 1, "memory_limit_bytes": 2e10,
  "stages": [
    {"index": 0, "device": 0, "forward_ms": 1.0, "backward_ms": 2.0, "activation_bytes": 4e9,
     "checkpoint_bytes": 0, "static_bytes": 1.2e10, "send_bytes": 2.5e7},
    {"index": 1, "device": 1, "forward_ms": 1.2, "backward_ms": 2.4, "activation_bytes": 5e9,
     "checkpoint_bytes": 0, "static_bytes": 1.4e10, "send_bytes": 0}],
  "devices": [
    {"index": 0, "program": ["0F0", "0SEND_F0", "0RECV_B0", "0B0", "0OPT"]},
    {"index": 1, "program": ["1RECV_F0", "1F0", "1B0", "1SEND_B0", "1OPT"]}]})";

TEST(DeviceMemory, TheBuilderTakesItFromTheHardwarePreset) {
    auto plan = planOnA100WithoutALimit();
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    const double cardGb = readJson(kRoot + "/profiles/hardware/a100-40g.json")["memory_gb"].get<double>();
    ASSERT_TRUE(plan->info.device_memory_bytes.has_value());
    EXPECT_DOUBLE_EQ(*plan->info.device_memory_bytes, cardGb * 1e9);
    EXPECT_FALSE(plan->info.memory_limit_bytes.has_value());  // descriptive only: no limit for the passes
}

TEST(DeviceMemory, UnitCostPlansHaveNone) {
    // Unit costs count abstract bytes; Figure 2 is such a config.
    auto config = readConfigFile(kRoot + "/resources/examples/figure2.config.json", PresetLibrary(kRoot + "/profiles"));
    ASSERT_TRUE(config.ok()) << config.error().message;
    ASSERT_TRUE(config->unit_costs.has_value());
    auto plan = buildPlan(*config);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    EXPECT_FALSE(plan->info.device_memory_bytes.has_value());
}

TEST(DeviceMemory, ThePlanFormatWritesAndReadsIt) {
    auto plan = planOnA100WithoutALimit();
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    const json written = writePlan(*plan);
    ASSERT_TRUE(written.contains("device_memory_bytes"));
    EXPECT_DOUBLE_EQ(written["device_memory_bytes"].get<double>(), *plan->info.device_memory_bytes);
    EXPECT_FALSE(written.contains("memory_limit_bytes"));
    auto reread = readPlan(written);
    ASSERT_TRUE(reread.ok()) << reread.error().message;
    EXPECT_EQ(reread->info.device_memory_bytes, plan->info.device_memory_bytes);
    EXPECT_EQ(reread->info.memory_limit_bytes, plan->info.memory_limit_bytes);
}

TEST(DeviceMemory, APlanWrittenBeforeItLoadsWithoutIt) {
    auto plan = readPlan(json::parse(kOldPlan));
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    EXPECT_FALSE(plan->info.device_memory_bytes.has_value());
    EXPECT_EQ(plan->info.memory_limit_bytes, 2e10);
    EXPECT_FALSE(writePlan(*plan).contains("device_memory_bytes"));  // nothing invented on the way out
    // Its verdict is the limit's, as before: device 1 holds 1.4e10 static + 5e9 activations.
    auto sim = Simulator::run(*plan);
    ASSERT_TRUE(sim.ok()) << sim.error().message;
    const MemoryFit fit = memoryFit(*sim, plan->info);
    EXPECT_EQ(fit.basis, MemoryFit::Basis::Limit);
    EXPECT_TRUE(fit.fits());
}

TEST(DeviceMemory, ANonPositiveValueIsRefusedByName) {
    for (double bad : {0.0, -4e10}) {
        json document = json::parse(kOldPlan);
        document["device_memory_bytes"] = bad;
        auto plan = readPlan(document);
        ASSERT_FALSE(plan.ok()) << bad;
        EXPECT_NE(plan.error().message.find("device_memory_bytes"), std::string::npos) << plan.error().message;
    }
    json document = json::parse(kOldPlan);
    document["device_memory_bytes"] = "40 GB";
    EXPECT_FALSE(readPlan(document).ok());
}

}  // namespace
}  // namespace mario
