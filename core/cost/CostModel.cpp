#include "core/cost/CostModel.h"

#include <string>

#include "core/cost/AnalyticalCostModel.h"
#include "core/cost/ProfileCostModel.h"
#include "core/model/PresetLibrary.h"
#include "core/model/RankLayout.h"

namespace mario {

namespace {

// Layouts must lie inside the model; unit mode has no model and skips this.
std::optional<Error> checkLayouts(const std::vector<StageLayout>& layouts, int modelLayers) {
    for (std::size_t i = 0; i < layouts.size(); ++i) {
        const StageLayout& l = layouts[i];
        if (l.begin_layer < 0 || l.end_layer < l.begin_layer || l.end_layer > modelLayers)
            return makeError("layouts[" + std::to_string(i) + "]: layers [" + std::to_string(l.begin_layer) + ", " +
                             std::to_string(l.end_layer) + ") lie outside the model's " + std::to_string(modelLayers) +
                             " layers");
    }
    return std::nullopt;
}

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

}  // namespace

Result<std::vector<StageCost>> computeStageCosts(const Config& config, const std::vector<StageLayout>& layouts) {
    if (config.unit_costs) return unitStageCosts(*config.unit_costs, layouts.size());

    if (auto error = checkLayouts(layouts, config.model.layers)) return *error;
    if (config.profile) {
        // Settings edited in the workbench never pass the config reader's check, so the
        // refusal names the profile itself: "profile "cpu-tiny": measured at …".
        const std::string name = PresetLibrary::profileName(*config.profile);
        auto profile = ProfileCostModel::load(*config.profile);
        if (!profile) return makeError("profile \"" + name + "\": " + profile.error().message);
        auto costs = profile->stageCosts(config, layouts);
        if (!costs) return makeError("profile \"" + name + "\": " + costs.error().message);
        return costs;
    }

    auto model = AnalyticalCostModel::create(config);
    if (!model) return model.error();
    std::vector<StageCost> costs;
    costs.reserve(layouts.size());
    for (const StageLayout& layout : layouts) costs.push_back(model->stageCost(layout));
    return costs;
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
