#include "core/io/TorchtitanSettings.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <sstream>

#include "core/model/Schemes.h"

namespace mario {
namespace {

enum class Style { Loop, V, None };  // torchtitan's two placements, or neither

// Stage s's rank, from the plan's stages (a validated plan gives every index one device).
std::vector<int> stageRanks(const Plan& plan) {
    std::vector<int> rank(plan.stages.size(), -1);
    for (const StageSpec& stage : plan.stages)
        if (stage.index >= 0 && stage.index < static_cast<int>(rank.size())) rank[stage.index] = stage.device;
    return rank;
}

// torchtitan's two stage-to-rank rules (its _get_pp_rank_to_stage_indices_mapping).
Style styleOf(const std::vector<int>& rank, int ranks) {
    const int stages = static_cast<int>(rank.size());
    bool loop = true;
    bool v = stages == 2 * ranks;
    for (int s = 0; s < stages; ++s) {
        loop = loop && rank[s] == s % ranks;
        v = v && rank[s] == (s < ranks ? s : 2 * ranks - 1 - s);
    }
    if (loop) return Style::Loop;
    return v ? Style::V : Style::None;
}

// PyTorch's class for the scheme where it has one that builds this placement; else the
// plainest class that does (an imported plan's scheme is "imported").
std::string className(const std::string& schemeText, Style placement, int stagesPerRank) {
    const std::optional<Scheme> scheme = parseScheme(schemeText);
    if (placement == Style::V) return scheme == Scheme::DualPipeV ? "DualPipeV" : "ZBVZeroBubble";
    if (stagesPerRank == 1) return scheme == Scheme::GPipe ? "GPipe" : "1F1B";
    if (scheme == Scheme::LoopedBfs) return "LoopedBFS";
    if (scheme == Scheme::InterleavedZb) return "InterleavedZeroBubble";
    return "Interleaved1F1B";
}

int ceilDiv(int a, int b) { return (a + b - 1) / b; }

// Layers per stage as torchtitan's _generate_llm_fqn_per_model_part deals them: the embedding
// counts as `firstLess` layers of stage 0, norm and head as `lastLess` of the last stage.
// Empty where torchtitan refuses the split (more stages than effective layers, or an end
// weight above the layers every stage gets).
std::vector<int> torchtitanSplit(int layers, int stages, int firstLess, int lastLess) {
    const int effective = layers + firstLess + lastLess;
    if (stages > effective) return {};
    const int base = effective / stages;
    const int extra = effective % stages;
    if (base == 0 || firstLess > base || lastLess > base) return {};
    std::vector<int> split;
    int left = layers;
    for (int s = 0; s < stages; ++s) {
        int take = base + (s < extra ? 1 : 0);
        if (s == 0) take -= firstLess;
        if (s == stages - 1 && stages > 1) take -= lastLess;
        take = std::clamp(take, 0, left);
        split.push_back(take);
        left -= take;
    }
    return split;
}

std::string joined(const std::vector<int>& values) {
    std::string out;
    for (int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
    return out;
}

}  // namespace

std::vector<std::string> TorchtitanSettings::overrides(const std::string& csvPath) const {
    std::vector<std::string> out{
        "--parallelism.pipeline_parallel_degree=" + std::to_string(pipeline_degree),
        "--parallelism.pipeline_parallel_schedule=" + schedule,
    };
    if (layers_per_stage > 0)
        out.push_back("--parallelism.pipeline_parallel_layers_per_stage=" + std::to_string(layers_per_stage));
    if (first_stage_less_layers != 1)
        out.push_back("--parallelism.pipeline_parallel_first_stage_less_layers=" +
                      std::to_string(first_stage_less_layers));
    if (last_stage_less_layers != 1)
        out.push_back("--parallelism.pipeline_parallel_last_stage_less_layers=" +
                      std::to_string(last_stage_less_layers));
    out.push_back("--parallelism.pipeline_parallel_microbatch_size=" + std::to_string(microbatch_size));
    out.push_back("--training.local_batch_size=" + std::to_string(local_batch_size));
    // torchtitan's trainer config refuses pipeline parallelism while CUDA graphs are on, and
    // they are on by default (torchtitan 0.3's Trainer.Config._validate_cuda_graphs).
    out.push_back("--training.disable_cuda_graphs");
    out.push_back("--parallelism.pipeline_parallel_schedule_csv=" + csvPath);
    return out;
}

Result<TorchtitanSettings> torchtitanSettings(const Plan& plan) {
    const auto rank = stageRanks(plan);
    const int ranks = static_cast<int>(plan.devices.size());
    const int stages = static_cast<int>(rank.size());
    if (ranks < 2)
        return makeError("one device: torchtitan runs it without pipeline parallelism, so no schedule to load");
    if (stages % ranks != 0)
        return makeError(std::to_string(stages) + " stages on " + std::to_string(ranks) +
                         " ranks: torchtitan gives every rank the same number of stages");
    TorchtitanSettings settings;
    settings.pipeline_degree = ranks;
    settings.stages_per_rank = stages / ranks;
    const Style placement = styleOf(rank, ranks);
    if (placement == Style::None)
        return makeError("the plan places its stages neither in a loop (stage s on rank s mod " +
                         std::to_string(ranks) + ") nor in a V (rank r: r and " + std::to_string(2 * ranks - 1) +
                         "-r), the only placements torchtitan builds");
    settings.schedule = className(plan.info.scheme, placement, settings.stages_per_rank);
    settings.microbatch_size = std::max(1, plan.info.micro_batch_size);
    settings.local_batch_size = plan.microbatchCount() * settings.microbatch_size;

    // The plan's layer split, when every stage says which layers it holds.
    int layers = 0;
    std::vector<int> planSplit(static_cast<std::size_t>(stages), -1);
    for (const StageSpec& stage : plan.stages)
        if (stage.layers && stage.index >= 0 && stage.index < stages) {
            planSplit[stage.index] = stage.layers->second - stage.layers->first;
            layers = std::max(layers, stage.layers->second);
        }
    const bool knownSplit = std::none_of(planSplit.begin(), planSplit.end(), [](int n) { return n < 0; });

    // Without layers_per_stage torchtitan builds one stage per rank for single-stage classes
    // and two for the others; any other count needs layers_per_stage, which must give exactly
    // this many stages: ceil((layers + first_less + last_less) / layers_per_stage).
    const bool needsCount = settings.stages_per_rank != (settings.stages_per_rank == 1 ? 1 : 2);
    if (needsCount && !knownSplit)
        return makeError("the plan has " + std::to_string(settings.stages_per_rank) +
                         " stages per rank but does not say which layers each holds, so no "
                         "pipeline_parallel_layers_per_stage can be derived");
    // Embedding and head weights (first/last_stage_less_layers) that make torchtitan build the
    // stages and deal the layers as the plan does: its default (1, 1) first, so that the file
    // names only what differs. Failing a match, the first weights it accepts, with a note.
    struct Choice {
        int first = 1, last = 1, layersPerStage = 0;
    };
    auto usable = [&](int a, int b) -> std::optional<Choice> {
        if (knownSplit && torchtitanSplit(layers, stages, a, b).empty()) return std::nullopt;
        Choice choice{a, b, 0};
        if (!needsCount) return choice;
        for (int k = 1; k <= layers + a + b && choice.layersPerStage == 0; ++k)
            if (ceilDiv(layers + a + b, k) == stages) choice.layersPerStage = k;
        return choice.layersPerStage > 0 ? std::optional(choice) : std::nullopt;
    };
    std::vector<std::pair<int, int>> weights{{1, 1}};
    for (int a = 0; a <= 3; ++a)
        for (int b = 0; b <= 3; ++b)
            if (a != 1 || b != 1) weights.emplace_back(a, b);
    std::optional<Choice> chosen;
    bool splitMatches = false;
    if (knownSplit)
        for (const auto& [a, b] : weights)
            if (auto choice = usable(a, b);
                !splitMatches && choice && torchtitanSplit(layers, stages, a, b) == planSplit) {
                chosen = choice;
                splitMatches = true;
            }
    for (const auto& [a, b] : weights)
        if (!chosen) chosen = usable(a, b);
    if (!chosen)
        return makeError("torchtitan cannot build " + std::to_string(stages) + " stages from " +
                         std::to_string(layers) +
                         " layers (no pipeline_parallel_layers_per_stage and "
                         "end weights give that many)");
    settings.first_stage_less_layers = chosen->first;
    settings.last_stage_less_layers = chosen->last;
    settings.layers_per_stage = chosen->layersPerStage;
    if (knownSplit && !splitMatches)
        settings.notes.push_back("torchtitan deals the layers " +
                                 joined(torchtitanSplit(layers, stages, chosen->first, chosen->last)) +
                                 " over the stages, the plan " + joined(planSplit) +
                                 ": the order runs as written, the stage times differ from the plan's");
    if (plan.info.data_parallel > 1)
        settings.notes.push_back("local_batch_size is per data-parallel replica: launch " +
                                 std::to_string(ranks * plan.info.data_parallel) + " ranks for pp " +
                                 std::to_string(ranks) + " x dp " + std::to_string(plan.info.data_parallel));
    return settings;
}

std::string torchtitanArgsFile(const TorchtitanSettings& settings, const std::string& csvPath) {
    std::ostringstream out;
    out << "# torchtitan (0.3 and later) settings that run " << csvPath << " (written by mario export).\n"
        << "# Append them to a torchtitan command line, e.g.\n"
        << "#   torchrun --nproc_per_node=" << settings.pipeline_degree
        << " -m torchtitan.train --module llama3 --config llama3_8b $(grep -v '^#' FILE)\n"
        << "# torchtitan runs the CSV with PyTorch's _PipelineScheduleRuntime; the schedule named here\n"
        << "# only decides how it builds the " << settings.pipeline_degree * settings.stages_per_rank << " stages ("
        << settings.stages_per_rank << " per rank, as the plan places them). The CSV path is the one given\n"
        << "# to mario export: relative paths are taken from where torchtitan starts.\n";
    for (const std::string& note : settings.notes) out << "# note: " << note << "\n";
    for (const std::string& line : settings.overrides(csvPath)) out << line << "\n";
    return out.str();
}

std::string torchtitanArgsPath(const std::string& csvPath) {
    std::filesystem::path path(csvPath);
    path.replace_extension(".torchtitan.args");
    return path.string();
}

}  // namespace mario
