#pragma once
// Random small inputs for the tests that search exhaustively or exactly (hide_exhaustive_test,
// exact_schedule_test, reorder_test): compute orders drawn at random on one chain, and stage
// costs with bytes of a real model's size that are not integers.
#include <random>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/schedule/ScheduleShape.h"

namespace mario::test {

// A compute order drawn at random for a plan whose stages form one chain 0 → 1 → … (1F1B's
// and interleaved's placement): at every step one ready forward or backward, any device,
// appended to its device's order. Each stage takes its micro-batches in order. Any order
// built this way is a topological order of the data dependencies, so the plan cannot deadlock.
inline ComputeOrder randomOrder(const Plan& skeleton, int microbatches, std::mt19937& rng) {
    const int stages = static_cast<int>(skeleton.stages.size());
    std::vector<int> forwarded(stages, 0), backwarded(stages, 0);
    ComputeOrder order(skeleton.devices.size());
    for (;;) {
        std::vector<Instruction> ready;
        for (int s = 0; s < stages; ++s) {
            const int f = forwarded[s], b = backwarded[s];
            if (f < microbatches && (s == 0 || forwarded[s - 1] > f)) ready.push_back({Op::Forward, s, f});
            if (b < f && (s == stages - 1 || backwarded[s + 1] > b)) ready.push_back({Op::Backward, s, b});
        }
        if (ready.empty()) break;
        const Instruction pick = ready[std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(rng)];
        order[skeleton.stages[pick.stage].device].push_back(pick);
        ++(pick.op == Op::Forward ? forwarded : backwarded)[pick.stage];
    }
    return order;
}

// Costs with non-integer bytes of a real model's order of magnitude.
inline void randomCosts(Plan& plan, std::mt19937& rng) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    plan.link = {unit(rng) < 0.5 ? 0.0 : 0.3 * unit(rng), 0.0};
    for (auto& stage : plan.stages) {
        StageCost& c = stage.cost;
        c.forward_ms = 0.5 + 1.5 * unit(rng);
        c.backward_ms = c.forward_ms * (1.5 + unit(rng));
        c.recompute_ms = c.forward_ms * (0.6 + 0.6 * unit(rng));
        c.activation_bytes = 1e10 * (1 + unit(rng)) + unit(rng);
        c.checkpoint_bytes = c.activation_bytes * (0.02 + 0.1 * unit(rng));
        c.static_bytes = 1e10 * unit(rng);
        c.send_bytes = 1e6 * unit(rng);
        if (c.backward_input_ms > 0) {
            c.backward_input_ms = c.backward_ms * (0.4 + 0.3 * unit(rng));
            c.backward_weight_ms = c.backward_ms * (0.3 + 0.3 * unit(rng));
            c.weight_grad_bytes = c.activation_bytes * (0.2 + 0.5 * unit(rng));
        }
    }
}

}  // namespace mario::test
