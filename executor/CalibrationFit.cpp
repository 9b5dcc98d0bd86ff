#include "executor/CalibrationFit.h"

#include <algorithm>
#include <cmath>

#include "core/cost/KernelRoofline.h"

namespace mario::exec {

namespace {

// Bisection bounds of the fitted rates, as factors of their starting guess: wide enough for any
// machine the guess comes from (the measured fastest product, the measured copy).
constexpr double kRateLow = 1e-6;
constexpr double kRateHigh = 1e6;
// FlashAttention-2's backward executes 2.5× its forward FLOPs (TransformerKernels.cpp's count).
constexpr double kFlashBackwardFlops = 2.5;
// The smallest efficiency written: the preset reader accepts (0, 1].
constexpr double kFloorEfficiency = 1e-4;

void widen(FitSpread& spread, double ratio, bool first) {
    spread.low = first ? ratio : std::min(spread.low, ratio);
    spread.high = first ? ratio : std::max(spread.high, ratio);
}

}  // namespace

double CalibrationFit::modelMs(const GemmSample& g) const { return KernelRoofline(hw_).gemmMs(g.m, g.n, g.k, g.batch); }

double CalibrationFit::modelForwardMs(const StreamSample& s) const {
    return KernelRoofline(hw_).memoryMs(s.forward_bytes);
}

double CalibrationFit::modelBackwardMs(const StreamSample& s) const {
    return KernelRoofline(hw_).memoryMs(s.backward_bytes);
}

FitSpread CalibrationFit::fitStreaming(double copyGbPerS, const std::vector<StreamSample>& kernels) {
    double measured = 0;
    for (const StreamSample& s : kernels) measured += s.forward_ms + s.backward_ms;
    // The model's total at an effective bandwidth of `rate` GB/s (efficiency 1): decreasing in the
    // rate, so its negative is increasing.
    auto negativeTotal = [&](double rate) {
        HardwareConfig trial = hw_;
        trial.hbm_gb_per_s = rate;
        trial.hbm_efficiency = 1;
        const KernelRoofline roofline(trial);
        double total = 0;
        for (const StreamSample& s : kernels)
            total += roofline.memoryMs(s.forward_bytes) + roofline.memoryMs(s.backward_bytes);
        return -total;
    };
    const double rate = increasingRoot(copyGbPerS * kRateLow, copyGbPerS * kRateHigh, -measured, negativeTotal);
    hw_.hbm_gb_per_s = std::max(copyGbPerS, rate);
    hw_.hbm_efficiency = std::clamp(rate / hw_.hbm_gb_per_s, kFloorEfficiency, 1.0);
    FitSpread spread;
    for (std::size_t i = 0; i < kernels.size(); ++i) {
        const StreamSample& s = kernels[i];
        widen(spread, (modelForwardMs(s) + modelBackwardMs(s)) / (s.forward_ms + s.backward_ms), i == 0);
    }
    return spread;
}

FitSpread CalibrationFit::fitGemm(const std::vector<GemmSample>& sweep) {
    double measured = 0, fastest = 0;
    for (const GemmSample& g : sweep) {
        if (g.ms > 0) fastest = std::max(fastest, 2 * g.m * g.n * g.k * g.batch / (g.ms * 1e9));  // TFLOP/s
        if (g.fitted) measured += g.ms;
    }
    if (sweep.empty() || fastest <= 0) return {};
    auto negativeTotal = [&](double tflops) {
        HardwareConfig trial = hw_;
        trial.peak_tflops = tflops;
        trial.gemm_efficiency = 1;
        const KernelRoofline roofline(trial);
        double total = 0;
        for (const GemmSample& g : sweep)
            if (g.fitted) total += roofline.gemmMs(g.m, g.n, g.k, g.batch);
        return -total;
    };
    const double rate = increasingRoot(fastest * kRateLow, fastest * kRateHigh, -measured, negativeTotal);
    hw_.peak_tflops = std::max(fastest, rate);
    hw_.gemm_efficiency = std::clamp(rate / hw_.peak_tflops, kFloorEfficiency, 1.0);
    return spreadOf(sweep, true);
}

FitSpread CalibrationFit::spreadOf(const std::vector<GemmSample>& sweep, bool fittedOnly) const {
    FitSpread spread;
    bool first = true;
    for (const GemmSample& g : sweep)
        if ((g.fitted || !fittedOnly) && g.ms > 0) {
            widen(spread, modelMs(g) / g.ms, first);
            first = false;
        }
    return spread;
}

void CalibrationFit::fitAttention(double forwardFlops, double forwardMs, double backwardMs) {
    const double overheadMs = hw_.kernel_overhead_us * 1e-3;
    const double peakPerMs = hw_.peak_tflops * 1e9;
    auto efficiency = [&](double flops, double ms) {
        const double computeMs = std::max(ms - overheadMs, 1e-9);
        return std::clamp(flops / (peakPerMs * computeMs), kFloorEfficiency, 1.0);
    };
    hw_.flash_forward_efficiency = efficiency(forwardFlops, forwardMs);
    hw_.flash_backward_efficiency = efficiency(kFlashBackwardFlops * forwardFlops, backwardMs);
}

}  // namespace mario::exec
