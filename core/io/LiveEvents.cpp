#include "core/io/LiveEvents.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/io/JsonFieldReader.h"
#include "core/util/OneLineText.h"

namespace mario {
namespace {

using nlohmann::json;
using Need = JsonFieldReader::Need;
using Check = JsonFieldReader::Check;

// The offending text, cut short (a megabyte line must not become a megabyte error) and
// escaped (a stray carriage return or binary byte must not break the message's line).
std::string shown(std::string_view text) {
    std::string cut = escapedForMessage(text.substr(0, 60));
    if (text.size() > 60) cut += "...";
    return cut;
}

// Measured quantities: a diverged run's NaN loss is written as null (JSON has no NaN), so null
// reads back as NaN instead of failing the line the run really wrote.
void measured(JsonFieldReader& in, const json& node, const char* key, double& out, Need need) {
    if (in.ok() && in.has(key) && node[key].is_null()) {
        out = std::numeric_limits<double>::quiet_NaN();
        return;
    }
    in.number(key, out, need);
}

void measured(JsonFieldReader& in, const json& node, const char* key, std::optional<double>& out) {
    if (!in.has(key)) return;
    double value = 0;
    measured(in, node, key, value, Need::Required);
    if (in.ok()) out = value;
}

void measuredList(JsonFieldReader& in, const json& node, const char* key, std::vector<double>& out, Need need) {
    if (!in.ok()) return;
    if (!in.has(key)) {
        if (need == Need::Required) in.fail(key, "required");
        return;
    }
    const json& list = node[key];
    if (!list.is_array()) return in.fail(key, "expected a list of numbers");
    std::vector<double> values;
    for (const json& value : list) {
        if (value.is_null()) values.push_back(std::numeric_limits<double>::quiet_NaN());
        else if (value.is_number()) values.push_back(value.get<double>());
        else return in.fail(key, "expected a list of numbers");
    }
    out = std::move(values);
}

void count(JsonFieldReader& in, const char* key, std::size_t& out) {
    int value = 0;
    in.integer(key, value, Need::Required, Check::NonNegative);
    if (in.ok()) out = static_cast<std::size_t>(value);
}

template <class Event>
Result<LiveEvent> finish(const JsonFieldReader& in, Event event) {
    if (!in.ok()) return *in.error();
    return LiveEvent{std::move(event)};
}

Result<LiveEvent> readHello(const json& node) {
    JsonFieldReader in(node, "hello");
    LiveHello hello;
    in.integer("protocol", hello.protocol, Need::Required, Check::Positive);
    // Another version's hello is read no further: only its version is this build's business.
    if (!in.ok() || hello.protocol != kLiveEventProtocol) return finish(in, std::move(hello));
    in.string("backend", hello.backend, Need::Required);
    in.string("model", hello.model, Need::Required);
    in.integer("devices", hello.devices, Need::Required, Check::NonNegative);
    count(in, "instructions", hello.instructions);
    return finish(in, std::move(hello));
}

Result<LiveEvent> readInstruction(const json& node) {
    JsonFieldReader in(node, "instruction");
    LiveInstruction event;
    in.integer("iteration", event.iteration, Need::Required, Check::NonNegative);
    in.integer("device", event.device, Need::Required, Check::NonNegative);
    in.integer("replica", event.replica, Need::Required, Check::NonNegative);
    count(in, "index", event.index);
    in.string("instruction", event.instruction, Need::Required);
    measured(in, node, "activation_bytes", event.activation_bytes, Need::Required);
    measured(in, node, "allocated_bytes", event.allocated_bytes);
    measured(in, node, "peak_allocated_bytes", event.peak_allocated_bytes);
    measured(in, node, "start_us", event.start_us, Need::Required);
    measured(in, node, "end_us", event.end_us, Need::Required);
    return finish(in, std::move(event));
}

Result<LiveEvent> readIteration(const json& node) {
    JsonFieldReader in(node, "iteration");
    LiveIteration event;
    in.integer("iteration", event.iteration, Need::Required, Check::NonNegative);
    measured(in, node, "loss", event.loss, Need::Required);
    measured(in, node, "step_ms", event.step_ms, Need::Required);
    measuredList(in, node, "peak_activation_bytes", event.peak_activation_bytes, Need::Required);
    return finish(in, std::move(event));
}

Result<LiveEvent> readError(const json& node) {
    JsonFieldReader in(node, "error");
    LiveError event;
    in.string("message", event.message, Need::Required);
    return finish(in, std::move(event));
}

// The summary line has no "event" key (see LiveEvents.h), so its fields are its signature.
Result<LiveEvent> readSummary(const json& node) {
    JsonFieldReader in(node, "summary");
    LiveSummary summary;
    measured(in, node, "loss", summary.loss, Need::Required);
    count(in, "instructions", summary.instructions);
    in.integer("devices", summary.devices, Need::Required, Check::NonNegative);
    in.integer("data_parallel", summary.data_parallel, Need::Required, Check::Positive);
    in.integer("world", summary.world, Need::Required, Check::Positive);
    measuredList(in, node, "step_ms", summary.step_ms, Need::Optional);
    measuredList(in, node, "peak_allocated_bytes", summary.peak_allocated_bytes, Need::Optional);
    if (in.ok() && in.has("reference_loss")) {
        LiveReferenceCheck check;
        measured(in, node, "reference_loss", check.loss, Need::Required);
        measured(in, node, "max_grad_rel_diff", check.max_grad_rel_diff, Need::Required);
        measured(in, node, "max_grad_abs_diff", check.max_grad_abs_diff, Need::Required);
        in.boolean("grads_match", check.grads_match, Need::Required);
        summary.reference = check;
    }
    return finish(in, std::move(summary));
}

}  // namespace

std::string writeLiveEvent(const LiveHello& hello) {
    return json{{"event", "hello"},     {"protocol", hello.protocol}, {"backend", hello.backend},
                {"model", hello.model}, {"devices", hello.devices},   {"instructions", hello.instructions}}
        .dump();
}

std::string writeLiveEvent(const LiveInstruction& instruction) {
    json line{{"event", "instruction"},
              {"iteration", instruction.iteration},
              {"device", instruction.device},
              {"replica", instruction.replica},
              {"index", instruction.index},
              {"instruction", instruction.instruction},
              {"activation_bytes", instruction.activation_bytes},
              {"start_us", instruction.start_us},
              {"end_us", instruction.end_us}};
    if (instruction.allocated_bytes) line["allocated_bytes"] = *instruction.allocated_bytes;
    if (instruction.peak_allocated_bytes) line["peak_allocated_bytes"] = *instruction.peak_allocated_bytes;
    return line.dump();
}

std::string writeLiveEvent(const LiveIteration& iteration) {
    return json{{"event", "iteration"},
                {"iteration", iteration.iteration},
                {"loss", iteration.loss},
                {"step_ms", iteration.step_ms},
                {"peak_activation_bytes", iteration.peak_activation_bytes}}
        .dump();
}

std::string writeLiveEvent(const LiveSummary& summary) {
    json line{{"loss", summary.loss},
              {"instructions", summary.instructions},
              {"devices", summary.devices},
              {"data_parallel", summary.data_parallel},
              {"world", summary.world}};
    if (!summary.step_ms.empty()) line["step_ms"] = summary.step_ms;
    if (!summary.peak_allocated_bytes.empty()) line["peak_allocated_bytes"] = summary.peak_allocated_bytes;
    if (summary.reference) {
        line["reference_loss"] = summary.reference->loss;
        line["max_grad_rel_diff"] = summary.reference->max_grad_rel_diff;
        line["max_grad_abs_diff"] = summary.reference->max_grad_abs_diff;
        line["grads_match"] = summary.reference->grads_match;
    }
    return line.dump();
}

std::string writeLiveEvent(const LiveError& error) {
    return json{{"event", "error"}, {"message", error.message}}.dump();
}

Result<LiveEvent> parseLiveEvent(std::string_view line) {
    const json node = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (node.is_discarded()) return makeError("not a JSON line: " + shown(line));
    if (!node.is_object()) return makeError("expected a JSON object, got " + shown(node.dump()));
    const auto event = node.find("event");
    if (event == node.end()) return readSummary(node);
    if (!event->is_string()) return makeError("event: expected a string, got " + shown(event->dump()));
    const std::string& name = event->get_ref<const std::string&>();
    if (name == "hello") return readHello(node);
    if (name == "instruction") return readInstruction(node);
    if (name == "iteration") return readIteration(node);
    if (name == "error") return readError(node);
    return makeError("unknown event \"" + shown(name) + "\" (protocol " + std::to_string(kLiveEventProtocol) +
                     " has hello, instruction, iteration and error; the summary has no \"event\")");
}

Result<bool> checkLiveProtocol(const LiveHello& hello) {
    if (hello.protocol == kLiveEventProtocol) return true;
    return makeError("live events of protocol " + std::to_string(hello.protocol) + ", this build reads protocol " +
                     std::to_string(kLiveEventProtocol));
}

}  // namespace mario
