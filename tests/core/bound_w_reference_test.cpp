// Bound-w's one-walk form against the pass as it was first written (issue 30): after every
// move, recompute the whole running sum, find the first instruction above the budget, scan for
// the oldest pending W and rotate it in front. That form is quadratic, but it is the
// definition; the pass must give the same programs and the same report, bit for bit, on
// generated schedules and on arbitrary programs (Ws before their I, pairs, repeated keys,
// non-integer bytes, budgets below the static bytes).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <random>
#include <unordered_map>

#include "core/passes/PassManager.h"
#include "core/passes/Passes.h"
#include "core/sim/ProgramMemory.h"
#include "tests/core/RandomPlans.h"

namespace mario {
namespace {

// ---- the reference: the pass before issue 30, unchanged but for names -------------------

constexpr double kSlack = 1e-6;

std::optional<std::size_t> firstAbove(const std::vector<double>& levels, double room) {
    for (std::size_t i = 0; i < levels.size(); ++i)
        if (levels[i] > room + kSlack) return i;
    return std::nullopt;
}

std::optional<std::size_t> oldestPendingWeight(const std::vector<Instruction>& program, std::size_t at) {
    std::unordered_map<std::uint64_t, std::size_t> inputAt;
    for (std::size_t i = 0; i < at; ++i)
        if (program[i].op == Op::BackwardInput) inputAt.emplace(stageMicrobatchKey(program[i]), i);
    std::optional<std::size_t> best;
    std::size_t bestInput = std::numeric_limits<std::size_t>::max();
    for (std::size_t j = at + 1; j < program.size(); ++j) {
        if (program[j].op != Op::BackwardWeight) continue;
        const auto input = inputAt.find(stageMicrobatchKey(program[j]));
        if (input != inputAt.end() && input->second < bestInput) {
            bestInput = input->second;
            best = j;
        }
    }
    return best;
}

PassReport referenceBoundW(Plan& plan, const std::vector<double>& budget) {
    PassReport report{PassId::BoundW, 0, {}};
    for (auto& device : plan.devices) {
        if (static_cast<std::size_t>(device.index) >= budget.size()) continue;
        auto& program = device.program;
        const double room = budget[device.index] - staticBytesOf(plan, device.index);
        for (std::size_t moves = 0; moves <= program.size(); ++moves) {
            const auto above = firstAbove(memoryLevels(plan, program), room);
            if (!above) break;
            const auto from = oldestPendingWeight(program, *above);
            if (!from) break;
            const std::size_t to = overlappedPairAt(program, *above).value_or(*above);
            const Instruction weight = program[*from];
            std::rotate(program.begin() + static_cast<std::ptrdiff_t>(to),
                        program.begin() + static_cast<std::ptrdiff_t>(*from),
                        program.begin() + static_cast<std::ptrdiff_t>(*from + 1));
            report.changes.push_back(
                {ChangeKind::Moved, device.index, weight, static_cast<int>(*from), static_cast<int>(to)});
        }
    }
    return report;
}

// ---- comparison --------------------------------------------------------------------------

// Same programs (including the pair flags, which Instruction's == ignores) and same report.
// Returns how many Ws the reference moved, so that a test can tell it compared real work.
std::size_t expectSameAsReference(const Plan& input, const std::vector<double>& budget, const std::string& what) {
    Plan expected = input, actual = input;
    const PassReport wanted = referenceBoundW(expected, budget);
    const PassReport got = boundWeightGradients(actual, budget);
    EXPECT_EQ(expected.devices.size(), actual.devices.size()) << what;
    for (std::size_t d = 0; d < expected.devices.size() && d < actual.devices.size(); ++d) {
        const auto& a = expected.devices[d].program;
        const auto& b = actual.devices[d].program;
        EXPECT_EQ(a.size(), b.size()) << what << ", device " << d;
        for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
            if (!(a[i] == b[i] && a[i].overlapped == b[i].overlapped)) {
                ADD_FAILURE() << what << ", device " << d << ", index " << i << ": " << toActionString(a[i]) << " vs "
                              << toActionString(b[i]);
                break;
            }
    }
    EXPECT_EQ(wanted.changes.size(), got.changes.size()) << what;
    if (wanted.changes.size() != got.changes.size()) return wanted.changes.size();
    for (std::size_t k = 0; k < wanted.changes.size(); ++k) {
        const PassChange& w = wanted.changes[k];
        const PassChange& g = got.changes[k];
        EXPECT_TRUE(w.kind == g.kind && w.device == g.device && w.instruction == g.instruction &&
                    w.from_index == g.from_index && w.to_index == g.to_index)
            << what << ", change " << k << ": " << toActionString(w.instruction) << " " << w.from_index << "->"
            << w.to_index << " vs " << toActionString(g.instruction) << " " << g.from_index << "->" << g.to_index;
    }
    return wanted.changes.size();
}

// Budgets from nothing to above the plan's highest peak, so some devices move every W they
// can, some a few, some none.
std::vector<std::vector<double>> budgetsFor(const Plan& plan, std::mt19937& rng) {
    double highest = 0;
    for (const auto& device : plan.devices) highest = std::max(highest, programPeakBytes(plan, device.index));
    std::vector<std::vector<double>> budgets{boundWBudget(plan), std::vector<double>(plan.devices.size(), 0.0)};
    std::uniform_real_distribution<double> share(0.0, 1.1);
    for (int k = 0; k < 3; ++k) {
        std::vector<double> budget;
        for (std::size_t d = 0; d < plan.devices.size(); ++d) budget.push_back(highest * share(rng));
        budgets.push_back(budget);
    }
    return budgets;
}

TEST(BoundWReference, GeneratedSplitBackwardSchedulesAfterCheckpointing) {
    std::mt19937 rng(30);
    std::size_t moved = 0;
    for (Scheme scheme : allSchemes()) {
        const SchemeInfo& info = schemeInfo(scheme);
        if (!info.split_backward) continue;
        for (int p : {2, 4, 6}) {
            if (info.even_devices && p % 2) continue;
            for (int factor : {2, 4}) {
                const int m = std::max(info.min_microbatches_per_device, factor) * p;
                auto built = test::makeUnitPlan(scheme, p, m, info.chunked ? 2 : 1);
                if (!built) continue;  // a size this scheme refuses
                Plan plan = std::move(*built);
                auto passes = parsePassList("checkpoint");
                ASSERT_TRUE(passes.ok());
                ASSERT_TRUE(runPasses(plan, *passes).ok());
                for (const auto& budget : budgetsFor(plan, rng))
                    moved += expectSameAsReference(
                        plan, budget, std::string(info.name) + " p=" + std::to_string(p) + " m=" + std::to_string(m));
                if (HasFailure()) return;
            }
        }
    }
    EXPECT_GT(moved, 1000u);  // the comparisons moved Ws, not only left programs alone
}

TEST(BoundWReference, RandomPlansWithAndWithoutCheckpointing) {
    std::mt19937 rng(3030);
    std::size_t moved = 0;
    for (int n = 0; n < 400; ++n) {
        Plan plan = test::randomPlan(rng);
        if (n % 2) {
            auto passes = parsePassList("checkpoint");
            ASSERT_TRUE(passes.ok());
            ASSERT_TRUE(runPasses(plan, *passes).ok());
        }
        for (const auto& budget : budgetsFor(plan, rng))
            moved += expectSameAsReference(plan, budget, "random plan " + std::to_string(n));
        if (HasFailure()) return;
    }
    EXPECT_GT(moved, 1000u);
}

// Any order of any instructions: the pass reads only program order and byte counts, so its
// corner cases (a W standing before its I, two Is or Ws of one micro-batch, a W right after the
// forward of a pair, a budget below the static bytes) are drawn here, not hoped for.
TEST(BoundWReference, ArbitraryPrograms) {
    std::mt19937 rng(303030);
    std::size_t moved = 0;
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const Op ops[] = {Op::Forward,        Op::Recompute,     Op::Backward,    Op::BackwardInput, Op::BackwardWeight,
                      Op::BackwardWeight, Op::BackwardInput, Op::SendForward, Op::RecvBackward};
    for (int n = 0; n < 2000; ++n) {
        Plan plan = test::unitPlan(Scheme::ZbH1, 2, 2);
        for (auto& stage : plan.stages) {
            StageCost& c = stage.cost;
            c.activation_bytes = 1e9 * (0.1 + unit(rng)) / 3.0;  // not integers: sums round
            c.checkpoint_bytes = c.activation_bytes * unit(rng) * 0.3;
            // Up to twice the activations: then an I adds memory, and the instruction that
            // passes the budget can be the I that closes an overlapped pair.
            c.weight_grad_bytes = c.activation_bytes * 2 * unit(rng);
            c.static_bytes = 1e8 * unit(rng);
        }
        const int length = std::uniform_int_distribution<int>(0, 60)(rng);
        for (auto& device : plan.devices) {
            device.program.clear();
            for (int i = 0; i < length; ++i) {
                Instruction ins;
                ins.op = ops[std::uniform_int_distribution<std::size_t>(0, std::size(ops) - 1)(rng)];
                ins.stage = device.index;  // unitPlan(ZbH1, 2, …) puts stage d on device d
                ins.microbatch = std::uniform_int_distribution<int>(0, 5)(rng);
                ins.overlapped = ins.op == Op::Forward && unit(rng) < 0.4;
                device.program.push_back(ins);
            }
        }
        for (const auto& budget : budgetsFor(plan, rng)) {
            moved += expectSameAsReference(plan, budget, "arbitrary program " + std::to_string(n));
            std::vector<double> belowStatic;  // room < 0: even the first instruction is above it
            for (std::size_t d = 0; d < budget.size(); ++d) belowStatic.push_back(-budget[d]);
            moved +=
                expectSameAsReference(plan, belowStatic, "arbitrary program " + std::to_string(n) + ", negative room");
        }
        if (HasFailure()) return;
    }
    EXPECT_GT(moved, 1000u);
}

}  // namespace
}  // namespace mario
