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
// An edit may create a dependency cycle (a deadlock) when it moves an instruction that waits
// for another device earlier (prepose-forward's forwards with their receives). Times then grow
// round any cycle of positive length without settling, so the update gives up or its guard on
// the work done falls back to a whole simulation, which reports the deadlock (a test checks
// this against the simulator on random forward moves). A cycle of zero-length instructions
// would settle unnoticed: edits that could close one ask update() for a whole simulation.
// Moving a recomputation earlier, after its forward, creates no cycle at all.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
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

    // The plan's program on `device` changed by moving the `count` instructions at `from` to
    // stand at `to` (one std::rotate, either direction); call it after making the change in the
    // plan, once per move, then update(). Moves on different devices may be batched before one
    // update(). A block is one call, not one per instruction: each call re-reads the range it
    // rotated.
    void moved(const Plan& plan, int device, std::size_t from, std::size_t to, std::size_t count = 1);
    // Re-evaluates what the moves since the last update can change. False when the edited plan
    // deadlocks, or when its step would end after `giveUpAbove` (an instruction's end plus the
    // compute still ahead of it on its device already passes it): the timeline is then stale,
    // and the caller undoes the moves and calls undo(). Giving up early is what makes a losing
    // move cheap: its delay need not be followed to the end of the step.
    // With `wholeSimulation` it simulates the edited plan instead: for edits that might close a
    // cycle of zero-length instructions, which following the edits would not notice.
    Result<bool> update(const Plan& plan, double giveUpAbove = std::numeric_limits<double>::infinity(),
                        bool wholeSimulation = false);
    // Restores the timeline of before the last moves and update(); the caller undoes the moves
    // in the plan first.
    void undo(const Plan& plan);

    // Sharpens update()'s give-up test with a tail for every instruction: the longest chain of
    // work that must follow its end (its device's later compute, the messages it sends and all
    // they start). Two of them: with every recomputation counted as zero, which moving or
    // removing Rs cannot lengthen, so it stays a lower bound through any number of R moves; and
    // with every R, which holds for an instruction that ended, when the tails were taken, after
    // every R moved since had started (no chain from it can reach where those Rs stood). An R
    // moved later takes the tails of what follows it at its new place (its own counted what it
    // passed). Any other move drops them. On GPT-3 13B Chimera 32×64 they cut hide's losing trials from 3 600
    // re-timed instructions to 2 900 on average; taking them again is a whole backward pass, which
    // hide does only when it rebuilds the timeline.
    void takeTails();

    // Calls visit(device, index) once for every instruction, each after every instruction that
    // depends on it (its device's next one and, for a SEND, the RECV that takes its message):
    // the simulator's order, backwards. Each device runs from its end and waits at a SEND until
    // the RECV that takes it was visited. False when a cycle stopped it (a deadlocked plan).
    template <class Visit>
    bool walkFromEnd(Visit&& visit);
    // What a SEND hands on: the RECV that takes its message and the transfer time (the edge the
    // tails follow). Nothing for other instructions and for a message nobody takes.
    struct Handoff {
        int device = -1;
        std::size_t index = 0;  // the RECV
        double ms = 0;
    };
    std::optional<Handoff> handoff(int device, std::size_t index) const;

    double makespan() const { return makespan_; }
    const InstructionTimings& timings(int device) const { return timings_[device]; }
    // Instructions re-evaluated since build(): what the updates cost, a whole re-timing's every one.
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
        std::size_t count = 1;
    };
    struct Step {
        enum Kind : std::uint8_t { Compute, Send, Recv } kind = Compute;
        bool recompute = false;
        double ms = 0;         // a compute's duration, a send's transfer time
        std::size_t slot = 0;  // a send's or receive's message slot
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
    void sumWorkAhead(int device, std::size_t first, std::size_t last);
    // What evaluating each instruction needs, read from the plan once per move instead of per
    // evaluation (the slot and the cost lookups were a third of hide's re-timing).
    void describeSteps(const Plan& plan, int device, std::size_t first, std::size_t last);
    enum class Outcome { Done, GaveUp, TooMuchWork };
    Outcome propagate(double giveUpAbove);
    struct QueueEntry {  // propagate's: "device's times may change from index on", due at time
        double time = 0;
        int device = 0;
        std::size_t index = 0;
    };
    std::vector<QueueEntry> queue_;          // propagate's heap and per-device early-stop index,
    std::vector<std::size_t> stableFrom_;    // kept between updates for their storage

    PipelineTopology topology_;
    MessageSlots messages_;
    std::vector<InstructionTimings> timings_;
    std::vector<std::vector<Step>> steps_;        // per instruction, beside the program
    std::vector<std::vector<double>> workAhead_;  // per instruction: compute after it on its device
    struct Tail {
        double withoutRecompute = 0;  // the longest chain after the end, every R counted as zero
        double full = 0;              // the same with every R
        double startThen = 0;         // the instruction's start and end when the tails were taken
        double endThen = 0;
    };
    // Per instruction, or empty. `full` holds for instructions that ended after `horizon_` when
    // the tails were taken, beyond rounding: they cannot reach where any R moved since then stood
    // (a chain from them starts later), so no chain after them lost an R.
    std::vector<std::vector<Tail>> tails_;
    std::vector<std::size_t> left_;  // walkFromEnd's buffers
    std::vector<int> parked_;
    std::vector<int> runnable_;
    double horizon_ = -std::numeric_limits<double>::infinity();
    double horizonBeforeEdits_ = -std::numeric_limits<double>::infinity();
    double lastHorizon_ = -std::numeric_limits<double>::infinity();
    std::vector<double> arrival_;  // per message slot
    std::vector<Slot> receiver_;   // per message slot
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
    std::vector<InstructionTimings> timingsBeforeRebuild_;
    std::vector<double> arrivalBeforeRebuild_;
    static constexpr std::size_t kNoSlot = static_cast<std::size_t>(-1);
};

template <class Visit>
bool IncrementalTimeline::walkFromEnd(Visit&& visit) {
    // Buffers are reused: hide takes tails a few hundred times on a 14 000-instruction plan.
    const std::size_t devices = steps_.size();
    left_.resize(devices);
    parked_.resize(messages_.size(), -1);
    runnable_.clear();
    for (std::size_t d = 0; d < devices; ++d) {
        left_[d] = steps_[d].size();
        runnable_.push_back(static_cast<int>(d));
    }
    while (!runnable_.empty()) {
        const int d = runnable_.back();
        runnable_.pop_back();
        const Step* steps = steps_[d].data();
        std::size_t k = left_[d];
        while (k > 0) {
            const Step& step = steps[k - 1];
            if (step.kind == Step::Send && step.slot != kNoSlot) {
                const Slot to = receiver_[step.slot];
                if (to.device >= 0 && left_[to.device] > to.index) {
                    parked_[step.slot] = d;  // the RECV wakes it
                    break;
                }
            }
            visit(d, --k);
            if (step.kind == Step::Recv && parked_[step.slot] >= 0) {
                left_[d] = k;  // the woken device reads it
                runnable_.push_back(parked_[step.slot]);
                parked_[step.slot] = -1;
            }
        }
        left_[d] = k;
    }
    for (std::size_t d = 0; d < devices; ++d)
        if (left_[d] > 0) {  // a cycle, which a timeline cannot have
            std::fill(parked_.begin(), parked_.end(), -1);
            return false;
        }
    return true;
}

}  // namespace mario
