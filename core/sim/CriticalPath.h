#pragma once
// The chain of instructions that sets a simulated step's makespan: shorten anything on it and
// the step gets shorter (until another chain takes over); shorten anything off it and nothing
// changes. The window outlines it on the Gantt, the summary shows what it is made of.
//
// In the simulator (docs/execution-model.md) every instruction starts when the one before it
// on its device ends, and a RECV ends when its message arrives if that is later. So walking
// back from the instruction that ends last, each step is bound either by the previous
// instruction of its device or, where a RECV waited, by the message: the path then crosses
// to the sender's device at the SEND (issued when the producing compute ended) and goes on
// there. A tie (the message arrived exactly when the device reached the RECV) stays on the
// device. The path therefore covers [0, makespan] with compute and transfers only: every
// instant of it is either computing or a message in flight.
#include <cstdint>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/sim/MessageGraph.h"
#include "core/sim/SimResult.h"
#include "core/util/Result.h"

namespace mario {

struct CriticalStep {
    enum class Kind : std::uint8_t { Compute, Transfer };
    Kind kind = Kind::Compute;
    // Compute: the instruction. Transfer: the RECV the message released.
    InstructionRef at;
    // Transfer: the SEND that issued the message; compute: the same as `at`.
    InstructionRef from;
    double start = 0;
    double end = 0;
    double durationMs() const { return end - start; }
};

struct CriticalPath {
    std::vector<CriticalStep> steps;  // in time order, from 0 to the makespan
    double makespan_ms = 0;
    // What the path is made of; compute + transfer + gap = makespan.
    double compute_ms = 0;
    double forward_ms = 0;    // F
    double backward_ms = 0;   // B, I and W
    double recompute_ms = 0;  // R
    double other_ms = 0;      // REDUCE_GRAD and OPT
    double transfer_ms = 0;   // messages in flight: latency + bytes / bandwidth
    // Time the walk could not attribute; 0 for any result of Simulator::run (kept so the
    // parts always add up, and a test can say so).
    double gap_ms = 0;
    // The compute steps' instructions, in time order: what the Gantt outlines.
    std::vector<InstructionRef> computeInstructions() const;
    // How often the path changes device (its transfers).
    int deviceChanges() const;
};

// Fails for a deadlocked result (it has no makespan to explain) and for a result of another
// plan. An empty plan gives an empty path.
Result<CriticalPath> criticalPath(const Plan& plan, const SimResult& result);
// The same over a message graph already built for the pair (the Gantt builds one anyway).
Result<CriticalPath> criticalPath(const Plan& plan, const SimResult& result, const MessageGraph& messages);

}  // namespace mario
