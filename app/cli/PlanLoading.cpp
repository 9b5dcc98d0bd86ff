#include "PlanLoading.h"

#include <chrono>

#include "io/InputFile.h"
#include "model/PresetLibrary.h"
#include "passes/PassManager.h"
#include "sim/Validator.h"

namespace mario::cli {
namespace {

double microsecondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::optional<CliError> checkPlan(const Plan& plan, const std::string& path) {
    const ValidationReport report = Validator::validate(plan);
    if (!report.issues.empty()) return CliError{kBadInput, path + ": " + report.summary()};
    if (!report.deadlock.empty()) return CliError{kDeadlock, path + ": " + report.summary()};
    return std::nullopt;
}

std::variant<PreparedPlan, CliError> preparePlan(const std::string& path, const std::optional<std::string>& passes,
                                                 const std::string& executable) {
    // A plan file needs no presets, so a missing profiles folder only matters for configs.
    auto presets = PresetLibrary::locate(executable);
    const PresetLibrary library = presets ? *presets : PresetLibrary(std::string{});

    PreparedPlan prepared;
    const auto loadStart = std::chrono::steady_clock::now();
    auto input = loadInputFile(path, library);
    if (!input) {
        std::string message = input.error().message;
        if (!presets) message += " (" + presets.error().message + ")";
        return CliError{kBadInput, message};
    }
    prepared.load_us = microsecondsSince(loadStart);
    prepared.plan = std::move(input->plan);
    if (auto error = checkPlan(prepared.plan, path)) return *error;

    if (passes) {
        auto parsed = parsePassList(*passes);
        if (!parsed) return CliError{kBadInput, "--passes: " + parsed.error().message};
        prepared.passes = *parsed;
    } else {
        prepared.passes = input->file_passes;
    }
    const auto passStart = std::chrono::steady_clock::now();
    auto run = runPasses(prepared.plan, prepared.passes, {.validate_each_pass = false});
    prepared.passes_us = microsecondsSince(passStart);
    if (!run) return CliError{kBadInput, path + ": " + run.error().message};
    prepared.steps = std::move(run->steps);
    return prepared;
}

}  // namespace mario::cli
