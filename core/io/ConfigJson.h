#pragma once
// Reading and writing config files (*.config.json, DESIGN.md §4b), plus the typed field
// reader that preset, profile and config files share, so every error a user sees names the
// JSON path that caused it ("parallel.pp: expected a positive integer").
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "model/Config.h"
#include "util/Result.h"

namespace mario {

class PresetLibrary;

// Reads typed fields of one JSON object. The first error sticks and later reads become
// no-ops, so a parser can read every field in a row and check error() once at the end.
// Absent optional fields leave the output untouched, which keeps struct defaults.
class JsonFieldReader {
public:
    enum class Need { Optional, Required };
    enum class Check { Any, NonNegative, Positive, Fraction /* in (0, 1] */ };

    // path is the object's own JSON path ("parallel"); empty for the document root.
    JsonFieldReader(const nlohmann::json& object, std::string path);

    bool has(std::string_view key) const;
    std::string pathOf(std::string_view key) const;  // "parallel.pp", or "pp" at the root

    void number(std::string_view key, double& out, Need need, Check check = Check::Any);
    void integer(std::string_view key, int& out, Need need, Check check = Check::Any);
    void boolean(std::string_view key, bool& out, Need need);
    void string(std::string_view key, std::string& out, Need need);
    // Rejects keys outside the allowed set: typos like "micro_batch" must not pass silently.
    void onlyKeys(std::span<const std::string_view> allowed);
    // A "format"/"version" header: format must match when present, version must be 1.
    void header(std::string_view format);

    void fail(std::string_view key, const std::string& reason);
    bool ok() const { return !error_.has_value(); }
    const std::optional<Error>& error() const { return error_; }

private:
    const nlohmann::json* find(std::string_view key, Need need);

    const nlohmann::json& object_;
    std::string path_;
    std::optional<Error> error_;
};

// The pass names a config may select, in the order "all" expands to. Long names
// ("apply-checkpoint", "overlap-recompute", "remove-redundancy", "prepose-forward") are
// accepted on input and stored as these short ones.
std::span<const std::string_view> configPassNames();

// Reads and parses a JSON file; errors say which file and, for syntax errors, where.
Result<nlohmann::json> readJsonFile(const std::string& path);

// Parses and validates a config document. Model and hardware are preset names (looked up in
// presets) or inline objects; a relative "profile" path is resolved against baseDir first
// (the config file's folder, if given) and then the presets' folder.
Result<Config> readConfig(const nlohmann::json& document, const PresetLibrary& presets,
                          const std::string& baseDir = {});
// Reads a file; errors are prefixed with the file's path.
Result<Config> readConfigFile(const std::string& path, const PresetLibrary& presets);
// Writes a config that readConfig reads back to an equal Config. Model and hardware are
// written inline so the file does not depend on the presets of the machine that reads it.
nlohmann::json writeConfig(const Config& config);

}  // namespace mario
