#include "core/session/ScheduleFiles.h"

#include <exception>
#include <new>
#include <optional>

#include "core/io/ConfigJson.h"
#include "core/io/PlanJson.h"
#include "core/io/TextFile.h"
#include "core/passes/PassVocabulary.h"
#include "core/session/InputFile.h"
#include "core/session/PlanBuilder.h"
#include "core/sim/Validator.h"

namespace mario {
namespace {

// Checks what was loaded as openSchedule promises: readable, valid, free of deadlocks.
OpenedSchedule checked(Result<InputFile> input, const std::string& label) {
    OpenedSchedule out;
    if (!input) {
        out.problem = OpenProblem::Unreadable;
        out.error = input.error().message;
        return out;
    }
    // A config's user wrote its keys, not the generated plan's "stages[0].forward_ms".
    const std::optional<CostNames> names =
        input->config ? std::optional<CostNames>(costNamesOf(*input->config)) : std::nullopt;
    const ValidationReport report = Validator::validate(input->plan, names ? &*names : nullptr);
    if (!report.ok()) {
        out.problem = report.issues.empty() ? OpenProblem::Deadlock : OpenProblem::InvalidPlan;
        out.error = (label.empty() ? std::string{} : label + ": ") + report.summary();
        return out;
    }
    out.input.config = std::move(input->config);
    out.input.source = std::move(input->plan);
    out.input.passes = std::move(input->file_passes);
    return out;
}

// Whatever escapes the readers (memory on a hostile file) becomes the error line.
template <class Open>
OpenedSchedule guarded(const std::string& label, Open open) {
    const std::string where = label.empty() ? std::string{} : label + ": ";
    try {
        return open();
    } catch (const std::bad_alloc&) {
        OpenedSchedule out;
        out.problem = OpenProblem::Unreadable;
        out.error = where + "too large to load (out of memory)";
        return out;
    } catch (const std::exception& e) {
        OpenedSchedule out;
        out.problem = OpenProblem::Unreadable;
        out.error = where + "cannot be read (" + e.what() + ")";
        return out;
    }
}

}  // namespace

OpenedSchedule openSchedule(const std::string& path, const PresetLibrary& presets, const std::atomic<bool>* cancel) {
    return guarded(path, [&] { return checked(loadInputFile(path, presets, cancel), path); });
}

OpenedSchedule openConfigDocument(const nlohmann::json& document, const PresetLibrary& presets,
                                  const std::string& baseDir, const std::string& label,
                                  const std::atomic<bool>* cancel) {
    return guarded(label,
                   [&] { return checked(loadConfigDocument(document, presets, baseDir, label, cancel), label); });
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
