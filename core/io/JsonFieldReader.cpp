#include "core/io/JsonFieldReader.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

namespace mario {

using json = nlohmann::json;

namespace {

// The offending value as the user wrote it, cut short: a megabyte string must not become a
// megabyte error line.
std::string shown(const json& value) {
    std::string text = value.dump();
    if (text.size() > 40) text.replace(37, std::string::npos, "...");
    return text;
}

}  // namespace

JsonFieldReader::JsonFieldReader(const json& object, std::string path) : object_(object), path_(std::move(path)) {
    if (!object_.is_object())
        error_ = makeError(path_.empty() ? "expected a JSON object" : path_ + ": expected an object");
}

bool JsonFieldReader::has(std::string_view key) const { return object_.is_object() && object_.contains(key); }

std::string JsonFieldReader::pathOf(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void JsonFieldReader::fail(std::string_view key, const std::string& reason) {
    if (!error_) error_ = makeError(pathOf(key) + ": " + reason);
}

const json* JsonFieldReader::find(std::string_view key, Need need) {
    if (error_) return nullptr;
    auto it = object_.find(key);
    if (it == object_.end()) {
        if (need == Need::Required) fail(key, "required");
        return nullptr;
    }
    return &*it;
}

void JsonFieldReader::number(std::string_view key, double& out, Need need, Check check) {
    const json* value = find(key, need);
    if (!value) return;
    if (!value->is_number()) return fail(key, "expected a number");
    double x = value->get<double>();
    if (!std::isfinite(x)) return fail(key, "expected a finite number");
    if (check == Check::Positive && !(x > 0))
        return fail(key, "expected a positive number (got " + shown(*value) + ")");
    if (check == Check::NonNegative && x < 0) return fail(key, "must not be negative (got " + shown(*value) + ")");
    if (check == Check::Fraction && !(x > 0 && x <= 1))
        return fail(key, "expected a number in (0, 1] (got " + shown(*value) + ")");
    out = x;
}

void JsonFieldReader::integer(std::string_view key, int& out, Need need, Check check) {
    const json* value = find(key, need);
    if (!value) return;
    // 4.0 is accepted: some tools write every number as a double.
    double x = value->is_number() ? value->get<double>() : 0.5;
    bool integral = value->is_number() && std::floor(x) == x && std::abs(x) <= double(std::numeric_limits<int>::max());
    const char* what = check == Check::Positive      ? "expected a positive integer"
                       : check == Check::NonNegative ? "expected a non-negative integer"
                                                     : "expected an integer";
    if (!integral) return fail(key, what);
    if ((check == Check::Positive && x <= 0) || (check == Check::NonNegative && x < 0))
        return fail(key, std::string(what) + " (got " + shown(*value) + ")");
    out = int(x);
}

void JsonFieldReader::integerIn(std::string_view key, int& out, Need need, int min, int max) {
    const json* value = find(key, need);
    if (!value) return;
    const double x = value->is_number() ? value->get<double>() : 0.5;
    const bool inRange = value->is_number() && std::floor(x) == x && x >= min && x <= max;
    if (!inRange)
        return fail(key, "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "] (got " +
                             shown(*value) + ")");
    out = int(x);
}

void JsonFieldReader::boolean(std::string_view key, bool& out, Need need) {
    const json* value = find(key, need);
    if (!value) return;
    if (!value->is_boolean()) return fail(key, "expected true or false");
    out = value->get<bool>();
}

void JsonFieldReader::string(std::string_view key, std::string& out, Need need) {
    const json* value = find(key, need);
    if (!value) return;
    if (!value->is_string()) return fail(key, "expected a string");
    out = value->get<std::string>();
}

void JsonFieldReader::onlyKeys(std::span<const std::string_view> allowed) {
    if (error_) return;
    for (const auto& [key, value] : object_.items())
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) return fail(key, "unknown key");
}

void JsonFieldReader::header(std::string_view format) {
    std::string actual;
    string("format", actual, Need::Optional);
    if (ok() && has("format") && actual != format)
        return fail("format", "expected \"" + std::string(format) + "\" (got \"" + actual + "\")");
    int version = 1;
    integer("version", version, Need::Optional);
    if (ok() && version != 1)
        fail("version", "unsupported version " + std::to_string(version) + " (this build reads 1)");
}

}  // namespace mario
