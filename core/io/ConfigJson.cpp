#include "core/io/ConfigJson.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/cost/ProfileCostModel.h"
#include "core/io/LayerSplitJson.h"
#include "core/io/PresetLibrary.h"
#include "core/io/ProfileJson.h"
#include "core/io/TrainingJson.h"
#include "core/model/ByteRules.h"
#include "core/model/Limits.h"
#include "core/passes/PassVocabulary.h"

namespace mario {

using json = nlohmann::json;
namespace fs = std::filesystem;

// ---- passes --------------------------------------------------------------------------

namespace {

constexpr std::string_view kConfigKeys[] = {
    "format",          "version",  "name",   "notes",      "model",        "hardware", "devices",
    "memory_limit_gb", "parallel", "passes", "unit_costs", "microbatches", "profile",  "training",
    "what_if"};
constexpr std::string_view kParallelKeys[] = {"scheme",
                                              "pp",
                                              "dp",
                                              "tp",
                                              "chunks",
                                              "micro_batch_size",
                                              "global_batch_size",
                                              "group_size",
                                              "distributed_optimizer",
                                              "overlap_factor",
                                              "layer_split"};
constexpr std::string_view kUnitKeys[] = {"forward",          "backward",         "recompute",
                                          "activation_bytes", "checkpoint_bytes", "static_bytes"};

Result<std::vector<std::string>> readPasses(const json& value) {
    if (value.is_string()) {
        std::string word = value.get<std::string>();
        if (word == "all") return passNames(paperPasses());
        if (word == "none") return std::vector<std::string>{};
        return makeError("passes: expected an array of pass names, \"all\" or \"none\" (got \"" + word + "\")");
    }
    if (!value.is_array()) return makeError("passes: expected an array of pass names, \"all\" or \"none\"");
    std::vector<std::string> passes;
    std::vector<std::string> named;  // written out by name: only these can be "listed twice"
    for (std::size_t i = 0; i < value.size(); ++i) {
        std::string where = "passes[" + std::to_string(i) + "]";
        if (!value[i].is_string()) return makeError(where + ": expected a pass name");
        const std::string name = value[i].get<std::string>();
        // As in `--passes all,hide`: "all" adds the paper's four where they are not listed yet,
        // so ["all", "hide"] means what a reader expects; "none" means no pass and stands alone.
        if (name == "all") {
            for (const std::string& paper : passNames(paperPasses()))
                if (std::find(passes.begin(), passes.end(), paper) == passes.end()) passes.push_back(paper);
            continue;
        }
        if (name == "none") {
            if (value.size() > 1)
                return makeError(where + ": \"none\" cannot be listed with other passes (it means no pass)");
            continue;
        }
        // The pass manager owns the vocabulary; the file stores the short names.
        const auto pass = parsePassName(name);
        if (!pass)
            return makeError(where + ": unknown pass \"" + name + "\" (expected " + passNameList() + ", all or none)");
        const std::string shortName(passName(*pass));
        if (std::find(named.begin(), named.end(), shortName) != named.end())
            return makeError(where + ": pass \"" + shortName + "\" is listed twice");
        named.push_back(shortName);
        if (std::find(passes.begin(), passes.end(), shortName) == passes.end()) passes.push_back(shortName);
    }
    return passes;
}

// A preset name or an inline object; errors carry the key as their path.
template <class T, class Lookup, class Parse>
Result<T> readPreset(const json& value, const std::string& key, Lookup lookup, Parse parse) {
    if (value.is_string()) {
        auto found = lookup(value.get<std::string>());
        if (!found) return makeError(key + ": " + found.error().message);
        return found;
    }
    if (value.is_object()) return parse(value, key);
    return makeError(key + ": expected a preset name or an object");
}

std::string str(int x) { return std::to_string(x); }

}  // namespace

// ---- readConfig ----------------------------------------------------------------------

// Cross-field rules: each error names the field a user would change.
std::optional<Error> checkConfig(const Config& c) {
    const ParallelConfig& p = c.parallel;
    const bool hasModel = c.model.layers > 0;
    std::string mbPath = c.microbatches ? "microbatches" : "parallel.global_batch_size";
    int m = c.microbatchCount();
    const long long samplesPerStep = static_cast<long long>(p.dp) * p.micro_batch_size;
    if (samplesPerStep <= 0) return makeError("parallel.micro_batch_size: dp * micro_batch_size must be positive");
    if (!c.microbatches && p.global_batch_size % samplesPerStep != 0)
        return makeError("parallel.global_batch_size: " + str(p.global_batch_size) +
                         " is not divisible by dp * micro_batch_size = " + std::to_string(samplesPerStep));
    if (m > limits::kMaxMicrobatches)
        return makeError(mbPath + ": " + str(m) + " micro-batches per step; the limit is " +
                         str(limits::kMaxMicrobatches));
    // The generated plan holds about six instructions per (stage, micro-batch).
    const SchemeInfo& scheme = schemeInfo(p.scheme);
    const int stages = p.pp * stagesPerDevice(p.scheme, p.chunks);
    const long long pairs = static_cast<long long>(stages) * m;
    if (pairs > limits::kMaxStageMicrobatches)
        return makeError(mbPath + ": " + str(m) + " micro-batches on " + str(stages) + " stages make " +
                         std::to_string(pairs) + " (stage, micro-batch) pairs; the limit is " +
                         str(limits::kMaxStageMicrobatches));
    const std::string name(scheme.name);
    if (!scheme.chunked && p.chunks != 1)
        return makeError("parallel.chunks: only " + chunkedSchemeNames() + " use chunks (got " + str(p.chunks) +
                         " with " + name + ")");
    if (scheme.even_devices && p.pp % 2 != 0)
        return makeError("parallel.pp: " + name + " needs an even number of pipeline devices (got " + str(p.pp) + ")");
    if (scheme.even_microbatches && m % 2 != 0)
        return makeError(mbPath + ": " + name + " needs an even number of micro-batches (got " + str(m) + ")");
    if (scheme.chunked && p.chunks < 2)
        return makeError("parallel.chunks: " + name + " needs chunks >= 2 (got " + str(p.chunks) + ")");
    if (const int minimum = scheme.min_microbatches_per_device * p.pp; m < minimum)
        return makeError(mbPath + ": " + name + " needs at least " + str(minimum) + " micro-batches on " + str(p.pp) +
                         " devices (got " + str(m) + ")");
    if (scheme.grouped) {
        int group = p.group_size > 0 ? p.group_size : p.pp;
        if (m % group != 0)
            return makeError((p.group_size > 0 ? std::string("parallel.group_size") : mbPath) + ": " + str(m) +
                             " micro-batches are not divisible by the interleaved group size " + str(group));
    }
    if (hasModel) {
        // Per chain: the two chains of Chimera and DualPipe each hold all layers.
        const int chain = chainLength(p.scheme, p.pp, p.chunks);
        if (c.model.layers < chain)
            return makeError("model.layers: " + str(c.model.layers) + " layers cannot fill the " + str(chain) +
                             " stages of a " + name + " pipeline on " + str(p.pp) + " devices");
        if (c.model.heads % p.tp != 0)
            return makeError("parallel.tp: " + str(c.model.heads) + " heads are not divisible by tp = " + str(p.tp));
    }
    if (auto problem = checkLayerSplit(c)) return problem;
    if (c.unit_costs && c.profile) return makeError("profile: cannot be combined with unit_costs");
    // The byte rules the reader applies field by field, for a Config edited in place.
    if (c.unit_costs)
        if (auto problem = checkpointBytesProblem(c.unit_costs->checkpoint_bytes, c.unit_costs->activation_bytes))
            return makeError("unit_costs.checkpoint_bytes: " + *problem);
    if (c.memory_limit_bytes && !gigabytesToBytes(*c.memory_limit_bytes / 1e9))
        return makeError("memory_limit_gb: " + gigabytesProblem(*c.memory_limit_bytes / 1e9));
    return std::nullopt;
}

namespace {

// The "what_if" section: every field optional text, the metric one of two words.
Result<WhatIfSection> readWhatIf(const json& object) {
    using Need = JsonFieldReader::Need;
    static constexpr std::string_view kKeys[] = {"knob", "values", "knob2", "values2", "schemes", "passes", "metric"};
    JsonFieldReader in(object, "what_if");
    in.onlyKeys(kKeys);
    WhatIfSection w;
    in.string("knob", w.knob, Need::Optional);
    in.string("values", w.values, Need::Optional);
    in.string("knob2", w.knob2, Need::Optional);
    in.string("values2", w.values2, Need::Optional);
    in.string("schemes", w.schemes, Need::Optional);
    in.string("passes", w.passes, Need::Optional);
    in.string("metric", w.metric, Need::Optional);
    if (in.ok() && w.metric != "throughput" && w.metric != "step")
        in.fail("metric", "expected \"throughput\" or \"step\" (got \"" + w.metric + "\")");
    if (!in.ok()) return *in.error();
    return w;
}

json writeWhatIf(const WhatIfSection& w) {
    return {{"knob", w.knob},       {"values", w.values},   {"knob2", w.knob2},  {"values2", w.values2},
            {"schemes", w.schemes}, {"passes", w.passes}, {"metric", w.metric}};
}

}  // namespace

Result<Config> readConfig(const json& document, const PresetLibrary& presets, const std::string& baseDir) {
    using Need = JsonFieldReader::Need;
    using Check = JsonFieldReader::Check;
    JsonFieldReader root(document, "");
    root.header("mario-config");
    root.onlyKeys(kConfigKeys);
    Config c;
    root.string("name", c.name, Need::Optional);
    if (root.error()) return *root.error();

    if (root.has("unit_costs")) {
        JsonFieldReader unit(document["unit_costs"], "unit_costs");
        unit.onlyKeys(kUnitKeys);
        UnitCosts u;
        unit.number("forward", u.forward, Need::Optional, Check::NonNegative);
        unit.number("backward", u.backward, Need::Optional, Check::NonNegative);
        unit.number("recompute", u.recompute, Need::Optional, Check::NonNegative);
        unit.number("activation_bytes", u.activation_bytes, Need::Optional, Check::NonNegative);
        unit.number("checkpoint_bytes", u.checkpoint_bytes, Need::Optional, Check::NonNegative);
        unit.number("static_bytes", u.static_bytes, Need::Optional, Check::NonNegative);
        // The plan reader's rule: a plan generated from these costs must read back.
        if (unit.ok())
            if (auto problem = checkpointBytesProblem(u.checkpoint_bytes, u.activation_bytes))
                unit.fail("checkpoint_bytes", *problem);
        if (unit.error()) return *unit.error();
        c.unit_costs = u;
    }
    bool unitMode = c.unit_costs.has_value();

    // Unit mode needs no model or hardware; placeholders keep names non-empty for display.
    bool hasModel = root.has("model");
    if (hasModel) {
        auto model = readPreset<ModelConfig>(
            document["model"], "model", [&](const std::string& n) { return presets.model(n); },
            &PresetLibrary::parseModel);
        if (!model) return model.error();
        c.model = std::move(*model);
    } else if (unitMode) {
        c.model.name = "unit";
    } else {
        return makeError("model: required (a preset name or an object)");
    }
    if (root.has("hardware")) {
        auto hardware = readPreset<HardwareConfig>(
            document["hardware"], "hardware", [&](const std::string& n) { return presets.hardware(n); },
            &PresetLibrary::parseHardware);
        if (!hardware) return hardware.error();
        c.hardware = std::move(*hardware);
        // The plan states the card's memory in bytes (device_memory_bytes); it must be a number.
        if (!gigabytesToBytes(c.hardware.memory_gb))
            return makeError("hardware.memory_gb: " + gigabytesProblem(c.hardware.memory_gb));
    } else if (unitMode) {
        c.hardware.name = "unit";
    } else {
        return makeError("hardware: required (a preset name or an object)");
    }

    if (!root.has("parallel")) return makeError("parallel: required");
    JsonFieldReader par(document["parallel"], "parallel");
    par.onlyKeys(kParallelKeys);
    std::string scheme;
    par.string("scheme", scheme, Need::Required);
    if (par.ok()) {
        auto parsed = parseScheme(scheme);
        if (!parsed) par.fail("scheme", "unknown scheme \"" + scheme + "\" (expected " + schemeNameList() + ")");
        else c.parallel.scheme = *parsed;
    }
    ParallelConfig& p = c.parallel;
    par.integerIn("pp", p.pp, Need::Required, 1, limits::kMaxPipelineDevices);
    par.integerIn("dp", p.dp, Need::Optional, 1, limits::kMaxDevices);
    par.integerIn("tp", p.tp, Need::Optional, 1, limits::kMaxTensorParallel);
    par.integerIn("chunks", p.chunks, Need::Optional, 1, limits::kMaxChunks);
    par.integerIn("micro_batch_size", p.micro_batch_size, Need::Optional, 1, limits::kMaxMicroBatchSize);
    par.integerIn("global_batch_size", p.global_batch_size, Need::Optional, 1, limits::kMaxGlobalBatch);
    par.integerIn("group_size", p.group_size, Need::Optional, 0, limits::kMaxMicrobatches);
    par.boolean("distributed_optimizer", p.distributed_optimizer, Need::Optional);
    par.number("overlap_factor", p.overlap_factor, Need::Optional, Check::NonNegative);
    if (par.ok() && p.overlap_factor > 1) par.fail("overlap_factor", "expected a share in [0, 1]");
    if (par.error()) return *par.error();
    if (const json& parallel = document["parallel"]; parallel.contains("layer_split")) {
        auto split = readLayerSplit(parallel["layer_split"]);
        if (!split) return split.error();
        p.layer_split = std::move(*split);
    }

    int microbatches = 0;
    root.integerIn("microbatches", microbatches, Need::Optional, 1, limits::kMaxMicrobatches);
    int devices = 0;
    root.integerIn("devices", devices, Need::Optional, 1, limits::kMaxDevices);
    double limitGb = 0;
    root.number("memory_limit_gb", limitGb, Need::Optional, Check::Positive);
    std::optional<double> limitBytes;
    if (root.ok() && root.has("memory_limit_gb") && !(limitBytes = gigabytesToBytes(limitGb)))
        root.fail("memory_limit_gb", gigabytesProblem(limitGb));
    if (root.error()) return *root.error();
    if (root.has("microbatches")) c.microbatches = microbatches;
    c.memory_limit_bytes = limitBytes;
    // Products of in-range sizes are formed in 64 bits and checked against their own limits
    // before anything narrows them back to int.
    const long long samplesPerStep = static_cast<long long>(p.dp) * p.micro_batch_size;
    if (!par.has("global_batch_size")) {
        if (!c.microbatches) return makeError("parallel.global_batch_size: required unless microbatches is given");
        const long long global = *c.microbatches * samplesPerStep;
        if (global > limits::kMaxGlobalBatch)
            return makeError("microbatches: " + str(*c.microbatches) +
                             " micro-batches of dp * micro_batch_size = " + std::to_string(samplesPerStep) +
                             " samples exceed the global batch limit " + str(limits::kMaxGlobalBatch));
        p.global_batch_size = static_cast<int>(global);
    }
    const long long allDevices = static_cast<long long>(p.pp) * p.dp * p.tp;
    if (allDevices > limits::kMaxDevices)
        return makeError("parallel: pp * dp * tp = " + std::to_string(allDevices) + " devices; the limit is " +
                         str(limits::kMaxDevices));
    if (root.has("devices") && devices != allDevices)
        return makeError("devices: " + str(devices) +
                         " devices do not match parallel pp * dp * tp = " + std::to_string(allDevices));

    if (root.has("training")) {
        auto training = readTraining(document["training"]);
        if (!training) return training.error();
        c.training = *training;
    }

    if (root.has("passes")) {
        auto passes = readPasses(document["passes"]);
        if (!passes) return passes.error();
        c.passes = std::move(*passes);
    }

    if (root.has("profile")) {
        std::string profile;
        root.string("profile", profile, Need::Required);
        if (root.error()) return *root.error();
        // A path next to the config wins over one in the presets folder.
        std::error_code ec;
        const fs::path local =
            PresetLibrary::profileFile((baseDir.empty() ? fs::path(profile) : fs::path(baseDir) / profile).string());
        std::string resolved = fs::path(profile).is_absolute() || fs::exists(local, ec)
                                   ? fs::absolute(local, ec).lexically_normal().string()
                                   : presets.resolveProfile(profile);
        auto loaded = readProfileFile(resolved);
        if (!loaded) return makeError("profile: " + loaded.error().message);
        // Catch a profile measured for another sequence length or tp now, not at plan time.
        if (auto fits = ProfileCostModel(*loaded).stageCosts(c, {StageLayout{}}); !fits)
            return makeError("profile: " + fits.error().message);
        c.profile = resolved;
    }

    if (root.has("what_if")) {
        auto whatIf = readWhatIf(document["what_if"]);
        if (!whatIf) return whatIf.error();
        c.what_if = std::move(*whatIf);
    }

    if (auto error = checkConfig(c)) return *error;
    return c;
}

Result<Config> readConfigFile(const std::string& path, const PresetLibrary& presets) {
    auto document = readJsonFile(path);
    if (!document) return document.error();
    std::error_code ec;
    std::string baseDir = fs::absolute(fs::path(path), ec).parent_path().string();
    auto config = readConfig(*document, presets, baseDir);
    if (!config) return makeError(path + ": " + config.error().message);
    return config;
}

// ---- writeConfig ---------------------------------------------------------------------

json writeConfig(const Config& c) {
    const ParallelConfig& p = c.parallel;
    json out = {{"format", "mario-config"}, {"version", 1}};
    if (!c.name.empty()) out["name"] = c.name;
    // Unit-mode placeholders have no shape; writing them would not read back.
    if (c.model.layers > 0) out["model"] = PresetLibrary::modelToJson(c.model);
    if (c.hardware.peak_tflops > 0) out["hardware"] = PresetLibrary::hardwareToJson(c.hardware);
    out["devices"] = p.pp * p.dp * p.tp;
    if (c.memory_limit_bytes) out["memory_limit_gb"] = *c.memory_limit_bytes / 1e9;
    out["parallel"] = {{"scheme", std::string(schemeName(p.scheme))},
                       {"pp", p.pp},
                       {"dp", p.dp},
                       {"tp", p.tp},
                       {"chunks", p.chunks},
                       {"micro_batch_size", p.micro_batch_size},
                       {"global_batch_size", p.global_batch_size},
                       {"group_size", p.group_size},
                       {"distributed_optimizer", p.distributed_optimizer},
                       {"overlap_factor", p.overlap_factor}};
    // Written only when set, so that a config without it is written as before.
    if (!p.layer_split.isEven()) out["parallel"]["layer_split"] = writeLayerSplit(p.layer_split);
    if (c.model.layers > 0) out["training"] = writeTraining(c.training);
    out["passes"] = c.passes;
    if (c.unit_costs) {
        const UnitCosts& u = *c.unit_costs;
        out["unit_costs"] = {{"forward", u.forward},
                             {"backward", u.backward},
                             {"recompute", u.recompute},
                             {"activation_bytes", u.activation_bytes},
                             {"checkpoint_bytes", u.checkpoint_bytes},
                             {"static_bytes", u.static_bytes}};
    }
    if (c.microbatches) out["microbatches"] = *c.microbatches;
    if (c.profile) out["profile"] = *c.profile;
    if (c.what_if) out["what_if"] = writeWhatIf(*c.what_if);
    return out;
}

}  // namespace mario
