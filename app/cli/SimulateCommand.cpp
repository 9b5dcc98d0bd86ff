// `mario simulate FILE [--passes LIST] [--json] [--width N] [--time-ms MS]`
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "app/cli/Arguments.h"
#include "app/cli/AsciiGantt.h"
#include "app/cli/Commands.h"
#include "app/cli/PlanLoading.h"
#include "core/io/PlanJson.h"
#include "core/model/Limits.h"
#include "core/sim/MemoryFit.h"
#include "core/sim/Simulator.h"
#include "core/util/HumanBytes.h"

namespace mario::cli {
namespace {

// The best of several runs: the simulation of a small plan takes microseconds, and one sample
// would mostly measure the first cache misses. By default the best of up to 7 within 200 ms,
// which keeps `mario simulate` quick on any plan. With `windowMs` (--time-ms), the best of every
// run that starts within that window (at least one): on a shared machine a neighbour on the same
// core slows a busy loop by up to half, in phases that last milliseconds to seconds, so a best of
// 7 runs over 60 µs and a best of 5 runs over 40 ms (PyTorch's, tests/bench/pytorch_simulator.py)
// sample different machines; equal windows compare the two programs (docs/benchmarks.md).
double timeSimulation(const Plan& plan, std::optional<double> windowMs) {
    double best = 1e300;
    const auto budgetStart = std::chrono::steady_clock::now();
    const auto budget = std::chrono::duration<double, std::milli>(windowMs.value_or(200.0));
    for (int i = 0; windowMs || i < 7; ++i) {
        const auto start = std::chrono::steady_clock::now();
        auto result = Simulator::run(plan);
        const auto stop = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double, std::micro>(stop - start).count());
        if (!result || stop - budgetStart > budget) break;
    }
    return best;
}

std::string passList(const std::vector<PassId>& passes) {
    std::string text;
    for (PassId pass : passes) {
        if (!text.empty()) text += ',';
        text += passName(pass);  // appended, not "," + std::string: GCC 12 warns falsely (-Wrestrict)
    }
    return text.empty() ? "none" : text;
}

// One line per pass step: what it inserted, moved or removed, so a reader can follow how
// the schedule got its shape (the GUI's pass stepper shows the same steps graphically).
void printPassSteps(const std::vector<PassReport>& steps) {
    if (steps.empty()) return;
    std::cout << "\npass steps\n";
    for (const PassReport& step : steps) {
        std::cout << "  round " << step.round << " " << passName(step.pass) << ":";
        // A step may mix kinds (hide moves some recomputations and drops others): one group each.
        bool first = true;
        for (auto [kind, verb] : {std::pair{ChangeKind::Inserted, "inserted"}, std::pair{ChangeKind::Moved, "moved"},
                                  std::pair{ChangeKind::Removed, "removed"}}) {
            std::vector<const PassChange*> changes;
            for (const auto& change : step.changes)
                if (change.kind == kind) changes.push_back(&change);
            if (changes.empty()) continue;
            std::cout << (first ? " " : "; ") << verb << " " << changes.size() << " —";
            first = false;
            const std::size_t shown = std::min<std::size_t>(changes.size(), 8);
            for (std::size_t i = 0; i < shown; ++i)
                std::cout << " " << toActionString(changes[i]->instruction) << "@d" << changes[i]->device;
            if (shown < changes.size()) std::cout << " …";
        }
        std::cout << "\n";
    }
}

// The memory line: against the limit when there is one, else against one card (the plan's
// device_memory_bytes), else the peak alone with "no limit".
void printMemoryVerdict(const MemoryFit& fit) {
    if (!fit.judged()) {
        std::cout << "memory       no limit (highest peak " << humanBytes(fit.highest_peak_bytes) << " on device "
                  << fit.fullest_device << ")\n";
        return;
    }
    const std::string budget = budgetPhrase(fit.basis, humanBytes(*fit.budget_bytes));
    const bool card = fit.basis == MemoryFit::Basis::Card;
    std::cout << "memory       ";
    if (fit.fits())
        std::cout << (card ? "no limit set; " : "") << "every device fits " << budget << " (highest peak "
                  << humanBytes(fit.highest_peak_bytes) << " on device " << fit.fullest_device << ")\n";
    else
        std::cout << (card ? "no limit set, and " : "") << fit.devices_over << " of " << fit.devices
                  << " devices exceed " << budget << " (worst: device " << fit.fullest_device << ", "
                  << humanBytes(fit.highest_peak_bytes) << ") — this schedule would run out of memory"
                  << (card ? "; set memory_limit_gb so the passes keep within it" : "") << "\n";
}

const char* overMark(const MemoryFit& fit) {
    return fit.basis == MemoryFit::Basis::Card ? "  over the card" : "  over the limit";
}

// "work  13.0e9 parameters, 1.23 PFLOP per step; 152 TFLOP/s per GPU, MFU 48.7%, HFU 61.2%"
void printUtilisation(const PlanInfo& info, const StepFlops& flops) {
    if (!flops.known()) return;
    char line[256];
    std::string work = "work         ";
    if (info.model_parameters > 0) {
        std::snprintf(line, sizeof line, "%.3g billion parameters, ", info.model_parameters / 1e9);
        work += line;
    }
    std::snprintf(line, sizeof line, "%.4g PFLOP per step on %g GPUs, %.4g TFLOP/s per GPU", flops.model_flops / 1e15,
                  flops.gpus, flops.model_tflops_per_gpu);
    work += line;
    if (flops.mfu > 0) {
        std::snprintf(line, sizeof line, ", MFU %.1f%%, HFU %.1f%%", 100 * flops.mfu, 100 * flops.hfu);
        work += line;
    }
    std::cout << work << "\n";
}

// One bound's line: "hide bound   21 units: <claim> (<why>); reached, so <verdict>", or with how
// far above it the step is.
void printBoundLine(const char* label, double boundMs, const char* unit, const std::string& claim,
                    const std::string& why, bool reached, double above, const char* verdict) {
    char value[64];
    std::snprintf(value, sizeof value, "%.4g %s", boundMs, unit);
    std::cout << label << " " << value << ": " << claim << " (" << why;
    if (reached) {
        std::cout << "); reached, so " << verdict << "\n";
        return;
    }
    // Below a bound only when a later pass left the space it covers (reorder after hide's bound).
    std::snprintf(value, sizeof value,
                  above < 0 ? "; %.1f%% below: a later pass changed the order)" : "; %.1f%% above)",
                  100.0 * std::abs(above));
    std::cout << value << "\n";
}

void printSummary(const PreparedPlan& prepared, const SimResult& sim, double simulateUs, int width) {
    const Plan& plan = prepared.plan;
    // Unit costs (a unit-cost config, or a plan made from one: PlanInfo::unit_costs) count
    // abstract time units, not milliseconds, as the window's axes and summary say.
    const bool unit = plan.info.unit_costs;
    const char* ms = unit ? "units" : "ms";
    char line[256];
    std::cout << "plan " << (plan.info.name.empty() ? "(unnamed)" : plan.info.name) << ": "
              << (plan.info.scheme.empty() ? "custom" : plan.info.scheme) << ", " << plan.devices.size() << " devices, "
              << plan.stages.size() << " stages, " << plan.microbatchCount() << " micro-batches, passes "
              << passList(prepared.input.passes) << "\n";
    const double gap = sim.lower_bound_ms > 0 ? 100.0 * (sim.makespan_ms / sim.lower_bound_ms - 1) : 0;
    std::snprintf(
        line, sizeof line,
        "step time    %.4g %s  (lower bound %.4g %s: busiest device %.4g, longest chain %.4g; %.1f%% above)\n",
        sim.makespan_ms, ms, sim.lower_bound_ms, ms, sim.busiest_device_ms, sim.critical_chain_ms, gap);
    std::cout << line;
    const double tightGap = sim.tight_lower_bound_ms > 0 ? 100.0 * (sim.makespan_ms / sim.tight_lower_bound_ms - 1) : 0;
    std::snprintf(
        line, sizeof line,
        "             (pipeline bound %.4g %s, with the fill and drain each device must wait for; %.1f%% above)\n",
        sim.tight_lower_bound_ms, ms, tightGap);
    std::cout << line;
    if (sim.recompute_ms > 0) {
        std::snprintf(line, sizeof line, "recompute    %.4g %s in all, %.0f%% of it hidden in bubbles\n",
                      sim.recompute_ms, ms, 100 * sim.recomputeHiddenShare());
        std::cout << line;
    }
    if (sim.contention_rounds > 0) {
        std::snprintf(line, sizeof line,
                      "contention   %.4g %s of compute added by devices that share hardware (the stages' "
                      "contention; %s %d timing rounds)\n",
                      sim.contention_ms, ms, sim.contention_settled ? "settled in" : "still moving, budget spent after",
                      sim.contention_rounds);
        std::cout << line;
    }
    if (prepared.hide_bound && prepared.hide_bound->bound_ms > 0) {
        const RecomputeBound& bound = *prepared.hide_bound;
        // Hide's bound holds every device's order fixed; reorder may leave it (docs/reorder.md).
        const bool reordered = prepared.reorder_bound.has_value();
        printBoundLine("hide bound  ", bound.bound_ms, ms,
                       reordered ? "no placement of the Rs within hide's budget runs faster in the order hide was given"
                                 : "no placement of the Rs within hide's budget runs faster",
                       chainPhrase(bound), bound.reachedBy(sim) && !(reordered && bound.above(sim) < -1e-4),
                       bound.above(sim),
                       reordered ? "this placement is optimal for that order (the order bound below covers others)"
                                 : "this placement is optimal");
    }
    if (prepared.reorder_bound && prepared.reorder_bound->bound_ms > 0) {
        const ReorderBound& bound = *prepared.reorder_bound;
        const double step = sim.aloneMakespan();
        std::string why = "dependencies alone";
        if (bound.device >= 0) {
            std::snprintf(line, sizeof line, "device %d's budget forces %.4g %s of recomputation", bound.device,
                          bound.forced_recompute_ms[bound.device], ms);
            why = line;
        }
        printBoundLine("order bound ", bound.bound_ms, ms,
                       "no order, checkpointing or placement of the Rs within the budget runs faster", why,
                       bound.reachedBy(step), bound.above(step), "this schedule is optimal");
    }
    std::snprintf(line, sizeof line, "bubble       %.1f%%\n", 100 * sim.bubble_ratio);
    std::cout << line;
    // Samples per second need seconds; time units have none, so say what the times are instead.
    if (unit) std::snprintf(line, sizeof line, "throughput   unit costs: times are time units, not milliseconds\n");
    else if (plan.info.sequence_length > 0)
        std::snprintf(line, sizeof line, "throughput   %.4g samples/s, %.4g tokens/s\n", sim.samples_per_s,
                      sim.tokens_per_s);
    else std::snprintf(line, sizeof line, "throughput   %.4g samples/s\n", sim.samples_per_s);
    std::cout << line;
    printUtilisation(plan.info, sim.flops);
    std::snprintf(line, sizeof line, "timing       simulate %.1f us, passes %.1f us, load+generate %.1f us\n",
                  simulateUs, prepared.passes_us, prepared.load_us);
    std::cout << line;
    if (const auto& search = prepared.layer_split_search) {
        std::string counts;
        for (int k : search->counts) counts += (counts.empty() ? "" : "-") + std::to_string(k);
        std::snprintf(line, sizeof line, "layer split  search: %s, %d splits simulated in %.1f ms%s (even: %.4g %s)\n",
                      counts.c_str(), search->evaluations, prepared.search_us / 1000,
                      search->local_optimum ? ", a local optimum" : ", stopped at the cap", search->even_step_ms,
                      unit ? "units" : "ms");
        std::cout << line;
    }
    const MemoryFit fit = memoryFit(sim, plan.info);
    printMemoryVerdict(fit);
    printPassSteps(prepared.steps);
    std::cout << (unit ? "\ndevice   busy units  idle units   peak memory\n"
                       : "\ndevice      busy ms     idle ms   peak memory\n");
    for (const auto& device : sim.devices) {
        std::snprintf(line, sizeof line, "%6d %11.4g %11.4g   %s%s\n", device.index, device.busy_ms, device.idle_ms,
                      humanBytes(device.peak_bytes).c_str(), fit.isOver(device) ? overMark(fit) : "");
        std::cout << line;
    }
    std::cout << "\n" << renderAsciiGantt(plan, sim, width);
}

// What hide could reach at best within its budget (null when hide did not run).
nlohmann::json hideBoundJson(const PreparedPlan& prepared, const SimResult& sim) {
    if (!prepared.hide_bound || prepared.hide_bound->bound_ms <= 0) return nullptr;
    const RecomputeBound& bound = *prepared.hide_bound;
    return {{"makespan", bound.bound_ms},    {"device", bound.device},          {"chain", bound.chain()},
            {"over", bound.above(sim)},      {"reached", bound.reachedBy(sim)}, {"droppable", bound.droppable},
            {"recomputes", bound.recomputes}};
}

// What no schedule of reorder's space beats within the budget (null when reorder did not run
// or the plan is outside what the bound models).
nlohmann::json reorderBoundJson(const PreparedPlan& prepared, const SimResult& sim) {
    if (!prepared.reorder_bound || prepared.reorder_bound->bound_ms <= 0) return nullptr;
    const ReorderBound& bound = *prepared.reorder_bound;
    const double step = sim.aloneMakespan();
    return {{"makespan", bound.bound_ms},
            {"order", bound.order_ms},
            {"device", bound.device >= 0 ? nlohmann::json(bound.device) : nlohmann::json(nullptr)},
            {"forced_recompute", bound.forced_recompute_ms},
            {"over", bound.above(step)},
            {"reached", bound.reachedBy(step)}};
}

// 0 means "not known" for these (unit costs, measured profiles, no peak): null in the JSON.
nlohmann::json unknownAsNull(double value) { return value > 0 ? nlohmann::json(value) : nlohmann::json(nullptr); }

// parallel.layer_split = "search": the split chosen and what choosing it took; null otherwise.
nlohmann::json layerSplitSearchJson(const PreparedPlan& prepared) {
    const auto& search = prepared.layer_split_search;
    if (!search) return nullptr;
    return {{"counts", search->counts},          {"step_ms", search->step_ms},
            {"even_step_ms", search->even_step_ms}, {"fits", search->fits},
            {"evaluations", search->evaluations}, {"local_optimum", search->local_optimum},
            {"search_us", prepared.search_us}};
}

nlohmann::json summaryJson(const PreparedPlan& prepared, const SimResult& sim, double simulateUs) {
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& device : sim.devices)
        devices.push_back({{"index", device.index},
                           {"busy", device.busy_ms},
                           {"idle", device.idle_ms},
                           {"contention_ms", device.contention_ms},
                           {"peak_memory_bytes", device.peak_bytes},
                           {"static_bytes", device.static_bytes}});
    nlohmann::json passes = nlohmann::json::array();
    for (PassId pass : prepared.input.passes) passes.push_back(std::string(passName(pass)));
    const PlanInfo& info = prepared.plan.info;
    const MemoryFit fit = memoryFit(sim, info);
    auto optional = [](const std::optional<double>& bytes) {
        return bytes ? nlohmann::json(*bytes) : nlohmann::json(nullptr);
    };
    return {{"memory_limit_bytes", optional(info.memory_limit_bytes)},
            {"device_memory_bytes", optional(info.device_memory_bytes)},
            {"memory_basis", std::string(basisName(fit.basis))},
            // Null with nothing to judge against, never a verdict of true.
            {"fits_memory", fit.judged() ? nlohmann::json(fit.fits()) : nlohmann::json(nullptr)},
            {"name", prepared.plan.info.name},
            {"scheme", prepared.plan.info.scheme},
            {"passes", passes},
            {"makespan", sim.makespan_ms},
            {"bubble_ratio", sim.bubble_ratio},
            {"lower_bound", sim.lower_bound_ms},
            {"busiest_device", sim.busiest_device_ms},
            {"critical_chain", sim.critical_chain_ms},
            {"tight_lower_bound", sim.tight_lower_bound_ms},
            {"over_lower_bound", sim.tight_lower_bound_ms > 0 ? sim.makespan_ms / sim.tight_lower_bound_ms - 1 : 0.0},
            {"hide_bound", hideBoundJson(prepared, sim)},
            {"reorder_bound", reorderBoundJson(prepared, sim)},
            {"recompute_ms", sim.recompute_ms},
            // Not applicable (null) when nothing is recomputed, rather than a perfect 1.
            {"recompute_hidden",
             sim.recompute_ms > 0 ? nlohmann::json(sim.recomputeHiddenShare()) : nlohmann::json(nullptr)},
            {"contention_ms", sim.contention_ms},
            {"contention_rounds", sim.contention_rounds},
            {"contention_settled", sim.contention_settled},
            {"alone_makespan", sim.aloneMakespan()},
            {"throughput", sim.samples_per_s},
            {"samples_per_s", sim.samples_per_s},
            {"tokens_per_s", sim.tokens_per_s},
            {"samples_per_step", sim.samples_per_step},
            {"parameters", unknownAsNull(info.model_parameters)},
            {"model_flops_per_step", unknownAsNull(sim.flops.model_flops)},
            {"hardware_flops_per_step", unknownAsNull(sim.flops.hardware_flops)},
            {"gpus", sim.flops.gpus},
            {"tflops_per_gpu", unknownAsNull(sim.flops.model_tflops_per_gpu)},
            {"hardware_tflops_per_gpu", unknownAsNull(sim.flops.hardware_tflops_per_gpu)},
            {"mfu", unknownAsNull(sim.flops.mfu)},
            {"hfu", unknownAsNull(sim.flops.hfu)},
            {"simulate_us", simulateUs},
            {"passes_us", prepared.passes_us},
            {"load_us", prepared.load_us},
            {"instructions", prepared.plan.instructionCount()},
            {"devices", devices},
            // What each stage holds and costs, as the plan file writes it (its layers included).
            {"stages", writeStages(prepared.plan)},
            {"layer_split_search", layerSplitSearchJson(prepared)}};
}

}  // namespace

int simulateCommand(const Args& args, const std::string& executable) {
    Arguments parsed;
    if (auto error = Arguments::parse(args, {"passes", "width", "time-ms"}, {"json"}, parsed))
        return fail(error->code, error->message);
    if (parsed.positional().size() != 1) return fail(kBadInput, "simulate needs exactly one FILE (a config or a plan)");
    int width = 100;
    if (auto error = parsed.integerIn("width", 10, limits::kMaxAsciiWidth, width))
        return fail(error->code, error->message);
    std::optional<double> windowMs;
    if (parsed.has("time-ms")) {
        double ms = 0;
        if (auto error = parsed.numberIn("time-ms", 0, 60000, ms)) return fail(error->code, error->message);
        windowMs = ms;
    }
    PrepareOptions options;
    options.bound_hide = true;
    auto prepared = preparePlan(parsed.positional()[0], parsed.value("passes"), executable, options);
    if (auto* error = std::get_if<CliError>(&prepared)) return fail(error->code, error->message);
    const PreparedPlan& plan = std::get<PreparedPlan>(prepared);
    const double simulateUs = timeSimulation(plan.plan, windowMs);
    if (parsed.has("json")) std::cout << summaryJson(plan, plan.result, simulateUs).dump(2) << "\n";
    else printSummary(plan, plan.result, simulateUs, width);
    return kOk;
}

}  // namespace mario::cli
