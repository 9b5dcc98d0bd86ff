#include "core/session/RecomputeFreeOrder.h"

#include <algorithm>

#include "core/io/PipeliningCsv.h"
#include "core/passes/PassRegistry.h"
#include "core/sim/Simulator.h"
#include "core/util/HumanBytes.h"

namespace mario {
namespace {

// Per device, the peak of what the micro-batches hold (activations, checkpoints, gradients
// in flight) in `plan` as simulated: the part the order decides. Weights and the framework's
// reserve are the same either way and would hide the difference on small models.
std::vector<double> peaks(const Plan& plan) {
    std::vector<double> out;
    auto result = Simulator::run(plan, SimOptions::timelineOnly());
    if (!result) return out;
    for (const auto& device : result->devices) out.push_back(device.peak_dynamic_bytes);
    return out;
}

std::string recomputations(int count) {
    return std::to_string(count) + (count == 1 ? " recomputation" : " recomputations");
}

std::string nameList(const std::vector<std::string_view>& names) {
    std::string out;
    for (auto name : names) out += (out.empty() ? "" : ", ") + std::string(name);
    return out;
}

}  // namespace

Plan withoutRecompute(Plan plan) {
    for (auto& device : plan.devices)
        std::erase_if(device.program, [](const Instruction& instruction) { return instruction.op == Op::Recompute; });
    return plan;
}

std::string RecomputeFreeOrder::summary() const {
    std::string text = recomputations(dropped) + " (R) dropped";
    if (left_out.empty()) return text;
    std::vector<std::string_view> names;
    for (PassId pass : left_out) names.push_back(passInfo(pass).name);
    text += "; " + nameList(names) + " left out, since it runs forwards early because they are checkpointed";
    if (device >= 0 && peak_with_bytes > peak_exported_bytes)
        text += ": without R it would raise what device " + std::to_string(device) + "'s micro-batches hold from " +
                humanBytes(peak_exported_bytes) + " to " + humanBytes(peak_with_bytes);
    return text;
}

Result<RecomputeFreeOrder> recomputeFreeOrder(const ScheduleInput& input, const PreparedSchedule& prepared) {
    RecomputeFreeOrder out;
    out.dropped = recomputeCount(prepared.plan);

    // A loaded order that such a pass already moved: nothing to run again without it.
    std::vector<std::string_view> baked;
    for (const std::string& applied : input.source.info.passes_applied)
        for (const PassInfo& info : passTable())
            if (info.needs_checkpointing && info.name == applied) baked.push_back(info.name);
    if (!baked.empty() && out.dropped > 0) {
        const auto withR = peaks(prepared.plan);
        const auto withoutR = peaks(withoutRecompute(prepared.plan));
        std::size_t worst = 0;
        for (std::size_t d = 0; d < std::min(withR.size(), withoutR.size()); ++d)
            if (withoutR[d] - withR[d] > withoutR[worst] - withR[worst]) worst = d;
        std::string message = "the order was saved after " + nameList(baked) +
                              ", which runs forwards early because they are checkpointed";
        if (worst < withR.size() && worst < withoutR.size())
            message += ": without its " + recomputations(out.dropped) + ", device " + std::to_string(worst) +
                       "'s micro-batches would hold up to " + humanBytes(withoutR[worst]) + " instead of " +
                       humanBytes(withR[worst]);
        return makeError(message + "; export the config it came from, where --drop-recompute leaves " +
                         nameList(baked) + " out");
    }

    ScheduleInput rerun = input;
    std::erase_if(rerun.passes, [&](PassId pass) {
        const bool leave = passInfo(pass).needs_checkpointing;
        if (leave) out.left_out.push_back(pass);
        return leave;
    });
    if (out.left_out.empty() || out.dropped == 0) {
        out.left_out.clear();
        out.plan = withoutRecompute(prepared.plan);
        return out;
    }
    auto again = prepareSchedule(rerun, {.simulate = false});
    if (!again) return again.error();
    out.dropped = recomputeCount(again->plan);
    out.plan = withoutRecompute(again->plan);
    const auto with = peaks(withoutRecompute(prepared.plan));
    const auto exported = peaks(out.plan);
    for (std::size_t d = 0; d < std::min(with.size(), exported.size()); ++d)
        if (out.device < 0 || with[d] - exported[d] > out.peak_with_bytes - out.peak_exported_bytes) {
            out.device = static_cast<int>(d);
            out.peak_with_bytes = with[d];
            out.peak_exported_bytes = exported[d];
        }
    return out;
}

}  // namespace mario
