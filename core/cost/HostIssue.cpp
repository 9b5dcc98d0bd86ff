#include "core/cost/HostIssue.h"

#include <algorithm>
#include <cmath>

namespace mario {

namespace {

// Host cost per operator issued from the framework's Python/C++ stack, in microseconds. PyTorch
// eager spends about 5-25 us of CPU per operator before its kernel is enqueued (Python call,
// pybind11, autograd recording, ATen dispatch, cuBLAS heuristics, cudaLaunchKernel; the dispatch
// chain measured layer by layer in "From PyTorch op to kernel launch", jiahuanglin.xyz GPU
// kernel serving lesson 18; the overhead regime of H. He, "Making Deep Learning Go Brrrr From
// First Principles", 2022). None of these is a per-framework measurement: they are placed in that
// range by how each stack issues its kernels (docs/cost-model.md#host-time).
// Megatron-LM: fused Transformer Engine/apex modules, the backward issued by autograd's C++
// engine, no Python per kernel there: the low part of the range.
constexpr double kMegatronOpUs = 10;
// torchtitan: eager PyTorch 2.x modules under FSDP2/DTensor hooks (Python per module call):
// the middle of the range.
constexpr double kTorchtitanOpUs = 15;
// DeepSpeed's pipeline engine around Megatron-DeepSpeed's modules (BLOOM's stack): the same
// modules as Megatron-LM; what differs is its sends (AnalyticalCostModel::stageCost).
constexpr double kDeepSpeedOpUs = 10;
// A roofline on which every kernel lasts exactly 1 ms: infinite rates, a 1000 us launch.
constexpr double kCountingRate = 1e30;
constexpr double kCountingLaunchUs = 1000;
// Tensor-parallel collectives a block issues per direction (two all-reduces, or all-gather and
// reduce-scatter pairs with sequence parallelism): each a torch.distributed call of its own.
constexpr double kTensorParallelCollectives = 4;

HardwareConfig countingHardware(HardwareConfig hw) {
    hw.peak_tflops = kCountingRate;
    hw.hbm_gb_per_s = hw.elementwise_gb_per_s = kCountingRate;
    hw.int32_tops = 0;  // random numbers free: a dropout is one launch
    hw.kernel_overhead_us = kCountingLaunchUs;
    return hw;
}

}  // namespace

HostIssue::HostIssue(const Config& config)
    : counted_(config.model, config.training, KernelRoofline(countingHardware(config.hardware)), config.parallel.tp,
               config.parallel.micro_batch_size),
      training_(config.training), tp_(config.parallel.tp), op_ms_(operatorMicroseconds(config.training) * 1e-3) {}

double HostIssue::operatorMicroseconds(const TrainingConfig& training) {
    if (training.host_op_us) return *training.host_op_us;
    switch (training.framework) {
        case TrainingConfig::Framework::Torchtitan: return kTorchtitanOpUs;
        case TrainingConfig::Framework::DeepSpeed: return kDeepSpeedOpUs;
        default: return kMegatronOpUs;
    }
}

KernelTimes HostIssue::launches(const StageLayout& layout) const {
    KernelTimes n;
    const double layers = layout.layerCount();
    if (training_.cuda_graphs) {  // one captured graph per instruction (NVIDIA, "Getting Started with CUDA Graphs")
        n.forward_ms = n.input_grad_ms = n.weight_grad_ms = 1;
        return n;
    }
    const KernelTimes block = counted_.block();
    n.forward_ms = layers * block.forward_ms;
    n.input_grad_ms = layers * block.input_grad_ms;
    n.weight_grad_ms = layers * block.weight_grad_ms;
    if (layout.has_embedding) n += counted_.embedding();
    if (layout.has_head) n += counted_.head();
    if (tp_ > 1) {
        n.forward_ms += layers * kTensorParallelCollectives;
        n.input_grad_ms += layers * kTensorParallelCollectives;
    }
    // The counting roofline adds an infinitesimal compute time to each launch: round it away.
    n.forward_ms = std::round(n.forward_ms);
    n.input_grad_ms = std::round(n.input_grad_ms);
    n.weight_grad_ms = std::round(n.weight_grad_ms);
    return n;
}

double HostIssue::boundMs(double gpuMs, double launches) const { return std::max(gpuMs, issueMs(launches)); }

}  // namespace mario
