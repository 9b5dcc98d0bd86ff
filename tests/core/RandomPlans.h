#pragma once
// Random plans for property tests: every scheme, 2–6 devices, random stage costs, memory and
// links, so a property is checked far from the unit costs of the hand-worked cases.
#include <random>

#include "tests/core/TestPlans.h"

namespace mario::test {

inline Plan randomPlan(std::mt19937& rng) {
    std::uniform_int_distribution<int> schemePick(0, 3), devicesPick(2, 6), chunkPick(2, 3), multiplierPick(1, 3);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const Scheme scheme = static_cast<Scheme>(schemePick(rng));
    int p = devicesPick(rng);
    if (scheme == Scheme::Chimera && p % 2) ++p;
    int m = p * multiplierPick(rng);
    if (scheme == Scheme::OneFOneB || scheme == Scheme::GPipe) m = 1 + static_cast<int>(unit(rng) * 2 * p);
    const int v = scheme == Scheme::Interleaved ? chunkPick(rng) : 1;
    const LinkSpec link{unit(rng) < 0.5 ? 0.0 : 0.2 * unit(rng), unit(rng) < 0.5 ? 0.0 : 1.0 + 4 * unit(rng)};
    Plan plan = unitPlan(scheme, p, m, v, {}, link);
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
    }
    return plan;
}

}  // namespace mario::test
