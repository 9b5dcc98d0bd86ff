#include "core/io/PresetLibrary.h"

#include "core/model/Limits.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/io/ConfigJson.h"

namespace mario {

namespace fs = std::filesystem;

namespace {

std::string lowered(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

bool isProfilesDir(const fs::path& dir) {
    std::error_code ec;
    return fs::is_directory(dir / "models", ec) || fs::is_directory(dir / "hardware", ec);
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
    return out.empty() ? "none" : out;
}

// The keys a preset object may carry besides the struct fields: file header and prose.
constexpr std::string_view kModelKeys[] = {"format", "version",         "name",      "notes",          "source",
                                           "layers", "hidden",          "heads",     "kv_heads",       "ffn_hidden",
                                           "vocab",  "sequence_length", "gated_mlp", "tied_embeddings"};
// achievable_mfu and mfu_half_tokens belong to the flat model that the per-operator one
// replaced: files written before it still carry them, so they are read and ignored.
// The header of a hardware preset, read and written here only.
constexpr const char* kHardwareFormat = "mario-hardware";
constexpr std::string_view kHardwareKeys[] = {"format",
                                              "version",
                                              "name",
                                              "notes",
                                              "source",
                                              "peak_tflops",
                                              "achievable_mfu",
                                              "mfu_half_tokens",
                                              "memory_gb",
                                              "hbm_gb_per_s",
                                              "intra_node_gb_per_s",
                                              "inter_node_gb_per_s",
                                              "link_latency_ms",
                                              "gpus_per_node",
                                              "sm_count",
                                              "gemm_efficiency",
                                              "gemm_input_grad_efficiency",
                                              "gemm_weight_grad_efficiency",
                                              "flash_forward_efficiency",
                                              "flash_backward_efficiency",
                                              "hbm_efficiency",
                                              "elementwise_gb_per_s",
                                              "int32_tops",
                                              "nvlink_efficiency",
                                              "network_efficiency",
                                              "kernel_overhead_us",
                                              "framework_reserve_gb"};

}  // namespace

PresetLibrary::PresetLibrary(std::string directory) : directory_(std::move(directory)) {}

std::vector<std::string> PresetLibrary::searchPath(const std::string& executablePath) {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("MARIO_PROFILES_DIR"); env && *env) dirs.emplace_back(env);
    if (!executablePath.empty()) {
        std::error_code ec;
        fs::path exe = fs::absolute(fs::path(executablePath), ec);
        if (!ec)
            dirs.push_back((exe.parent_path() / ".." / "share" / "mario" / "profiles").lexically_normal().string());
    }
#ifdef MARIO_INSTALL_PROFILES_DIR
    dirs.emplace_back(MARIO_INSTALL_PROFILES_DIR);
#endif
#ifdef MARIO_SOURCE_PROFILES_DIR
    dirs.emplace_back(MARIO_SOURCE_PROFILES_DIR);
#endif
    return dirs;
}

Result<PresetLibrary> PresetLibrary::locate(const std::string& executablePath) {
    auto dirs = searchPath(executablePath);
    for (const auto& dir : dirs)
        if (isProfilesDir(dir)) return PresetLibrary(dir);
    return makeError("no profiles folder found (looked in: " + joined(dirs) +
                     "); set MARIO_PROFILES_DIR to the folder holding models/ and hardware/");
}

std::vector<std::string> PresetLibrary::namesIn(const std::string& subfolder, std::string_view suffix) const {
    std::vector<std::string> names;
    std::error_code ec;
    fs::path dir = subfolder.empty() ? fs::path(directory_) : fs::path(directory_) / subfolder;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;
        std::string file = it->path().filename().string();
        if (file.size() <= suffix.size() || !file.ends_with(suffix)) continue;
        std::string stem = file.substr(0, file.size() - suffix.size());
        // profile files live beside models/ and hardware/; keep them out of other listings
        if (suffix == ".json" && stem.ends_with(".profile")) continue;
        names.push_back(stem);
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<std::string> PresetLibrary::modelNames() const { return namesIn("models", ".json"); }
std::vector<std::string> PresetLibrary::hardwareNames() const { return namesIn("hardware", ".json"); }
std::vector<std::string> PresetLibrary::profileNames() const { return namesIn("", ".profile.json"); }

Result<std::string> PresetLibrary::findFile(const std::string& subfolder, std::string_view kind,
                                            std::string_view name) const {
    auto names = namesIn(subfolder, ".json");
    std::string wanted = lowered(name);
    for (const auto& candidate : names)
        if (lowered(candidate) == wanted) return (fs::path(directory_) / subfolder / (candidate + ".json")).string();
    return makeError("unknown " + std::string(kind) + " preset \"" + std::string(name) + "\" (known: " + joined(names) +
                     ")");
}

Result<ModelConfig> PresetLibrary::model(std::string_view name) const {
    auto file = findFile("models", "model", name);
    if (!file) return file.error();
    auto document = readJsonFile(*file);
    if (!document) return document.error();
    auto parsed = parseModel(*document, "");
    if (!parsed) return makeError(*file + ": " + parsed.error().message);
    if (parsed->name.empty()) parsed->name = fs::path(*file).stem().string();
    return parsed;
}

Result<HardwareConfig> PresetLibrary::hardware(std::string_view name) const {
    auto file = findFile("hardware", "hardware", name);
    if (!file) return file.error();
    auto document = readJsonFile(*file);
    if (!document) return document.error();
    auto parsed = parseHardware(*document, "");
    if (!parsed) return makeError(*file + ": " + parsed.error().message);
    if (parsed->name.empty()) parsed->name = fs::path(*file).stem().string();
    return parsed;
}

std::string PresetLibrary::resolve(const std::string& path) const {
    fs::path p(path);
    if (p.is_absolute() || directory_.empty()) return path;
    return (fs::path(directory_) / p).lexically_normal().string();
}

std::string PresetLibrary::profileName(const std::string& path) {
    constexpr std::string_view suffix = ".profile.json";
    std::string name = fs::path(path).filename().string();
    if (name.ends_with(suffix)) name.resize(name.size() - suffix.size());
    return name;
}

std::string PresetLibrary::profileFile(const std::string& path) {
    std::error_code ec;
    if (fs::exists(path, ec)) return path;
    const std::string named = path + ".profile.json";
    return fs::exists(named, ec) ? named : path;
}

Result<ModelConfig> PresetLibrary::parseModel(const nlohmann::json& object, const std::string& path) {
    using Need = JsonFieldReader::Need;
    JsonFieldReader in(object, path);
    in.header("mario-model");
    in.onlyKeys(kModelKeys);
    ModelConfig m;
    in.string("name", m.name, Need::Optional);
    // Bounds far above any published model, low enough that the cost model's products of
    // these sizes stay finite and exact in a double.
    in.integerIn("layers", m.layers, Need::Required, 1, limits::kMaxLayers);
    in.integerIn("hidden", m.hidden, Need::Required, 1, 1 << 20);
    in.integerIn("heads", m.heads, Need::Required, 1, 1 << 16);
    in.integerIn("kv_heads", m.kv_heads, Need::Optional, 0, 1 << 16);
    in.integerIn("ffn_hidden", m.ffn_hidden, Need::Optional, 0, 1 << 22);
    in.integerIn("vocab", m.vocab, Need::Required, 1, 1 << 24);
    in.integerIn("sequence_length", m.sequence_length, Need::Required, 1, 1 << 24);
    in.boolean("gated_mlp", m.gated_mlp, Need::Optional);
    in.boolean("tied_embeddings", m.tied_embeddings, Need::Optional);
    if (in.ok() && m.hidden % m.heads != 0)
        in.fail("heads", std::to_string(m.heads) + " heads do not divide hidden size " + std::to_string(m.hidden));
    if (in.ok() && m.heads % m.kvHeads() != 0)
        in.fail("kv_heads",
                std::to_string(m.kvHeads()) + " KV heads do not divide " + std::to_string(m.heads) + " heads");
    if (in.error()) return *in.error();
    return m;
}

Result<HardwareConfig> PresetLibrary::parseHardware(const nlohmann::json& object, const std::string& path) {
    using Need = JsonFieldReader::Need;
    using Check = JsonFieldReader::Check;
    JsonFieldReader in(object, path);
    in.header(kHardwareFormat);
    in.onlyKeys(kHardwareKeys);
    HardwareConfig h;
    in.string("name", h.name, Need::Optional);
    in.number("peak_tflops", h.peak_tflops, Need::Required, Check::Positive);
    double legacy = 0;
    in.number("achievable_mfu", legacy, Need::Optional, Check::Fraction);
    in.number("mfu_half_tokens", legacy, Need::Optional, Check::NonNegative);
    in.number("memory_gb", h.memory_gb, Need::Required, Check::Positive);
    in.number("hbm_gb_per_s", h.hbm_gb_per_s, Need::Required, Check::Positive);
    in.number("intra_node_gb_per_s", h.intra_node_gb_per_s, Need::Required, Check::Positive);
    in.number("inter_node_gb_per_s", h.inter_node_gb_per_s, Need::Required, Check::Positive);
    in.number("link_latency_ms", h.link_latency_ms, Need::Optional, Check::NonNegative);
    in.integerIn("gpus_per_node", h.gpus_per_node, Need::Optional, 1, 1024);
    in.integerIn("sm_count", h.sm_count, Need::Optional, 0, 100000);
    for (auto [key, field] :
         {std::pair{"gemm_efficiency", &h.gemm_efficiency},
          std::pair{"flash_forward_efficiency", &h.flash_forward_efficiency},
          std::pair{"flash_backward_efficiency", &h.flash_backward_efficiency},
          std::pair{"hbm_efficiency", &h.hbm_efficiency}, std::pair{"nvlink_efficiency", &h.nvlink_efficiency},
          std::pair{"network_efficiency", &h.network_efficiency},
          std::pair{"gemm_input_grad_efficiency", &h.gemm_input_grad_efficiency},
          std::pair{"gemm_weight_grad_efficiency", &h.gemm_weight_grad_efficiency}})
        in.number(key, *field, Need::Optional, Check::Fraction);
    in.number("elementwise_gb_per_s", h.elementwise_gb_per_s, Need::Optional, Check::Positive);
    in.number("int32_tops", h.int32_tops, Need::Optional, Check::Positive);
    in.number("kernel_overhead_us", h.kernel_overhead_us, Need::Optional, Check::NonNegative);
    in.number("framework_reserve_gb", h.framework_reserve_gb, Need::Optional, Check::NonNegative);
    if (in.ok() && h.framework_reserve_gb >= h.memory_gb)
        in.fail("framework_reserve_gb", "must be less than memory_gb");
    if (in.error()) return *in.error();
    return h;
}

nlohmann::json PresetLibrary::modelToJson(const ModelConfig& m) {
    return {{"name", m.name},           {"layers", m.layers},
            {"hidden", m.hidden},       {"heads", m.heads},
            {"kv_heads", m.kv_heads},   {"ffn_hidden", m.ffn_hidden},
            {"vocab", m.vocab},         {"sequence_length", m.sequence_length},
            {"gated_mlp", m.gated_mlp}, {"tied_embeddings", m.tied_embeddings}};
}

nlohmann::json PresetLibrary::hardwareToJson(const HardwareConfig& h) {
    nlohmann::json out = {{"name", h.name},
                          {"peak_tflops", h.peak_tflops},
                          {"memory_gb", h.memory_gb},
                          {"hbm_gb_per_s", h.hbm_gb_per_s},
                          {"intra_node_gb_per_s", h.intra_node_gb_per_s},
                          {"inter_node_gb_per_s", h.inter_node_gb_per_s},
                          {"link_latency_ms", h.link_latency_ms},
                          {"sm_count", h.sm_count},
                          {"gemm_efficiency", h.gemm_efficiency},
                          {"flash_forward_efficiency", h.flash_forward_efficiency},
                          {"flash_backward_efficiency", h.flash_backward_efficiency},
                          {"hbm_efficiency", h.hbm_efficiency},
                          {"nvlink_efficiency", h.nvlink_efficiency},
                          {"network_efficiency", h.network_efficiency},
                          {"kernel_overhead_us", h.kernel_overhead_us},
                          {"framework_reserve_gb", h.framework_reserve_gb},
                          {"gpus_per_node", h.gpus_per_node}};
    // Written only when set: without it the element-wise rate is the HBM rate (HardwareConfig.h).
    if (h.elementwise_gb_per_s > 0) out["elementwise_gb_per_s"] = h.elementwise_gb_per_s;
    if (h.int32_tops > 0) out["int32_tops"] = h.int32_tops;
    // Written only when measured: without them gemm_efficiency prices every product.
    if (h.gemm_input_grad_efficiency > 0) out["gemm_input_grad_efficiency"] = h.gemm_input_grad_efficiency;
    if (h.gemm_weight_grad_efficiency > 0) out["gemm_weight_grad_efficiency"] = h.gemm_weight_grad_efficiency;
    return out;
}

nlohmann::json PresetLibrary::hardwarePreset(const HardwareConfig& hardware, const std::string& notes,
                                             const nlohmann::json& source) {
    nlohmann::json preset = hardwareToJson(hardware);
    preset["format"] = kHardwareFormat;
    preset["version"] = 1;
    preset["notes"] = notes;
    if (!source.is_null()) preset["source"] = source;
    return preset;
}

}  // namespace mario
