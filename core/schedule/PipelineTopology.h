#pragma once
// The virtual pipeline (paper §5.2, Algorithm 1): where each stage sits in its chain, which
// stage comes before and after it, and which device runs it. Every scheme — 1F1B, interleaved,
// Chimera, a hand-written plan — is described by its chains, so the simulator, the validator
// and the passes look dependencies up here and never special-case a scheme.
#include <cstdint>
#include <vector>

#include "core/schedule/Instruction.h"
#include "core/schedule/Plan.h"
#include "core/util/Result.h"

namespace mario {

class PipelineTopology {
public:
    // Fails when the chains do not cover every stage exactly once or a stage's device is
    // out of range.
    static Result<PipelineTopology> build(const Plan& plan);

    int stageCount() const { return static_cast<int>(device_.size()); }
    int deviceCount() const { return deviceCount_; }
    int deviceOf(int stage) const { return device_[stage]; }
    int chainOf(int stage) const { return chain_[stage]; }
    int positionOf(int stage) const { return position_[stage]; }
    int chainLength(int chain) const { return static_cast<int>(chains_[chain].size()); }
    const std::vector<std::vector<int>>& chains() const { return chains_; }
    // -1 when the stage is the first / last of its chain.
    int previousStage(int stage) const { return previous_[stage]; }
    int nextStage(int stage) const { return next_[stage]; }

    // find_prev_inst: the instruction on another stage that must finish before `instruction`
    // may run (F waits for the previous stage's F, B/I for the next stage's B/I). Returns
    // false when the dependency is local (first F, last stage's backward). A backward's
    // dependency is named with the same kind; the next stage may have run the other one
    // (DualPipe runs some micro-batches whole on one device and split on its neighbour).
    bool crossStageDependency(const Instruction& instruction, Instruction& dependency) const;

    // The stage a SEND delivers to, or -1 when it has no receiver in the chain.
    int sendTarget(const Instruction& send) const;

private:
    int deviceCount_ = 0;
    std::vector<std::vector<int>> chains_;
    std::vector<int> device_, chain_, position_, previous_, next_;
};

}  // namespace mario
