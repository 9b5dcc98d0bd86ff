// The recompute bound against search, on plans too large for the exhaustive search of
// hide_recompute_test.cpp: a randomized local search over the Rs of a grid plan — move one
// between its forward and its backward, drop one, bring a dropped one back — keeping every
// placement within hide's budget, from the four passes' plan and from hide's result. Every
// placement it simulates is one the bound covers, so none may run faster than the bound;
// these are the plans where the bound was tightened (stretches chained across devices, early
// and dropped Rs packed together), so a bound that went too far fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/io/ConfigJson.h"
#include "core/io/PresetLibrary.h"
#include "core/passes/PassManager.h"
#include "core/session/PlanBuilder.h"
#include "core/sim/ProgramMemory.h"
#include "core/sim/RecomputeBound.h"
#include "core/sim/Simulator.h"
#include "tests/core/RecomputeGrid.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

bool sameWork(const Instruction& a, const Instruction& b) { return a.stage == b.stage && a.microbatch == b.microbatch; }

// Where `r` may stand on `program`: after its forward, up to its backward; false when either is missing.
bool window(const std::vector<Instruction>& program, const Instruction& r, std::size_t& after, std::size_t& upTo) {
    bool forward = false, backward = false;
    for (std::size_t k = 0; k < program.size() && !backward; ++k) {
        if (!sameWork(program[k], r)) continue;
        if (program[k].op == Op::Forward) after = k, forward = true;
        if (isBackwardStart(program[k].op)) upTo = k, backward = true;
    }
    return forward && backward && upTo > after;
}

// Puts `r` at a random place in its window; false when it has none there.
bool placeRandomly(std::vector<Instruction>& program, const Instruction& r, std::mt19937& rng) {
    std::size_t after = 0, upTo = 0;
    if (!window(program, r, after, upTo)) return false;
    const std::size_t at = after + 1 + rng() % (upTo - after);
    if (program[at - 1].overlapped) return false;  // an overlapped pair stays together
    program.insert(program.begin() + static_cast<std::ptrdiff_t>(at), r);
    return true;
}

struct SearchResult {
    double best = INFINITY;
    double fastestSeen = INFINITY;  // over every feasible placement simulated
    int simulated = 0;
};

SearchResult localSearch(const Plan& four, Plan start, const std::vector<double>& budget, unsigned seed) {
    std::mt19937 rng(seed);
    auto step = [](const Plan& p) {
        auto sim = Simulator::run(p, SimOptions::timelineOnly());
        return sim.ok() && !sim->deadlocked ? sim->makespan_ms : INFINITY;
    };
    SearchResult out;
    double current = step(start);
    out.best = out.fastestSeen = current;
    double temperature = 0.01 * current;
    for (int trial = 0; trial < 6000; ++trial, temperature *= 0.9993) {
        const int d = static_cast<int>(rng() % start.devices.size());
        Plan candidate = start;
        auto& program = candidate.devices[d].program;
        std::vector<Instruction> kept, dropped;
        for (const auto& ins : program)
            if (ins.op == Op::Recompute) kept.push_back(ins);
        for (const auto& ins : four.devices[d].program)
            if (ins.op == Op::Recompute && std::find(kept.begin(), kept.end(), ins) == kept.end())
                dropped.push_back(ins);
        // 0: move a kept R, 1: drop it, 2: bring back a dropped one.
        const int kind = static_cast<int>(rng() % 3);
        const auto& pool = kind == 2 ? dropped : kept;
        if (pool.empty()) continue;
        const Instruction r = pool[rng() % pool.size()];
        if (kind != 2) std::erase(program, r);
        if (kind != 1 && !placeRandomly(program, r, rng)) continue;
        if (programPeakBytes(candidate, d) > budget[d] * (1 + 1e-12)) continue;
        const double t = step(candidate);
        if (!std::isfinite(t)) continue;
        ++out.simulated;
        out.fastestSeen = std::min(out.fastestSeen, t);
        if (t <= current ||
            std::uniform_real_distribution<double>(0, 1)(rng) < std::exp(-(t - current) / temperature)) {
            start = std::move(candidate);
            current = t;
            out.best = std::min(out.best, t);
        }
    }
    return out;
}

TEST(RecomputeBound, NoPlacementALocalSearchFindsBeatsIt) {
    std::vector<test::GridPlan> plans;
    for (test::GridSchemes set : {test::GridSchemes::Paper, test::GridSchemes::ZeroBubble}) {
        auto grid = test::recomputeGrid(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles", set);
        ASSERT_TRUE(grid.ok()) << grid.error().message;
        for (auto& entry : *grid)
            if (entry.name.find("x8") != std::string::npos && entry.name.find(" 4x") != std::string::npos)
                plans.push_back(std::move(entry));  // the 4 × 8 plans: 2 models × 7 schemes
    }
    ASSERT_EQ(plans.size(), 14u);
    int searched = 0;
    for (const auto& entry : plans) {
        Plan four = entry.plan;
        ASSERT_TRUE(runPasses(four, *parsePassList("all")).ok()) << entry.name;
        auto budget = hideBudget(four, false);
        ASSERT_TRUE(budget.ok());
        auto bound = recomputeBound(four, *budget);
        ASSERT_TRUE(bound.ok()) << entry.name << ": " << bound.error().message;
        Plan hidden = four;
        ASSERT_TRUE(runPasses(hidden, {PassId::Hide}).ok());
        const auto fromFour = localSearch(four, four, *budget, 1);
        const auto fromHide = localSearch(four, hidden, *budget, 2);
        searched += fromFour.simulated + fromHide.simulated;
        // The chain that sets the bound starts on its device and follows the messages: on a
        // pipeline placed in order (1F1B, zb-h1, interleaved) they pass between neighbours.
        const std::vector<int> chain = bound->chain();
        ASSERT_FALSE(chain.empty()) << entry.name;
        EXPECT_EQ(chain.front(), bound->device) << entry.name;
        if (entry.name.find("1f1b") != std::string::npos || entry.name.find("zb-h1") != std::string::npos) {
            for (std::size_t k = 1; k < chain.size(); ++k) {
                EXPECT_EQ(std::abs(chain[k] - chain[k - 1]), 1) << entry.name << " hop " << k;
            }
        }
        EXPECT_GE(fromFour.fastestSeen, bound->bound_ms * (1 - 1e-9)) << entry.name;
        EXPECT_GE(fromHide.fastestSeen, bound->bound_ms * (1 - 1e-9)) << entry.name;
        std::printf("[ bound ] %-28s bound %8.1f  search from the four passes %8.1f, from hide %8.1f\n",
                    entry.name.c_str(), bound->bound_ms, fromFour.best, fromHide.best);
    }
    EXPECT_GT(searched, 50000) << "the search should simulate most of its trials";
}

// A device with a thousand micro-batches: its stretches reach only so many backwards (the
// bound's work stays near-linear), and what lies beyond goes on through the chain from the
// next start. Still a bound: not above hide's step or the four passes', not below the plan
// without any R's step. LLaMA-2 3B on 40 GB cards, whose budget forces Rs to stay (GPT-3 1.6B's
// stopped forcing more than 0.1% once its head's cross-entropy kernels were counted).
TEST(RecomputeBound, LongDevicesStillBoundFromBelow) {
    const PresetLibrary presets(std::string(MARIO_TEST_SOURCE_DIR) + "/profiles");
    const nlohmann::json json = {
        {"format", "mario-config"},
        {"version", 1},
        {"model", "llama2-3b"},
        {"hardware", "a100-40g"},
        {"devices", 4},
        {"memory_limit_gb", 40},
        {"parallel", {{"scheme", "1f1b"}, {"pp", 4}, {"micro_batch_size", 1}, {"global_batch_size", 1024}}}};
    auto config = readConfig(json, presets);
    ASSERT_TRUE(config.ok()) << config.error().message;
    auto four = buildPlan(*config);
    ASSERT_TRUE(four.ok());
    ASSERT_TRUE(runPasses(*four, *parsePassList("all")).ok());
    auto budget = hideBudget(*four, false);
    ASSERT_TRUE(budget.ok());
    auto bound = recomputeBound(*four, *budget);
    ASSERT_TRUE(bound.ok()) << bound.error().message;
    Plan bare = *four, hidden = *four;
    for (auto& device : bare.devices)
        std::erase_if(device.program, [](const Instruction& ins) { return ins.op == Op::Recompute; });
    ASSERT_TRUE(runPasses(hidden, {PassId::Hide}).ok());
    const double bareStep = Simulator::run(bare)->makespan_ms;
    const double hideStep = Simulator::run(hidden)->makespan_ms;
    EXPECT_GE(bound->bound_ms, bareStep - 1e-6);
    EXPECT_LE(bound->bound_ms, hideStep * (1 + 1e-9));
    EXPECT_LE(bound->bound_ms, Simulator::run(*four)->makespan_ms * (1 + 1e-9));
    // The Rs the budget forces to stay are counted, window by window: above the bare step.
    EXPECT_GT(bound->bound_ms, bareStep * 1.001);
}

// The chain's stretches, found again in hide's result: on Figure 2 (unit costs, every R hidden)
// the bound is the step without checkpointing, set by micro-batch 0's forwards down the
// pipeline and its backwards back up: 0 → 1 → 2 → 3 → 2 → 1 → 0.
TEST(RecomputeBound, ItsChainIsFoundInHidesResult) {
    Plan four = test::unitPlan(Scheme::OneFOneB, 4, 4);  // Figure 2
    ASSERT_TRUE(runPasses(four, *parsePassList("all")).ok());
    auto budget = hideBudget(four, false);
    ASSERT_TRUE(budget.ok());
    auto bound = recomputeBound(four, *budget);
    ASSERT_TRUE(bound.ok());
    EXPECT_EQ(bound->chain(), (std::vector<int>{0, 1, 2, 3, 2, 1, 0}));
    ASSERT_EQ(bound->stretches.size(), bound->chain().size());
    Plan hidden = four;
    ASSERT_TRUE(runPasses(hidden, {PassId::Hide}).ok());
    const auto boxes = chainInstructions(*bound, hidden);
    ASSERT_FALSE(boxes.empty());
    std::vector<int> lanes;
    for (std::size_t k = 0; k < boxes.size(); ++k) {
        if (lanes.empty() || lanes.back() != boxes[k].device) lanes.push_back(boxes[k].device);
        EXPECT_TRUE(isCompute(hidden.devices[boxes[k].device].program[boxes[k].program_index].op));
        // Along one stretch the instructions follow each other in the program.
        if (k > 0 && boxes[k].device == boxes[k - 1].device) {
            EXPECT_GT(boxes[k].program_index, boxes[k - 1].program_index);
        }
    }
    EXPECT_EQ(lanes, bound->chain());
    // The first stretch starts with micro-batch 0's forward on device 0, the last ends on device 0.
    const Instruction& start = hidden.devices[0].program[boxes.front().program_index];
    EXPECT_EQ(start.op, Op::Forward);
    EXPECT_EQ(start.microbatch, 0);
    EXPECT_EQ(boxes.back().device, 0);
}

TEST(RecomputeBound, NamesItsChainOfDevices) {
    RecomputeBound bound;
    bound.device = 3;
    // A chain of stretches on these devices, in order (two in a row on one device are one visit).
    auto along = [&](std::vector<int> devices) {
        bound.stretches.clear();
        for (int d : devices) bound.stretches.push_back({d, {}, {}});
    };
    along({3});
    EXPECT_EQ(chainPhrase(bound), "device 3");
    along({3, 2, 2, 1});
    EXPECT_EQ(chainPhrase(bound), "devices 3 → 2 → 1");
    along({0, 1, 2, 3, 4, 5, 6, 7});
    EXPECT_EQ(chainPhrase(bound), "devices 0 → 1 → 2 → 3 → 4 → 5 → 6 → 7");
    along({0, 1, 2, 3, 4, 3, 2, 1, 0});
    EXPECT_EQ(chainPhrase(bound), "devices 0 → 1 → 2 → … → 2 → 1 → 0");
}

}  // namespace
}  // namespace mario
