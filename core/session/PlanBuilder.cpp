#include "core/session/PlanBuilder.h"

#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/cost/AnalyticalCostModel.h"
#include "core/cost/BalancedLayerSplit.h"
#include "core/cost/CostModel.h"
#include "core/cost/ProfileCostModel.h"
#include "core/io/PresetLibrary.h"
#include "core/io/ProfileJson.h"
#include "core/passes/PassVocabulary.h"
#include "core/schedule/Communication.h"
#include "core/schedule/Generators.h"
#include "core/schedule/PipelineTopology.h"
#include "core/session/SearchedLayerSplit.h"

namespace mario {

ScheduleShape scheduleShapeOf(const Config& config) {
    ScheduleShape shape;
    shape.scheme = config.parallel.scheme;
    shape.devices = config.parallel.pp;
    shape.chunks = schemeInfo(config.parallel.scheme).chunked ? config.parallel.chunks : 1;
    shape.microbatches = config.microbatchCount();
    shape.group_size = config.parallel.group_size;
    if (config.unit_costs) {
        shape.forward_cost = config.unit_costs->forward;
        shape.backward_cost = config.unit_costs->backward;
    }
    return shape;
}

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

// Each device holds two chain positions that mirror each other: d and p − 1 − d with two
// directions (Chimera, DualPipe), d and 2p − 1 − d on a V (ZBV, DualPipeV). An even split that
// gives the extra layers to the middle positions hands both of a middle device's stages an
// extra layer; putting the extras on positions [n/2 − extra, n/2) of the n positions gives
// each device at most one.
std::vector<StageLayout> mirroredLayout(int layers, int positions) {
    std::vector<StageLayout> layout = evenLayout(layers, positions);
    const int base = layers / positions, extra = layers % positions;
    if (extra == 0 || extra > positions / 2) return layout;
    int begin = 0;
    for (int p = 0; p < positions; ++p) {
        const int count = base + (p >= positions / 2 - extra && p < positions / 2 ? 1 : 0);
        layout[p].begin_layer = begin;
        layout[p].end_layer = begin + count;
        begin += count;
    }
    return layout;
}

// Today's split: even, with mirrored placements' extra layers on distinct devices.
std::vector<int> evenCounts(const Config& config, int positions) {
    const bool looped = schemeInfo(config.parallel.scheme).placement == Placement::Looped;
    std::vector<int> counts;
    for (const StageLayout& l :
         looped ? evenLayout(config.model.layers, positions) : mirroredLayout(config.model.layers, positions))
        counts.push_back(l.layerCount());
    return counts;
}

// parallel.layer_split = "balanced": each position's work for every layer count it could hold,
// from the cost model itself (forward + backward + recompute: the checkpointed step's compute,
// which is what the split exists for), and which positions share a device.
Result<std::vector<int>> balancedCounts(const Config& config, const PipelineLayout& layout, std::vector<int> even) {
    const int positions = static_cast<int>(even.size());
    const int layers = config.model.layers;
    LayerSplitProblem problem;
    problem.layers = layers;
    problem.preferred = std::move(even);
    problem.device_positions.resize(layout.stage_device.size());
    for (const auto& chain : layout.chains)
        for (std::size_t p = 0; p < chain.size(); ++p)
            problem.device_positions[layout.stage_device[chain[p]]].push_back(static_cast<int>(p));
    // A stage's costs depend on its layer count and on whether it holds the embedding or the
    // head, so three rows of costs serve every position.
    for (int p = 0; p < positions; ++p) {
        const bool first = p == 0, last = p == positions - 1;
        if (p > 1 && !last) {
            problem.position_load.push_back(problem.position_load.back());
            continue;
        }
        std::vector<StageLayout> candidates;
        for (int k = 1; k <= layers; ++k) candidates.push_back({last ? layers - k : 0, last ? layers : k, first, last});
        auto costs = computeStageCosts(config, candidates);
        if (!costs) return makeError("parallel.layer_split: balanced: " + costs.error().message);
        std::vector<double> loads(layers + 1, std::numeric_limits<double>::infinity());
        for (int k = 1; k <= layers; ++k) {
            const StageCost& c = (*costs)[k - 1];
            loads[k] = c.forward_ms + c.backward_ms + c.recompute_ms;
        }
        problem.position_load.push_back(std::move(loads));
    }
    auto split = balancedLayerSplit(problem);
    if (!split) return makeError("parallel.layer_split: balanced: " + split.error().message);
    return split->counts;
}

// How many layers each chain position holds (parallel.layer_split).
Result<std::vector<int>> positionCounts(const Config& config, const PipelineLayout& layout, int positions,
                                        const std::atomic<bool>* cancel = nullptr) {
    const LayerSplit& split = config.parallel.layer_split;
    if (split.kind == LayerSplitKind::Explicit) return split.counts;
    if (split.kind == LayerSplitKind::Search) {
        // The config's own passes: what a file opened without --passes runs (the CLI searches
        // again with --passes, app/cli/PlanLoading.cpp).
        auto passes = parsePassNames(config.passes);
        if (!passes) return makeError("passes: " + passes.error().message);
        auto found = searchLayerSplit(config, {.passes = *passes, .cancel = cancel});
        if (!found) return found.error();
        return found->counts;
    }
    std::vector<int> even = evenCounts(config, positions);
    if (split.kind == LayerSplitKind::Balanced) return balancedCounts(config, layout, std::move(even));
    return even;
}

// The layers a stage holds follow from its position in its chain: Chimera's stage j and
// stage p + j hold the same slice (they are replicas, as are DualPipe's).
Result<std::vector<StageLayout>> stageLayouts(const Config& config, const PipelineLayout& layout,
                                              const std::atomic<bool>* cancel) {
    const int positions = static_cast<int>(layout.chains.front().size());
    std::vector<StageLayout> byPosition;
    if (config.unit_costs) {
        for (int p = 0; p < positions; ++p) byPosition.push_back({0, 0, p == 0, p == positions - 1});
    } else {
        auto counts = positionCounts(config, layout, positions, cancel);
        if (!counts) return counts.error();
        if (static_cast<int>(counts->size()) != positions)
            return makeError("parallel.layer_split: " + std::to_string(counts->size()) + " counts for a chain of " +
                             std::to_string(positions) + " positions");
        int begin = 0;
        for (int p = 0; p < positions; ++p) {
            byPosition.push_back({begin, begin + (*counts)[p], p == 0, p == positions - 1});
            begin += (*counts)[p];
        }
    }
    std::vector<StageLayout> byStage(layout.stage_device.size());
    for (const auto& chain : layout.chains)
        for (std::size_t p = 0; p < chain.size(); ++p) byStage[chain[p]] = byPosition[p];
    return byStage;
}

// Megatron-LM gives every tensor-parallel rank whole query groups: it refuses
// num_query_groups % tensor_model_parallel_size != 0 (arguments.py), so neither torchtitan nor
// Megatron could run such a split, and its KV projections' costs would be fractions of a head.
std::optional<Error> checkKeyValueHeads(const Config& config) {
    const int tp = config.parallel.tp, kv = config.model.kvHeads();
    if (tp <= 1 || kv <= 0 || kv % tp == 0) return std::nullopt;
    return makeError("model.kv_heads: " + std::to_string(kv) + " KV heads are not divisible by parallel.tp = " +
                     std::to_string(tp) + " (each tensor-parallel rank needs whole KV heads, as in Megatron-LM)");
}

}  // namespace

Result<std::vector<int>> chainLayerCounts(const Config& config) {
    const ScheduleShape shape = scheduleShapeOf(config);
    if (auto ok = checkShape(shape); !ok) return ok.error();
    if (config.unit_costs) return makeError("parallel.layer_split: unit_costs have no layers to split");
    const PipelineLayout layout = pipelineLayout(shape);
    return positionCounts(config, layout, static_cast<int>(layout.chains.front().size()));
}

Result<Plan> buildPlan(const Config& config, const std::atomic<bool>* cancel) {
    const ScheduleShape shape = scheduleShapeOf(config);
    if (auto ok = checkShape(shape); !ok) return ok.error();
    const PipelineLayout layout = pipelineLayout(shape);
    auto staged = stageLayouts(config, layout, cancel);
    if (!staged) return staged.error();
    const std::vector<StageLayout>& layouts = *staged;
    auto costs = computeStageCosts(config, layouts);
    if (!costs) return costs.error();

    Plan plan;
    plan.info.name = config.name;
    plan.info.scheme = std::string(schemeName(config.parallel.scheme));
    plan.info.micro_batch_size = config.parallel.micro_batch_size;
    plan.info.sequence_length = config.unit_costs ? 0 : config.model.sequence_length;
    plan.info.unit_costs = config.unit_costs.has_value();
    plan.info.data_parallel = config.parallel.dp;
    plan.info.memory_limit_bytes = config.memory_limit_bytes;
    // Unit costs count abstract bytes, which no card's gigabytes can judge.
    if (!config.unit_costs && config.hardware.memory_gb > 0)
        plan.info.device_memory_bytes = config.hardware.memory_gb * 1e9;
    if (!config.unit_costs && !config.profile) {
        plan.info.reserve_bytes = config.hardware.framework_reserve_gb * 1e9;
        plan.info.peak_tflops = config.hardware.peak_tflops;
    }
    plan.info.tensor_parallel = config.parallel.tp;
    plan.info.model_parameters = modelParameterCount(config);
    if (layout.chains.size() > 1) plan.pipelines = layout.chains;
    plan.link = pipelineLink(config);
    plan.overlap_factor = config.parallel.overlap_factor;
    for (std::size_t s = 0; s < layout.stage_device.size(); ++s) {
        StageSpec stage;
        stage.index = static_cast<int>(s);
        stage.device = layout.stage_device[s];
        stage.cost = (*costs)[s];
        if (!config.unit_costs) stage.layers = std::make_pair(layouts[s].begin_layer, layouts[s].end_layer);
        plan.stages.push_back(stage);
    }
    for (int d = 0; d < shape.devices; ++d) plan.devices.push_back({d, {}});

    // Shape and scheme decide the order; costs only matter to Chimera's list scheduler.
    ScheduleShape ordered = shape;
    if (!config.unit_costs && !plan.stages.empty()) {
        ordered.forward_cost = plan.stages.front().cost.forward_ms;
        ordered.backward_cost = plan.stages.front().cost.backward_ms;
    }
    auto order = generateComputeOrder(ordered);
    if (!order) return order.error();
    return planFromComputeOrder(std::move(plan), *order);
}

Result<std::vector<StageCost>> computeStageCosts(const Config& config, const std::vector<StageLayout>& layouts) {
    if (config.unit_costs) return unitStageCosts(*config.unit_costs, layouts.size());
    if (auto error = checkKeyValueHeads(config)) return *error;

    if (auto error = checkLayouts(layouts, config.model.layers)) return *error;
    if (config.profile) {
        // Settings edited in the workbench never pass the config reader's check, so the
        // refusal names the profile itself: "profile "cpu-tiny": measured at …".
        const std::string name = PresetLibrary::profileName(*config.profile);
        auto profile = readProfileFile(*config.profile);
        if (!profile) return makeError("profile \"" + name + "\": " + profile.error().message);
        auto costs = ProfileCostModel(*profile).stageCosts(config, layouts);
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

CostNames costNamesOf(const Config& config) {
    CostNames names;
    if (config.unit_costs) {
        // Every stage costs the unit costs: the key the user wrote, whichever stage it was.
        names.field = [](std::size_t stage, std::string_view field) {
            for (auto [costKey, unitKey] :
                 {std::pair{"forward_ms", "unit_costs.forward"}, std::pair{"backward_ms", "unit_costs.backward"},
                  std::pair{"recompute_ms", "unit_costs.recompute"},
                  std::pair{"activation_bytes", "unit_costs.activation_bytes"},
                  std::pair{"checkpoint_bytes", "unit_costs.checkpoint_bytes"},
                  std::pair{"static_bytes", "unit_costs.static_bytes"}})
                if (field == costKey) return std::string(unitKey);
            return "stage " + std::to_string(stage) + "'s " + std::string(field) + " (from unit_costs)";
        };
        return names;
    }
    if (config.profile) {
        names.field = [profile = PresetLibrary::profileName(*config.profile)](std::size_t stage,
                                                                              std::string_view field) {
            return "stage " + std::to_string(stage) + "'s " + std::string(field) + " (from the profile \"" + profile +
                   "\")";
        };
        return names;
    }
    // The analytical model (docs/cost-model.md) times kernels at the peak and HBM rates times
    // their efficiencies and the gradient reduction over the links: the rates a time's line
    // names, so that an absurd one (peak_tflops 1e-302) is in the message that it caused.
    char rates[160], links[160];
    std::snprintf(rates, sizeof rates, ", at hardware.peak_tflops %g and hardware.hbm_gb_per_s %g",
                  config.hardware.peak_tflops, config.hardware.hbm_gb_per_s);
    std::snprintf(links, sizeof links, ", over hardware.inter_node_gb_per_s %g and hardware.intra_node_gb_per_s %g",
                  config.hardware.inter_node_gb_per_s, config.hardware.intra_node_gb_per_s);
    names.field = [rates = std::string(rates), links = std::string(links)](std::size_t stage, std::string_view field) {
        const std::string from = field == "reduce_grad_ms" ? links : field.ends_with("_ms") ? rates : std::string{};
        return "stage " + std::to_string(stage) + "'s " + std::string(field) + " (from model and hardware" + from + ")";
    };
    // Costs faster than the card (sim/StepFlops.h): the analytical model's times are the
    // hardware's peak times its efficiencies, so those are the keys that claim too much.
    names.peak = "hardware.peak_tflops";
    char keys[200];
    std::snprintf(keys, sizeof keys,
                  " (hardware.gemm_efficiency %g, hardware.flash_forward_efficiency %g and "
                  "hardware.flash_backward_efficiency %g are the shares of it the kernels reach)",
                  config.hardware.gemm_efficiency, config.hardware.flash_forward_efficiency,
                  config.hardware.flash_backward_efficiency);
    names.peak_note = keys;
    return names;
}

}  // namespace mario
