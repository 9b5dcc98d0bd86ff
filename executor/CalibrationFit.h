#pragma once
// The fits of `mario-executor calibrate` (docs/calibration.md): from kernels measured on this
// machine to the preset fields core's analytical model reads. Every fit goes through the model's
// own KernelRoofline, so that whatever shape physics the model has (wave quantisation, the
// K-depth term, the HBM roofline) is in the fit and the preset reproduces the measured times
// through the same formulas that will use it. Torch-free: the measurements come in as numbers.
#include <optional>
#include <string>
#include <vector>

#include "core/cost/KernelRoofline.h"
#include "core/model/HardwareConfig.h"

namespace mario::exec {

// One measured product: `batch` products C[m×n] = A[m×k]·B[k×n] in one launch.
struct GemmSample {
    double m = 0, n = 0, k = 0, batch = 1;
    double ms = 0;      // median of the repeats
    double spread = 0;  // (slowest − fastest repeat) / median
    // A product the measured block runs (fitted), or one of the wider grid (reported only).
    bool fitted = true;
    // Which product of the block it is, measured in that product's layout: the rate it fits.
    GemmRole role = GemmRole::Forward;
};

// A role's name in a calibrated preset's source ("forward", "input_gradient", "weight_gradient"),
// and back; an unknown name is none.
const char* gemmRoleName(GemmRole role);
std::optional<GemmRole> gemmRoleNamed(const std::string& name);

// One measured element-wise or normalisation kernel, with the bytes the model charges its forward
// and its backward (bf16 elements read and written, byte masks: core/cost/ElementwiseBytes.h).
struct StreamSample {
    std::string name;
    double forward_bytes = 0;
    double backward_bytes = 0;
    double forward_ms = 0;
    double backward_ms = 0;
    double spread = 0;
    double count = 1;   // how many times one block runs it (two norms, two residual adds)
    bool copy = false;  // a layout copy: the model prices it at the HBM rate, not the element-wise one
};

// How far the fitted model is from each measurement: model / measured, smallest and largest.
struct FitSpread {
    double low = 1, high = 1;
};

class CalibrationFit {
public:
    // `hardware` holds every field that is not fitted (peak, sm_count, memory, links); the fits
    // replace the ones they own.
    explicit CalibrationFit(HardwareConfig hardware) : hw_(std::move(hardware)) {}

    // kernel_overhead_us: the per-kernel cost of the smallest kernels, measured directly.
    void setKernelOverheadUs(double us) { hw_.kernel_overhead_us = us; }

    // hbm_gb_per_s is the measured copy bandwidth and hbm_efficiency the share of it at which the
    // block's layout copies and weight-gradient accumulations (`copy` samples) stream the model's
    // bytes: the rate of the products' memory traffic, reductions and copies. elementwise_gb_per_s is the rate at which the model's
    // times for the other kernels, each counted as often as a block runs it, forward and backward,
    // add up to their measured time (time-weighted: GELU's erf weighs most on a CPU). Where the
    // copies stream the model's bytes faster than the large copy (a bf16 model of fp32 kernels),
    // hbm_gb_per_s is raised to that rate and the efficiency is 1; without copy samples, or with
    // none whose phases each run 10 kernel overheads (a launch-bound copy on a GPU), it is 1.
    FitSpread fitStreaming(double copyGbPerS, const std::vector<StreamSample>& kernels);

    // peak_tflops · gemm_efficiency: the rate at which the model's GEMM times over the fitted
    // forward products (the block's own) add up to their measured times, and likewise
    // gemm_input_grad_efficiency and gemm_weight_grad_efficiency over the data and weight
    // gradients where the sweep has them (left 0 where it has none). peak_tflops is the fastest
    // product measured (a measured ceiling, not a datasheet figure) unless the model needs more to
    // reach a role's measured total at efficiency 1; the efficiencies are the rest. Call after
    // fitStreaming: the HBM roofline of the products uses its bandwidth. The spread is over the
    // fitted products; spreadOf gives any set's.
    FitSpread fitGemm(const std::vector<GemmSample>& sweep);
    FitSpread spreadOf(const std::vector<GemmSample>& sweep, bool fittedOnly) const;

    // flash_forward_efficiency and flash_backward_efficiency from measured attention cores
    // doing `forwardFlops` (the model's count: the causal half) in forwardMs, and 2.5× that in
    // backwardMs. Call after fitGemm (it sets the peak). Clamped to (0, 1].
    void fitAttention(double forwardFlops, double forwardMs, double backwardMs);

    const HardwareConfig& hardware() const { return hw_; }

    // The model's time for a measured sample with the current fields.
    double modelMs(const GemmSample& gemm) const;
    double modelForwardMs(const StreamSample& kernel) const;
    double modelBackwardMs(const StreamSample& kernel) const;

private:
    // The rate (TFLOP/s at efficiency 1) at which the model's times over the fitted products of
    // `role` add up to their measured total; 0 without any. `fastest` (TFLOP/s) is the start of the
    // search and the rate where the model's memory roofline alone exceeds the measured total.
    double gemmRate(const std::vector<GemmSample>& sweep, GemmRole role, double fastest) const;
    // The rate (GB/s of the model's bytes) at which the model's times for the copies (`copies`) or
    // the element-wise kernels, each times its count, add up to their measured total; 0 without any.
    double streamingRate(const std::vector<StreamSample>& kernels, bool copies, double start) const;

    HardwareConfig hw_;
};

// The root of an increasing function on [low, high] by bisection (60 halvings: below 1e-15 of the
// interval's width); the end nearer the root where there is none.
double increasingRoot(double low, double high, double target, const auto& f) {
    if (f(low) >= target) return low;
    if (f(high) <= target) return high;
    for (int i = 0; i < 60; ++i) {
        const double mid = (low + high) / 2;
        (f(mid) < target ? low : high) = mid;
    }
    return (low + high) / 2;
}

}  // namespace mario::exec
