#pragma once
// Host time (docs/cost-model.md#host-time): a device's host thread issues each kernel of an
// instruction at a per-operator cost of the training stack; the GPU runs them asynchronously, so
// an instruction lasts the longer of its GPU time and its host issue time. The frameworks sync
// the host with the GPU between instructions (Megatron's p2p synchronize, DeepSpeed's blocking
// sends, the optimizer's .item()), so the host cannot bank time across them: the bound is taken
// instruction by instruction. The kernel count is TransformerKernels' own list, counted by a
// roofline on which every kernel lasts exactly one launch (one owner of which kernels run).
#include "core/cost/StageLayout.h"
#include "core/cost/TransformerKernels.h"
#include "core/model/Config.h"

namespace mario {

class HostIssue {
public:
    explicit HostIssue(const Config& config);

    // The framework's host cost per issued operator in microseconds (training.host_op_us when set).
    static double operatorMicroseconds(const TrainingConfig& training);

    // Operators one micro-batch of the stage issues, per direction (in KernelTimes' fields, as
    // counts): its kernels, plus one per tensor-parallel collective; with CUDA graphs one graph
    // launch per instruction.
    KernelTimes launches(const StageLayout& layout) const;
    // The host's issue time of `launches` operators in milliseconds.
    double issueMs(double launches) const { return launches * op_ms_; }
    // An instruction whose kernels take gpuMs on the GPU and `launches` operators on the host.
    double boundMs(double gpuMs, double launches) const;

private:
    TransformerKernels counted_;  // the stage's kernels on a roofline where each lasts 1 ms
    TrainingConfig training_;
    int tp_;
    double op_ms_;
};

}  // namespace mario
