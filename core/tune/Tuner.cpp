#include "core/tune/Tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>

#include "core/model/Limits.h"
#include "core/passes/PassManager.h"
#include "core/passes/PassRegistry.h"
#include "core/session/PlanBuilder.h"
#include "core/sim/MemoryFit.h"
#include "core/sim/ProgramMemory.h"
#include "core/sim/Simulator.h"
#include "core/tune/ParallelFor.h"

namespace mario {
namespace {

std::string gigabytes(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
    return text;
}

// One candidate: generate, prune by the cheap memory bound, run `passes` (when it checkpoints),
// simulate.
TuneOutcome evaluate(const Config& base, const TuneCandidate& candidate, const TuneOptions& options,
                     const std::vector<PassId>& passes, bool& simulated, const std::atomic<bool>* cancel) {
    TuneOutcome outcome;
    outcome.candidate = candidate;
    outcome.evaluated = true;
    simulated = false;
    const Config config = Tuner::configFor(base, candidate, options);
    const double limit = *config.memory_limit_bytes;
    auto plan = buildPlan(config);
    if (!plan) {
        outcome.rejection = plan.error().message;
        return outcome;
    }
    // Whatever the schedule, a device holds the framework's reserve, its weights and state plus,
    // while a backward runs, one whole activation set of one of its stages.
    std::vector<double> bound = staticBytesPerDevice(*plan), largest(plan->devices.size(), 0.0);
    for (const auto& stage : plan->stages)
        largest[stage.device] = std::max(largest[stage.device], stage.cost.activation_bytes);
    for (std::size_t d = 0; d < bound.size(); ++d) {
        if (bound[d] + largest[d] <= limit) continue;
        outcome.pruned = true;
        outcome.peak_bytes = bound[d] + largest[d];
        outcome.rejection = "device " + std::to_string(d) + " needs at least " + gigabytes(bound[d] + largest[d]) +
                            " (weights, optimizer state and one activation set), " +
                            gigabytes(bound[d] + largest[d] - limit) + " over the " + gigabytes(limit) + " limit";
        return outcome;
    }
    if (candidate.checkpoint) {
        outcome.passes = passes;
        const PassEffort effort = Tuner::passEffort(options);
        auto run = runPasses(*plan, outcome.passes,
                             {.validate_each_pass = false,
                              .cancel = cancel,
                              .prepose_simulations = effort.prepose_simulations,
                              .hide_simulations = effort.hide_simulations,
                              .reorder_evaluations = effort.reorder_evaluations});
        if (!run) {
            outcome.rejection = run.error().message;
            return outcome;
        }
    }
    // A refused candidate's reason in the config's words, as mario simulate of it would say.
    const CostNames names = costNamesOf(config);
    auto sim = Simulator::run(*plan, {.names = &names});
    simulated = true;
    if (!sim || sim->deadlocked) {
        outcome.rejection = sim ? "the generated schedule deadlocks" : sim.error().message;
        return outcome;
    }
    outcome.step_ms = sim->makespan_ms;
    outcome.bubble_ratio = sim->bubble_ratio;
    outcome.samples_per_s = sim->samples_per_s;
    outcome.tokens_per_s = sim->tokens_per_s;
    outcome.mfu = sim->flops.mfu;
    for (const auto& device : sim->devices) outcome.device_peak_bytes.push_back(device.peak_bytes);
    const MemoryFit fit = memoryFit(*sim, limit);
    outcome.peak_bytes = fit.highest_peak_bytes;
    outcome.feasible = fit.fits();
    if (!outcome.feasible)
        outcome.rejection = "device " + std::to_string(fit.fullest_device) + " needs " + gigabytes(outcome.peak_bytes) +
                            ", " + gigabytes(outcome.peak_bytes - limit) + " over the " + gigabytes(limit) + " limit";
    return outcome;
}

void rankAndSummarise(TuneResult& result) {
    auto& outcomes = result.outcomes;
    for (int i = 0; i < static_cast<int>(outcomes.size()); ++i)
        if (outcomes[i].feasible) result.ranking.push_back(i);
    // Throughput first; the search order breaks ties, so the ranking never depends on threads.
    std::stable_sort(result.ranking.begin(), result.ranking.end(),
                     [&](int a, int b) { return outcomes[a].samples_per_s > outcomes[b].samples_per_s; });
    if (!result.ranking.empty()) result.best = result.ranking.front();
    for (int i : result.ranking)
        if (!outcomes[i].candidate.checkpoint) {
            result.best_without_checkpointing = i;
            break;
        }
    if (result.best && result.best_without_checkpointing)
        result.speedup_over_no_checkpointing =
            outcomes[*result.best].samples_per_s / outcomes[*result.best_without_checkpointing].samples_per_s;

    // Pareto front: by ascending peak memory, each point faster than every cheaper one.
    std::vector<int> byMemory = result.ranking;
    std::stable_sort(byMemory.begin(), byMemory.end(),
                     [&](int a, int b) { return outcomes[a].peak_bytes < outcomes[b].peak_bytes; });
    double fastest = -1;
    for (int i : byMemory)
        if (outcomes[i].samples_per_s > fastest) {
            result.pareto.push_back(i);
            fastest = outcomes[i].samples_per_s;
        }
}

}  // namespace

std::vector<PassId> Tuner::refiningPasses(const TuneOptions& options) {
    if (!options.passes) return tunerPasses(true);
    std::vector<PassId> passes;
    for (const PassInfo& info : passTable())  // the table's order, each pass once
        if (std::find(options.passes->begin(), options.passes->end(), info.id) != options.passes->end())
            passes.push_back(info.id);
    return passes;
}

std::vector<PassId> Tuner::screeningPasses(const TuneOptions& options) {
    // The screening list (bound-w keeps zero-bubble schedules' deferred Ws within the memory
    // limit, so that they compete on their time) leaves out the passes that only refine: prepose
    // and hide, which place forwards and recomputations by simulating, the costly part.
    std::vector<PassId> passes;
    for (PassId pass : refiningPasses(options))
        if (passInfo(pass).tuner_screens || !passInfo(pass).tuner_refines) passes.push_back(pass);
    return passes;
}

PassEffort Tuner::passEffort(const TuneOptions& options) {
    // Uncapped, hide alone took 64 s on the winner for LLaMA-2 13B at a global batch of 16384
    // (131 072 recomputations), after 22 s of tuning: both costly passes get the same cap.
    return {.prepose_simulations = options.prepose_simulations,
            .hide_simulations = options.prepose_simulations,
            .reorder_evaluations = options.reorder_evaluations};
}

Result<Plan> Tuner::planFor(const Config& base, const TuneCandidate& candidate, const TuneOptions& options) {
    const Config config = configFor(base, candidate, options);
    auto plan = buildPlan(config);
    if (!plan) return plan.error();
    if (candidate.checkpoint) {
        // With the refinement's passes and caps: the plan written is the one the tuner measured
        // and ranked, in the same bounded time.
        const PassEffort effort = passEffort(options);
        auto run =
            runPasses(*plan, refiningPasses(options),
                      {.prepose_simulations = effort.prepose_simulations,
                       .hide_simulations = effort.hide_simulations,
                       .reorder_evaluations = effort.reorder_evaluations});
        if (!run) return run.error();
    }
    return plan;
}

Result<TuneResult> Tuner::run(const Config& base, const TuneOptions& options, const Progress& progress,
                              const std::atomic<bool>* cancel) {
    if (auto ok = checkOptions(base, options); !ok) return ok.error();
    const auto started = std::chrono::steady_clock::now();
    const std::vector<TuneCandidate> space = searchSpace(base, options);
    if (space.empty())
        return makeError("no candidate: " + std::to_string(options.devices) +
                         " devices and the global batch leave no valid pp × dp × tp × micro-batch size");
    // An absurd search is refused with its size, not run for hours (docs/limits.md).
    if (const double pairs = searchPairs(base, space); pairs > limits::kMaxTunePairs) {
        char text[320];
        std::snprintf(text, sizeof text,
                      "the search's %zu candidates hold %.3g (stage, micro-batch) pairs in all; the limit is %.3g: "
                      "narrow it (--pp, --schemes, --micro-batch-sizes) or lower parallel.global_batch_size",
                      space.size(), pairs, limits::kMaxTunePairs);
        return makeError(text);
    }
    const int threads = workerThreads(options.threads);

    const std::vector<PassId> screening = screeningPasses(options), refining = refiningPasses(options);
    TuneResult result;
    result.outcomes.resize(space.size());
    std::vector<std::uint8_t> done(space.size(), 0);
    std::mutex lock;
    TuneProgress status{0, static_cast<int>(space.size()), 0};
    parallelFor(static_cast<int>(space.size()), threads, cancel, [&](int i) {
        bool simulated = false;
        TuneOutcome outcome = evaluate(base, space[i], options, screening, simulated, cancel);
        std::lock_guard<std::mutex> guard(lock);
        result.simulated += simulated;
        result.pruned += outcome.pruned;
        ++status.evaluated;
        if (outcome.feasible) status.best_samples_per_s = std::max(status.best_samples_per_s, outcome.samples_per_s);
        result.outcomes[i] = std::move(outcome);
        done[i] = 1;
        if (progress) progress(status, result.outcomes[i]);
    });
    for (std::size_t i = 0; i < space.size(); ++i)
        if (!done[i]) {
            result.outcomes[i].candidate = space[i];
            result.outcomes[i].rejection = "not evaluated (cancelled)";
        }
    result.cancelled = cancel && cancel->load();

    // The best checkpointing candidates again, with prepose-forward: it only ever shortens a
    // step and stays within the memory limit, so they can only climb. (Nothing to do when the
    // passes asked for are all screening passes.)
    if (!result.cancelled) {
        rankAndSummarise(result);
        std::vector<int> refine;
        for (int i : result.ranking)
            if (refining != screening && result.outcomes[i].candidate.checkpoint &&
                static_cast<int>(refine.size()) < options.refine_top)
                refine.push_back(i);
        status.total += static_cast<int>(refine.size());
        status.refining = true;
        parallelFor(static_cast<int>(refine.size()), threads, cancel, [&](int k) {
            bool simulated = false;
            TuneOutcome outcome = evaluate(base, space[refine[k]], options, refining, simulated, cancel);
            std::lock_guard<std::mutex> guard(lock);
            result.simulated += simulated;
            result.refined += simulated;
            ++status.evaluated;
            if (outcome.feasible)
                status.best_samples_per_s = std::max(status.best_samples_per_s, outcome.samples_per_s);
            if (progress) progress(status, outcome);
            const bool interrupted = cancel && cancel->load();  // a half-refined plan is no result
            if (!interrupted && outcome.feasible && outcome.samples_per_s >= result.outcomes[refine[k]].samples_per_s)
                result.outcomes[refine[k]] = std::move(outcome);
        });
        result.cancelled = cancel && cancel->load();
        result.ranking.clear();
        result.pareto.clear();
        result.best.reset();
        result.best_without_checkpointing.reset();
    }
    rankAndSummarise(result);

    if (!result.best && !result.cancelled) {
        // Nothing fits: name the candidate that came closest.
        const TuneOutcome* closest = nullptr;
        for (const auto& outcome : result.outcomes)
            if (outcome.peak_bytes > 0 && (!closest || outcome.peak_bytes < closest->peak_bytes)) closest = &outcome;
        result.nothing_fits =
            closest ? "nothing fits: the closest, " + closest->candidate.label() + ", has " + closest->rejection
                    : "nothing fits: " + result.outcomes.front().rejection;
    }
    result.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return result;
}

}  // namespace mario
