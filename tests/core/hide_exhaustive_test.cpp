// Hide-recompute against exhaustive search on random small plans, the kind of input the four
// passes never hand it: compute orders drawn at random (not only the generators'), Rs standing
// early (right after their forward, or anywhere in their window), byte counts that are not
// integers and of a real model's size (~1e10, where one float ulp is ~2e-6 bytes), and a memory
// limit under the input's peak, so that hide's budget is the peak itself. For each plan every
// placement of every R within its window on its device, and every drop, is simulated (a
// device's choices are filtered by its memory first, then every combination of the devices'
// survivors is timed): that optimum is what hide should reach. An independent search found
// hide 19.8% above it where a drop fitting the budget exactly was refused by an absolute
// tolerance, and up to 22.7% above where an early R could only move later.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/passes/PassManager.h"
#include "core/schedule/Communication.h"
#include "core/sim/ProgramMemory.h"
#include "core/sim/RecomputeBound.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"
#include "tests/core/RandomOrders.h"
#include "tests/core/TestPlans.h"

namespace mario {
namespace {

// How far above the exhaustive optimum hide may end on any plan here: rounding only. Hide reaches
// the optimum on every one of these plans, and on 8 100 more drawn with other seeds or caps up
// to 200 000 placements (before issue 30's changes it missed it on 6 of these 300, by up to 17.1%).
constexpr double kAllowedGap = 1e-9;
constexpr int kPlans = 300;
// Placements simulated per plan at most (about 0.1 s); larger plans are drawn again.
constexpr long long kMaxCombinations = 30000;

// A byte count fits a budget up to rounding: sums of ~1e10 differ in their last bits by the
// order they were added in. (Looser than hide's own 1e-12: nothing here fits by less than a
// real difference of two costs, ~1e9 bytes, or more than rounding.)
bool fits(double bytes, double budget) { return bytes <= budget + 1e-9 * std::max(1.0, std::abs(budget)); }

// One recomputation: it may stand before skeleton index k for k in (after, upTo].
struct Slot {
    Instruction recompute;
    std::size_t after = 0, upTo = 0;
};

// A device's program without its Rs, and the Rs to place in it.
struct DeviceSpace {
    std::vector<Instruction> skeleton;
    std::vector<Slot> slots;

    // choice[i]: the skeleton index slot i stands before, or -1 (dropped). Rs before the same
    // index keep slot order (their order there changes neither time nor peak).
    std::vector<Instruction> program(const std::vector<int>& choice) const {
        std::vector<Instruction> out;
        for (std::size_t k = 0; k <= skeleton.size(); ++k) {
            for (std::size_t i = 0; i < slots.size(); ++i)
                if (choice[i] == static_cast<int>(k)) out.push_back(slots[i].recompute);
            if (k < skeleton.size()) out.push_back(skeleton[k]);
        }
        return out;
    }
};

DeviceSpace spaceOf(const std::vector<Instruction>& program) {
    DeviceSpace space;
    for (const auto& ins : program)
        if (ins.op != Op::Recompute) space.skeleton.push_back(ins);
    for (const auto& ins : program) {
        if (ins.op != Op::Recompute) continue;
        Slot slot{ins, 0, 0};
        for (std::size_t k = 0; k < space.skeleton.size(); ++k) {
            const Instruction& at = space.skeleton[k];
            if (at.stage != ins.stage || at.microbatch != ins.microbatch) continue;
            if (at.op == Op::Forward) slot.after = k;
            if (isBackwardStart(at.op)) slot.upTo = k;
        }
        space.slots.push_back(slot);
    }
    return space;
}

// Every placement of every R of the device, and every drop, whose memory fits the budget.
std::vector<std::vector<Instruction>> feasiblePrograms(const Plan& plan, int device, const DeviceSpace& space,
                                                       double budget) {
    std::vector<std::vector<Instruction>> out;
    const double statics = staticBytesOf(plan, device);
    std::vector<int> choice(space.slots.size(), -1);
    auto visit = [&](auto&& self, std::size_t i) -> void {
        if (i == space.slots.size()) {
            std::vector<Instruction> program = space.program(choice);
            const auto levels = memoryLevels(plan, program);
            const double peak = levels.empty() ? 0.0 : *std::max_element(levels.begin(), levels.end());
            if (fits(statics + std::max(0.0, peak), budget)) out.push_back(std::move(program));
            return;
        }
        for (int k = -1; k <= static_cast<int>(space.slots[i].upTo); ++k) {
            if (k >= 0 && k <= static_cast<int>(space.slots[i].after)) continue;
            choice[i] = k;
            self(self, i + 1);
        }
    };
    visit(visit, 0);
    return out;
}

// The input: a plan, its Rs placed at random in their windows (most of them early).
Plan placeEarly(Plan plan, std::mt19937& rng) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (auto& device : plan.devices) {
        const DeviceSpace space = spaceOf(device.program);
        std::vector<int> choice;
        for (const Slot& slot : space.slots) {
            const double u = unit(rng);
            const int first = static_cast<int>(slot.after) + 1, last = static_cast<int>(slot.upTo);
            choice.push_back(u < 0.4 ? first : u < 0.7 ? std::uniform_int_distribution<int>(first, last)(rng) : last);
        }
        device.program = space.program(choice);
    }
    return plan;
}

struct Drawn {
    Plan plan;
    std::string name;
};

// Random orders on 1F1B's and interleaved's placement, and the generators' orders of five
// schemes; checkpointed (sometimes with the rest of the four passes), Rs placed at random.
Drawn drawPlan(std::mt19937& rng) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    struct Shape {
        Scheme scheme;
        int devices, microbatches, chunks;
        bool randomOrder;
    };
    static const Shape shapes[] = {
        {Scheme::OneFOneB, 2, 2, 1, true},     {Scheme::OneFOneB, 2, 3, 1, true},  {Scheme::OneFOneB, 3, 2, 1, true},
        {Scheme::OneFOneB, 2, 4, 1, true},     {Scheme::OneFOneB, 3, 3, 1, true},  {Scheme::Interleaved, 2, 2, 2, true},
        {Scheme::OneFOneB, 2, 4, 1, false},    {Scheme::OneFOneB, 3, 3, 1, false}, {Scheme::GPipe, 2, 3, 1, false},
        {Scheme::Interleaved, 2, 2, 2, false}, {Scheme::Chimera, 2, 2, 1, false},  {Scheme::ZbH1, 2, 3, 1, false}};
    const Shape& shape = shapes[std::uniform_int_distribution<std::size_t>(0, std::size(shapes) - 1)(rng)];
    Plan plan = test::unitPlan(shape.scheme, shape.devices, shape.microbatches, shape.chunks);
    if (shape.randomOrder) {
        auto ordered = planFromComputeOrder(plan, test::randomOrder(plan, shape.microbatches, rng));
        EXPECT_TRUE(ordered.ok());
        plan = std::move(*ordered);
    }
    test::randomCosts(plan, rng);
    EXPECT_TRUE(runPasses(plan, *parsePassList(unit(rng) < 0.25 ? "all" : "checkpoint")).ok());
    plan = placeEarly(std::move(plan), rng);
    // Half of them under a memory limit below the input's highest peak: on that device hide's
    // budget is its own peak, and a drop that fits it exactly must be taken.
    if (unit(rng) < 0.5) {
        double highest = 0;
        for (const auto& device : test::simulate(plan).devices) highest = std::max(highest, device.peak_bytes);
        plan.info.memory_limit_bytes = highest * (1 - 0.05 * unit(rng));
    }
    const std::string name = std::string(schemeName(shape.scheme)) + (shape.randomOrder ? " (random order) " : " ") +
                             std::to_string(shape.devices) + "x" + std::to_string(shape.microbatches);
    return {std::move(plan), name};
}

// The best step over every placement and drop of the Rs within `budget`; infinity when none
// fits (cannot happen: the input fits), NaN when there are more than kMaxCombinations.
double exhaustiveOptimum(const Plan& input, const std::vector<double>& budget, long long& simulated) {
    std::vector<std::vector<std::vector<Instruction>>> options;
    long long combinations = 1;
    for (const auto& device : input.devices) {
        options.push_back(feasiblePrograms(input, device.index, spaceOf(device.program), budget[device.index]));
        combinations *= static_cast<long long>(options.back().size());
        if (combinations > kMaxCombinations) return std::numeric_limits<double>::quiet_NaN();
    }
    double best = std::numeric_limits<double>::infinity();
    std::vector<std::size_t> pick(options.size(), 0);
    Plan plan = input;
    for (;;) {
        for (std::size_t d = 0; d < options.size(); ++d) plan.devices[d].program = options[d][pick[d]];
        auto sim = Simulator::run(plan, SimOptions::timelineOnly());
        EXPECT_TRUE(sim.ok());
        ++simulated;
        bool within = sim.ok() && !sim->deadlocked;
        for (std::size_t d = 0; within && d < sim->devices.size(); ++d)
            within = fits(sim->devices[d].peak_bytes, budget[d]);
        if (within) best = std::min(best, sim->makespan_ms);
        std::size_t d = 0;
        while (d < pick.size() && ++pick[d] == options[d].size()) pick[d++] = 0;
        if (d == pick.size()) break;
    }
    return best;
}

TEST(HideExhaustive, ReachesTheOptimumOnRandomSmallPlansWithEarlyRsAndTightBudgets) {
    std::mt19937 rng(3011);
    int plans = 0, optimal = 0, limited = 0;
    long long simulated = 0;
    double worstGap = 0;
    std::string worstName;
    int improvable = 0;
    for (int draw = 0; draw < 1000 && plans < kPlans; ++draw) {
        Drawn drawn = drawPlan(rng);
        const Plan& input = drawn.plan;
        ASSERT_TRUE(Validator::validate(input).ok()) << drawn.name;
        const SimResult inputSim = test::simulate(input);
        ASSERT_FALSE(inputSim.deadlocked) << drawn.name;
        auto budget = hideBudget(input, false);
        ASSERT_TRUE(budget.ok());
        const double best = exhaustiveOptimum(input, *budget, simulated);
        if (std::isnan(best)) continue;
        ++plans;
        improvable += best < inputSim.makespan_ms * (1 - 1e-9);
        limited += input.info.memory_limit_bytes.has_value();
        const std::string where = drawn.name + " (draw " + std::to_string(draw) + ")";

        Plan hidden = input;
        auto run = runPasses(hidden, {PassId::Hide});
        ASSERT_TRUE(run.ok()) << where << ": " << run.error().message;
        const SimResult sim = test::simulate(hidden);
        ASSERT_FALSE(sim.deadlocked) << where;
        for (std::size_t d = 0; d < sim.devices.size(); ++d)
            EXPECT_TRUE(fits(sim.devices[d].peak_bytes, (*budget)[d])) << where << " device " << d;
        // Never slower than its input, never faster than every placement (the search is sound).
        EXPECT_LE(sim.makespan_ms, inputSim.makespan_ms * (1 + 1e-12)) << where;
        EXPECT_GE(sim.makespan_ms, best * (1 - 1e-12)) << where;
        const double gap = sim.makespan_ms / best - 1;
        EXPECT_LE(gap, kAllowedGap) << where << ": hide " << sim.makespan_ms << " ms, optimum " << best << " ms";
        optimal += gap <= 1e-9;
        if (gap > worstGap && gap > 1e-9) worstGap = gap, worstName = where;
        // The recompute bound is below every placement, hide's included.
        auto bound = recomputeBound(input, *budget);
        ASSERT_TRUE(bound.ok()) << where << ": " << bound.error().message;
        EXPECT_LE(bound->bound_ms, best * (1 + 1e-12)) << where;
        EXPECT_LE(bound->bound_ms, sim.makespan_ms * (1 + 1e-12)) << where;
    }
    std::printf("[ hide exhaustive ] %d random small plans (%d under a memory limit below their peak), %lld placements "
                "simulated: hide reached the optimum on %d, worst %.3f%% above it (%s)\n",
                plans, limited, simulated, optimal, 100 * worstGap, worstName.c_str());
    EXPECT_EQ(plans, kPlans);
    // Not vacuous: on most of them some placement beats the input.
    EXPECT_GT(improvable, kPlans * 3 / 4);
}

}  // namespace
}  // namespace mario
