#include "executor/StageSlices.h"

#include <algorithm>

namespace mario::exec {

bool planLayersFit(const Plan& plan, int layers) {
    // Otherwise the chain-position rule maps the plan onto this model, so any plan runs.
    int maxEnd = 0;
    for (const auto& st : plan.stages) {
        if (!st.layers || st.layers->first < 0 || st.layers->first > st.layers->second) return false;
        maxEnd = std::max(maxEnd, st.layers->second);
    }
    return !plan.stages.empty() && maxEnd == layers;
}

std::vector<LayerSlice> stageSlices(const Plan& plan, const PipelineTopology& topology, int layers,
                                    bool& planLayersUsed) {
    planLayersUsed = planLayersFit(plan, layers);
    std::vector<LayerSlice> slices(static_cast<std::size_t>(topology.stageCount()));
    for (int stage = 0; stage < topology.stageCount(); ++stage) {
        const int chain = topology.chainOf(stage), length = topology.chainLength(chain);
        const int position = topology.positionOf(stage);
        LayerSlice& slice = slices[static_cast<std::size_t>(stage)];
        if (planLayersUsed) {
            slice.begin = plan.stages[stage].layers->first;
            slice.end = plan.stages[stage].layers->second;
        } else {
            // 64 bits: position × layers passes 2^31 for long chains of deep models.
            slice.begin = static_cast<int>(static_cast<long long>(position) * layers / length);
            slice.end = static_cast<int>(static_cast<long long>(position + 1) * layers / length);
        }
        slice.embedding = position == 0;
        slice.head = position == length - 1;
    }
    return slices;
}

}  // namespace mario::exec
