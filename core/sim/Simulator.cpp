#include "core/sim/Simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/schedule/PipelineTopology.h"
#include "core/sim/ComputeTime.h"
#include "core/sim/DeadlockExplainer.h"
#include "core/sim/LowerBound.h"
#include "core/sim/SharedHardware.h"
#include "core/sim/SimulationTables.h"
#include "core/sim/TimingLoop.h"

namespace mario {
namespace {

// Times and bytes are sums of the plan's costs; each cost is finite, but 1.8e308 twice is not.
// An overflowed sum is an error naming the largest cost, never an "inf" or "null" result.
std::optional<Error> checkFinite(const Plan& plan, const SimResult& result, const CostNames& names) {
    bool finite = std::isfinite(result.makespan_ms);
    for (const auto& stats : result.devices)
        finite = finite && std::isfinite(stats.busy_ms) && std::isfinite(stats.peak_bytes);
    if (finite) return std::nullopt;
    std::string field = "a cost";
    double largest = -1;
    std::size_t largestStage = 0;
    std::string_view largestName;
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
        const StageCost& c = plan.stages[s].cost;
        // Every cost a time or a byte count is summed from, each by its own name in the file:
        // with the split backward's and optimizer's left out, their overflow was blamed on
        // activation_bytes (issue 30). An unset split part is half of backward_ms, never larger.
        for (auto [name, value] :
             {std::pair{"forward_ms", c.forward_ms}, std::pair{"backward_ms", c.backward_ms},
              std::pair{"recompute_ms", c.recompute_ms},
              std::pair{"backward_input_ms", c.backward_input_ms.value_or(0)},
              std::pair{"backward_weight_ms", c.backward_weight_ms.value_or(0)},
              std::pair{"reduce_grad_ms", c.reduce_grad_ms}, std::pair{"optimizer_ms", c.optimizer_ms},
              std::pair{"activation_bytes", c.activation_bytes}, std::pair{"checkpoint_bytes", c.checkpoint_bytes},
              std::pair{"weight_grad_bytes", c.weight_grad_bytes.value_or(0)},
              std::pair{"static_bytes", c.static_bytes}, std::pair{"send_bytes", c.send_bytes},
              std::pair{"working_bytes", c.working_bytes}, std::pair{"contention", c.contention}})
            if (value > largest) {
                largest = value;
                largestStage = s;
                largestName = name;
            }
    }
    if (!largestName.empty()) field = names.field(largestStage, largestName);
    char shown[32];
    std::snprintf(shown, sizeof shown, "%.3g", largest);
    return makeError(field + ": " + shown + " makes the step's times or memory overflow (not a finite number)");
}

// One timing of the plan, every compute instruction's time multiplied by `stretch` where given.
// Its work is the plan's instructions and devices, whatever its stage count. One instance per
// kind of timing (stretched, recording the memory curve, with overlapped pairs), so that the
// loop over instructions tests none of them (issue 45).
template <bool kStretch, bool kCurve, bool kOverlap, bool kRecompute, bool kSummary>
Result<SimResult> timePlanOf(const Plan& plan, SimulationTables& prepared, const SimOptions& options,
                             const ComputeStretch* stretch) {
    const PipelineTopology& topology = prepared.topology;
    const int deviceCount = static_cast<int>(plan.devices.size());
    SimResult result;
    result.devices.resize(deviceCount);
    for (int d = 0; d < deviceCount; ++d) {
        DeviceStats& stats = result.devices[d];
        stats.index = plan.devices[d].index;
        stats.timings.resize(plan.devices[d].program.size());  // unwritten: the loop writes each it reaches
        if (prepared.recomputes[d] > 0) stats.recompute_hidden.reserve(prepared.recomputes[d]);
    }
    for (int d = 0; d < deviceCount; ++d) result.devices[d].static_bytes = prepared.statics[d];
    if constexpr (kCurve)
        for (auto& stats : result.devices) stats.memory.push_back({0.0, stats.static_bytes});

    TimingLoop<kStretch, kCurve, kOverlap, kRecompute, kSummary> loop(plan, prepared, stretch, result);
    loop.run();
    for (int d = 0; d < deviceCount; ++d) {
        if (loop.pcOf(d) < plan.devices[d].program.size()) {
            result.deadlocked = true;  // what a deadlocked device never reached is {0, 0}
            auto& timings = result.devices[d].timings;
            std::fill(timings.begin() + static_cast<std::ptrdiff_t>(loop.pcOf(d)), timings.end(), InstructionTiming{});
        }
        result.makespan_ms = std::max(result.makespan_ms, loop.clockOf(d));
    }
    if (result.deadlocked) {
        std::vector<std::size_t> pc(static_cast<std::size_t>(deviceCount));
        for (int d = 0; d < deviceCount; ++d) pc[d] = loop.pcOf(d);
        result.blocked = explainDeadlock(plan, topology, pc);
    }

    double idle = 0;
    for (auto& stats : result.devices) {
        stats.idle_ms = result.makespan_ms - stats.busy_ms;
        stats.peak_bytes = stats.static_bytes + stats.peak_dynamic_bytes;
        idle += stats.idle_ms;
        result.busiest_device_ms = std::max(result.busiest_device_ms, stats.busy_ms);
        result.recompute_ms += stats.recompute_ms;
        result.recompute_hidden_ms += stats.recompute_hidden_ms;
        result.contention_ms += stats.contention_ms;
    }
    if (result.makespan_ms > 0 && deviceCount > 0) result.bubble_ratio = idle / (deviceCount * result.makespan_ms);
    if constexpr (kSummary) {
        const SimulationTables::SummarySums& sums = prepared.sums;
        result.critical_chain_ms =
            criticalChain(plan, topology, prepared.checkpointed, prepared.split, prepared.microbatches,
                          prepared.messages.denseOf(), sums.chain_of_microbatch);
        result.lower_bound_ms = std::max(result.busiest_device_ms, result.critical_chain_ms);
        result.tight_lower_bound_ms = std::max(result.lower_bound_ms, pipelineBound(plan, topology, sums.core_ms));
        result.samples_per_step =
            static_cast<double>(prepared.microbatchCount) * plan.info.micro_batch_size * plan.info.data_parallel;
        if (result.makespan_ms > 0 && !result.deadlocked) {
            result.samples_per_s = result.samples_per_step / (result.makespan_ms / 1000.0);
            result.tokens_per_s = result.samples_per_s * plan.info.sequence_length;
        }
        result.flops =
            stepFlopsOfSums(plan, sums.model_flops, sums.recompute_flops, result.deadlocked ? 0 : result.makespan_ms);
    }
    if (auto overflow = checkFinite(plan, result, options.names ? *options.names : planFieldNames())) return *overflow;
    return result;
}

template <bool kStretch, bool kCurve, bool kOverlap>
Result<SimResult> timePlanWith(const Plan& plan, SimulationTables& prepared, const SimOptions& options,
                               const ComputeStretch* stretch) {
    // Without an R no forward is checkpointed and no recomputation run opens: the loop skips both.
    const bool recomputes =
        std::any_of(prepared.recomputes.begin(), prepared.recomputes.end(), [](std::size_t rs) { return rs > 0; });
    if (options.summary)
        return recomputes ? timePlanOf<kStretch, kCurve, kOverlap, true, true>(plan, prepared, options, stretch)
                          : timePlanOf<kStretch, kCurve, kOverlap, false, true>(plan, prepared, options, stretch);
    return recomputes ? timePlanOf<kStretch, kCurve, kOverlap, true, false>(plan, prepared, options, stretch)
                      : timePlanOf<kStretch, kCurve, kOverlap, false, false>(plan, prepared, options, stretch);
}

Result<SimResult> timePlan(const Plan& plan, SimulationTables& prepared, const SimOptions& options,
                           const ComputeStretch* stretch) {
    const bool overlap = plan.overlap_factor > 0;
    if (stretch) {
        if (options.record_memory_curve)
            return overlap ? timePlanWith<true, true, true>(plan, prepared, options, stretch)
                           : timePlanWith<true, true, false>(plan, prepared, options, stretch);
        return overlap ? timePlanWith<true, false, true>(plan, prepared, options, stretch)
                       : timePlanWith<true, false, false>(plan, prepared, options, stretch);
    }
    if (options.record_memory_curve)
        return overlap ? timePlanWith<false, true, true>(plan, prepared, options, stretch)
                       : timePlanWith<false, true, false>(plan, prepared, options, stretch);
    return overlap ? timePlanWith<false, false, true>(plan, prepared, options, stretch)
                   : timePlanWith<false, false, false>(plan, prepared, options, stretch);
}

// Costs faster than the hardware (an HFU above 100%, sim/StepFlops.h) are an error, judged on
// the step timed alone as the validator does; the passes' trials (no summary) skip it.
std::optional<Error> checkUtilisation(const Plan& plan, const SimResult& result, const SimOptions& options) {
    if (!options.summary || result.deadlocked) return std::nullopt;
    if (auto problem = utilisationProblem(plan, result.flops, result.aloneMakespan(), options.names))
        return makeError(*problem);
    return std::nullopt;
}

}  // namespace

// Devices that share hardware: the fixed point of sim/SharedHardware.h. Each round times the plan
// with the stretch the last round's timeline implies, moved kStep of the way there (a full step
// can swing two devices' instructions past each other and back: GPT-3 13B Chimera 32×2048 at
// contention 0.1 settled in 37 rounds so, in 31 at 0.7). It stops once no instruction's stretch
// moves by more than kSettled, or when its rounds have done kRoundBudget work (at least
// kMinRounds), keeping the last: that Chimera's step was within 1e-5 of its fixed point after 8
// rounds and stops after 10 (0.33 s on one core); the H200's 1F1B 2×8 settles in 6. A round's
// work is what it re-times: its instructions and devices, plus kRoundOverhead for what any round
// costs (measured: about 50 instructions' worth on a plan of 8). Stages no instruction names cost
// a round nothing, so they do not count: counted per stage, or timed per stage, an 8-instruction
// plan that never settles (a contention of 1e15 rounds to a stretch that moves by more than
// kSettled) took 11 s at 64 stages and 113 s at 1,024.
Result<SimResult> Simulator::run(const Plan& plan, const SimOptions& options) {
    // The tables come from this thread's spare set and go back to it after the timing: rebuilt
    // for each plan, they keep their vectors' room, so that the passes' thousands of trials and
    // a timing's repeats allocate none of them (the tables' allocations were a tenth of an
    // 8 × 32 simulation, issue 45). A run inside a run (none today) finds no spare and builds
    // its own. Tables of a huge plan (message slots beyond 16 MiB) are not kept: a thread would
    // hold them for as long as it lives.
    thread_local std::optional<SimulationTables> spare;
    std::optional<SimulationTables> prepared = std::move(spare);
    spare.reset();
    if (!prepared) prepared.emplace();
    struct GiveBack {
        std::optional<SimulationTables>& tables;
        ~GiveBack() {
            constexpr std::size_t kKeptBytes = std::size_t(16) << 20;
            const std::size_t slotBytes = tables->messageStates.capacity() * sizeof(SimulationTables::MessageState);
            if (slotBytes <= kKeptBytes) spare = std::move(tables);
        }
    } giveBack{prepared};
    if (auto error = prepared->rebuild(plan, options.summary)) return *error;
    if (!options.contention || !sharesHardware(plan)) {
        auto result = timePlan(plan, *prepared, options, nullptr);
        if (result)
            if (auto problem = checkUtilisation(plan, *result, options)) return *problem;
        return result;
    }
    constexpr double kStep = 0.7;
    constexpr double kSettled = 1e-4;
    constexpr int kMinRounds = 8;
    constexpr double kRoundBudget = 4e6;
    constexpr double kRoundOverhead = 64;
    const double roundWork = double(plan.instructionCount()) + double(plan.devices.size()) + kRoundOverhead;
    const int maxRounds = std::max(kMinRounds, static_cast<int>(kRoundBudget / roundWork));
    ComputeStretch stretch = aloneStretch(plan);
    int rounds = 0;
    bool settled = false;
    double aloneMakespan = 0;
    while (!settled && rounds < maxRounds) {
        auto timeline = timePlan(plan, *prepared, SimOptions::timelineOnly(), &stretch);
        if (!timeline) return timeline.error();
        if (++rounds == 1) aloneMakespan = timeline->makespan_ms;  // the first round is alone
        if (timeline->deadlocked) {
            settled = true;  // no step to settle: the deadlock is the result
            break;
        }
        const ComputeStretch implied = contentionStretch(plan, *timeline);
        double moved = 0;
        for (std::size_t d = 0; d < stretch.size(); ++d)
            for (std::size_t i = 0; i < stretch[d].size(); ++i) {
                const double step = implied[d][i] - stretch[d][i];
                moved = std::max(moved, std::abs(step));
                stretch[d][i] += rounds == 1 ? step : step * kStep;
            }
        settled = moved <= kSettled;
    }
    auto result = timePlan(plan, *prepared, options, &stretch);
    if (result) {
        result->contention_rounds = rounds;
        result->contention_settled = settled;
        result->alone_makespan_ms = aloneMakespan;
        if (auto problem = checkUtilisation(plan, *result, options)) return *problem;
    }
    return result;
}

}  // namespace mario
