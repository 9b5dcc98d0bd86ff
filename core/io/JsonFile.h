#pragma once
// Reads a whole JSON file for every file kind the tools open (plans, configs, presets,
// profiles, autosaves). Comments are allowed because configs are written by hand; syntax
// errors name the file, line and column. A text whose parsed form would take more than
// limits::kMaxJsonMemoryBytes is refused before any of it is built (docs/limits.md).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/model/Limits.h"
#include "core/util/Result.h"

namespace mario {

Result<nlohmann::json> readJsonFile(const std::string& path);

// `text` parsed as readJsonFile parses a file's; `name` (a path) starts every error, or, left
// empty, errors start with the line and column ("3:16: malformed JSON: …") or what is wrong.
// The budget is a parameter for tests only.
Result<nlohmann::json> parseJsonText(const std::string& text, const std::string& name,
                                     std::int64_t budgetBytes = limits::kMaxJsonMemoryBytes);

}  // namespace mario
