#pragma once
// What one pipeline stage costs for one micro-batch: times in milliseconds, memory in bytes.
#include <optional>

#include "core/schedule/Instruction.h"

namespace mario {

struct StageCost {
    double forward_ms = 0;
    double backward_ms = 0;
    double recompute_ms = 0;
    std::optional<double> backward_input_ms;   // I of a split backward; default: half of B
    std::optional<double> backward_weight_ms;  // W of a split backward; default: half of B
    double reduce_grad_ms = 0;                 // data-parallel all-reduce of this stage's gradients
    double optimizer_ms = 0;
    double activation_bytes = 0;              // kept from F to B without checkpointing
    double checkpoint_bytes = 0;              // kept by a checkpointed F (the stage input)
    double static_bytes = 0;                  // weights, gradients, optimizer state
    double send_bytes = 0;                    // tensor on the boundary after this stage (both directions)
    std::optional<double> weight_grad_bytes;  // held from I to W; default: half the activations
    // Transient bytes an instruction of this stage allocates above what it keeps while it runs
    // (autograd's temporaries: eager attention's score gradients). A device's peak adds the
    // largest of its stages' (sim/ProgramMemory.h), since its level peaks where a backward starts.
    double working_bytes = 0;
    // How much slower this stage computes for each other device of the plan computing at the same
    // time, as a fraction of its times above (which are its times alone): pipeline devices that
    // share one GPU's HBM and power (SM partitions) or one CPU's cores and caches slow each other.
    // 0 for devices of their own. The simulator stretches every compute instruction by
    // 1 + contention × (how many other devices compute meanwhile, on average): sim/SharedHardware.h.
    double contention = 0;
    // The same for an OPT beside devices that also run their OPT: the optimizer step streams
    // every weight, gradient and moment, so partitions stepping at once split the HBM bandwidth
    // between them (an H100 OPT took 1.8-2.1x its time beside one other partition stepping, where
    // contention gave 1.24). Unset: `contention` applies (sim/SharedHardware.h).
    std::optional<double> optimizer_contention;
    // Model FLOPs of one micro-batch's forward on this stage, per GPU (0: unknown). The
    // simulator counts F, B and R with it for TFLOP/s, MFU and HFU.
    double forward_flops = 0;

    double optimizerContention() const { return optimizer_contention.value_or(contention); }
    double inputGradMs() const { return backward_input_ms.value_or(backward_ms / 2); }
    double weightGradMs() const { return backward_weight_ms.value_or(backward_ms / 2); }
    double weightGradBytes() const { return weight_grad_bytes.value_or(activation_bytes / 2); }
    // How long an instruction of this stage computes (0 for SEND and RECV: their time is the wait).
    double durationOf(Op op) const {
        switch (op) {
            case Op::Forward: return forward_ms;
            case Op::Recompute: return recompute_ms;
            case Op::Backward: return backward_ms;
            case Op::BackwardInput: return inputGradMs();
            case Op::BackwardWeight: return weightGradMs();
            case Op::ReduceGrad: return reduce_grad_ms;
            case Op::Optimizer: return optimizer_ms;
            default: return 0;
        }
    }
};

}  // namespace mario
