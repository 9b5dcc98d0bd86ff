#include "executor/OptimizerContention.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "core/util/Median.h"
#include "executor/BusyNeighbours.h"
#include "executor/InstructionClock.h"
#include "executor/StageRuntime.h"

namespace mario::exec {

double StepTimes::contention(int neighbours) const {
    if (neighbours <= 0 || alone_ms <= 0) return 0;
    return std::max(0.0, (beside_ms / alone_ms - 1) / neighbours);
}

namespace {

// The median of `repeats` steps after one warm-up, with the gradients of one backward in place
// (a step zeroes them and keeps them, so every step streams the same bytes).
double medianStepMs(StageRuntime& stage, const Optimizer& optimizer, const torch::Device& device, int repeats) {
    InstructionClock clock(device, std::chrono::steady_clock::now());
    std::vector<std::pair<InstructionClock::Mark, InstructionClock::Mark>> marks;
    for (int r = 0; r <= repeats; ++r) {
        const auto from = clock.mark();
        optimizer.step(stage);
        const auto to = clock.mark();
        if (r > 0) marks.emplace_back(from, to);
    }
    // Read once the whole series is queued: on a GPU this is the only wait.
    std::vector<double> ms;
    for (const auto& [from, to] : marks) ms.push_back((clock.microseconds(to) - clock.microseconds(from)) / 1000.0);
    return median(ms);
}

}  // namespace

StepTimes measureOptimizerSteps(const GptModel& model, const LayerSlice& slice, const torch::Tensor& input,
                                const torch::Tensor& targets, const torch::Device& device, torch::ScalarType dtype,
                                const Optimizer& optimizer, int repeats, int neighbours,
                                const std::vector<c10::Stream>& streams) {
    StageRuntime stage;
    stage.params = model.sliceOn(slice, device, dtype);
    const bool floating = input.is_floating_point();
    torch::Tensor x = floating ? input.detach().clone().requires_grad_(true) : input;
    torch::Tensor out = model.forward(slice, stage.params, x, targets);
    out.backward(out.dim() == 0 ? torch::ones_like(out) : torch::ones_like(out) * 1e-3);
    out = torch::Tensor();
    StepTimes times;
    times.alone_ms = medianStepMs(stage, optimizer, device, repeats);
    if (neighbours > 0) {
        const BusyNeighbours busy(model, slice, input, targets, device, dtype, neighbours, streams, &optimizer);
        times.beside_ms = medianStepMs(stage, optimizer, device, repeats);
        if (auto why = busy.failure()) throw std::runtime_error(*why);
    }
    return times;
}

}  // namespace mario::exec
