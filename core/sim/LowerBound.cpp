#include "core/sim/LowerBound.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/sim/ComputeTime.h"

namespace mario {

double criticalChain(const Plan& plan, const PipelineTopology& topology, const std::vector<std::uint8_t>& checkpointed,
                     const std::vector<std::uint8_t>& split, int microbatches, const std::vector<int>& denseOf) {
    std::vector<int> chainOfMicrobatch(microbatches, -1);
    for (const auto& device : plan.devices)
        for (const auto& ins : device.program)
            if (ins.op == Op::Forward) chainOfMicrobatch[denseOf[ins.microbatch]] = topology.chainOf(ins.stage);
    return criticalChain(plan, topology, checkpointed, split, microbatches, denseOf, chainOfMicrobatch);
}

double criticalChain(const Plan& plan, const PipelineTopology& topology, const std::vector<std::uint8_t>& checkpointed,
                     const std::vector<std::uint8_t>& split, int microbatches, const std::vector<int>& denseOf,
                     const std::vector<int>& chainOfMicrobatch) {
    // An overlapped pair's halves may take less than their stage's cost (ComputeTime.h); the
    // chain takes each at its share, which never exceeds what the pair really costs it.
    std::vector<double> forwardShare, backwardShare;
    if (plan.overlap_factor > 0) {
        forwardShare.assign(checkpointed.size(), 1.0);
        backwardShare.assign(checkpointed.size(), 1.0);
        for (const auto& device : plan.devices)
            for (std::size_t i = 0; i + 1 < device.program.size(); ++i) {
                if (overlappedPairAt(device.program, i) != i) continue;
                const Instruction& f = device.program[i];
                const Instruction& b = device.program[i + 1];
                const double scale = overlapScale(plan, f, b);
                forwardShare[static_cast<std::size_t>(f.stage) * microbatches + denseOf[f.microbatch]] = scale;
                backwardShare[static_cast<std::size_t>(b.stage) * microbatches + denseOf[b.microbatch]] = scale;
            }
    }
    auto share = [](const std::vector<double>& shares, std::size_t key) { return shares.empty() ? 1.0 : shares[key]; };
    double longest = 0;
    // Per chain, the transfer after each of its stages (0 on the same device): the same for
    // every micro-batch of the chain, so made once (a third of this function, issue 45).
    std::vector<std::vector<double>> transfers(topology.chains().size());
    // A micro-batch with no R, no I and no overlapped pair on its chain takes the same steps
    // as every other such one of its chain: its chain's length is made once (issue 45: this
    // function was 6% of a simulation with the summary, repeating one sum per micro-batch).
    // Per column whether it is marked, per chain whether its plain length is made (one allocation),
    // and per chain that length with, after them, the forwards' ends of the chain being walked
    // (another): six tables were six allocations (issue 45).
    const std::size_t width = static_cast<std::size_t>(std::max(0, microbatches));
    const std::size_t chainCount = topology.chains().size();
    std::vector<std::uint8_t> bytes(width + chainCount, 0);
    std::uint8_t* const marked = bytes.data();
    std::uint8_t* const plainMade = marked + width;
    for (std::size_t row = 0; width > 0 && row + width <= std::min(checkpointed.size(), split.size()); row += width)
        for (std::size_t m = 0; m < width; ++m) marked[m] |= checkpointed[row + m] | split[row + m];
    std::size_t longestChain = 0;
    for (const auto& stages : topology.chains()) longestChain = std::max(longestChain, stages.size());
    std::vector<double> doubles(chainCount + longestChain, 0.0);
    double* const plainLength = doubles.data();
    double* const forwardEnd = plainLength + chainCount;  // per stage of the micro-batch's chain, reused
    const bool overlapped = !forwardShare.empty();
    for (int m = 0; m < microbatches; ++m) {
        const int chain = chainOfMicrobatch[m];
        if (chain < 0) continue;
        const bool plain = !overlapped && !marked[m];
        if (plain && plainMade[chain]) {
            longest = std::max(longest, plainLength[chain]);
            continue;
        }
        // Without contention: each forward starts when its input arrives; a recomputation
        // needs only its own forward, so it overlaps the stages after it, and each backward
        // starts when both its gradient and its recomputation are there.
        const auto& stages = topology.chains()[chain];
        std::vector<double>& transfer = transfers[chain];
        if (transfer.size() != stages.size()) {
            transfer.assign(stages.size(), 0.0);
            for (std::size_t p = 0; p + 1 < stages.size(); ++p)
                if (topology.deviceOf(stages[p]) != topology.deviceOf(stages[p + 1]))
                    transfer[p] = plan.link.transferMs(plan.stages[stages[p]].cost.send_bytes);
        }
        double t = 0;
        for (std::size_t p = 0; p < stages.size(); ++p) {
            const int s = stages[p];
            const StageCost& c = plan.stages[s].cost;
            forwardEnd[p] = t += c.forward_ms * share(forwardShare, static_cast<std::size_t>(s) * microbatches + m);
            t += transfer[p];
        }
        double total = 0, gradient = stages.empty() ? 0.0 : forwardEnd[stages.size() - 1];
        for (std::size_t p = stages.size(); p-- > 0;) {
            const int s = stages[p];
            const StageCost& c = plan.stages[s].cost;
            const std::size_t key = static_cast<std::size_t>(s) * microbatches + m;
            const double ready = std::max(gradient, forwardEnd[p] + (checkpointed[key] ? c.recompute_ms : 0.0));
            total = ready + (split[key] ? c.inputGradMs() : c.backward_ms) * share(backwardShare, key);
            if (p > 0) gradient = total + transfer[p - 1];
        }
        if (plain) plainLength[chain] = total, plainMade[chain] = 1;
        longest = std::max(longest, total);
    }
    return longest;
}

double pipelineBound(const Plan& plan, const PipelineTopology& topology) {
    const int deviceCount = static_cast<int>(plan.devices.size());
    std::vector<double> core(deviceCount, 0.0);
    for (int d = 0; d < deviceCount; ++d) {
        const auto& program = plan.devices[d].program;
        for (std::size_t i = 0; i < program.size(); ++i)
            if (program[i].op == Op::Forward || program[i].op == Op::Recompute || isBackwardStart(program[i].op))
                core[d] += computeMs(plan, program, i);
    }
    return pipelineBound(plan, topology, core);
}

double pipelineBound(const Plan& plan, const PipelineTopology& topology, const std::vector<double>& core) {
    const int stageCount = topology.stageCount();
    // prefix[s]: forward work before stage s in its chain that runs on other devices, with the
    // transfers; suffix[s]: the backward work after stage s's backward, likewise. Both only
    // for stages with no earlier stage of their chain on their own device (the others can be
    // neither the first nor the last work of their device for a micro-batch).
    // One allocation for the four tables of doubles and one for the two of ints (six were a
    // sixth of this function in an 8 × 32 simulation, issue 45).
    const int deviceCount = static_cast<int>(plan.devices.size());
    std::vector<double> doubles(2 * std::size_t(stageCount) + 2 * std::size_t(deviceCount), 0.0);
    double* const prefix = doubles.data();
    double* const suffix = prefix + stageCount;
    std::vector<int> ints(std::size_t(stageCount) + std::size_t(deviceCount), 1);
    int* const candidate = ints.data();  // 1 until a stage proves not to be one
    // seenIn[d]: the last chain that visited device d, so "an earlier stage of this chain on this
    // device" is one lookup (a scan of the chain so far was quadratic: minutes at 65 536 stages).
    int* const seenIn = candidate + stageCount;
    std::fill(seenIn, seenIn + deviceCount, -1);
    int chainIndex = 0;
    for (const auto& chain : topology.chains()) {
        double forward = 0, backward = 0;
        for (std::size_t p = 0; p < chain.size(); ++p) {
            const int s = chain[p];
            prefix[s] = forward;
            suffix[s] = backward;
            const int device = topology.deviceOf(s);
            if (device >= 0 && device < deviceCount) {
                if (seenIn[device] == chainIndex) candidate[s] = 0;
                seenIn[device] = chainIndex;
            }
            const StageCost& c = plan.stages[s].cost;
            const bool crosses = p + 1 < chain.size() && topology.deviceOf(chain[p + 1]) != topology.deviceOf(s);
            const double transfer = crosses ? plan.link.transferMs(c.send_bytes) : 0.0;
            forward += c.forward_ms + transfer;
            backward += std::min(c.backward_ms, c.inputGradMs()) + transfer;
        }
        ++chainIndex;
    }
    double* const head = suffix + stageCount;
    double* const tail = head + deviceCount;
    std::fill(head, tail + deviceCount, std::numeric_limits<double>::infinity());
    for (int s = 0; s < stageCount; ++s) {
        const int d = topology.deviceOf(s);
        if (d < 0 || d >= deviceCount || !candidate[s]) continue;
        head[d] = std::min(head[d], prefix[s]);
        tail[d] = std::min(tail[d], suffix[s]);
    }
    // Proof sketch: a device's first forward, recompute or backward needs the activations of
    // one of its own forwards, whose input went through the forward chain before it; its
    // last backward of (s, m) is followed by the backwards of s's earlier stages for m, all
    // on other devices (a stage whose chain returns to the device is never last).
    double bound = 0;
    for (int d = 0; d < deviceCount; ++d)
        if (core[d] > 0 && std::isfinite(head[d]) && std::isfinite(tail[d]))
            bound = std::max(bound, head[d] + core[d] + tail[d]);
    return bound;
}

}  // namespace mario
