#include "core/cost/ProfileCostModel.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/io/ConfigJson.h"

namespace mario {

using json = nlohmann::json;

namespace {

using Need = JsonFieldReader::Need;
using Check = JsonFieldReader::Check;

constexpr std::string_view kProfileKeys[] = {"format",
                                             "version",
                                             "name",
                                             "notes",
                                             "source",
                                             "model",
                                             "hardware",
                                             "micro_batch_size",
                                             "sequence_length",
                                             "tp",
                                             "forward_ms",
                                             "backward_ms",
                                             "recompute_ms",
                                             "activation_bytes",
                                             "static_bytes",
                                             "checkpoint_bytes",
                                             "send_bytes",
                                             "reduce_grad_ms",
                                             "optimizer_ms",
                                             "backward_input_ms",
                                             "backward_weight_ms",
                                             "embedding",
                                             "head"};
constexpr std::string_view kFitKeys[] = {"a", "b"};
constexpr std::string_view kExtraKeys[] = {"forward_ms",       "backward_ms",  "recompute_ms",
                                           "activation_bytes", "static_bytes", "optimizer_ms"};

std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
}

// Intercepts may be negative (a regression line), slopes may not: a block never costs less
// than nothing. Stage totals are clamped at zero in stageCosts.
std::optional<Error> readFit(const json& object, const std::string& path, std::string_view key, LinearFit& out,
                             Need need) {
    auto it = object.find(key);
    if (it == object.end()) {
        if (need == Need::Optional) return std::nullopt;
        return makeError(join(path, key) + ": required ({\"a\": per block, \"b\": per stage})");
    }
    JsonFieldReader fit(*it, join(path, key));
    fit.onlyKeys(kFitKeys);
    fit.number("a", out.a, Need::Required, Check::NonNegative);
    fit.number("b", out.b, Need::Optional, Check::Any);
    return fit.error();
}

std::optional<Error> readOptionalFit(const json& object, const std::string& path, std::string_view key,
                                     std::optional<LinearFit>& out) {
    if (!object.contains(key)) return std::nullopt;
    LinearFit fit;
    if (auto error = readFit(object, path, key, fit, Need::Required)) return error;
    out = fit;
    return std::nullopt;
}

std::optional<Error> readExtra(const json& object, const std::string& path, std::string_view key, ProfileExtra& out) {
    auto it = object.find(key);
    if (it == object.end()) return std::nullopt;
    JsonFieldReader extra(*it, join(path, key));
    extra.onlyKeys(kExtraKeys);
    extra.number("forward_ms", out.forward_ms, Need::Optional, Check::NonNegative);
    extra.number("backward_ms", out.backward_ms, Need::Optional, Check::NonNegative);
    extra.number("recompute_ms", out.recompute_ms, Need::Optional, Check::NonNegative);
    extra.number("activation_bytes", out.activation_bytes, Need::Optional, Check::NonNegative);
    extra.number("static_bytes", out.static_bytes, Need::Optional, Check::NonNegative);
    extra.number("optimizer_ms", out.optimizer_ms, Need::Optional, Check::NonNegative);
    return extra.error();
}

json fitJson(const LinearFit& fit) { return {{"a", fit.a}, {"b", fit.b}}; }
json extraJson(const ProfileExtra& e) {
    return {{"forward_ms", e.forward_ms},     {"backward_ms", e.backward_ms},
            {"recompute_ms", e.recompute_ms}, {"activation_bytes", e.activation_bytes},
            {"static_bytes", e.static_bytes}, {"optimizer_ms", e.optimizer_ms}};
}

}  // namespace

Result<ProfileCostModel> ProfileCostModel::load(const std::string& path) {
    auto document = readJsonFile(path);
    if (!document) return document.error();
    auto model = fromJson(*document, "");
    if (!model) return makeError(path + ": " + model.error().message);
    return model;
}

Result<ProfileProvenance> ProfileCostModel::provenance(const std::string& path) {
    auto document = readJsonFile(path);
    if (!document) return document.error();
    if (!document->is_object()) return makeError(path + ": expected a JSON object");
    ProfileProvenance out;
    const auto text = [&](const char* key) {
        const auto it = document->find(key);
        return it != document->end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    out.model = text("model");
    out.hardware = text("hardware");
    if (const auto it = document->find("sequence_length"); it != document->end() && it->is_number_integer())
        out.sequence_length = static_cast<int>(it->get<long long>());
    return out;
}

Result<ProfileCostModel> ProfileCostModel::fromJson(const json& object, const std::string& path) {
    JsonFieldReader in(object, path);
    in.header("mario-profile");
    in.onlyKeys(kProfileKeys);
    ProfileCostModel p;
    in.integer("micro_batch_size", p.micro_batch_size_, Need::Required, Check::Positive);
    in.integer("sequence_length", p.sequence_length_, Need::Optional, Check::Positive);
    in.integer("tp", p.tp_, Need::Optional, Check::Positive);
    in.number("checkpoint_bytes", p.checkpoint_bytes_, Need::Required, Check::NonNegative);
    in.number("send_bytes", p.send_bytes_, Need::Required, Check::NonNegative);
    if (in.error()) return *in.error();
    // Braced lists evaluate in order, so the first error reported is the first in the file's schema.
    for (const auto& error :
         {readFit(object, path, "forward_ms", p.forward_ms_, Need::Required),
          readFit(object, path, "backward_ms", p.backward_ms_, Need::Required),
          readFit(object, path, "recompute_ms", p.recompute_ms_, Need::Required),
          readFit(object, path, "activation_bytes", p.activation_bytes_, Need::Required),
          readFit(object, path, "static_bytes", p.static_bytes_, Need::Required),
          readFit(object, path, "reduce_grad_ms", p.reduce_grad_ms_, Need::Optional),
          readFit(object, path, "optimizer_ms", p.optimizer_ms_, Need::Optional),
          readOptionalFit(object, path, "backward_input_ms", p.backward_input_ms_),
          readOptionalFit(object, path, "backward_weight_ms", p.backward_weight_ms_),
          readExtra(object, path, "embedding", p.embedding_), readExtra(object, path, "head", p.head_)})
        if (error) return *error;
    return p;
}

ProfileCostModel::ProfileCostModel(const ProfileFits& f)
    : micro_batch_size_(f.micro_batch_size), sequence_length_(f.sequence_length), tp_(f.tp), forward_ms_(f.forward_ms),
      backward_ms_(f.backward_ms), recompute_ms_(f.recompute_ms), activation_bytes_(f.activation_bytes),
      static_bytes_(f.static_bytes), reduce_grad_ms_(f.reduce_grad_ms), optimizer_ms_(f.optimizer_ms),
      backward_input_ms_(f.backward_input_ms), backward_weight_ms_(f.backward_weight_ms),
      checkpoint_bytes_(f.checkpoint_bytes), send_bytes_(f.send_bytes), embedding_(f.embedding), head_(f.head) {}

json ProfileCostModel::toJson() const {
    json out = {{"format", "mario-profile"},
                {"version", 1},
                {"micro_batch_size", micro_batch_size_},
                {"forward_ms", fitJson(forward_ms_)},
                {"backward_ms", fitJson(backward_ms_)},
                {"recompute_ms", fitJson(recompute_ms_)},
                {"activation_bytes", fitJson(activation_bytes_)},
                {"static_bytes", fitJson(static_bytes_)},
                {"reduce_grad_ms", fitJson(reduce_grad_ms_)},
                {"optimizer_ms", fitJson(optimizer_ms_)},
                {"checkpoint_bytes", checkpoint_bytes_},
                {"send_bytes", send_bytes_},
                {"embedding", extraJson(embedding_)},
                {"head", extraJson(head_)}};
    if (sequence_length_ > 0) out["sequence_length"] = sequence_length_;
    if (tp_ > 0) out["tp"] = tp_;
    if (backward_input_ms_) out["backward_input_ms"] = fitJson(*backward_input_ms_);
    if (backward_weight_ms_) out["backward_weight_ms"] = fitJson(*backward_weight_ms_);
    return out;
}

Result<std::vector<StageCost>> ProfileCostModel::stageCosts(const Config& config,
                                                            const std::vector<StageLayout>& layouts) const {
    int seq = config.model.sequence_length;
    if (sequence_length_ > 0 && seq > 0 && seq != sequence_length_)
        return makeError("measured at sequence length " + std::to_string(sequence_length_) +
                         " but model.sequence_length is " + std::to_string(seq));
    if (tp_ > 0 && config.parallel.tp != tp_)
        return makeError("measured at tp " + std::to_string(tp_) + " but parallel.tp is " +
                         std::to_string(config.parallel.tp));
    double r = double(config.parallel.micro_batch_size) / micro_batch_size_;
    // Slopes scale with the micro-batch, intercepts do not; clamp a negative fitted line.
    auto scaled = [r](const LinearFit& fit, double blocks) { return std::max(0.0, fit.a * blocks * r + fit.b); };
    auto fixed = [](const LinearFit& fit, double blocks) { return std::max(0.0, fit.at(blocks)); };

    std::vector<StageCost> costs;
    costs.reserve(layouts.size());
    for (const StageLayout& layout : layouts) {
        double x = layout.layerCount();
        StageCost c;
        c.forward_ms = scaled(forward_ms_, x);
        c.backward_ms = scaled(backward_ms_, x);
        c.recompute_ms = scaled(recompute_ms_, x);
        c.activation_bytes = scaled(activation_bytes_, x);
        c.static_bytes = fixed(static_bytes_, x);  // weights and optimizer state: batch-independent
        c.checkpoint_bytes = checkpoint_bytes_ * r;
        c.send_bytes = layout.has_head ? 0 : send_bytes_ * r;
        if (config.parallel.dp > 1) c.reduce_grad_ms = fixed(reduce_grad_ms_, x);
        c.optimizer_ms = fixed(optimizer_ms_, x);
        if (backward_input_ms_) c.backward_input_ms = scaled(*backward_input_ms_, x);
        if (backward_weight_ms_) c.backward_weight_ms = scaled(*backward_weight_ms_, x);
        for (const auto& [present, extra] :
             {std::pair{layout.has_embedding, &embedding_}, std::pair{layout.has_head, &head_}}) {
            if (!present) continue;
            c.forward_ms += extra->forward_ms * r;
            c.backward_ms += extra->backward_ms * r;
            // The extras' backward was measured whole: half to each part of a split one.
            if (c.backward_input_ms) *c.backward_input_ms += extra->backward_ms * r / 2;
            if (c.backward_weight_ms) *c.backward_weight_ms += extra->backward_ms * r / 2;
            c.recompute_ms += extra->recompute_ms * r;
            c.activation_bytes += extra->activation_bytes * r;
            c.static_bytes += extra->static_bytes;
            c.optimizer_ms += extra->optimizer_ms;
        }
        costs.push_back(c);
    }
    return costs;
}

}  // namespace mario
