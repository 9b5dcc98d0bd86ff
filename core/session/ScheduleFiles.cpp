#include "core/session/ScheduleFiles.h"

#include <exception>
#include <new>

#include "core/io/ConfigJson.h"
#include "core/io/PlanJson.h"
#include "core/io/TextFile.h"
#include "core/passes/PassVocabulary.h"
#include "core/session/InputFile.h"
#include "core/session/PlanBuilder.h"
#include "core/sim/Validator.h"

namespace mario {
namespace {

OpenedSchedule open(const std::string& path, const PresetLibrary& presets) {
    OpenedSchedule out;
    auto input = loadInputFile(path, presets);
    if (!input) {
        out.problem = OpenProblem::Unreadable;
        out.error = input.error().message;
        return out;
    }
    const ValidationReport report = Validator::validate(input->plan);
    if (!report.ok()) {
        out.problem = report.issues.empty() ? OpenProblem::Deadlock : OpenProblem::InvalidPlan;
        // A config's user wrote its keys, not the generated plan's "stages[0].forward_ms".
        out.error = path + ": " + (input->config ? inConfigTerms(report.summary(), *input->config) : report.summary());
        return out;
    }
    out.input.config = std::move(input->config);
    out.input.source = std::move(input->plan);
    out.input.passes = std::move(input->file_passes);
    return out;
}

}  // namespace

OpenedSchedule openSchedule(const std::string& path, const PresetLibrary& presets) {
    try {
        return open(path, presets);
    } catch (const std::bad_alloc&) {
        OpenedSchedule out;
        out.problem = OpenProblem::Unreadable;
        out.error = path + ": too large to load (out of memory)";
        return out;
    } catch (const std::exception& e) {
        OpenedSchedule out;
        out.problem = OpenProblem::Unreadable;
        out.error = path + ": cannot be read (" + e.what() + ")";
        return out;
    }
}

std::optional<std::string> saveRefusal(const std::string& path, const ScheduleInput& input) {
    if (!path.ends_with(".config.json")) return std::nullopt;
    // A config regenerates the plan: it cannot hold hand edits, and a schedule opened from a
    // plan has no config. Refused rather than saved short, so nothing is lost silently.
    if (!input.config)
        return path + ": this schedule was opened from a plan and has no config; save it as a plan (*.mario.json)";
    if (!input.edits.empty())
        return path + ": a config cannot hold the " + std::to_string(input.edits.size()) +
               " hand edit(s); save a plan (*.mario.json) to keep them";
    return std::nullopt;
}

Result<bool> saveSchedule(const std::string& path, const ScheduleInput& input, const Plan* shown) {
    if (auto refusal = saveRefusal(path, input)) return makeError(*refusal);
    if (path.ends_with(".config.json")) {
        Config config = *input.config;
        config.passes = passNames(input.passes);
        return writeTextFile(path, writeConfig(config).dump(2) + "\n", "the config");
    }
    if (!shown) return makeError("nothing to save yet");
    return writePlanFile(*shown, path);
}

}  // namespace mario
