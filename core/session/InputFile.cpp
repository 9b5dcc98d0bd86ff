#include "core/session/InputFile.h"

#include <filesystem>

#include "core/io/ConfigJson.h"
#include "core/io/JsonFile.h"
#include "core/io/PlanJson.h"
#include "core/passes/PassManager.h"
#include "core/session/PlanBuilder.h"

namespace mario {

Result<InputFile> loadInputFile(const std::string& path, const PresetLibrary& presets,
                                const std::atomic<bool>* cancel) {
    auto json = readJsonFile(path);
    if (!json) return json.error();
    InputFile input;
    if (looksLikePlan(*json)) {
        auto plan = readPlan(*json, {.validate = false});
        if (!plan) return makeError(path + ": " + plan.error().message);
        input.plan = std::move(*plan);
        return input;
    }
    // A plan without its "format" would otherwise be read as a config and fail on a plan key
    // ("data_parallel: unknown key"), which says nothing about the real problem.
    const bool planShaped = json->is_object() && !json->contains("format") &&
                            (json->contains("stages") || (json->contains("devices") && (*json)["devices"].is_array()));
    if (planShaped)
        return makeError(path + ": format: required (\"mario-plan\" for a plan with stages and device programs, "
                                "\"mario-config\" for a config)");
    return loadConfigDocument(*json, presets, std::filesystem::path(path).parent_path().string(), path, cancel);
}

Result<InputFile> loadConfigDocument(const nlohmann::json& document, const PresetLibrary& presets,
                                     const std::string& baseDir, const std::string& label,
                                     const std::atomic<bool>* cancel) {
    const std::string where = label.empty() ? std::string{} : label + ": ";
    InputFile input;
    auto config = readConfig(document, presets, baseDir);
    if (!config) return makeError(where + config.error().message);
    auto passes = parsePassNames(config->passes);
    if (!passes) return makeError(where + "passes: " + passes.error().message);
    auto plan = buildPlan(*config, cancel);
    if (!plan) return makeError(where + plan.error().message);
    if (plan->info.name.empty()) plan->info.name = config->name;
    input.plan = std::move(*plan);
    input.file_passes = std::move(*passes);
    input.config = std::move(*config);
    return input;
}

}  // namespace mario
