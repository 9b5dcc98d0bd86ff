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

namespace mario {
namespace {

constexpr double kNotSent = std::numeric_limits<double>::quiet_NaN();

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
template <bool kStretch, bool kCurve, bool kOverlap>
Result<SimResult> timePlanOf(const Plan& plan, SimulationTables& prepared, const SimOptions& options,
                             const ComputeStretch* stretch) {
    const PipelineTopology& topology = prepared.topology;
    const MessageSlots& messages = prepared.messages;
    const int microbatches = prepared.microbatches;
    const int deviceCount = static_cast<int>(plan.devices.size());
    const std::vector<std::uint8_t>& checkpointed = prepared.checkpointed;
    std::vector<double>& arrival = prepared.arrival;
    std::vector<int>& waiting = prepared.waiting;
    std::vector<std::size_t>& touched = prepared.touched;
    const std::vector<int>& dense = messages.denseOf();
    const std::vector<SimulationTables::StageRow>& rows = prepared.stages;
    // computeMs: the stage's cost for the kind, through the pair's rule only when pairs overlap.
    auto timeOf = [&](const std::vector<Instruction>& program, std::size_t i) {
        if constexpr (kOverlap) return computeMs(plan, program, i);
        return rows[program[i].stage].duration[int(program[i].op)];
    };
    SimResult result;
    result.devices.resize(deviceCount);
    std::vector<std::size_t> pc(deviceCount, 0);
    std::vector<double> clock(deviceCount, 0.0), dynamic(deviceCount, 0.0);
    std::vector<int> runnable(deviceCount);
    // A run of recomputations since the device's last other compute: when it started, how long
    // it is, and how much of it ran before the data of a following receive arrived (the
    // device would have waited that long without it).
    struct RecomputeRun {
        double start = 0, duration = 0, hidden = 0;
        std::size_t first = 0;  // the program index of its first R
        bool open = false;      // an R since the last other compute (zero-length ones too)
    };
    std::vector<RecomputeRun> recomputeRun(deviceCount);
    // Closes the device's run before program index `end`: the run's hidden time, and each of its
    // Rs' share of it (the views shade each R by it: views/RecomputeCover.h).
    auto closeRun = [&](int d, std::size_t end) {
        RecomputeRun& run = recomputeRun[d];
        if (!run.open) return;
        DeviceStats& stats = result.devices[d];
        stats.recompute_hidden_ms += run.hidden;
        const double hiddenUntil = run.start + run.hidden;
        const auto& program = plan.devices[d].program;
        for (std::size_t k = run.first; k < end; ++k)
            if (program[k].op == Op::Recompute) {
                const InstructionTiming& timing = stats.timings[k];
                stats.recompute_hidden.push_back(
                    {k, std::clamp(hiddenUntil - timing.start, 0.0, timing.end - timing.start)});
            }
        run = {};
    };
    for (int d = 0; d < deviceCount; ++d) {
        runnable[d] = deviceCount - 1 - d;
        DeviceStats& stats = result.devices[d];
        stats.index = plan.devices[d].index;
        stats.timings.resize(plan.devices[d].program.size());
        if (prepared.recomputes[d] > 0) stats.recompute_hidden.reserve(prepared.recomputes[d]);
    }
    for (int d = 0; d < deviceCount; ++d) result.devices[d].static_bytes = prepared.statics[d];
    if constexpr (kCurve)
        for (auto& stats : result.devices) stats.memory.push_back({0.0, stats.static_bytes});

    while (!runnable.empty()) {
        const int d = runnable.back();
        runnable.pop_back();
        const auto& program = plan.devices[d].program;
        DeviceStats& stats = result.devices[d];
        double t = clock[d];
        double mem = dynamic[d];
        // The device's running sums in registers while it runs (the same additions).
        double busy = stats.busy_ms, peak = stats.peak_dynamic_bytes;
        std::size_t i = pc[d];
        auto memoryChange = [&](double time, double delta) {
            mem += delta;
            peak = std::max(peak, mem);
            if constexpr (kCurve) stats.memory.push_back({time, stats.static_bytes + mem});
        };
        for (; i < program.size(); ++i) {
            const Instruction& ins = program[i];
            const SimulationTables::StageRow& row = rows[ins.stage];
            InstructionTiming& timing = stats.timings[i];
            double duration = 0;
            switch (ins.op) {
                case Op::RecvForward:
                case Op::RecvBackward: {
                    const std::size_t slot = messages.of(ins.op == Op::RecvBackward, ins.stage, dense[ins.microbatch]);
                    if (std::isnan(arrival[slot])) {
                        waiting[slot] = d;
                        touched.push_back(slot);
                        goto blocked;
                    }
                    timing = {t, std::max(t, arrival[slot])};
                    t = timing.end;
                    if (RecomputeRun& run = recomputeRun[d]; run.duration > 0)
                        run.hidden = std::max(run.hidden, std::clamp(arrival[slot] - run.start, 0.0, run.duration));
                    continue;
                }
                case Op::SendForward:
                case Op::SendBackward: {
                    timing = {t, t};
                    const bool backward = ins.op == Op::SendBackward;
                    const int target = backward ? row.previous_stage : row.next_stage;  // PipelineTopology::sendTarget
                    if (target < 0) continue;  // the validator reports it; nothing can receive it
                    const std::size_t slot = messages.of(backward, target, dense[ins.microbatch]);
                    // MessageSlots::transferMs: a gradient crosses the receiver's boundary.
                    arrival[slot] = t + (backward ? rows[target] : row).send_transfer_ms;
                    touched.push_back(slot);
                    if (waiting[slot] >= 0) {
                        runnable.push_back(waiting[slot]);
                        waiting[slot] = -1;
                    }
                    continue;
                }
                case Op::Forward: {
                    duration = timeOf(program, i);
                    const std::size_t key = static_cast<std::size_t>(ins.stage) * microbatches + dense[ins.microbatch];
                    memoryChange(t, checkpointed[key] ? row.checkpoint_bytes : row.forward_bytes);
                    break;
                }
                case Op::Recompute:
                    duration = timeOf(program, i);
                    memoryChange(t, row.recompute_bytes);
                    break;
                default: duration = timeOf(program, i); break;
            }
            if constexpr (kStretch) {
                const double alone = duration;
                duration *= (*stretch)[d][i];
                stats.contention_ms += duration - alone;
            }
            if (ins.op == Op::Recompute) {
                RecomputeRun& run = recomputeRun[d];
                if (!run.open) run.first = i, run.open = true;
                if (run.duration == 0) run.start = t;
                run.duration += duration;
                stats.recompute_ms += duration;
            } else {
                closeRun(d, i);
            }
            timing = {t, t + duration};
            t += duration;
            busy += duration;
            if (ins.op == Op::Backward) memoryChange(t, row.backward_release);
            else if (ins.op == Op::BackwardInput) memoryChange(t, row.input_grad_release);
            else if (ins.op == Op::BackwardWeight) memoryChange(t, row.weight_grad_release);
        }
    blocked:
        stats.busy_ms = busy;
        stats.peak_dynamic_bytes = peak;
        pc[d] = i;
        clock[d] = t;
        dynamic[d] = mem;
    }

    for (const std::size_t slot : touched) arrival[slot] = kNotSent, waiting[slot] = -1;
    touched.clear();
    for (int d = 0; d < deviceCount; ++d) {
        closeRun(d, pc[d]);
        if (pc[d] < plan.devices[d].program.size()) result.deadlocked = true;
        result.makespan_ms = std::max(result.makespan_ms, clock[d]);
    }
    if (result.deadlocked) result.blocked = explainDeadlock(plan, topology, pc);

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
    if (options.summary) {
        const SimulationTables::SummarySums& sums = prepared.sums;
        result.critical_chain_ms = criticalChain(plan, topology, checkpointed, prepared.split, microbatches,
                                                 messages.denseOf(), sums.chain_of_microbatch);
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
    if (auto overflow = checkFinite(plan, result, options.names ? *options.names : planFieldNames()))
        return *overflow;
    return result;
}

Result<SimResult> timePlan(const Plan& plan, SimulationTables& prepared, const SimOptions& options,
                           const ComputeStretch* stretch) {
    const bool overlap = plan.overlap_factor > 0;
    if (stretch) {
        if (options.record_memory_curve)
            return overlap ? timePlanOf<true, true, true>(plan, prepared, options, stretch)
                           : timePlanOf<true, true, false>(plan, prepared, options, stretch);
        return overlap ? timePlanOf<true, false, true>(plan, prepared, options, stretch)
                       : timePlanOf<true, false, false>(plan, prepared, options, stretch);
    }
    if (options.record_memory_curve)
        return overlap ? timePlanOf<false, true, true>(plan, prepared, options, stretch)
                       : timePlanOf<false, true, false>(plan, prepared, options, stretch);
    return overlap ? timePlanOf<false, false, true>(plan, prepared, options, stretch)
                   : timePlanOf<false, false, false>(plan, prepared, options, stretch);
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
    auto prepared = SimulationTables::build(plan, options.summary);
    if (!prepared) return prepared.error();
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
