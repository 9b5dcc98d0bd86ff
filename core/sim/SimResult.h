#pragma once
// What the simulator says about a plan: the timeline, memory, and summary numbers.
#include <cstddef>
#include <string>
#include <vector>

#include "core/schedule/Instruction.h"
#include "core/sim/StepFlops.h"
#include "core/util/UninitialisedAllocator.h"

namespace mario {

// For compute instructions [start, end) is the time on the device. For a RECV, start is
// when the program reached it and end when the data had arrived (end - start is the wait).
// For a SEND, start == end == issue time. No default values: a DeviceStats' timings are made
// without writing them (UninitialisedAllocator), and the loop writes each one it reaches;
// `InstructionTiming{}` is {0, 0}.
struct InstructionTiming {
    double start;
    double end;
};
using InstructionTimings = std::vector<InstructionTiming, UninitialisedAllocator<InstructionTiming>>;

// How much of one recomputation was hidden: the rule of DeviceStats::recompute_hidden_ms taken
// R by R. A run's hidden time counts from the run's start, so its first Rs are hidden first;
// an R's hidden part is what of it lies before that point.
struct RecomputeHidden {
    std::size_t index = 0;  // the R's place in its device's program
    double hidden_ms = 0;   // 0 (exposed) up to its duration (hidden)
};

struct MemoryPoint {
    double time_ms = 0;
    double bytes = 0;  // static + dynamic, after the change at time_ms
};

struct DeviceStats {
    int index = 0;
    double busy_ms = 0;  // compute instructions only
    double idle_ms = 0;  // makespan - busy
    // Recomputation, and the part of it that ran while the device would otherwise have
    // waited for a receive (a run of Rs followed by a RECV hides as much of itself as lies
    // before the message's arrival); SimResult's recompute totals are their sums.
    double recompute_ms = 0;
    double recompute_hidden_ms = 0;
    // Compute time added by devices that share hardware (StageCost::contention); in busy_ms.
    double contention_ms = 0;
    double static_bytes = 0;
    double peak_dynamic_bytes = 0;
    double peak_bytes = 0;                   // static + peak dynamic
    InstructionTimings timings;  // one per program instruction
    std::vector<RecomputeHidden> recompute_hidden;  // one per R, in program order; they sum to recompute_hidden_ms
    std::vector<MemoryPoint> memory;         // step curve, empty unless requested
};

// A device that cannot move: the instruction it is stuck on and what it waits for.
struct BlockedDevice {
    int device = 0;
    int program_index = 0;
    Instruction instruction;
    std::string waits_for;  // e.g. "1SEND_F3 from device 1, which is blocked"
};

struct SimResult {
    bool deadlocked = false;
    std::vector<BlockedDevice> blocked;
    double makespan_ms = 0;
    double bubble_ratio = 0;       // idle / (devices * makespan)
    double lower_bound_ms = 0;     // max(busiest device, critical chain)
    double busiest_device_ms = 0;  // largest per-device compute
    double critical_chain_ms = 0;  // longest single micro-batch dependency chain
    // max(lower_bound, pipeline bound): the pipeline bound adds to each device's compute the
    // forward chain before its first forward and the backward chain after its last backward
    // (sim/LowerBound.h). No order of the programs can beat it.
    double tight_lower_bound_ms = 0;
    // Recomputation: its total time over all devices, and the part of it that ran while the
    // device would otherwise have waited for a receive (hidden in a bubble).
    double recompute_ms = 0;
    double recompute_hidden_ms = 0;
    // Compute time the devices' contention added, over all devices, and the timing rounds its
    // stretch took to settle (0: no contention; sim/SharedHardware.h).
    double contention_ms = 0;
    int contention_rounds = 0;
    // The step with every device timed alone, set when contention was solved: what the passes
    // optimise and hide's bound (sim/RecomputeBound.h) is a bound on. aloneMakespan() reads it.
    double alone_makespan_ms = 0;
    bool contention_settled = true;  // false: the rounds' budget ran out first (Simulator.cpp)
    double aloneMakespan() const { return contention_rounds > 0 ? alone_makespan_ms : makespan_ms; }
    // recompute_hidden_ms / recompute_ms, 1 when nothing is recomputed.
    double recomputeHiddenShare() const { return recompute_ms > 0 ? recompute_hidden_ms / recompute_ms : 1.0; }
    double samples_per_step = 0;
    double samples_per_s = 0;
    double tokens_per_s = 0;
    StepFlops flops;  // FLOPs, TFLOP/s per GPU, MFU and HFU (zeros when the plan has no FLOPs)
    std::vector<DeviceStats> devices;
};

}  // namespace mario
