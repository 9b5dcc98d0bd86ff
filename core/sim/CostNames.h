#pragma once
// The names the simulator's and the validator's checks give a plan's costs in their one-line
// messages, handed to them by whoever knows what the user wrote (issue 39). A plan file's user
// wrote its fields, "stages[3].forward_ms" and "peak_tflops": the default. A config's user wrote
// keys, and session/PlanBuilder's costNamesOf names the costs by them ("unit_costs.forward";
// what a cost model computes as "stage 3's forward_ms (from ...)" with the keys that set it).
// The checks used to name the plan's fields, and a regex rewrote their messages afterwards.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace mario {

struct CostNames {
    // Stage `stage`'s cost `field`, a StageCost member as a plan file spells it ("backward_ms").
    std::function<std::string(std::size_t stage, std::string_view field)> field =
        [](std::size_t stage, std::string_view name) {
            return "stages[" + std::to_string(stage) + "]." + std::string(name);
        };
    std::string peak = "peak_tflops";  // PlanInfo::peak_tflops
    // Said after a refusal for costs faster than the peak: what else sets the costs' times
    // (a config's efficiencies), or nothing.
    std::string peak_note;
};

// The plan's own field names, for a caller that passes none.
inline const CostNames& planFieldNames() {
    static const CostNames names;
    return names;
}

}  // namespace mario
