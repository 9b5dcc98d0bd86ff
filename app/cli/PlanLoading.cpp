#include "app/cli/PlanLoading.h"

#include <chrono>

#include "core/io/PresetLibrary.h"
#include "core/passes/PassVocabulary.h"
#include "core/session/PlanBuilder.h"
#include "core/session/ScheduleFiles.h"
#include "core/sim/Validator.h"

namespace mario::cli {

std::optional<CliError> checkPlan(const Plan& plan, const std::string& path) {
    const ValidationReport report = Validator::validate(plan);
    if (!report.issues.empty()) return CliError{kBadInput, path + ": " + report.summary()};
    if (!report.deadlock.empty()) return CliError{kDeadlock, path + ": " + report.summary()};
    return std::nullopt;
}

namespace {

// parallel.layer_split = "search" ranks splits by the step with the passes that will run, which
// --passes may have changed since the file's own selection built the source: the search runs
// with them and the source is rebuilt on the split it chose.
std::optional<CliError> searchWithPasses(ScheduleInput& input, const std::string& path, PreparedPlan& out) {
    if (!input.config || input.config->parallel.layer_split.kind != LayerSplitKind::Search) return std::nullopt;
    auto found = searchLayerSplit(*input.config, {.passes = input.passes, .effort = input.effort});
    if (!found) return CliError{kBadInput, path + ": " + found.error().message};
    Config chosen = *input.config;
    chosen.parallel.layer_split = {LayerSplitKind::Explicit, found->counts};
    auto plan = buildPlan(chosen);
    if (!plan) return CliError{kBadInput, path + ": " + plan.error().message};
    plan->info.name = input.source.info.name;
    input.source = std::move(*plan);
    // Opening the file already searched with its own passes; when --passes left them as they are,
    // that search's answer comes back at once (searchLayerSplit keeps the last one), so the time
    // reported is the search's own; preparePlan counts the time spent here as loading.
    out.search_us = found->search_us;
    out.layer_split_search = std::move(*found);
    return std::nullopt;
}

}  // namespace

std::variant<PreparedPlan, CliError> preparePlan(const std::string& path, const std::optional<std::string>& passes,
                                                 const std::string& executable, PrepareOptions options) {
    // A plan file needs no presets, so a missing profiles folder only matters for configs.
    auto presets = PresetLibrary::locate(executable);
    const PresetLibrary library = presets ? *presets : PresetLibrary(std::string{});

    const auto loadStart = std::chrono::steady_clock::now();
    OpenedSchedule opened = openSchedule(path, library);
    const double loadUs =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - loadStart).count();
    if (!opened.ok()) {
        std::string message = opened.error;
        if (!presets && opened.problem == OpenProblem::Unreadable) message += " (" + presets.error().message + ")";
        return CliError{opened.problem == OpenProblem::Deadlock ? kDeadlock : kBadInput, message};
    }
    if (passes) {
        auto parsed = parsePassList(*passes);
        if (!parsed) return CliError{kBadInput, "--passes: " + parsed.error().message};
        opened.input.passes = *parsed;
    }
    PreparedPlan out;
    const auto searchStart = std::chrono::steady_clock::now();
    if (auto error = searchWithPasses(opened.input, path, out)) return *error;
    const double reopenUs =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - searchStart).count();
    auto prepared = prepareSchedule(opened.input, options);
    if (!prepared) return CliError{kBadInput, path + ": " + prepared.error().message};
    static_cast<PreparedSchedule&>(out) = std::move(*prepared);
    out.input = std::move(opened.input);
    out.load_us = loadUs + reopenUs;
    return out;
}

}  // namespace mario::cli
