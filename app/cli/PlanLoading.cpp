#include "app/cli/PlanLoading.h"

#include <chrono>

#include "core/io/PresetLibrary.h"
#include "core/passes/PassVocabulary.h"
#include "core/session/ScheduleFiles.h"
#include "core/sim/Validator.h"

namespace mario::cli {

std::optional<CliError> checkPlan(const Plan& plan, const std::string& path) {
    const ValidationReport report = Validator::validate(plan);
    if (!report.issues.empty()) return CliError{kBadInput, path + ": " + report.summary()};
    if (!report.deadlock.empty()) return CliError{kDeadlock, path + ": " + report.summary()};
    return std::nullopt;
}

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
    auto prepared = prepareSchedule(opened.input, options);
    if (!prepared) return CliError{kBadInput, path + ": " + prepared.error().message};
    PreparedPlan out;
    static_cast<PreparedSchedule&>(out) = std::move(*prepared);
    out.input = std::move(opened.input);
    out.load_us = loadUs;
    return out;
}

}  // namespace mario::cli
