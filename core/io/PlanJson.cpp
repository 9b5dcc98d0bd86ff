#include "io/PlanJson.h"

#include <fstream>

#include "io/JsonFile.h"
#include "sim/Validator.h"

namespace mario {
namespace {

using nlohmann::json;

// Reads fields with their JSON path in every message.
class Reader {
public:
    explicit Reader(std::string path) : path_(std::move(path)) {}
    const std::string& path() const { return path_; }
    Reader at(const std::string& key) const { return Reader(path_.empty() ? key : path_ + "." + key); }
    Reader at(std::size_t index) const { return Reader(path_ + "[" + std::to_string(index) + "]"); }
    Error error(const std::string& what) const { return makeError(path_ + ": " + what); }

private:
    std::string path_;
};

Result<double> number(const json& object, const Reader& at, const char* key, std::optional<double> fallback,
                      bool allowNegative = false) {
    const Reader here = at.at(key);
    if (!object.contains(key)) {
        if (fallback) return *fallback;
        return here.error("missing (a number is required)");
    }
    const json& value = object[key];
    if (!value.is_number()) return here.error("expected a number, got " + std::string(value.type_name()));
    const double number = value.get<double>();
    if (!allowNegative && number < 0) return here.error("must not be negative, got " + value.dump());
    return number;
}

Result<int> integer(const json& object, const Reader& at, const char* key, std::optional<int> fallback) {
    const Reader here = at.at(key);
    if (!object.contains(key)) {
        if (fallback) return *fallback;
        return here.error("missing (an integer is required)");
    }
    const json& value = object[key];
    if (!value.is_number_integer()) return here.error("expected an integer, got " + value.dump());
    return value.get<int>();
}

Result<StageSpec> readStage(const json& node, const Reader& at) {
    if (!node.is_object()) return at.error("expected an object");
    StageSpec stage;
    auto index = integer(node, at, "index", std::nullopt);
    auto device = integer(node, at, "device", std::nullopt);
    if (!index) return index.error();
    if (!device) return device.error();
    stage.index = *index;
    stage.device = *device;
    StageCost& c = stage.cost;
    struct Field { const char* key; double* target; std::optional<double> fallback; };
    const Field fields[] = {
        {"forward_ms", &c.forward_ms, std::nullopt},  {"backward_ms", &c.backward_ms, std::nullopt},
        {"recompute_ms", nullptr, std::nullopt},     {"activation_bytes", &c.activation_bytes, 0.0},
        {"checkpoint_bytes", &c.checkpoint_bytes, 0.0}, {"static_bytes", &c.static_bytes, 0.0},
        {"send_bytes", &c.send_bytes, 0.0},          {"reduce_grad_ms", &c.reduce_grad_ms, 0.0},
        {"optimizer_ms", &c.optimizer_ms, 0.0},
    };
    for (const auto& field : fields) {
        if (!field.target) continue;
        auto value = number(node, at, field.key, field.fallback);
        if (!value) return value.error();
        *field.target = *value;
    }
    // Recompute re-runs the forward: that is its cost unless the file says otherwise.
    auto recompute = number(node, at, "recompute_ms", c.forward_ms);
    if (!recompute) return recompute.error();
    c.recompute_ms = *recompute;
    for (auto [key, target] : {std::pair{"backward_input_ms", &c.backward_input_ms},
                               std::pair{"backward_weight_ms", &c.backward_weight_ms},
                               std::pair{"weight_grad_bytes", &c.weight_grad_bytes}}) {
        if (!node.contains(key)) continue;
        auto value = number(node, at, key, std::nullopt);
        if (!value) return value.error();
        *target = *value;
    }
    if (c.checkpoint_bytes > c.activation_bytes)
        return at.at("checkpoint_bytes").error("larger than activation_bytes (a checkpoint keeps part of the activations)");
    if (node.contains("layers")) {
        const json& layers = node["layers"];
        if (!layers.is_array() || layers.size() != 2 || !layers[0].is_number_integer() || !layers[1].is_number_integer() ||
            layers[0].get<int>() < 0 || layers[1].get<int>() < layers[0].get<int>())
            return at.at("layers").error("expected [begin, end) with 0 <= begin <= end");
        stage.layers = std::make_pair(layers[0].get<int>(), layers[1].get<int>());
    }
    return stage;
}

Result<PlanInfo> readInfo(const json& root) {
    PlanInfo info;
    const Reader top("");
    if (root.contains("name") && root["name"].is_string()) info.name = root["name"].get<std::string>();
    if (root.contains("scheme") && root["scheme"].is_string()) info.scheme = root["scheme"].get<std::string>();
    if (root.contains("notes") && root["notes"].is_string()) info.notes = root["notes"].get<std::string>();
    for (auto [key, target] : {std::pair{"micro_batch_size", &info.micro_batch_size},
                               std::pair{"sequence_length", &info.sequence_length},
                               std::pair{"data_parallel", &info.data_parallel}}) {
        auto value = integer(root, top, key, *target);
        if (!value) return value.error();
        if (*value < 0) return top.at(key).error("must not be negative");
        *target = *value;
    }
    if (root.contains("memory_limit_bytes")) {
        auto limit = number(root, top, "memory_limit_bytes", std::nullopt);
        if (!limit) return limit.error();
        info.memory_limit_bytes = *limit;
    }
    if (root.contains("passes_applied")) {
        const json& passes = root["passes_applied"];
        if (!passes.is_array()) return top.at("passes_applied").error("expected an array of pass names");
        for (std::size_t i = 0; i < passes.size(); ++i) {
            if (!passes[i].is_string()) return top.at("passes_applied").at(i).error("expected a string");
            info.passes_applied.push_back(passes[i].get<std::string>());
        }
    }
    return info;
}

Result<bool> readPrograms(const json& root, Plan& plan) {
    const Reader devices("devices");
    if (!root.contains("devices") || !root["devices"].is_array() || root["devices"].empty())
        return devices.error("missing or empty (an array of device programs is required)");
    for (std::size_t d = 0; d < root["devices"].size(); ++d) {
        const json& node = root["devices"][d];
        const Reader at = devices.at(d);
        if (!node.is_object()) return at.error("expected an object");
        auto index = integer(node, at, "index", static_cast<int>(d));
        if (!index) return index.error();
        DeviceProgram device{*index, {}};
        if (!node.contains("program") || !node["program"].is_array())
            return at.at("program").error("missing (an array of action strings is required)");
        const json& program = node["program"];
        device.program.reserve(program.size());
        for (std::size_t i = 0; i < program.size(); ++i) {
            if (!program[i].is_string()) return at.at("program").at(i).error("expected an action string like \"2F5\"");
            auto ins = parseAction(program[i].get_ref<const std::string&>());
            if (!ins) return at.at("program").at(i).error(ins.error().message);
            device.program.push_back(*ins);
        }
        plan.devices.push_back(std::move(device));
    }
    return true;
}

}  // namespace

bool looksLikePlan(const nlohmann::json& json) {
    return json.is_object() && json.contains("format") && json["format"] == "mario-plan";
}

Result<Plan> readPlan(const nlohmann::json& root, const PlanReadOptions& options) {
    const Reader top("");
    if (!root.is_object()) return makeError("plan: expected a JSON object");
    if (!looksLikePlan(root)) return makeError("format: expected \"mario-plan\"");
    auto version = integer(root, top, "version", std::nullopt);
    if (!version) return version.error();
    if (*version != 1) return makeError("version: " + std::to_string(*version) + " is not supported (this build reads version 1)");

    Plan plan;
    auto info = readInfo(root);
    if (!info) return info.error();
    plan.info = std::move(*info);
    if (root.contains("link")) {
        const json& link = root["link"];
        if (!link.is_object()) return makeError("link: expected an object");
        auto latency = number(link, Reader("link"), "latency_ms", 0.0);
        auto bandwidth = number(link, Reader("link"), "bandwidth_gb_per_s", 0.0);
        if (!latency) return latency.error();
        if (!bandwidth) return bandwidth.error();
        plan.link = {*latency, *bandwidth};
    }
    if (root.contains("pipelines")) {
        const json& chains = root["pipelines"];
        if (!chains.is_array()) return makeError("pipelines: expected an array of stage chains");
        for (std::size_t c = 0; c < chains.size(); ++c) {
            if (!chains[c].is_array()) return makeError("pipelines[" + std::to_string(c) + "]: expected an array of stages");
            std::vector<int> chain;
            for (std::size_t p = 0; p < chains[c].size(); ++p) {
                if (!chains[c][p].is_number_integer())
                    return makeError("pipelines[" + std::to_string(c) + "][" + std::to_string(p) + "]: expected a stage index");
                chain.push_back(chains[c][p].get<int>());
            }
            plan.pipelines.push_back(std::move(chain));
        }
    }
    if (!root.contains("stages") || !root["stages"].is_array() || root["stages"].empty())
        return makeError("stages: missing or empty (an array of stages is required)");
    for (std::size_t s = 0; s < root["stages"].size(); ++s) {
        auto stage = readStage(root["stages"][s], Reader("stages").at(s));
        if (!stage) return stage.error();
        plan.stages.push_back(std::move(*stage));
    }
    if (auto ok = readPrograms(root, plan); !ok) return ok.error();

    if (options.validate) {
        const ValidationReport report = Validator::validate(plan);
        if (!report.issues.empty()) return makeError(report.summary());
        if (!report.deadlock.empty()) return makeError(report.summary());
    }
    return plan;
}

Result<Plan> readPlanFile(const std::string& path, const PlanReadOptions& options) {
    auto json = readJsonFile(path);
    if (!json) return json.error();
    auto plan = readPlan(*json, options);
    if (!plan) return makeError(path + ": " + plan.error().message);
    return plan;
}

nlohmann::json writePlan(const Plan& plan) {
    json root;
    root["format"] = "mario-plan";
    root["version"] = 1;
    if (!plan.info.name.empty()) root["name"] = plan.info.name;
    if (!plan.info.scheme.empty()) root["scheme"] = plan.info.scheme;
    root["micro_batch_size"] = plan.info.micro_batch_size;
    root["sequence_length"] = plan.info.sequence_length;
    root["data_parallel"] = plan.info.data_parallel;
    if (plan.info.memory_limit_bytes) root["memory_limit_bytes"] = *plan.info.memory_limit_bytes;
    root["passes_applied"] = plan.info.passes_applied;
    if (!plan.info.notes.empty()) root["notes"] = plan.info.notes;
    if (!plan.pipelines.empty()) root["pipelines"] = plan.pipelines;
    root["link"] = {{"latency_ms", plan.link.latency_ms}, {"bandwidth_gb_per_s", plan.link.bandwidth_gb_per_s}};
    root["stages"] = json::array();
    for (const auto& stage : plan.stages) {
        const StageCost& c = stage.cost;
        json node = {{"index", stage.index},
                     {"device", stage.device},
                     {"forward_ms", c.forward_ms},
                     {"backward_ms", c.backward_ms},
                     {"recompute_ms", c.recompute_ms},
                     {"activation_bytes", c.activation_bytes},
                     {"checkpoint_bytes", c.checkpoint_bytes},
                     {"static_bytes", c.static_bytes},
                     {"send_bytes", c.send_bytes},
                     {"reduce_grad_ms", c.reduce_grad_ms},
                     {"optimizer_ms", c.optimizer_ms}};
        if (c.backward_input_ms) node["backward_input_ms"] = *c.backward_input_ms;
        if (c.backward_weight_ms) node["backward_weight_ms"] = *c.backward_weight_ms;
        if (c.weight_grad_bytes) node["weight_grad_bytes"] = *c.weight_grad_bytes;
        if (stage.layers) node["layers"] = {stage.layers->first, stage.layers->second};
        root["stages"].push_back(std::move(node));
    }
    root["devices"] = json::array();
    for (const auto& device : plan.devices) {
        json program = json::array();
        for (const auto& ins : device.program) program.push_back(toActionString(ins));
        root["devices"].push_back({{"index", device.index}, {"program", std::move(program)}});
    }
    return root;
}

Result<bool> writePlanFile(const Plan& plan, const std::string& path) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return makeError(path + ": cannot write the file");
    out << writePlan(plan).dump(1) << '\n';
    if (!out) return makeError(path + ": writing failed");
    return true;
}

}  // namespace mario
