#pragma once
// Pipeline devices that share one machine slow each other down: SM partitions of one GPU share
// its HBM, L2 and power, threads of one CPU its cores and caches. A stage's costs are its times
// alone; StageCost::contention says how much slower it computes for each other device computing
// at the same time. On a 2-core CPU a 4-block stage's forward took 6 % longer inside a 1-device
// run than profiled, and 10 % (1F1B) to 17 % (Chimera, the fewest bubbles) longer in a 2-device
// run; on an H200 the simulation of busy-neighbour profiles was up to 22 % slow exactly where a
// schedule leaves its devices idle (docs/gpu.md#fidelity).
//
// The simulator solves the stretch as a fixed point: time the plan, give every compute
// instruction 1 + contention × (the average number of other devices computing during it), time
// it again, until no stretch moves. The passes time plans alone (SimOptions::timelineOnly):
// contention changes when things run, not what a pass should move.
#include <vector>

#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"

namespace mario {

// Per device, per program instruction, the factor its compute time is multiplied by.
using ComputeStretch = std::vector<std::vector<double>>;

// Whether the plan's devices slow each other (some stage's contention above 0, two devices or more).
bool sharesHardware(const Plan& plan);

// Every instruction's factor 1 (alone).
ComputeStretch aloneStretch(const Plan& plan);

// For every instruction of `timeline` that computes (end > start): how many other devices
// compute meanwhile, averaged over its run, ∫ (busy devices − 1) dt / (end − start); 0 for the
// rest (sends, receives' waits, instructions that take no time).
std::vector<std::vector<double>> busyNeighbours(const Plan& plan, const SimResult& timeline);

// The stretch that `timeline` implies: 1 + the stage's contention × busy neighbours; for an OPT,
// the neighbours running their OPT meanwhile count at the stage's optimizer_contention instead.
ComputeStretch contentionStretch(const Plan& plan, const SimResult& timeline);

}  // namespace mario
