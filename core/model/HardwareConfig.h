#pragma once
// One accelerator and its links, as the cost model needs it (docs/cost-model.md). The
// datasheet numbers (peak, bandwidths, SMs) and the measured efficiencies each preset gives
// are the only constants of the analytical model: its notes say where every one comes from.
#include <string>

namespace mario {

struct HardwareConfig {
    std::string name;
    double peak_tflops = 0;  // dense bf16 tensor-core peak
    double memory_gb = 0;    // device memory (GB = 1e9 bytes)
    double hbm_gb_per_s = 0;
    double intra_node_gb_per_s = 0;  // NVLink, per direction
    double inter_node_gb_per_s = 0;  // InfiniBand, per GPU
    double link_latency_ms = 0;
    int gpus_per_node = 8;
    // Streaming multiprocessors: a GEMM runs its output tiles in waves of this many (0: no
    // wave quantisation).
    int sm_count = 0;
    // Measured efficiencies (fractions of the datasheet figure above):
    double gemm_efficiency = 0.8;             // a large bf16 GEMM, every SM busy
    // The rate of the backward's products where it differs from the forward's: the data gradient
    // dX = dY·W and the weight gradient dW = dYᵀ·X run on other operand layouts, for which a BLAS
    // or cuBLAS picks other kernels (PyTorch 2.15's MKL on a CPU: 8-15% slower per FLOP than
    // x·Wᵀ; docs/calibration.md). 0 (the default, every bundled preset): gemm_efficiency, which
    // then prices every product. `mario-executor calibrate` measures and writes them.
    double gemm_input_grad_efficiency = 0;
    double gemm_weight_grad_efficiency = 0;
    double flash_forward_efficiency = 0.6;    // FlashAttention's forward kernel
    double flash_backward_efficiency = 0.45;  // its backward (five products per two forward)
    double hbm_efficiency = 0.8;              // a streaming kernel: a copy, a GEMM's operands
    // The rate, in GB/s of the model's bytes, at which element-wise and normalisation kernels
    // (norms, activations, residual adds, softmax, masks, dropout, cross-entropy) stream: on a GPU
    // they are memory-bound like a copy, on a CPU compute-bound (GELU's erf, exp), far slower than
    // its copy bandwidth. 0 (the default, every bundled preset): hbm_gb_per_s · hbm_efficiency.
    // The products' memory traffic, layout copies and reductions stay at the HBM rate.
    double elementwise_gb_per_s = 0;
    // Peak INT32 TOPS of the datasheet (a multiply-add counted as two operations, as FLOPs are):
    // the rate of the integer pipes that draw dropout's random numbers (Philox). 0 (the
    // default): drawing them is free, hidden under the kernel's memory traffic.
    double int32_tops = 0;
    double nvlink_efficiency = 0.8;   // NCCL bus bandwidth over NVLink
    double network_efficiency = 0.9;  // NCCL bus bandwidth over one InfiniBand port
    double kernel_overhead_us = 4;    // launch and tail of one kernel
    // Memory the framework holds besides tensors: CUDA context, cuBLAS workspaces, allocator
    // fragmentation. Added to every device's peak.
    double framework_reserve_gb = 0;
};

}  // namespace mario
