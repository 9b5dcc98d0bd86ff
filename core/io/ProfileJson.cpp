#include "core/io/ProfileJson.h"

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/io/JsonFieldReader.h"
#include "core/io/JsonFile.h"

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
                                             "weight_grad_bytes",
                                             "working_bytes",
                                             "contention",
                                             "optimizer_contention",
                                             "embedding",
                                             "head"};
constexpr std::string_view kFitKeys[] = {"a", "b"};
constexpr std::string_view kExtraKeys[] = {"forward_ms",   "backward_ms",  "recompute_ms", "activation_bytes",
                                           "static_bytes", "optimizer_ms", "working_bytes"};

std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
}

// Intercepts may be negative (a regression line), slopes may not: a block never costs less
// than nothing. Stage totals are clamped at zero in ProfileCostModel::stageCosts.
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
    extra.number("working_bytes", out.working_bytes, Need::Optional, Check::NonNegative);
    return extra.error();
}

json fitJson(const LinearFit& fit) { return {{"a", fit.a}, {"b", fit.b}}; }
json extraJson(const ProfileExtra& e) {
    return {{"forward_ms", e.forward_ms},      {"backward_ms", e.backward_ms},
            {"recompute_ms", e.recompute_ms},  {"activation_bytes", e.activation_bytes},
            {"static_bytes", e.static_bytes},  {"optimizer_ms", e.optimizer_ms},
            {"working_bytes", e.working_bytes}};
}

}  // namespace

Result<ProfileFits> readProfileFile(const std::string& path) {
    auto document = readJsonFile(path);
    if (!document) return document.error();
    auto fits = profileFromJson(*document, "");
    if (!fits) return makeError(path + ": " + fits.error().message);
    return fits;
}

Result<ProfileProvenance> readProfileProvenance(const std::string& path) {
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

Result<ProfileFits> profileFromJson(const json& object, const std::string& path) {
    JsonFieldReader in(object, path);
    in.header("mario-profile");
    in.onlyKeys(kProfileKeys);
    ProfileFits p;
    in.integer("micro_batch_size", p.micro_batch_size, Need::Required, Check::Positive);
    in.integer("sequence_length", p.sequence_length, Need::Optional, Check::Positive);
    in.integer("tp", p.tp, Need::Optional, Check::Positive);
    in.number("checkpoint_bytes", p.checkpoint_bytes, Need::Required, Check::NonNegative);
    in.number("send_bytes", p.send_bytes, Need::Required, Check::NonNegative);
    in.number("working_bytes", p.working_bytes, Need::Optional, Check::NonNegative);
    in.number("contention", p.contention, Need::Optional, Check::NonNegative);
    if (in.has("optimizer_contention")) {
        double value = 0;
        in.number("optimizer_contention", value, Need::Required, Check::NonNegative);
        p.optimizer_contention = value;
    }
    if (in.error()) return *in.error();
    // Braced lists evaluate in order, so the first error reported is the first in the file's schema.
    for (const auto& error :
         {readFit(object, path, "forward_ms", p.forward_ms, Need::Required),
          readFit(object, path, "backward_ms", p.backward_ms, Need::Required),
          readFit(object, path, "recompute_ms", p.recompute_ms, Need::Required),
          readFit(object, path, "activation_bytes", p.activation_bytes, Need::Required),
          readFit(object, path, "static_bytes", p.static_bytes, Need::Required),
          readFit(object, path, "reduce_grad_ms", p.reduce_grad_ms, Need::Optional),
          readFit(object, path, "optimizer_ms", p.optimizer_ms, Need::Optional),
          readOptionalFit(object, path, "backward_input_ms", p.backward_input_ms),
          readOptionalFit(object, path, "backward_weight_ms", p.backward_weight_ms),
          readOptionalFit(object, path, "weight_grad_bytes", p.weight_grad_bytes),
          readExtra(object, path, "embedding", p.embedding), readExtra(object, path, "head", p.head)})
        if (error) return *error;
    return p;
}

json profileToJson(const ProfileFits& fits) {
    json out = {{"format", "mario-profile"},
                {"version", 1},
                {"micro_batch_size", fits.micro_batch_size},
                {"forward_ms", fitJson(fits.forward_ms)},
                {"backward_ms", fitJson(fits.backward_ms)},
                {"recompute_ms", fitJson(fits.recompute_ms)},
                {"activation_bytes", fitJson(fits.activation_bytes)},
                {"static_bytes", fitJson(fits.static_bytes)},
                {"reduce_grad_ms", fitJson(fits.reduce_grad_ms)},
                {"optimizer_ms", fitJson(fits.optimizer_ms)},
                {"checkpoint_bytes", fits.checkpoint_bytes},
                {"send_bytes", fits.send_bytes},
                {"embedding", extraJson(fits.embedding)},
                {"head", extraJson(fits.head)}};
    if (fits.sequence_length > 0) out["sequence_length"] = fits.sequence_length;
    if (fits.tp > 0) out["tp"] = fits.tp;
    if (fits.backward_input_ms) out["backward_input_ms"] = fitJson(*fits.backward_input_ms);
    if (fits.backward_weight_ms) out["backward_weight_ms"] = fitJson(*fits.backward_weight_ms);
    if (fits.weight_grad_bytes) out["weight_grad_bytes"] = fitJson(*fits.weight_grad_bytes);
    if (fits.working_bytes > 0) out["working_bytes"] = fits.working_bytes;
    if (fits.contention > 0) out["contention"] = fits.contention;
    if (fits.optimizer_contention) out["optimizer_contention"] = *fits.optimizer_contention;
    return out;
}

}  // namespace mario
