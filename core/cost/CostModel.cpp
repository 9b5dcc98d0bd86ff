#include "core/cost/CostModel.h"

#include "core/cost/AnalyticalCostModel.h"
#include "core/model/RankLayout.h"

namespace mario {

std::vector<StageCost> unitStageCosts(const UnitCosts& unit, std::size_t stages) {
    StageCost cost;
    cost.forward_ms = unit.forward;
    cost.backward_ms = unit.backward;
    cost.recompute_ms = unit.recompute;
    cost.activation_bytes = unit.activation_bytes;
    cost.checkpoint_bytes = unit.checkpoint_bytes;
    cost.static_bytes = unit.static_bytes;
    cost.send_bytes = 0;  // the link is free in unit mode anyway
    return std::vector<StageCost>(stages, cost);
}

double modelParameterCount(const Config& config) {
    if (config.unit_costs) return 0;
    auto model = AnalyticalCostModel::create(config);
    return model ? model->modelParameters() : 0;
}

LinkSpec pipelineLink(const Config& config) {
    if (config.unit_costs) return LinkSpec{0, 0};
    const HardwareConfig& hw = config.hardware;
    const ParallelConfig& p = config.parallel;
    const bool inNode = nodeLocality(p.pp, p.dp, p.tp, hw.gpus_per_node).pipeline_in_node;
    return LinkSpec{hw.link_latency_ms, inNode ? hw.intra_node_gb_per_s : hw.inter_node_gb_per_s};
}

}  // namespace mario
