#include "core/sweep/PointRunner.h"

#include <cmath>

#include "core/io/ConfigJson.h"
#include "core/io/PresetLibrary.h"
#include "core/passes/PassVocabulary.h"
#include "core/session/PreparedSchedule.h"
#include "core/session/ScheduleFiles.h"
#include "core/sim/MemoryFit.h"

namespace mario {
namespace {

// The JSON value at a dotted key ("parallel.pp"), created when missing.
nlohmann::json& at(nlohmann::json& document, std::string_view key) {
    nlohmann::json* node = &document;
    std::size_t from = 0;
    for (;;) {
        const std::size_t dot = key.find('.', from);
        node = &(*node)[std::string(key.substr(from, dot == std::string_view::npos ? dot : dot - from))];
        if (dot == std::string_view::npos) return *node;
        from = dot + 1;
    }
}

// A larger model keeps its shape: the head size (hidden / heads), the heads per KV head and the
// FFN's ratio stay, as in the GPT-3 family of the paper's §6.4 (128-wide heads).
void scaleModelWidth(nlohmann::json& model, int hidden) {
    const int oldHidden = model.value("hidden", 0), heads = model.value("heads", 0);
    if (oldHidden > 0 && heads > 0 && oldHidden % heads == 0 && hidden % (oldHidden / heads) == 0) {
        const int newHeads = hidden / (oldHidden / heads);
        const int kvHeads = model.value("kv_heads", 0);
        if (kvHeads > 0 && heads % kvHeads == 0 && newHeads % (heads / kvHeads) == 0)
            model["kv_heads"] = newHeads / (heads / kvHeads);
        model["heads"] = newHeads;
    }
    if (const int ffn = model.value("ffn_hidden", 0); ffn > 0 && oldHidden > 0)
        model["ffn_hidden"] = static_cast<int>(std::lround(static_cast<double>(ffn) * hidden / oldHidden));
    model["hidden"] = hidden;
}

void setKnob(nlohmann::json& document, const SweepKnob& knob, const KnobValue& value) {
    if (knob.key == "model.hidden" && document["model"].is_object()) {
        scaleModelWidth(document["model"], static_cast<int>(value.number));
        return;
    }
    nlohmann::json& field = at(document, knob.key);
    if (knob.kind == SweepKnob::Kind::Word) {
        if (knob.words == "true|false") field = value.word == "true";
        else field = value.word;
    } else if (knob.kind == SweepKnob::Kind::Integer) {
        field = static_cast<long long>(value.number);
    } else {
        field = value.number;
    }
}

}  // namespace

PointRunner::PointRunner(const Config& base) : base_(base), document_(writeConfig(base)) {
    // The device count is a check of pp × dp × tp, which a point may change.
    document_.erase("devices");
}

nlohmann::json PointRunner::document(const std::vector<const SweepKnob*>& knobs, const std::vector<KnobValue>& values,
                                     const std::optional<SchemeChoice>& scheme,
                                     const std::optional<std::vector<PassId>>& passes) const {
    nlohmann::json document = document_;
    if (scheme) {
        const SchemeInfo& info = schemeInfo(scheme->scheme);
        document["parallel"]["scheme"] = std::string(schemeName(scheme->scheme));
        document["parallel"]["chunks"] = !info.chunked      ? 1
                                         : scheme->chunks > 0 ? scheme->chunks
                                         : base_.parallel.chunks >= 2 ? base_.parallel.chunks
                                                                      : 2;
    }
    // After the scheme, so that a chunks knob wins over the scheme's default chunks.
    for (std::size_t k = 0; k < knobs.size() && k < values.size(); ++k) setKnob(document, *knobs[k], values[k]);
    if (passes) document["passes"] = passNames(*passes);
    return document;
}

SweepPoint PointRunner::run(const std::vector<const SweepKnob*>& knobs, const std::vector<KnobValue>& values,
                            const std::optional<SchemeChoice>& scheme,
                            const std::optional<std::vector<PassId>>& passes, const std::atomic<bool>* cancel) const {
    SweepPoint point;
    point.values = values;
    point.scheme = scheme.value_or(SchemeChoice{base_.parallel.scheme, base_.parallel.chunks});
    const nlohmann::json edited = document(knobs, values, scheme, passes);
    point.scheme.chunks = edited["parallel"].value("chunks", 1);  // the chunks it ran with
    // Inline model and hardware, and an absolute profile path: no preset is looked up.
    static const PresetLibrary noPresets{std::string{}};
    // Stopped part-way (a "search" split while opening, or the passes): neither a point nor a refusal.
    auto cancelled = [&] {
        point.evaluated = false;
        point.refusal = "cancelled";
        return point;
    };
    OpenedSchedule opened = openConfigDocument(edited, noPresets, {}, {}, cancel);
    if (cancel && cancel->load()) return cancelled();
    point.evaluated = true;
    // The pass set asked for, so a refused point's row still says which series it belongs to
    // (opening a config fills in the base's own passes when none were asked for).
    if (passes) point.passes = *passes;
    if (!opened.ok()) {
        point.refusal = opened.error;
        return point;
    }
    point.config = opened.input.config;
    point.passes = opened.input.passes;
    auto prepared = prepareSchedule(opened.input, {.cancel = cancel});
    if (cancel && cancel->load()) return cancelled();
    if (!prepared) {
        point.refusal = prepared.error().message;
        return point;
    }
    const SimResult& sim = prepared->result;
    if (sim.deadlocked) {
        point.refusal = "the schedule deadlocks after the passes";
        return point;
    }
    point.step_ms = sim.makespan_ms;
    point.samples_per_s = sim.samples_per_s;
    point.tokens_per_s = sim.tokens_per_s;
    point.mfu = sim.flops.mfu;
    point.bubble_ratio = sim.bubble_ratio;
    point.unit_costs = prepared->plan.info.unit_costs;
    point.parameters = prepared->plan.info.model_parameters;
    for (const auto& device : sim.devices) point.device_peak_bytes.push_back(device.peak_bytes);
    const MemoryFit fit = memoryFit(sim, prepared->plan.info);
    point.peak_bytes = fit.highest_peak_bytes;
    point.fullest_device = fit.fullest_device;
    point.budget_bytes = fit.budget_bytes;
    if (fit.judged()) point.fits = fit.fits();
    return point;
}

}  // namespace mario
