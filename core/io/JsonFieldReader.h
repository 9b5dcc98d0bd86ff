#pragma once
// A typed reader for the fields of one JSON object, shared by the preset, profile and config
// parsers, so every error a user sees names the JSON path that caused it
// ("parallel.pp: expected a positive integer").
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/util/Result.h"

namespace mario {

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
    // An integer in [min, max]; anything else (2^40, 1e999 already refused by the parser, 4.5,
    // a string) fails with the range in the message: "parallel.pp: expected an integer in
    // [1, 1024] (got 5000)".
    void integerIn(std::string_view key, int& out, Need need, int min, int max);
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

}  // namespace mario
