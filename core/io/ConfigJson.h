#pragma once
// Reading and writing config files (*.config.json, docs/config-format.md), plus the typed field
// reader that preset, profile and config files share, so every error a user sees names the
// JSON path that caused it ("parallel.pp: expected a positive integer").
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/io/JsonFieldReader.h"
#include "core/io/JsonFile.h"
#include "core/model/Config.h"
#include "core/util/Result.h"

namespace mario {

class PresetLibrary;

// Parses and validates a config document. Model and hardware are preset names (looked up in
// presets) or inline objects; a relative "profile" path is resolved against baseDir first
// (the config file's folder, if given) and then the presets' folder.
Result<Config> readConfig(const nlohmann::json& document, const PresetLibrary& presets,
                          const std::string& baseDir = {});
// The rules across fields a config must keep (divisible batches, each scheme's needs, layers
// enough for its stages, …), each error naming the field to change. readConfig applies them;
// so does every front end that edits a Config in place (the window's settings), so that what
// it draws and saves is what a file could hold.
std::optional<Error> checkConfig(const Config& config);
// Reads a file; errors are prefixed with the file's path.
Result<Config> readConfigFile(const std::string& path, const PresetLibrary& presets);
// Writes a config that readConfig reads back to an equal Config. Model and hardware are
// written inline so the file does not depend on the presets of the machine that reads it.
nlohmann::json writeConfig(const Config& config);

}  // namespace mario
