// Malformed plans never crash the reader, the validator or the simulator: thousands of
// random mutations of a valid plan each end in a plan or in an error message with a path.
#include <gtest/gtest.h>

#include <random>

#include "core/io/PlanJson.h"
#include "core/passes/PassManager.h"
#include "core/sim/Simulator.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

nlohmann::json randomValue(std::mt19937& rng) {
    switch (rng() % 8) {
        case 0: return nullptr;
        case 1: return -1;
        case 2: return 2147483646;
        case 3: return "1Q3";
        case 4: return "0F2147483646";
        case 5: return nlohmann::json::array();
        case 6: return nlohmann::json::object();
        default: return 1e300;
    }
}

// Replaces, deletes or duplicates one random node of the document.
void mutate(nlohmann::json& node, std::mt19937& rng, int depth = 0) {
    if ((node.is_object() || node.is_array()) && !node.empty() && depth < 6 && rng() % 4 != 0) {
        const std::size_t pick = rng() % node.size();
        auto it = node.begin();
        std::advance(it, static_cast<long>(pick));
        if (rng() % 5 == 0) {
            if (node.is_object()) node.erase(it.key());
            else node.erase(pick);
            return;
        }
        mutate(*it, rng, depth + 1);
        return;
    }
    node = randomValue(rng);
}

TEST(PlanFuzz, MutatedPlansGiveAPlanOrAnErrorNeverACrash) {
    Plan plan = test::unitPlan(Scheme::Chimera, 4, 4);
    ASSERT_TRUE(runPasses(plan, *parsePassList("all")).ok());
    const nlohmann::json valid = writePlan(plan);
    std::mt19937 rng(2026);
    int rejected = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        nlohmann::json doc = valid;
        for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k) mutate(doc, rng);
        auto read = readPlan(doc);
        if (!read) {
            ++rejected;
            EXPECT_FALSE(read.error().message.empty());
            continue;
        }
        auto sim = Simulator::run(*read);
        EXPECT_TRUE(sim.ok() && !sim->deadlocked);
    }
    EXPECT_GT(rejected, 1000);
}

TEST(PlanFuzz, HugeMicrobatchNumbersAreRefusedNotAllocated) {
    nlohmann::json doc = writePlan(test::unitPlan(Scheme::OneFOneB, 2, 1));
    doc["devices"][0]["program"][0] = "0F2147483646";
    auto read = readPlan(doc);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message,
              "devices[0].program[0]: micro-batch 2147483646 is out of range (number micro-batches from 0)");
}

}  // namespace
}  // namespace mario
