#pragma once
// The time of one GPU kernel from its work (docs/cost-model.md#kernels): a roofline over the
// hardware preset's datasheet peak and bandwidth at its measured efficiencies, plus a fixed
// launch-and-tail cost per kernel. Qt- and Torch-free; every figure is in milliseconds.
#include "core/model/HardwareConfig.h"

namespace mario {

class KernelRoofline {
public:
    explicit KernelRoofline(const HardwareConfig& hardware);

    // `batch` independent bf16 products C[m×n] = A[m×k]·B[k×n] in one launch: the slower of
    // the tensor-core time (FLOPs at gemm_efficiency, scaled by the share of the SMs the
    // output tiles keep busy) and the time to stream A, B and C through HBM.
    double gemmMs(double m, double n, double k, double batch = 1) const;
    // The share of the machine a product's tiles keep busy: tiles of 256×128 (or 128×256,
    // whichever fits better) padded at the edges, run in waves of sm_count. 1 without sm_count.
    double tileEfficiency(double m, double n, double batch = 1) const;

    // An element-wise or reduction kernel that streams `bytes` through HBM.
    double memoryMs(double bytes) const;
    // FlashAttention's kernels, from the FLOPs they execute.
    double flashForwardMs(double flops) const;
    double flashBackwardMs(double flops) const;

    double peakFlopsPerMs() const { return peak_per_ms_; }

private:
    HardwareConfig hw_;
    double peak_per_ms_;   // FLOPs per millisecond at the datasheet peak
    double bytes_per_ms_;  // HBM bytes per millisecond at hbm_efficiency
    double overhead_ms_;
};

}  // namespace mario
