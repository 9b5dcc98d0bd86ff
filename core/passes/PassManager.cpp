#include "core/passes/PassManager.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <string>
#include <utility>

#include "core/passes/PassRegistry.h"
#include "core/sim/ProgramMemory.h"
#include "core/sim/Simulator.h"
#include "core/sim/Validator.h"

namespace mario {

namespace {

// Instructions simulated by prepose-forward over a whole run (simulations × plan size): about
// two seconds of prepose trials on one core at 8192 micro-batches (measured; docs/limits.md).
constexpr long long kPreposeWorkBudget = 50'000'000;
constexpr long long kMinPreposeSimulations = 64;
// Instructions prepose's trials may re-time over a whole run without a cap from the caller. Its
// trials are incremental, so the budget above (whole simulations) let a trial at 32 devices ×
// 2048 micro-batches re-time half the plan, 129 of them 31 million instructions (1.2 of the 1.6 s
// the window took to prepare the step, issue 30), for a step 57.5 ms shorter, all of it won by
// the first trials at every size from 64 to 8192 micro-batches. About 0.4 s on one core.
constexpr long long kPreposeEvaluationBudget = 10'000'000;

Result<bool> checkStillValid(const Plan& plan, PassId pass) {
    const ValidationReport report = Validator::validate(plan);
    if (report.ok()) return true;
    return makeError("internal error: pass " + std::string(passName(pass)) +
                     " left an invalid plan: " + report.summary());
}

Result<std::vector<double>> memoryCaps(const Plan& plan) {
    auto base = Simulator::run(plan, SimOptions::timelineOnly());
    if (!base) return base.error();
    std::vector<double> caps;
    const double limit = plan.info.memory_limit_bytes.value_or(std::numeric_limits<double>::infinity());
    for (const auto& device : base->devices) caps.push_back(std::min(limit, std::max(device.peak_bytes, 0.0)));
    return caps;
}

}  // namespace

// Hide's memory budget (see PassManager.h): what the plan already peaks at on each device plus one activation set
// of the device's largest stage (room for one more live activation, or one recomputation
// fewer), but never past a configured memory limit; with relax, the limit itself.
Result<std::vector<double>> hideBudget(const Plan& plan, bool relaxToLimit) {
    const auto& limit = plan.info.memory_limit_bytes;
    if (relaxToLimit && limit) return std::vector<double>(plan.devices.size(), *limit);
    auto sim = Simulator::run(plan, SimOptions::timelineOnly());
    if (!sim) return sim.error();
    std::vector<double> budget;
    for (const auto& device : sim->devices) {
        double largest = 0;
        for (const auto& stage : plan.stages)
            if (stage.device == device.index) largest = std::max(largest, stage.cost.activation_bytes);
        const double grown = device.peak_bytes + largest;
        budget.push_back(limit ? std::max(device.peak_bytes, std::min(*limit, grown)) : grown);
    }
    return budget;
}

std::vector<double> boundWBudget(const Plan& plan) {
    double balanced = 0;
    const std::vector<double> statics = staticBytesPerDevice(plan);
    for (const auto& device : plan.devices) {
        // The device's program with every W right after its I: nothing deferred.
        std::vector<Instruction> undeferred;
        undeferred.reserve(device.program.size());
        for (const auto& ins : device.program) {
            if (ins.op == Op::BackwardWeight) continue;
            undeferred.push_back(ins);
            if (ins.op == Op::BackwardInput) undeferred.push_back({Op::BackwardWeight, ins.stage, ins.microbatch});
        }
        const auto levels = memoryLevels(plan, undeferred);
        const double peak = levels.empty() ? 0.0 : std::max(0.0, *std::max_element(levels.begin(), levels.end()));
        balanced = std::max(balanced, statics[device.index] + peak);
    }
    return std::vector<double>(plan.devices.size(), std::max(balanced, plan.info.memory_limit_bytes.value_or(0.0)));
}

Result<PassRun> runPasses(Plan& plan, const std::vector<PassId>& passes, const PassManagerOptions& options) {
    PassRun run;
    PassContext context;
    context.selected = &passes;
    context.cancel = options.cancel;
    context.hide_simulations = options.hide_simulations;
    context.reorder_evaluations = options.reorder_evaluations;
    context.bound_hide = options.bound_hide;
    auto record = [&](PassReport report) -> Result<bool> {
        if (!report.changed()) return false;
        report.round = run.rounds;
        const PassId pass = report.pass;
        if (options.on_step) options.on_step(report, plan);
        run.steps.push_back(std::move(report));
        if (options.validate_each_pass) {
            if (auto ok = checkStillValid(plan, pass); !ok) return ok.error();
        }
        return true;
    };
    // Runs every selected pass of one phase in table order; true when one changed the plan.
    auto runPhase = [&](PassPhase phase) -> Result<bool> {
        bool changed = false;
        for (const PassInfo& info : passTable()) {
            if (info.phase != phase || !context.isSelected(info.id)) continue;
            if (phase == PassPhase::Last && options.cancel && options.cancel->load(std::memory_order_relaxed)) break;
            auto report = info.run(plan, context);
            if (!report) return report.error();
            auto r = record(std::move(*report));
            if (!r) return r.error();
            changed |= *r;
        }
        return changed;
    };

    if (context.isSelected(PassId::Prepose) || context.isSelected(PassId::Relax)) {
        auto computed = memoryCaps(plan);
        if (!computed) return computed.error();
        context.caps = std::move(*computed);
    }
    // Without a cap from the caller, prepose-forward gets two budgets, whichever ends first: a
    // number of trials (50M / plan size, at least 64) and the instructions its trials re-time
    // (kPreposeEvaluationBudget). The number of trials grows with the micro-batches, so an
    // unbounded run is quadratic (8192 micro-batches took 48 s); above about 5 000 instructions
    // prepose stops early with a valid plan (docs/limits.md gives the measured cost in step
    // time). A caller's cap (the tuner's rows) is a number of trials alone.
    context.prepose_budget = options.prepose_simulations > 0
                                 ? options.prepose_simulations
                                 : static_cast<int>(std::clamp<long long>(
                                       kPreposeWorkBudget / std::max<long long>(1, plan.instructionCount()),
                                       kMinPreposeSimulations, std::numeric_limits<int>::max()));
    context.prepose_evaluations =
        options.prepose_simulations > 0 ? std::numeric_limits<long long>::max() : kPreposeEvaluationBudget;
    if (auto once = runPhase(PassPhase::Once); !once) return once.error();
    auto cancelled = [&] { return options.cancel && options.cancel->load(std::memory_order_relaxed); };
    for (run.rounds = 1; run.rounds <= options.max_rounds && !cancelled(); ++run.rounds) {
        auto changed = runPhase(PassPhase::Rounds);
        if (!changed) return changed.error();
        if (!*changed) break;
    }
    if (auto last = runPhase(PassPhase::Last); !last) return last.error();
    run.hide_bound = std::move(context.hide_bound);
    run.reorder_bound = std::move(context.reorder_bound);
    run.hide_bound_us = context.hide_bound_us;
    for (PassId pass : allPasses())
        if (context.isSelected(pass)) {
            const std::string name(passName(pass));
            auto& applied = plan.info.passes_applied;
            if (std::find(applied.begin(), applied.end(), name) == applied.end()) applied.push_back(name);
        }
    return run;
}

}  // namespace mario
