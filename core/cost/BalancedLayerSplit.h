#pragma once
// The split of a chain's layers over its positions that balances the devices' work
// (parallel.layer_split = "balanced", docs/config-format.md). The work of a position holding
// k layers comes from the cost model (session/PlanBuilder.cpp fills the table from
// computeStageCosts), so this file knows no cost formula: only which positions share a device.
//
// Exact: it returns a split of smallest maximum device load over all splits that give every
// position at least `min_count` layers, and among those the one nearest (fewest layers moved)
// to `preferred`, today's even split, which it returns itself whenever that split is optimal.
#include <vector>

#include "core/util/Result.h"

namespace mario {

struct LayerSplitProblem {
    int layers = 0;     // the chain's layers, all of them placed
    int min_count = 1;  // fewest layers a position may hold
    // position_load[p][k]: one micro-batch's work on chain position p holding k layers
    // (k = 0 .. layers); +infinity where the cost model refuses such a stage.
    std::vector<std::vector<double>> position_load;
    // Per device, the chain positions it holds: one for a chain, several for a looped
    // (interleaved) device, two mirrored ones for Chimera, DualPipe and V placements. A position
    // on several devices (Chimera's replicas) loads each of them.
    std::vector<std::vector<int>> device_positions;
    std::vector<int> preferred;  // the tie-break: today's counts per position
};

struct LayerSplitChoice {
    std::vector<int> counts;  // layers per chain position
    double max_load = 0;      // the most loaded device's work
};

// The largest device load of a split (counts per position) under `problem`'s loads.
double maxDeviceLoad(const LayerSplitProblem& problem, const std::vector<int>& counts);

// The balanced split. Errors when no split fits (every count refused by the cost model) or when
// two devices share positions without holding the same ones (no placement Mario generates).
Result<LayerSplitChoice> balancedLayerSplit(const LayerSplitProblem& problem);

}  // namespace mario
