#pragma once
// Opens what a user hands the tools: a config (turned into a plan by the generators) or a
// plan file. Shared by the CLI and the workbench so both read files the same way.
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/io/PresetLibrary.h"
#include "core/model/Config.h"
#include "core/passes/PassReport.h"
#include "core/schedule/Plan.h"
#include "core/util/Result.h"

namespace mario {

struct InputFile {
    Plan plan;                        // not yet validated when it came from a plan file
    std::vector<PassId> file_passes;  // the config's own pass selection (none for a plan)
    std::optional<Config> config;     // set when the file was a config
};

// `cancel` stops a config's layer-split search (session/PlanBuilder.h's buildPlan): the caller
// that sets it discards the result.
Result<InputFile> loadInputFile(const std::string& path, const PresetLibrary& presets,
                                const std::atomic<bool>* cancel = nullptr);

// A config given as a JSON document rather than a file (a sweep's point: a config with knobs
// edited), read and generated as loadInputFile reads a config file. `label` prefixes errors as
// the path does ("" for none); a relative profile resolves against `baseDir`.
Result<InputFile> loadConfigDocument(const nlohmann::json& document, const PresetLibrary& presets,
                                     const std::string& baseDir, const std::string& label,
                                     const std::atomic<bool>* cancel = nullptr);

}  // namespace mario
