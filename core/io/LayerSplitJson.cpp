#include "core/io/LayerSplitJson.h"

#include <string>

#include <nlohmann/json.hpp>

#include "core/model/Limits.h"
#include "core/model/Schemes.h"

namespace mario {

using json = nlohmann::json;

namespace {

constexpr const char* kLayerSplitExpected =
    "expected \"even\", \"balanced\", \"search\" or an array of layer counts, one per chain position";

}  // namespace

// parallel.layer_split: a word or the counts; checkConfig compares the counts with the model.
Result<LayerSplit> readLayerSplit(const json& value) {
    const std::string key = "parallel.layer_split";
    LayerSplit split;
    if (value.is_string()) {
        const std::string word = value.get<std::string>();
        if (word == layerSplitWord(LayerSplitKind::Even)) return split;
        for (LayerSplitKind kind : {LayerSplitKind::Balanced, LayerSplitKind::Search})
            if (word == layerSplitWord(kind)) {
                split.kind = kind;
                return split;
            }
        return makeError(key + ": " + kLayerSplitExpected + " (got \"" + word + "\")");
    }
    if (!value.is_array() || value.empty()) return makeError(key + ": " + kLayerSplitExpected);
    split.kind = LayerSplitKind::Explicit;
    for (std::size_t i = 0; i < value.size(); ++i) {
        const json& v = value[i];
        if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > limits::kMaxLayers)
            return makeError(key + "[" + std::to_string(i) + "]: expected a layer count in [0, " +
                             std::to_string(limits::kMaxLayers) + "] (got " + v.dump() + ")");
        split.counts.push_back(v.get<int>());
    }
    return split;
}

// An explicit split must place every layer, one count per chain position; only the first and
// last positions may hold none (an embedding-only or head-only stage, as torchtitan allows).
std::optional<Error> checkLayerSplit(const Config& c) {
    const ParallelConfig& p = c.parallel;
    const std::string key = "parallel.layer_split";
    if (p.layer_split.isEven()) return std::nullopt;
    if (c.unit_costs || c.model.layers <= 0)
        return makeError(key + ": unit_costs have no layers to split (use \"even\" or leave it out)");
    if (p.layer_split.kind != LayerSplitKind::Explicit) return std::nullopt;
    const std::vector<int>& counts = p.layer_split.counts;
    const int positions = chainLength(p.scheme, p.pp, p.chunks);
    if (static_cast<int>(counts.size()) != positions)
        return makeError(key + ": " + std::to_string(static_cast<int>(counts.size())) + " counts, but a " +
                         std::string(schemeInfo(p.scheme).name) + " chain on " + std::to_string(p.pp) +
                         " devices has " + std::to_string(positions) + " positions");
    long long sum = 0;
    for (int i = 0; i < positions; ++i) {
        if (counts[i] == 0 && i != 0 && i != positions - 1)
            return makeError(key + "[" + std::to_string(i) +
                             "]: a middle position needs at least one layer (only the first and "
                             "last may hold none)");
        sum += counts[i];
    }
    if (sum != c.model.layers)
        return makeError(key + ": the counts add up to " + std::to_string(sum) + " layers, but model.layers is " +
                         std::to_string(c.model.layers));
    return std::nullopt;
}

json writeLayerSplit(const LayerSplit& split) {
    if (split.kind == LayerSplitKind::Explicit) return split.counts;
    return std::string(layerSplitWord(split.kind));
}

}  // namespace mario
