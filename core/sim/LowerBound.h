#pragma once
// Lower bounds on a plan's makespan that hold for every order of its devices' programs: the
// simulator reports them beside the makespan, and the gap between the two is what the passes
// can still win. Each is proved in a comment where it is computed; the tests check them
// against exhaustive search on tiny plans.
#include <cstdint>
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "core/schedule/Plan.h"

namespace mario {

// The longest single micro-batch chain (forwards, backwards and the transfers between
// devices; a recomputation only where it cannot overlap the stages after its forward),
// ignoring device contention. `checkpointed` and `split` are
// stage × micro-batch tables (dense micro-batch indices via `denseOf`).
double criticalChain(const Plan& plan, const PipelineTopology& topology, const std::vector<std::uint8_t>& checkpointed,
                     const std::vector<std::uint8_t>& split, int microbatches, const std::vector<int>& denseOf);
// The same with each dense micro-batch's chain (the chain of its forwards; -1 without one)
// found by the caller's own walk of the programs (sim/SimulationTables.h).
double criticalChain(const Plan& plan, const PipelineTopology& topology, const std::vector<std::uint8_t>& checkpointed,
                     const std::vector<std::uint8_t>& split, int microbatches, const std::vector<int>& denseOf,
                     const std::vector<int>& chainOfMicrobatch);

// The pipeline bound: every device d needs head(d) + core(d) + tail(d), where core(d) is its
// forward, recompute and backward time, head(d) the forward chain that must run elsewhere
// before its first forward can start, and tail(d) the backward chain that must run
// elsewhere after its last backward. Weight gradients, gradient reduction and the optimizer
// are left out of core(d): a plan may run them while the tail runs. The largest over devices.
double pipelineBound(const Plan& plan, const PipelineTopology& topology);
// The same with each device's core(d) summed by the caller in program order.
double pipelineBound(const Plan& plan, const PipelineTopology& topology, const std::vector<double>& coreMs);

}  // namespace mario
