#include "core/schedule/Generators.h"

#include <algorithm>
#include <string>

#include "core/model/Limits.h"

namespace mario {

Result<bool> checkShape(const ScheduleShape& shape) {
    if (shape.devices < 1) return makeError("pipeline needs at least one device, got " + std::to_string(shape.devices));
    if (shape.microbatches < 1)
        return makeError("needs at least one micro-batch, got " + std::to_string(shape.microbatches));
    // The same limits the config reader applies, here too for configs built in memory (the
    // window's settings, the tuner): the work a plan costs grows with stages * micro-batches.
    if (shape.devices > limits::kMaxPipelineDevices)
        return makeError(std::to_string(shape.devices) + " pipeline devices; the limit is " +
                         std::to_string(limits::kMaxPipelineDevices));
    if (shape.microbatches > limits::kMaxMicrobatches)
        return makeError(std::to_string(shape.microbatches) + " micro-batches per step; the limit is " +
                         std::to_string(limits::kMaxMicrobatches));
    if (shape.chunks > limits::kMaxChunks)
        return makeError(std::to_string(shape.chunks) + " chunks per device; the limit is " +
                         std::to_string(limits::kMaxChunks));
    const SchemeInfo& scheme = schemeInfo(shape.scheme);
    const std::string name(scheme.name);
    const long long stages = static_cast<long long>(shape.devices) * stagesPerDevice(shape.scheme, shape.chunks);
    if (stages * shape.microbatches > limits::kMaxStageMicrobatches)
        return makeError(std::to_string(shape.microbatches) + " micro-batches on " + std::to_string(stages) +
                         " stages exceed the limit of " + std::to_string(limits::kMaxStageMicrobatches) +
                         " (stage, micro-batch) pairs");
    if (scheme.even_devices && shape.devices % 2 != 0)
        return makeError(name + " needs an even number of pipeline devices, got " + std::to_string(shape.devices));
    if (scheme.even_microbatches && shape.microbatches % 2 != 0)
        return makeError(name + " needs an even number of micro-batches, got " + std::to_string(shape.microbatches));
    if (scheme.chunked && shape.chunks < 1)
        return makeError(name + " needs chunks ≥ 1, got " + std::to_string(shape.chunks));
    if (const int minimum = scheme.min_microbatches_per_device * shape.devices; shape.microbatches < minimum)
        return makeError(name + " needs at least " + std::to_string(minimum) + " micro-batches on " +
                         std::to_string(shape.devices) + " devices (" +
                         std::to_string(scheme.min_microbatches_per_device) + " per device), got " +
                         std::to_string(shape.microbatches));
    if (scheme.grouped) {
        if (shape.groupSize() < shape.devices)
            return makeError("interleaved micro-batch group size " + std::to_string(shape.groupSize()) +
                             " is smaller than the " + std::to_string(shape.devices) + " pipeline devices");
        if (shape.microbatches % shape.groupSize() != 0)
            return makeError("interleaved needs micro-batches (" + std::to_string(shape.microbatches) +
                             ") to be a multiple of the group size (" + std::to_string(shape.groupSize()) + ")");
    }
    return true;
}

PipelineLayout pipelineLayout(const ScheduleShape& shape) {
    PipelineLayout layout;
    const int p = shape.devices;
    switch (schemeInfo(shape.scheme).placement) {
        case Placement::TwoDirections: {
            // The down chain is stages 0..p−1 on devices 0..p−1, the up chain stages p..2p−1
            // on devices p−1..0: device d holds position d of one and p−1−d of the other.
            std::vector<int> down, up;
            layout.stage_device.resize(2 * p);
            for (int j = 0; j < p; ++j) {
                layout.stage_device[j] = j;
                layout.stage_device[p + j] = p - 1 - j;
                down.push_back(j);
                up.push_back(p + j);
            }
            layout.chains = {down, up};
            break;
        }
        case Placement::V: {
            // One chain down the devices and back up: stage s < p on device s, stage s ≥ p on
            // device 2p − 1 − s, so device d holds stages d and 2p − 1 − d and the last stage
            // (the loss) sits on device 0 beside the first.
            std::vector<int> chain;
            for (int s = 0; s < 2 * p; ++s) {
                layout.stage_device.push_back(s < p ? s : 2 * p - 1 - s);
                chain.push_back(s);
            }
            layout.chains = {chain};
            break;
        }
        case Placement::Looped: {
            std::vector<int> chain;
            for (int s = 0; s < p * stagesPerDevice(shape.scheme, shape.chunks); ++s) {
                layout.stage_device.push_back(s % p);
                chain.push_back(s);
            }
            layout.chains = {chain};
            break;
        }
    }
    return layout;
}

Result<ComputeOrder> generateComputeOrder(const ScheduleShape& shape) {
    if (auto ok = checkShape(shape); !ok) return ok.error();
    const int p = shape.devices, v = shape.chunks, m = shape.microbatches;
    switch (shape.scheme) {
        case Scheme::GPipe: return generateGPipe(p, m);
        case Scheme::OneFOneB: return generateOneFOneB(p, m);
        case Scheme::Interleaved: return generateInterleaved(p, v, m, shape.groupSize());
        case Scheme::Chimera: return generateChimera(p, m, shape.forward_cost, shape.backward_cost);
        case Scheme::LoopedBfs: return generateLoopedBfs(p, v, m);
        case Scheme::ZbH1: return generateZeroBubbleH1(p, m);
        case Scheme::ZbH2: return generateZeroBubbleH2(p, m);
        case Scheme::InterleavedZb: return generateInterleavedZeroBubble(p, v, m, shape.groupSize());
        case Scheme::Zbv: return generateZbv(p, m);
        case Scheme::DualPipeV: return generateDualPipeV(p, m);
        case Scheme::DualPipe: return generateDualPipe(p, m);
    }
    return makeError("unknown scheme");
}

ComputeOrder generateLoopedBfs(int devices, int chunks, int microbatches) {
    ComputeOrder order(devices);
    for (int d = 0; d < devices; ++d) {
        for (int c = 0; c < chunks; ++c)
            for (int m = 0; m < microbatches; ++m) order[d].push_back({Op::Forward, c * devices + d, m});
        for (int c = chunks - 1; c >= 0; --c)
            for (int m = microbatches - 1; m >= 0; --m) order[d].push_back({Op::Backward, c * devices + d, m});
    }
    return order;
}

ComputeOrder generateGPipe(int devices, int microbatches) {
    ComputeOrder order(devices);
    for (int d = 0; d < devices; ++d) {
        for (int m = 0; m < microbatches; ++m) order[d].push_back({Op::Forward, d, m});
        for (int m = 0; m < microbatches; ++m) order[d].push_back({Op::Backward, d, m});
    }
    return order;
}

ComputeOrder generateOneFOneB(int devices, int microbatches) {
    ComputeOrder order(devices);
    for (int d = 0; d < devices; ++d) {
        auto& program = order[d];
        const int warmup = std::min(devices - d - 1, microbatches);
        int forward = 0, backward = 0;
        while (forward < warmup) program.push_back({Op::Forward, d, forward++});
        while (forward < microbatches) {
            program.push_back({Op::Forward, d, forward++});
            program.push_back({Op::Backward, d, backward++});
        }
        while (backward < microbatches) program.push_back({Op::Backward, d, backward++});
    }
    return order;
}

ComputeOrder generateInterleaved(int devices, int chunks, int microbatches, int groupSize) {
    // Megatron-LM's order: micro-batches advance in groups of `groupSize` through the chunks;
    // backward visits the chunks in reverse. Warm-up as in Megatron's
    // forward_backward_pipelining_with_interleaving.
    const int p = devices, v = chunks, g = groupSize;
    const int total = microbatches * v;
    auto microbatchOf = [&](int k) { return (k / (g * v)) * g + k % g; };
    auto forwardChunk = [&](int k) { return (k / g) % v; };
    auto backwardChunk = [&](int k) { return v - 1 - (k / g) % v; };
    ComputeOrder order(p);
    for (int d = 0; d < p; ++d) {
        auto& program = order[d];
        const int warmup = std::min(total, (p - d - 1) * 2 + (v - 1) * g);
        int forward = 0, backward = 0;
        auto emitForward = [&] {
            program.push_back({Op::Forward, forwardChunk(forward) * p + d, microbatchOf(forward)});
            ++forward;
        };
        auto emitBackward = [&] {
            program.push_back({Op::Backward, backwardChunk(backward) * p + d, microbatchOf(backward)});
            ++backward;
        };
        while (forward < warmup) emitForward();
        while (forward < total) {
            emitForward();
            emitBackward();
        }
        while (backward < total) emitBackward();
    }
    return order;
}

}  // namespace mario
