#include "core/session/PreparedSchedule.h"

#include <chrono>
#include <exception>
#include <optional>

#include "core/passes/PassManager.h"
#include "core/session/HandEdits.h"
#include "core/session/PlanBuilder.h"
#include "core/sim/Simulator.h"

namespace mario {
namespace {

using Clock = std::chrono::steady_clock;

double microsecondsSince(Clock::time_point start) {
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

Result<PreparedSchedule> prepare(const ScheduleInput& input, const PrepareOptions& options) {
    const auto start = Clock::now();
    PreparedSchedule out;
    // A config's user wrote its keys, not the generated plan's "stages[0].forward_ms". The
    // source's costs are checked (by the validator, or by the base simulation) before passes
    // time them, so the passes' own trials keep the plan's names.
    const std::optional<CostNames> names =
        input.config ? std::optional<CostNames>(costNamesOf(*input.config)) : std::nullopt;
    const CostNames* named = names ? &*names : nullptr;
    if (options.simulate_base) {
        auto base = Simulator::run(input.source, {.names = named});  // drawn and summarised only: no memory curves
        if (!base) return base.error();
        out.base = std::move(*base);
    }
    out.plan = input.source;
    const auto passStart = Clock::now();
    PassManagerOptions passOptions;
    passOptions.validate_each_pass = false;  // the source was validated; each pass keeps it valid (tested)
    passOptions.bound_hide = options.bound_hide;
    passOptions.prepose_simulations = input.effort.prepose_simulations;
    passOptions.hide_simulations = input.effort.hide_simulations;
    passOptions.reorder_evaluations = input.effort.reorder_evaluations;
    passOptions.cancel = options.cancel;
    auto run = runPasses(out.plan, input.passes, passOptions);
    out.passes_us = microsecondsSince(passStart);
    if (!run) return run.error();
    out.passes_us -= run->hide_bound_us;
    out.steps = std::move(run->steps);
    out.hide_bound = std::move(run->hide_bound);
    out.reorder_bound = std::move(run->reorder_bound);
    out.skipped_edits = applyHandEdits(out.plan, input.edits);
    // A hand edit may move forwards and backwards, which leaves the space the bound covers.
    // And may keep more activations than the budget both bounds hold to.
    if (out.skipped_edits.size() < input.edits.size()) {
        out.hide_bound.reset();
        out.reorder_bound.reset();
    }
    if (options.simulate && !(options.cancel && options.cancel->load(std::memory_order_relaxed))) {
        auto result = Simulator::run(out.plan, {.record_memory_curve = options.record_memory_curve, .names = named});
        if (!result) return result.error();
        out.result = std::move(*result);
    }
    out.total_ms = microsecondsSince(start) / 1000;
    return out;
}

}  // namespace

Result<PreparedSchedule> prepareSchedule(const ScheduleInput& input, const PrepareOptions& options) {
    // The window runs this on a worker thread: whatever escapes below (memory on a huge
    // schedule) becomes this schedule's error line, never the end of the session.
    try {
        return prepare(input, options);
    } catch (const std::exception& e) {
        return makeError(std::string("cannot compute this schedule (") + e.what() + ")");
    }
}

}  // namespace mario
