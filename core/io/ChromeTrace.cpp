#include "core/io/ChromeTrace.h"

#include "core/io/TextFile.h"
#include "core/schedule/CheckpointedForwards.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace mario {
namespace {

using nlohmann::json;

// The format wants non-negative numbers; a NaN would serialize as null and an infinity is not
// JSON at all, and either makes importers drop the event or the whole file.
double micros(double ms) {
    const double us = ms * 1000.0;
    return std::isfinite(us) && us > 0 ? us : 0.0;
}

std::string deviceName(int device) { return "device " + std::to_string(device); }

std::string computeCategory(Op op, bool checkpointed) {
    switch (op) {
        case Op::Forward: return checkpointed ? "forward (checkpointed)" : "forward";
        case Op::Recompute: return "recompute";
        case Op::Backward: return "backward";
        case Op::BackwardInput: return "backward-input";
        case Op::BackwardWeight: return "backward-weight";
        case Op::ReduceGrad: return "reduce-grad";
        case Op::Optimizer: return "optimizer";
        default: return "compute";
    }
}

json instructionArgs(const Instruction& instruction, int device, std::size_t programIndex) {
    json args = {{"stage", instruction.stage}, {"device", device}, {"program_index", programIndex}};
    if (hasMicrobatch(instruction.op)) args["microbatch"] = instruction.microbatch;
    return args;
}

json event(const char* phase, std::string name, std::string category, int device, double tsMs) {
    return {{"ph", phase},
            {"name", std::move(name)},
            {"cat", std::move(category)},
            {"pid", kChromeTracePid},
            {"tid", chromeTraceTid(device)},
            {"ts", micros(tsMs)}};
}

json metadata(const char* name, int tid, json args) {
    return {{"ph", "M"}, {"name", name}, {"pid", kChromeTracePid}, {"tid", tid}, {"ts", 0}, {"args", std::move(args)}};
}

// Where a transfer lands: the stage that receives it and the RECV op it waits in.
struct Receiver {
    Op op;
    int stage;
};

// A SEND_F of stage s goes to the stage after s in its chain, a SEND_B to the one before
// (docs/plan-format.md); the first and last stages of a chain have nobody to send to that way.
std::optional<Receiver> receiverOf(const Instruction& send, const std::vector<std::vector<int>>& chains) {
    for (const auto& chain : chains) {
        const auto it = std::find(chain.begin(), chain.end(), send.stage);
        if (it == chain.end()) continue;
        if (send.op == Op::SendForward) {
            if (it + 1 == chain.end()) return std::nullopt;
            return Receiver{Op::RecvForward, *(it + 1)};
        }
        if (it == chain.begin()) return std::nullopt;
        return Receiver{Op::RecvBackward, *(it - 1)};
    }
    return std::nullopt;
}

// One position in a device program, by position in plan.devices.
struct Site {
    std::size_t device = 0;
    std::size_t index = 0;
};

// How many instructions of plan.devices[d] have a timing worth drawing. The simulator gives
// one DeviceStats per plan device, in plan order; a result shaped otherwise is matched by
// device index.
std::vector<std::size_t> drawableCounts(const Plan& plan, const SimResult& result,
                                        std::vector<const DeviceStats*>& stats) {
    stats.assign(plan.devices.size(), nullptr);
    if (result.devices.size() == plan.devices.size()) {
        for (std::size_t d = 0; d < plan.devices.size(); ++d) stats[d] = &result.devices[d];
    } else {
        std::map<int, const DeviceStats*> byIndex;
        for (const auto& device : result.devices) byIndex.emplace(device.index, &device);
        for (std::size_t d = 0; d < plan.devices.size(); ++d) {
            const auto found = byIndex.find(plan.devices[d].index);
            if (found != byIndex.end()) stats[d] = found->second;
        }
    }
    std::vector<std::size_t> counts(plan.devices.size(), 0);
    for (std::size_t d = 0; d < plan.devices.size(); ++d)
        if (stats[d] != nullptr) counts[d] = std::min(plan.devices[d].program.size(), stats[d]->timings.size());
    // On a deadlock the blocked instruction and everything after it never ran.
    if (result.deadlocked)
        for (const auto& blocked : result.blocked)
            for (std::size_t d = 0; d < plan.devices.size(); ++d)
                if (plan.devices[d].index == blocked.device && blocked.program_index >= 0)
                    counts[d] = std::min(counts[d], static_cast<std::size_t>(blocked.program_index));
    return counts;
}

}  // namespace

json chromeTrace(const Plan& plan, const SimResult& result) {
    std::vector<const DeviceStats*> stats;
    const std::vector<std::size_t> counts = drawableCounts(plan, result, stats);
    json events = json::array();

    const std::string processName = plan.info.name.empty() ? std::string("Mario plan") : "Mario plan " + plan.info.name;
    const int firstTid = plan.devices.empty() ? chromeTraceTid(0) : chromeTraceTid(plan.devices[0].index);
    events.push_back(metadata("process_name", firstTid, {{"name", processName}}));
    events.push_back(metadata("process_sort_index", firstTid, {{"sort_index", 0}}));
    for (const auto& device : plan.devices) {
        const int tid = chromeTraceTid(device.index);
        events.push_back(metadata("thread_name", tid, {{"name", deviceName(device.index)}}));
        events.push_back(metadata("thread_sort_index", tid, {{"sort_index", device.index}}));
    }

    // Pair every drawn SEND with its drawn RECV before emitting anything, so that each end
    // can be written next to its own instruction (Perfetto binds a flow end to the slice that
    // is open on that thread when the flow event is read).
    using Key = std::tuple<Op, int, int>;  // (RECV op, receiving stage, micro-batch)
    std::map<Key, std::vector<Site>> recvs;
    for (std::size_t d = 0; d < plan.devices.size(); ++d)
        for (std::size_t i = 0; i < counts[d]; ++i) {
            const Instruction& instruction = plan.devices[d].program[i];
            if (isRecv(instruction.op))
                recvs[{instruction.op, instruction.stage, instruction.microbatch}].push_back({d, i});
        }
    const auto chains = plan.chains();
    struct Flow {
        int id;
        std::string name;  // both ends of a v1 flow must carry the same (id, cat, name)
    };
    std::map<std::pair<std::size_t, std::size_t>, Flow> flows;  // (device, index) -> its flow
    int nextFlowId = 1;
    for (std::size_t d = 0; d < plan.devices.size(); ++d)
        for (std::size_t i = 0; i < counts[d]; ++i) {
            const Instruction& send = plan.devices[d].program[i];
            if (!isSend(send.op)) continue;
            const auto receiver = receiverOf(send, chains);
            if (!receiver) continue;
            auto found = recvs.find({receiver->op, receiver->stage, send.microbatch});
            if (found == recvs.end() || found->second.empty()) continue;
            const Site recv = found->second.front();
            found->second.erase(found->second.begin());  // a duplicate SEND gets the next RECV
            const Flow flow{nextFlowId++, toActionString(send)};
            flows[{d, i}] = flow;
            flows[{recv.device, recv.index}] = flow;
        }

    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        const int device = plan.devices[d].index;
        const auto& program = plan.devices[d].program;
        const std::vector<bool> checkpointed = checkpointedForwards(program);
        for (std::size_t i = 0; i < counts[d]; ++i) {
            const Instruction& instruction = program[i];
            const InstructionTiming& timing = stats[d]->timings[i];
            const std::string action = toActionString(instruction);
            const auto flow = flows.find({d, i});
            if (isCompute(instruction.op)) {
                json e = event("X", action, computeCategory(instruction.op, checkpointed[i]), device, timing.start);
                e["dur"] = micros(timing.end - timing.start);
                e["args"] = instructionArgs(instruction, device, i);
                events.push_back(std::move(e));
            } else if (isSend(instruction.op)) {
                json e = event("i", action, "send", device, timing.start);
                e["s"] = "t";
                e["args"] = instructionArgs(instruction, device, i);
                events.push_back(std::move(e));
                if (flow != flows.end()) {
                    json start = event("s", flow->second.name, "transfer", device, timing.start);
                    start["id"] = flow->second.id;
                    events.push_back(std::move(start));
                }
            } else if (isRecv(instruction.op)) {
                const double wait = timing.end - timing.start;
                json e;
                if (wait > 0) {
                    e = event("X", "wait " + action, "wait", device, timing.start);
                    e["dur"] = micros(wait);
                } else {
                    e = event("i", action, "recv", device, timing.end);
                    e["s"] = "t";
                }
                e["args"] = instructionArgs(instruction, device, i);
                events.push_back(std::move(e));
                if (flow != flows.end()) {
                    // At the arrival; the wait slice (or the instant) just written encloses it.
                    json end = event("f", flow->second.name, "transfer", device, timing.end);
                    end["id"] = flow->second.id;
                    end["bp"] = "e";
                    events.push_back(std::move(end));
                }
            }
        }
        if (stats[d] != nullptr)
            for (const auto& point : stats[d]->memory) {
                json e = event("C", "memory", "memory", device, point.time_ms);
                e["id"] = deviceName(device);
                e["args"] = {{"bytes", std::isfinite(point.bytes) ? point.bytes : 0.0}};
                events.push_back(std::move(e));
            }
    }

    return {{"displayTimeUnit", "ms"}, {"traceEvents", std::move(events)}};
}

Result<bool> writeChromeTrace(const Plan& plan, const SimResult& result, const std::string& path) {
    if (result.devices.size() != plan.devices.size())
        return makeError("cannot write Chrome trace \"" + path + "\": the simulation result has " +
                         std::to_string(result.devices.size()) + " devices but the plan has " +
                         std::to_string(plan.devices.size()));
    const json trace = chromeTrace(plan, result);
    // One event per line: still one JSON document, but diffable and greppable. Built whole and
    // written by the one writer, so a failed write never leaves the old trace truncated.
    std::string text = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
    const auto& events = trace["traceEvents"];
    for (std::size_t i = 0; i < events.size(); ++i) {
        // replace: a plan name with invalid UTF-8 must not make dump() throw.
        text += events[i].dump(-1, ' ', false, json::error_handler_t::replace);
        text += i + 1 < events.size() ? ",\n" : "\n";
    }
    text += "]}\n";
    return writeTextFile(path, text, "the Chrome trace");
}

}  // namespace mario
