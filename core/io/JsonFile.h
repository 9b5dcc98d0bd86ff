#pragma once
// Reads a whole JSON file for every file kind the tools open (plans, configs, presets,
// profiles). Comments are allowed because configs are written by hand; syntax errors name
// the file, line and column.
#include <string>

#include <nlohmann/json.hpp>

#include "core/util/Result.h"

namespace mario {

Result<nlohmann::json> readJsonFile(const std::string& path);

}  // namespace mario
