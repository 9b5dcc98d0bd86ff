#pragma once
// One evaluated point of a sweep: the knob values, scheme and pass set it was run with and
// what `mario simulate` of that config would report (step, throughput, MFU, peak memory per
// device, whether it fits and where it is tightest), or why it could not run.
#include <optional>
#include <string>
#include <vector>

#include "core/model/Config.h"
#include "core/passes/PassReport.h"
#include "core/sweep/SweepSpec.h"

namespace mario {

struct SweepPoint {
    std::vector<KnobValue> values;  // one per knob of the spec
    SchemeChoice scheme;
    int pass_set = 0;            // index into the spec's pass sets (0 when it has none)
    std::vector<PassId> passes;  // the passes that ran
    std::optional<Config> config;  // the point's config (for opening it), when it could be read

    bool evaluated = false;  // false: cancelled before its turn
    // Non-empty: refused, in the words `mario simulate` would print for this config ("model.layers:
    // 6 layers cannot fill the 8 stages …", "the generated schedule deadlocks", "cancelled").
    std::string refusal;

    double step_ms = 0;  // simulated step (time units with unit costs)
    double samples_per_s = 0;
    double tokens_per_s = 0;
    double mfu = 0;  // 0: not known (unit costs, profiles)
    double bubble_ratio = 0;
    double parameters = 0;  // the model's (0: not known, as with unit costs)
    bool unit_costs = false;
    std::vector<double> device_peak_bytes;
    double peak_bytes = 0;  // the fullest device's
    int fullest_device = 0;
    std::optional<double> budget_bytes;  // the memory limit, else the card's memory (MemoryFit)
    std::optional<bool> fits;            // nullopt: nothing to judge against

    bool ok() const { return evaluated && refusal.empty(); }
    // Evaluated, not refused, and within the budget.
    bool fitsMemory() const { return ok() && fits.value_or(true); }
};

}  // namespace mario
