#include "core/io/PlanJson.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>

#include "core/io/JsonFieldReader.h"
#include "core/io/JsonFile.h"
#include "core/io/TextFile.h"
#include "core/model/ByteRules.h"
#include "core/model/Limits.h"
#include "core/sim/Validator.h"

namespace mario {
namespace {

using nlohmann::json;
using Need = JsonFieldReader::Need;
using Check = JsonFieldReader::Check;

std::string indexed(const std::string& path, std::size_t index) { return path + "[" + std::to_string(index) + "]"; }

// An integer JSON value as 64 bits (unsigned ones above 2^63 saturate), or -1 for anything else:
// comparing this to a range is safe where get<int>() would wrap 2^32 + 3 to 3.
std::int64_t integerOrMinusOne(const json& value) {
    if (!value.is_number_integer()) return -1;
    if (value.is_number_unsigned())
        return std::int64_t(
            std::min<std::uint64_t>(value.get<std::uint64_t>(), std::numeric_limits<std::int64_t>::max()));
    return value.get<std::int64_t>();
}

Result<StageSpec> readStage(const json& node, const std::string& path) {
    JsonFieldReader in(node, path);
    StageSpec stage;
    StageCost& c = stage.cost;
    in.integerIn("index", stage.index, Need::Required, 0, limits::kMaxStages - 1);
    in.integerIn("device", stage.device, Need::Required, 0, limits::kMaxDevices - 1);
    in.number("forward_ms", c.forward_ms, Need::Required, Check::NonNegative);
    in.number("backward_ms", c.backward_ms, Need::Required, Check::NonNegative);
    // Recompute re-runs the forward: that is its cost unless the file says otherwise.
    c.recompute_ms = c.forward_ms;
    in.number("recompute_ms", c.recompute_ms, Need::Optional, Check::NonNegative);
    for (auto [key, target] :
         {std::pair{"activation_bytes", &c.activation_bytes}, std::pair{"checkpoint_bytes", &c.checkpoint_bytes},
          std::pair{"static_bytes", &c.static_bytes}, std::pair{"send_bytes", &c.send_bytes},
          std::pair{"reduce_grad_ms", &c.reduce_grad_ms}, std::pair{"optimizer_ms", &c.optimizer_ms},
          std::pair{"forward_flops", &c.forward_flops}, std::pair{"working_bytes", &c.working_bytes},
          std::pair{"contention", &c.contention}})
        in.number(key, *target, Need::Optional, Check::NonNegative);
    for (auto [key, target] :
         {std::pair{"backward_input_ms", &c.backward_input_ms}, std::pair{"backward_weight_ms", &c.backward_weight_ms},
          std::pair{"weight_grad_bytes", &c.weight_grad_bytes},
          std::pair{"optimizer_contention", &c.optimizer_contention}}) {
        if (!in.has(key)) continue;
        double value = 0;
        in.number(key, value, Need::Required, Check::NonNegative);
        *target = value;
    }
    if (in.ok())  // the rule the config reader applies too (core/model/ByteRules.h)
        if (auto problem = checkpointBytesProblem(c.checkpoint_bytes, c.activation_bytes))
            in.fail("checkpoint_bytes", *problem);
    if (in.ok() && c.weight_grad_bytes)  // unset, it is half the activations
        if (auto problem = weightGradBytesProblem(*c.weight_grad_bytes, c.activation_bytes))
            in.fail("weight_grad_bytes", *problem);
    if (in.ok() && in.has("layers")) {
        // Read as 64-bit before comparing: get<int>() would wrap 2^32 + 3 to 3.
        const json& layers = node["layers"];
        const bool pair = layers.is_array() && layers.size() == 2;
        const std::int64_t begin = pair ? integerOrMinusOne(layers[0]) : -1,
                           end = pair ? integerOrMinusOne(layers[1]) : -1;
        if (!pair || begin < 0 || end < begin || end > limits::kMaxLayers)
            in.fail("layers", "expected [begin, end) with 0 <= begin <= end <= " + std::to_string(limits::kMaxLayers));
        else stage.layers = std::make_pair(int(begin), int(end));
    }
    if (!in.ok()) return *in.error();
    return stage;
}

Result<bool> readInfo(const json& root, Plan& plan) {
    JsonFieldReader in(root, "");
    PlanInfo& info = plan.info;
    in.string("name", info.name, Need::Optional);
    in.string("scheme", info.scheme, Need::Optional);
    in.string("notes", info.notes, Need::Optional);
    in.integerIn("micro_batch_size", info.micro_batch_size, Need::Optional, 0, limits::kMaxMicroBatchSize);
    in.integer("sequence_length", info.sequence_length, Need::Optional, Check::NonNegative);
    in.integerIn("data_parallel", info.data_parallel, Need::Optional, 1, limits::kMaxDevices);
    if (in.has("memory_limit_bytes")) {
        double limit = 0;
        in.number("memory_limit_bytes", limit, Need::Required, Check::Positive);
        info.memory_limit_bytes = limit;
    }
    if (in.ok() && in.has("device_memory_bytes")) {  // absent from plans written before it existed
        double card = 0;
        in.number("device_memory_bytes", card, Need::Required, Check::Positive);
        info.device_memory_bytes = card;
    }
    in.number("reserve_bytes", info.reserve_bytes, Need::Optional, Check::NonNegative);
    in.integerIn("tensor_parallel", info.tensor_parallel, Need::Optional, 1, limits::kMaxTensorParallel);
    in.number("peak_tflops", info.peak_tflops, Need::Optional, Check::NonNegative);
    in.number("model_parameters", info.model_parameters, Need::Optional, Check::NonNegative);
    in.boolean("unit_costs", info.unit_costs, Need::Optional);
    if (in.ok() && in.has("passes_applied")) {
        const json& passes = root["passes_applied"];
        if (!passes.is_array()) return makeError("passes_applied: expected an array of pass names");
        for (std::size_t i = 0; i < passes.size(); ++i) {
            if (!passes[i].is_string()) return makeError(indexed("passes_applied", i) + ": expected a string");
            info.passes_applied.push_back(passes[i].get<std::string>());
        }
    }
    if (in.ok() && in.has("link")) {
        JsonFieldReader link(root["link"], "link");
        link.number("latency_ms", plan.link.latency_ms, Need::Optional, Check::NonNegative);
        link.number("bandwidth_gb_per_s", plan.link.bandwidth_gb_per_s, Need::Optional, Check::NonNegative);
        if (!link.ok()) return *link.error();
    }
    in.number("overlap_factor", plan.overlap_factor, Need::Optional, Check::NonNegative);
    if (in.ok() && plan.overlap_factor > 1) in.fail("overlap_factor", "expected a share in [0, 1]");
    if (!in.ok()) return *in.error();
    return true;
}

Result<bool> readChains(const json& root, Plan& plan) {
    if (!root.contains("pipelines")) return true;
    const json& chains = root["pipelines"];
    if (!chains.is_array()) return makeError("pipelines: expected an array of stage chains");
    for (std::size_t c = 0; c < chains.size(); ++c) {
        const std::string path = indexed("pipelines", c);
        if (!chains[c].is_array()) return makeError(path + ": expected an array of stages");
        std::vector<int> chain;
        for (std::size_t p = 0; p < chains[c].size(); ++p) {
            // Range-checked as a 64-bit value: get<int>() would read 4294967299 as stage 3.
            const json& entry = chains[c][p];
            const std::int64_t stage = integerOrMinusOne(entry);
            if (stage < 0 || stage >= limits::kMaxStages)
                return makeError(indexed(path, p) + ": expected a stage index in [0, " +
                                 std::to_string(limits::kMaxStages - 1) + "]");
            chain.push_back(static_cast<int>(stage));
        }
        plan.pipelines.push_back(std::move(chain));
    }
    return true;
}

Result<bool> readPrograms(const json& root, Plan& plan) {
    if (!root.contains("devices") || !root["devices"].is_array() || root["devices"].empty())
        return makeError("devices: missing or empty (an array of device programs is required)");
    if (root["devices"].size() > std::size_t(limits::kMaxDevices))
        return makeError("devices: " + std::to_string(root["devices"].size()) + " devices; the limit is " +
                         std::to_string(limits::kMaxDevices));
    std::int64_t instructions = 0;
    for (std::size_t d = 0; d < root["devices"].size(); ++d) {
        const json& node = root["devices"][d];
        const std::string path = indexed("devices", d);
        JsonFieldReader in(node, path);
        DeviceProgram device{static_cast<int>(d), {}};
        in.integerIn("index", device.index, Need::Optional, 0, limits::kMaxDevices - 1);
        if (!in.ok()) return *in.error();
        if (!node.contains("program") || !node["program"].is_array())
            return makeError(path + ".program: missing (an array of action strings is required)");
        const json& program = node["program"];
        instructions += static_cast<std::int64_t>(program.size());
        if (instructions > limits::kMaxInstructions)
            return makeError(path + ".program: the plan has more than " + std::to_string(limits::kMaxInstructions) +
                             " instructions, the limit");
        device.program.reserve(program.size());
        for (std::size_t i = 0; i < program.size(); ++i) {
            // Worded only for a bad entry: the path built for every entry was two thirds of
            // reading a valid 1F1B 8 × 32 plan's programs (issue 45).
            auto where = [&] { return indexed(path + ".program", i); };
            if (!program[i].is_string()) return makeError(where() + ": expected an action string like \"2F5\"");
            auto entry = parseProgramEntry(program[i].get_ref<const std::string&>());
            if (!entry) return makeError(where() + ": " + entry.error().message);
            device.program.insert(device.program.end(), entry->begin(), entry->end());
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
    if (!root.is_object()) return makeError("plan: expected a JSON object");
    if (!looksLikePlan(root)) return makeError("format: expected \"mario-plan\"");
    JsonFieldReader header(root, "");
    header.header("mario-plan");
    if (!root.contains("version")) header.fail("version", "required");
    if (!header.ok()) return *header.error();

    Plan plan;
    if (auto ok = readInfo(root, plan); !ok) return ok.error();
    if (auto ok = readChains(root, plan); !ok) return ok.error();
    if (!root.contains("stages") || !root["stages"].is_array() || root["stages"].empty())
        return makeError("stages: missing or empty (an array of stages is required)");
    if (root["stages"].size() > std::size_t(limits::kMaxStages))
        return makeError("stages: " + std::to_string(root["stages"].size()) + " stages; the limit is " +
                         std::to_string(limits::kMaxStages));
    for (std::size_t s = 0; s < root["stages"].size(); ++s) {
        auto stage = readStage(root["stages"][s], indexed("stages", s));
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

nlohmann::json writeStages(const Plan& plan) {
    json stages = json::array();
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
        if (c.forward_flops > 0) node["forward_flops"] = c.forward_flops;
        if (c.working_bytes > 0) node["working_bytes"] = c.working_bytes;
        if (c.contention > 0) node["contention"] = c.contention;
        if (c.optimizer_contention) node["optimizer_contention"] = *c.optimizer_contention;
        if (stage.layers) node["layers"] = {stage.layers->first, stage.layers->second};
        stages.push_back(std::move(node));
    }
    return stages;
}

json writePlan(const Plan& plan) {
    json root;
    root["format"] = "mario-plan";
    root["version"] = 1;
    if (!plan.info.name.empty()) root["name"] = plan.info.name;
    if (!plan.info.scheme.empty()) root["scheme"] = plan.info.scheme;
    root["micro_batch_size"] = plan.info.micro_batch_size;
    root["sequence_length"] = plan.info.sequence_length;
    root["data_parallel"] = plan.info.data_parallel;
    if (plan.info.memory_limit_bytes) root["memory_limit_bytes"] = *plan.info.memory_limit_bytes;
    if (plan.info.device_memory_bytes) root["device_memory_bytes"] = *plan.info.device_memory_bytes;
    if (plan.info.reserve_bytes > 0) root["reserve_bytes"] = plan.info.reserve_bytes;
    if (plan.info.tensor_parallel > 1) root["tensor_parallel"] = plan.info.tensor_parallel;
    if (plan.info.peak_tflops > 0) root["peak_tflops"] = plan.info.peak_tflops;
    if (plan.info.model_parameters > 0) root["model_parameters"] = plan.info.model_parameters;
    root["passes_applied"] = plan.info.passes_applied;
    if (plan.info.unit_costs) root["unit_costs"] = true;
    if (!plan.info.notes.empty()) root["notes"] = plan.info.notes;
    if (!plan.pipelines.empty()) root["pipelines"] = plan.pipelines;
    root["link"] = {{"latency_ms", plan.link.latency_ms}, {"bandwidth_gb_per_s", plan.link.bandwidth_gb_per_s}};
    if (plan.overlap_factor > 0) root["overlap_factor"] = plan.overlap_factor;
    root["stages"] = writeStages(plan);
    root["devices"] = json::array();
    for (const auto& device : plan.devices) {
        json program = toProgramEntries(device.program);
        root["devices"].push_back({{"index", device.index}, {"program", std::move(program)}});
    }
    return root;
}

Result<bool> writePlanFile(const Plan& plan, const std::string& path) {
    // What a tool writes, its readers accept: a plan file over the readers' limit is refused here,
    // with the numbers, instead of being written for `validate` and the window to refuse.
    const std::string text = writePlan(plan).dump(1) + "\n";
    if (static_cast<std::int64_t>(text.size()) > limits::kMaxFileBytes)
        return makeError("cannot write the plan to \"" + path + "\": it would be " + std::to_string(text.size() >> 20) +
                         " MiB, and plan files are read up to " + std::to_string(limits::kMaxFileBytes >> 20) +
                         " MiB (" + std::to_string(plan.instructionCount()) + " instructions)");
    return writeTextFile(path, text, "the plan");
}

}  // namespace mario
