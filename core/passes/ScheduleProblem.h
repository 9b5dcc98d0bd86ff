#pragma once
// A plan read as a scheduling problem (issue 43's exact search): the compute operations every
// order must contain (each micro-batch's F and B, or I and W, on its stage's device), the R that
// each forward may add when it is checkpointed, what each waits for (its device's producer, the
// neighbouring stage's message after its transfer time), how long it computes and what it adds
// to its device's memory. Communication is not a decision: a RECV right before its compute and a
// SEND right after it is never slower than any other place (a RECV earlier only waits sooner, a
// SEND later only delays its message), which is what planFromComputeOrder writes. So a schedule
// is each device's order of compute operations plus which forwards are checkpointed, and its
// step follows from start = max(device free, every input arrived).
#include <cstdint>
#include <string>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/util/Result.h"

namespace mario {

struct ScheduleOp {
    Instruction instruction;  // F, R, B, I or W
    int device = 0;
    double ms = 0;
    double bytes = 0;  // what it adds to its device's memory (negative: frees); an F kept whole
    double checkpointed_bytes = 0;  // F only: what it adds when checkpointed
    int recompute = -1;       // F only: its R's index
    int forward = -1;         // R, B and I: the F of the same stage and micro-batch
    struct Input {
        int op = -1;
        double lag = 0;  // transfer time of the message (0 on the same device)
    };
    std::vector<Input> inputs;  // every one ends (plus lag) before this starts; an F's R is not listed
    std::vector<int> consumers;
};

class ScheduleProblem {
public:
    // Fails for what the exact search does not model: overlapped pairs, a forward without its
    // backward on its device, compute that takes no time (the search's symmetry argument needs
    // every operation to take some).
    static Result<ScheduleProblem> fromPlan(const Plan& plan, const std::vector<double>& budget);

    const std::vector<ScheduleOp>& ops() const { return ops_; }
    int deviceCount() const { return static_cast<int>(statics_.size()); }
    // Each device's memory budget less its static bytes: what its running level may reach.
    double room(int device) const { return room_[device]; }
    // REDUCE_GRAD and OPT, kept at each device's end: the time they take after its last compute.
    double tailMs(int device) const { return tail_[device]; }
    // Per chain, its first stage's forwards in micro-batch order: micro-batches of one chain are
    // interchangeable (the costs are per stage), so every schedule has a relabelling that starts
    // them in this order.
    const std::vector<std::vector<int>>& entryForwards() const { return entries_; }

    // The plan of a solution: `order[d]` lists op indices (an R present means its F is
    // checkpointed), communication inserted as planFromComputeOrder does, the input's REDUCE_GRAD
    // and OPT appended.
    Result<Plan> toPlan(const std::vector<std::vector<int>>& order) const;

private:
    Plan skeleton_;
    std::vector<ScheduleOp> ops_;
    std::vector<double> statics_, room_, tail_;
    std::vector<std::vector<Instruction>> syncs_;  // per device: its REDUCE_GRAD and OPT
    std::vector<std::vector<int>> entries_;
};

}  // namespace mario
