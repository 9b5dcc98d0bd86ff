#pragma once
// The time of one GPU kernel from its work (docs/cost-model.md#kernels): a roofline over the
// hardware preset's datasheet peak and bandwidth at its measured efficiencies, plus a fixed
// launch-and-tail cost per kernel. Qt- and Torch-free; every figure is in milliseconds.
#include "core/model/HardwareConfig.h"

namespace mario {

// Which product of a layer a GEMM is, for the rate its operand layout runs at
// (HardwareConfig::gemm_input_grad_efficiency): the forward Y = X·Wᵀ, the data gradient
// dX = dY·W (and the attention's backward products), the weight gradient dW = dYᵀ·X.
enum class GemmRole { Forward, InputGradient, WeightGradient };

class KernelRoofline {
public:
    explicit KernelRoofline(const HardwareConfig& hardware);

    // `batch` independent bf16 products C[m×n] = A[m×k]·B[k×n] in one launch: the slower of
    // the tensor-core time (FLOPs at gemm_efficiency, scaled by the share of the SMs the
    // output tiles keep busy) and the time to stream A, B and C through HBM, for the best of
    // the tile shapes cuBLAS picks from and of splitting K (docs/cost-model.md#kernels).
    // `outputBytes` is what each element of C costs in HBM traffic: 2 for a bf16 result, 8 when
    // a weight gradient accumulates into an fp32 main gradient (read and written), 4 into bf16.
    // `role` picks the efficiency of the product's layout (GemmRole).
    double gemmMs(double m, double n, double k, double batch = 1, double outputBytes = 2,
                  GemmRole role = GemmRole::Forward) const;
    // The share of the peak a product of `role` runs at with every SM busy: gemm_efficiency, or
    // the preset's rate for that role where it has one.
    double gemmEfficiency(GemmRole role) const;
    // The rate of the best tile shape relative to a full machine of 128×128 tiles, without
    // splitting K: the share of the SMs its waves keep busy times its operand reuse. 1 without
    // sm_count.
    double tileEfficiency(double m, double n, double batch = 1) const;

    // A kernel that streams `bytes` through HBM at hbm_gb_per_s · hbm_efficiency: a copy, a
    // reduction (bias gradients), the optimizer's pass over the parameters.
    double memoryMs(double bytes) const;
    // An element-wise or normalisation kernel of the activations moving `bytes` (the model's
    // bf16 count) at the preset's elementwise_gb_per_s (HardwareConfig.h), the HBM rate by default.
    double elementwiseMs(double bytes) const;
    // Dropout's forward: an element-wise kernel of `bytes` that also draws a random number for
    // each of `elements`, the longer of the two at the preset's int32_tops (free without it).
    double dropoutMs(double bytes, double elements) const;
    // FlashAttention's kernels, from the FLOPs they execute.
    double flashForwardMs(double flops) const;
    double flashBackwardMs(double flops) const;

    double peakFlopsPerMs() const { return peak_per_ms_; }

private:
    // One tile shape with K split `splits` ways: its tensor-core time.
    double computeMs(double m, double n, double k, double batch, int tile, int splits, double efficiency) const;

    HardwareConfig hw_;
    double peak_per_ms_;   // FLOPs per millisecond at the datasheet peak
    double bytes_per_ms_;  // HBM bytes per millisecond at hbm_efficiency
    double elementwise_bytes_per_ms_;
    double int32_ops_per_ms_;  // 0: random numbers are free
    double overhead_ms_;
};

}  // namespace mario
