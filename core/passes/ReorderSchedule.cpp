#include "core/passes/ReorderSchedule.h"

#include <limits>
#include <optional>

#include "core/passes/ExactSchedule.h"
#include "core/passes/OrderSearch.h"
#include "core/passes/Passes.h"
#include "core/passes/Tolerance.h"
#include "core/schedule/PipelineTopology.h"
#include "core/sim/IncrementalTimeline.h"
#include "core/sim/Simulator.h"

namespace mario {
namespace {

// Instructions the order search's trials may re-time over a whole run by default. On the
// largest plans of docs/reorder.md its moves gain little (GPT-3 13B Chimera 32 x 64: nothing at
// 20 million, 2.5 s), so the budget is what keeps the pass within its time there (~0.3 s).
constexpr long long kEvaluationBudget = 3'000'000;
// Up to this many instructions every place on a device is tried; above, a window of groups.
constexpr std::size_t kWholeDeviceUpTo = 2000;
constexpr std::size_t kWindow = 8;
// Search and hide alternate at most this often: each hide can open moves for the search.
constexpr int kRounds = 4;

// Rounds of the order search and hide on `plan`, within `budget`, spending `left`.
Result<bool> improve(Plan& plan, const std::vector<double>& budget, const PipelineTopology& topology,
                     std::size_t window, long long& left, const std::atomic<bool>* cancel, int hideSimulations,
                     PassReport& report) {
    for (int round = 0; round < kRounds && left > 0; ++round) {
        if (cancel && cancel->load(std::memory_order_relaxed)) break;
        auto timeline = IncrementalTimeline::build(plan);
        if (!timeline) return timeline.error();
        OrderSearch search(plan, std::move(*timeline), topology, budget, {window, left, cancel});
        auto moved = search.run();
        if (!moved) return moved.error();
        left -= moved->evaluations;
        report.evaluations += moved->evaluations;
        report.changes.insert(report.changes.end(), moved->changes.begin(), moved->changes.end());
        // Hide after the moves: the new order has new bubbles for the Rs, and the Rs hide drops
        // free the device for the next round's moves.
        auto hidden = hideRecompute(plan, budget, cancel, hideSimulations);
        if (!hidden) return hidden.error();
        report.simulations += hidden->simulations;
        report.changes.insert(report.changes.end(), hidden->changes.begin(), hidden->changes.end());
        if (!moved->changed() && (round > 0 || !hidden->changed())) break;
    }
    return true;
}

// A second start on small plans: the greedy list schedule — every step appends the operation
// that can start first (ExactSchedule's first descent, without its backtracking). A local
// search from a generator's order (GPipe's all forwards first) or from a random one can stall
// where every single move lengthens the step; from a list schedule it starts near a good order.
std::optional<Plan> listSchedule(const Plan& plan, const std::vector<double>& budget) {
    ExactOptions dive;
    dive.node_budget = 3 * static_cast<long long>(plan.instructionCount()) + 16;
    auto greedy = exactSchedule(plan, budget, dive);
    if (!greedy || !greedy->plan) return std::nullopt;  // a plan it does not model, or a dead end
    return std::move(greedy->plan);
}

double stepOf(const Plan& plan) {
    auto sim = Simulator::run(plan, SimOptions::timelineOnly());
    return sim && !sim->deadlocked ? sim->makespan_ms : std::numeric_limits<double>::infinity();
}

}  // namespace

Result<PassReport> reorderSchedule(Plan& plan, const std::vector<double>& budget, const std::atomic<bool>* cancel,
                                   long long maxEvaluations, int hideSimulations) {
    PassReport report{PassId::Reorder, 0, {}};
    auto input = Simulator::run(plan, SimOptions::timelineOnly());
    if (!input) return input.error();
    if (input->deadlocked) return report;
    auto topology = PipelineTopology::build(plan);
    if (!topology) return topology.error();
    long long left = maxEvaluations > 0 ? maxEvaluations : kEvaluationBudget;
    const bool small = plan.instructionCount() <= kWholeDeviceUpTo;
    const std::size_t window = small ? 0 : kWindow;
    Plan current = plan;
    auto improved = improve(current, budget, *topology, window, left, cancel, hideSimulations, report);
    if (!improved) return improved.error();
    double step = stepOf(current);
    if (small && !(cancel && cancel->load(std::memory_order_relaxed))) {
        if (auto start = listSchedule(plan, budget)) {
            PassReport other{PassId::Reorder, 0, {}};
            auto better = improve(*start, budget, *topology, window, left, cancel, hideSimulations, other);
            if (!better) return better.error();
            const double otherStep = stepOf(*start);
            report.simulations += other.simulations;
            report.evaluations += other.evaluations;
            if (clearlyBelow(otherStep, step)) {
                // What moved is the whole order: every compute instruction that stands elsewhere.
                other.changes.clear();
                for (const auto& device : start->devices)
                    for (std::size_t i = 0; i < device.program.size(); ++i) {
                        const auto& was = plan.devices[device.index].program;
                        if (i >= was.size() || !(was[i] == device.program[i]))
                            if (isCompute(device.program[i].op))
                                other.changes.push_back({ChangeKind::Moved, device.index, device.program[i], -1,
                                                         static_cast<int>(i)});
                    }
                report.changes = std::move(other.changes);
                current = std::move(*start);
                step = otherStep;
            }
        }
    }
    // The incremental timeline equals a simulation up to rounding; one whole simulation makes
    // "never slower than its input" exact.
    if (!atMost(step, input->makespan_ms) || report.changes.empty())
        return PassReport{PassId::Reorder, 0, {}, report.simulations, report.evaluations};
    plan = std::move(current);
    return report;
}

}  // namespace mario
