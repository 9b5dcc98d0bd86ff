#include "core/sweep/SweepExport.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/passes/PassVocabulary.h"

namespace mario {
namespace {

using json = nlohmann::json;

json knobValueJson(const KnobValue& value) { return value.isWord() ? json(value.word) : json(value.number); }
// 0 is "not known" for MFU (unit costs, profiles): null, as `mario simulate --json` writes it.
json unknownAsNull(double value) { return value > 0 ? json(value) : json(nullptr); }

// The keys of `mario simulate --json` where they mean the same, so rows compare field by field.
json pointJson(const SweepPoint& point, const std::vector<KnobRange>& knobs) {
    json values = json::object();
    for (std::size_t k = 0; k < knobs.size() && k < point.values.size(); ++k)
        values[std::string(knobs[k].knob->key)] = knobValueJson(point.values[k]);
    json out = {{"values", values},
                {"scheme", std::string(schemeName(point.scheme.scheme))},
                {"scheme_choice", point.scheme.label()},
                {"passes", passNames(point.passes)},
                {"pass_set", point.pass_set},
                {"refusal", point.refusal.empty() ? json(nullptr) : json(point.refusal)}};
    if (!point.ok()) return out;
    json devices = json::array();
    for (std::size_t d = 0; d < point.device_peak_bytes.size(); ++d)
        devices.push_back({{"index", d}, {"peak_memory_bytes", point.device_peak_bytes[d]}});
    out.update({{"makespan", point.step_ms},
                {"throughput", point.samples_per_s},
                {"samples_per_s", point.samples_per_s},
                {"tokens_per_s", point.tokens_per_s},
                {"mfu", unknownAsNull(point.mfu)},
                {"bubble_ratio", point.bubble_ratio},
                {"parameters", unknownAsNull(point.parameters)},
                {"peak_memory_bytes", point.peak_bytes},
                {"fullest_device", point.fullest_device},
                {"budget_bytes", point.budget_bytes ? json(*point.budget_bytes) : json(nullptr)},
                {"fits_memory", point.fits ? json(*point.fits) : json(nullptr)},
                {"devices", devices}});
    return out;
}

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string out = "\"";
    for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", value);
    return text;
}

}  // namespace

json sweepJson(const SweepResult& result) {
    json knobs = json::array();
    for (const KnobRange& range : result.spec.knobs) {
        json values = json::array();
        for (const KnobValue& value : range.values) values.push_back(knobValueJson(value));
        knobs.push_back({{"key", std::string(range.knob->key)}, {"values", values}});
    }
    json points = json::array();
    for (const SweepPoint& point : result.points) points.push_back(pointJson(point, result.spec.knobs));
    return {{"knobs", knobs},
            {"points", points},
            {"cancelled", result.cancelled},
            {"threads", result.threads},
            {"elapsed_ms", result.elapsed_ms}};
}

std::string sweepCsv(const SweepResult& result) {
    std::string out;
    for (const KnobRange& range : result.spec.knobs) out += std::string(range.knob->key) + ",";
    out += "scheme,passes,makespan,samples_per_s,tokens_per_s,mfu,bubble_ratio,peak_memory_bytes,fullest_device,"
           "budget_bytes,fits_memory,refusal\n";
    for (const SweepPoint& point : result.points) {
        for (const KnobValue& value : point.values) out += csvField(value.text()) + ",";
        out += csvField(point.scheme.label()) + "," + csvField(passSetLabel(point.passes)) + ",";
        if (point.ok()) {
            out += number(point.step_ms) + "," + number(point.samples_per_s) + "," + number(point.tokens_per_s) + "," +
                   (point.mfu > 0 ? number(point.mfu) : "") + "," + number(point.bubble_ratio) + "," +
                   number(point.peak_bytes) + "," + std::to_string(point.fullest_device) + "," +
                   (point.budget_bytes ? number(*point.budget_bytes) : "") + "," +
                   (point.fits ? (*point.fits ? "true" : "false") : "") + ",";
        } else {
            out += ",,,,,,,,,";
        }
        out += csvField(point.refusal) + "\n";
    }
    return out;
}

json capacityJson(const CapacityResult& result) {
    const std::string key(result.spec.knob->key);
    json answers = json::array();
    for (const CapacityAnswer& answer : result.answers) {
        json out = {{"scheme", std::string(schemeName(answer.scheme.scheme))},
                    {"scheme_choice", answer.scheme.label()},
                    {"passes", passNames(answer.passes)},
                    {"largest", answer.largest ? json(*answer.largest) : json(nullptr)},
                    {"reached_max", answer.reached_max},
                    {"refused_above", answer.refused_above.empty() ? json(nullptr) : json(answer.refused_above)},
                    {"probes", answer.probes},
                    {"checked", answer.checked},
                    {"monotone", answer.violations.empty()},
                    {"violations", answer.violations}};
        const std::vector<KnobRange> knobs = {{result.spec.knob, {}}};
        out["at"] = answer.at ? pointJson(*answer.at, knobs) : json(nullptr);
        out["first_over"] = answer.first_over ? pointJson(*answer.first_over, knobs) : json(nullptr);
        answers.push_back(out);
    }
    return {{"knob", key},
            {"min", result.spec.min},
            {"max", result.spec.max},
            {"step", result.spec.step},
            {"answers", answers},
            {"cancelled", result.cancelled},
            {"elapsed_ms", result.elapsed_ms}};
}

}  // namespace mario
