#include "executor/CalibrationRefit.h"

#include <ctime>

#include "core/io/PresetLibrary.h"

namespace mario::exec {

CalibrationFits fitCalibration(const HardwareConfig& start, const CalibrationSamples& samples) {
    CalibrationFit fit(start);
    fit.setKernelOverheadUs(samples.tiny_kernel_us);
    CalibrationFits out;
    out.stream = fit.fitStreaming(samples.copy_gb_per_s, samples.streams);
    out.gemm = fit.fitGemm(samples.gemms);
    out.grid = fit.spreadOf(samples.gemms, false);
    fit.fitAttention(samples.attention_forward_flops, samples.attention_forward_ms, samples.attention_backward_ms);
    out.hardware = fit.hardware();
    return out;
}

namespace {

using nlohmann::json;

// A number of the source, or a thrown line naming where it is missing.
double numberAt(const json& object, const char* key, const std::string& where) {
    if (!object.is_object() || !object.contains(key) || !object[key].is_number())
        throw std::invalid_argument(where + "." + key + " is missing or not a number");
    return object[key].get<double>();
}

// A product's role: recorded by calibrate since 2026-11-28; before, implied by the order it
// measured them in (Calibrator.cpp): each weight's forward, data gradient and weight gradient in
// turn, then the grid's plain products (a data gradient's layout) and the attention's forward ones.
GemmRole roleOf(const json& gemm, const GemmSample& g, int& blockProduct, const std::string& where) {
    if (gemm.contains("role")) {
        const auto role = gemm["role"].is_string() ? gemmRoleNamed(gemm["role"].get<std::string>()) : std::nullopt;
        if (!role) throw std::invalid_argument(where + ".role must be forward, input_gradient or weight_gradient");
        return *role;
    }
    if (!g.fitted) return GemmRole::InputGradient;
    if (g.batch != 1) return GemmRole::Forward;
    constexpr GemmRole kOrder[] = {GemmRole::Forward, GemmRole::InputGradient, GemmRole::WeightGradient};
    return kOrder[blockProduct++ % 3];
}

CalibrationSamples samplesOf(const json& source, const ModelSpec& spec, int microBatch) {
    CalibrationSamples s;
    const json& tiny = source.value("tiny_kernel_us", json());
    s.tiny_kernel_us =
        (numberAt(tiny, "forward", "source.tiny_kernel_us") + numberAt(tiny, "backward", "source.tiny_kernel_us")) / 2;
    s.copy_gb_per_s = numberAt(source, "copy_gb_per_s", "source");
    const json& attention = source.value("attention", json());
    s.attention_forward_ms = numberAt(attention, "forward_ms", "source.attention");
    s.attention_backward_ms = numberAt(attention, "backward_ms", "source.attention");
    const double b = microBatch, seq = spec.seq, h = spec.hidden;
    s.attention_forward_flops = 2 * b * seq * seq * h;
    const json& gemms = source.value("gemms", json());
    const json& streams = source.value("elementwise", json());
    if (!gemms.is_array() || gemms.empty() || !streams.is_array() || streams.empty())
        throw std::invalid_argument("source.gemms and source.elementwise must be lists of measurements");
    int blockProduct = 0;  // fitted single products so far, for sources without roles
    for (std::size_t i = 0; i < gemms.size(); ++i) {
        const std::string where = "source.gemms[" + std::to_string(i) + "]";
        GemmSample g{numberAt(gemms[i], "m", where), numberAt(gemms[i], "n", where), numberAt(gemms[i], "k", where),
                     numberAt(gemms[i], "batch", where)};
        g.ms = numberAt(gemms[i], "ms", where);
        g.spread = gemms[i].value("spread", 0.0);
        g.fitted = gemms[i].value("fitted", true);
        g.role = roleOf(gemms[i], g, blockProduct, where);
        s.gemms.push_back(g);
    }
    for (std::size_t i = 0; i < streams.size(); ++i) {
        const json& k = streams[i];
        const std::string where = "source.elementwise[" + std::to_string(i) + "]";
        s.streams.push_back(StreamSample{k.value("kernel", std::string("kernel")), numberAt(k, "forward_bytes", where),
                                         numberAt(k, "backward_bytes", where), numberAt(k, "forward_ms", where),
                                         numberAt(k, "backward_ms", where), k.value("spread", 0.0),
                                         k.value("per_block", 1.0), k.value("copy", false)});
    }
    return s;
}

}  // namespace

std::string utcNow() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%MZ", &utc);
    return text;
}

void writeModelTimes(json& source, const HardwareConfig& fitted) {
    const CalibrationFit at(fitted);
    for (json& g : source["gemms"]) {
        const GemmRole role = gemmRoleNamed(g.value("role", std::string())).value_or(GemmRole::Forward);
        g["model_ms"] = at.modelMs(GemmSample{g["m"], g["n"], g["k"], g["batch"], 0, 0, true, role});
    }
    for (json& k : source["elementwise"]) {
        const StreamSample sample{"", k["forward_bytes"], k["backward_bytes"], 0, 0, 0, 1, k.value("copy", false)};
        k["model_forward_ms"] = at.modelForwardMs(sample);
        k["model_backward_ms"] = at.modelBackwardMs(sample);
    }
}

Result<RefitResult> refitPreset(const json& preset, const std::optional<ModelSpec>& model,
                                std::vector<HardwareConfig> against, const std::string& commandLine) {
    auto start = PresetLibrary::parseHardware(preset, "");
    if (!start) return start.error();
    if (!preset.contains("source") || !preset["source"].is_object())
        return makeError("not a calibrated preset: it has no source with the measurements to fit");
    const json& source = preset["source"];
    // The block the measurements were sized from: recorded by calibrate, else --model.
    ModelSpec spec;
    int microBatch = 1;
    if (model) {
        spec = *model;
    } else if (source.contains("block") && source["block"].is_object() && source["block"].contains("model")) {
        auto recorded = parseModelSpec(source["block"]["model"].get<std::string>());
        if (!recorded) return makeError("source.block.model: " + recorded.error().message);
        spec = *recorded;
        microBatch = source["block"].value("micro_batch_size", 1);
    } else {
        return makeError("the source does not record its block's sizes: name them with --model");
    }
    RefitResult r;
    try {
        r.fits = fitCalibration(*start, samplesOf(source, spec, microBatch));
    } catch (const std::exception& e) {
        return makeError(e.what());
    }
    json refitted = source;
    refitted["block"] = {{"model", describe(spec)}, {"micro_batch_size", microBatch}};
    writeModelTimes(refitted, r.fits.hardware);
    const std::string notes = preset.value("notes", std::string()) + " Refitted " + utcNow() + " by `" + commandLine +
                              "` from the measurements in source, with that build's fits (nothing measured again).";
    r.preset = PresetLibrary::hardwarePreset(r.fits.hardware, notes, refitted);
    // The block --check measured, if it did: every preset's prediction against it.
    if (auto check = BlockCheck::measuredFrom(source.value("check", json()))) {
        against.insert(against.begin(), r.fits.hardware);
        auto predictions = predictBlocks(spec, microBatch, against);
        if (!predictions) return predictions.error();
        check->predictions = std::move(*predictions);
        r.check = std::move(check);
    }
    return r;
}

}  // namespace mario::exec
