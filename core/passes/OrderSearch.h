#pragma once
// The local search of the `reorder` pass (issue 43, item 1): moves one compute instruction of a
// device — an F, B, I, W or R, with the RECVs that stand right before it for its input and the
// SENDs right after it for its output — to stand before or after another one of the same device,
// and keeps a move only when the step gets shorter, or stays and the devices finish earlier in
// sum (which opens room for the next move). Every move keeps the device's own dependencies (an
// F before its R before its backward, I before W, a producer stage before its consumer on the
// same device) and its memory within the budget; a move that would deadlock the plan is refused
// by the incremental timeline, which judges every trial (IncrementalTimeline.h).
#include <atomic>
#include <cstddef>
#include <vector>

#include "core/passes/PassReport.h"
#include "core/schedule/PipelineTopology.h"
#include "core/schedule/Plan.h"
#include "core/sim/IncrementalTimeline.h"
#include "core/util/Result.h"

namespace mario {

struct OrderSearchLimits {
    // How many groups before or after its place a group is tried (0: any place on its device).
    std::size_t window = 0;
    long long max_evaluations = 0;  // instructions the trials may re-time (0: no limit)
    const std::atomic<bool>* cancel = nullptr;
};

class OrderSearch {
public:
    OrderSearch(Plan& plan, IncrementalTimeline timeline, PipelineTopology topology, std::vector<double> budget,
                OrderSearchLimits limits);

    // Rounds of moves over every device until a round keeps none (or a limit is reached). The
    // report lists the kept moves, as PassId::Reorder changes.
    Result<PassReport> run();
    const IncrementalTimeline& timeline() const { return timeline_; }
    long long evaluations() const { return static_cast<long long>(timeline_.evaluations() - startEvaluations_); }

private:
    struct Group {
        std::size_t first = 0, last = 0;  // inclusive, in the device's program
        std::size_t compute = 0;          // where its compute instruction stands
        bool movable = false;             // an F, R, B, I or W, not half of an overlapped pair
    };
    std::vector<Group> groupsOf(int device) const;
    // Whether `a` must stand before `b` on their device (both compute instructions).
    bool mustPrecede(const Instruction& a, const Instruction& b) const;
    bool fitsBudget(int device) const;
    double finishSum() const;
    // Moves the block [from, from + count) to start at `to`, in the plan, the memory deltas and
    // the timeline; tries it; keeps it or undoes it. True when kept.
    Result<bool> tryMove(int device, std::size_t from, std::size_t to, std::size_t count);
    Result<bool> improveDevice(int device, PassReport& report);
    bool outOfBudget() const;

    Plan& plan_;
    IncrementalTimeline timeline_;
    PipelineTopology topology_;
    std::vector<double> budget_, statics_;
    std::vector<std::vector<double>> deltas_;  // per device, beside its program
    OrderSearchLimits limits_;
    bool wholeSimulations_ = false;  // a compute and a message take no time: a cycle of zero length could hide
    std::size_t startEvaluations_ = 0;
};

}  // namespace mario
