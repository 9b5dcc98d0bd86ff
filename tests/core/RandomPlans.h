#pragma once
// Random plans for property tests: every scheme in the catalog, 2–6 devices, random stage
// costs, memory and links, so a property is checked far from the unit costs of the
// hand-worked cases. The sizes follow each scheme's own rules in schemeInfo() (even devices,
// even micro-batches, groups that divide the micro-batches, micro-batches per device), so a
// new scheme is drawn as soon as the catalog lists it.
#include <algorithm>
#include <random>
#include <vector>

#include "core/model/Schemes.h"
#include "tests/core/TestPlans.h"

namespace mario::test {

// A micro-batch count the scheme accepts on p devices: from one (or the scheme's minimum) to
// about 3p, even where the scheme needs it, a multiple of the group size (the default, p) for
// grouped schemes.
inline int randomMicrobatches(const SchemeInfo& info, int p, std::mt19937& rng) {
    if (info.grouped) return p * std::uniform_int_distribution<int>(1, 3)(rng);
    const int least = std::max(1, info.min_microbatches_per_device * p);
    int m = std::uniform_int_distribution<int>(least, std::max(least, 3 * p))(rng);
    if (info.even_microbatches && m % 2) ++m;
    return m;
}

inline Plan randomPlan(std::mt19937& rng) {
    const std::vector<Scheme> schemes = allSchemes();
    std::uniform_int_distribution<std::size_t> schemePick(0, schemes.size() - 1);
    std::uniform_int_distribution<int> devicesPick(2, 6), chunkPick(2, 3);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const SchemeInfo& info = schemeInfo(schemes[schemePick(rng)]);
    int p = devicesPick(rng);
    if (info.even_devices && p % 2) ++p;
    const int v = info.chunked ? chunkPick(rng) : 1;
    const int m = randomMicrobatches(info, p, rng);
    const LinkSpec link{unit(rng) < 0.5 ? 0.0 : 0.2 * unit(rng), unit(rng) < 0.5 ? 0.0 : 1.0 + 4 * unit(rng)};
    Plan plan = unitPlan(info.scheme, p, m, v, {}, link);
    for (auto& stage : plan.stages) {
        StageCost& c = stage.cost;
        c.forward_ms = 0.5 + 1.5 * unit(rng);
        c.backward_ms = c.forward_ms * (1.5 + unit(rng));
        c.recompute_ms = c.forward_ms * (0.8 + 0.4 * unit(rng));
        c.activation_bytes = 1e6 * (1 + unit(rng));
        c.checkpoint_bytes = c.activation_bytes * 0.1 * unit(rng);
        c.static_bytes = 1e7 * unit(rng);
        c.send_bytes = 1e6 * unit(rng);
        c.optimizer_ms = 0.1 * unit(rng);
        c.reduce_grad_ms = 0.1 * unit(rng);
        if (info.split_backward) {
            // I and W measured apart (a profile fits each on its own), so they need not add up
            // to B; W keeps part of the activations from I until it runs.
            c.backward_input_ms = c.backward_ms * (0.3 + 0.4 * unit(rng));
            c.backward_weight_ms = c.backward_ms * (0.3 + 0.4 * unit(rng));
            c.weight_grad_bytes = c.activation_bytes * (0.2 + 0.6 * unit(rng));
        }
    }
    // Overlapped pairs (DualPipe's F&B) take T_F + T_B − φ·min(T_F, T_B): half the plans that
    // have them hide part of the shorter half.
    bool paired = false;
    for (const auto& device : plan.devices)
        for (const Instruction& ins : device.program) paired = paired || ins.overlapped;
    if (paired && unit(rng) < 0.5) plan.overlap_factor = unit(rng);
    return plan;
}

}  // namespace mario::test
