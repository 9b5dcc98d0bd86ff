#pragma once
// A plan's timeline that follows small edits of its device programs without simulating the
// whole plan again. A pass that tries thousands of moves (hide-recompute) pays a whole
// simulation, O(instructions), per trial with Simulator::run; most moves change the times of a
// few dozen instructions. Here a move re-evaluates only the instructions whose times can
// change: the edited device from the edit on, and each device whose receive got its data at a
// different time, from that receive on; a device stops as soon as an instruction past the edit
// ends exactly when it did before (everything after it then stays, unless a later receive
// changes). The result is the same timeline the simulator computes (tests compare every move
// of random plans), because each instruction's start is still max(its predecessor's end, its
// data's arrival) — the longest-path equations of the dependency graph, which have one
// solution when the graph has no cycle.
//
// Edits must not create a dependency cycle (a deadlock): moving an instruction that has no
// input from another device (a recomputation) earlier, after everything it depends on, cannot.
// A guard on the work done falls back to a whole simulation and reports a deadlock if one is
// found, but a cycle of zero-length instructions could go unnoticed, so passes that may
// deadlock keep using Simulator::run.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "core/schedule/Plan.h"
#include "core/sim/MessageSlots.h"
#include "core/sim/SimResult.h"
#include "core/util/Result.h"

namespace mario {

class IncrementalTimeline {
public:
    // A whole simulation of `plan`; errors as Simulator::run's.
    static Result<IncrementalTimeline> build(const Plan& plan);

    // The plan's program on `device` changed by moving the instruction at `from` to `to`
    // (std::rotate, either direction); call it after making the change in the plan, once per
    // move, then update(). Moves on different devices may be batched before one update().
    void moved(const Plan& plan, int device, std::size_t from, std::size_t to);
    // Re-evaluates what the moves since the last update can change. False when the edited plan
    // deadlocks, or when its step would end after `giveUpAbove` (an instruction's end plus the
    // compute still ahead of it on its device already passes it): the timeline is then stale,
    // and the caller undoes the moves and calls undo(). Giving up early is what makes a losing
    // move cheap: its delay need not be followed to the end of the step.
    Result<bool> update(const Plan& plan, double giveUpAbove = std::numeric_limits<double>::infinity());
    // Restores the timeline of before the last moves and update(); the caller undoes the moves
    // in the plan first.
    void undo(const Plan& plan);

    double makespan() const { return makespan_; }
    const std::vector<InstructionTiming>& timings(int device) const { return timings_[device]; }
    // Instructions re-evaluated since build(): what the incremental updates cost.
    std::size_t evaluations() const { return evaluations_; }
    // The timings as a SimResult (devices' timings and the makespan only), for code that reads
    // a simulation's timings.
    SimResult toSimResult() const;

private:
    struct Slot {
        int device = -1;
        std::size_t index = 0;  // the RECV that takes the message
    };
    struct Edit {
        int device = 0;
        std::size_t first = 0, last = 0;  // the rotated range, inclusive
        std::size_t from = 0, to = 0;     // the move, to undo it
    };
    struct TimingChange {
        int device = 0;
        std::size_t index = 0;
        InstructionTiming old;
    };
    struct ArrivalChange {
        std::size_t slot = 0;
        double old = 0;
    };

    IncrementalTimeline(PipelineTopology topology, MessageSlots messages)
        : topology_(std::move(topology)), messages_(std::move(messages)) {}
    Result<bool> rebuild(const Plan& plan);
    // The message slot a SEND or RECV refers to (npos for a send nobody takes).
    std::size_t slotOfInstruction(const Instruction& ins) const;
    void indexReceives(const Plan& plan, int device, std::size_t first, std::size_t last);
    void sumWorkAhead(const Plan& plan, int device, std::size_t first, std::size_t last);
    enum class Outcome { Done, GaveUp, TooMuchWork };
    Outcome propagate(const Plan& plan, double giveUpAbove);

    PipelineTopology topology_;
    MessageSlots messages_;
    std::vector<std::vector<InstructionTiming>> timings_;
    std::vector<std::vector<double>> workAhead_;  // per instruction: compute after it on its device
    std::vector<double> arrival_;                 // per message slot
    std::vector<Slot> receiver_;                  // per message slot
    double makespan_ = 0;
    std::size_t instructions_ = 0;
    std::size_t evaluations_ = 0;

    // The moves since the last update, and what the update changed (for undo).
    std::vector<Edit> edits_;
    std::vector<Edit> lastEdits_;
    std::vector<TimingChange> timingLog_;
    std::vector<ArrivalChange> arrivalLog_;
    double lastMakespan_ = 0;
    bool rebuiltInUpdate_ = false;
    std::vector<std::vector<InstructionTiming>> timingsBeforeRebuild_;
    std::vector<double> arrivalBeforeRebuild_;
};

}  // namespace mario
