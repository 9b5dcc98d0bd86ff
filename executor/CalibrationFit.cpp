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
// A layout copy sets the products' HBM rate only when it runs this many kernel overheads: on an
// H100 the block's attention-output copy (33.5 MB) took 44 µs beside a 9.8 µs overhead, and the
// rate read off it (0.21 of a 1 GB copy's 3005 GB/s) priced the attention's batched products
// 4x too slow and drove the peak to 8e8 TFLOP/s. Shorter, the large copy's rate stands.
constexpr double kCopyOverheads = 10;

void widen(FitSpread& spread, double ratio, bool first) {
    spread.low = first ? ratio : std::min(spread.low, ratio);
    spread.high = first ? ratio : std::max(spread.high, ratio);
}

}  // namespace

const char* gemmRoleName(GemmRole role) {
    switch (role) {
    case GemmRole::InputGradient: return "input_gradient";
    case GemmRole::WeightGradient: return "weight_gradient";
    default: return "forward";
    }
}

std::optional<GemmRole> gemmRoleNamed(const std::string& name) {
    for (GemmRole role : {GemmRole::Forward, GemmRole::InputGradient, GemmRole::WeightGradient})
        if (name == gemmRoleName(role)) return role;
    return std::nullopt;
}

double CalibrationFit::modelMs(const GemmSample& g) const {
    return KernelRoofline(hw_).gemmMs(g.m, g.n, g.k, g.batch, 2, g.role);
}

double CalibrationFit::modelForwardMs(const StreamSample& s) const {
    const KernelRoofline roofline(hw_);
    return s.copy ? roofline.memoryMs(s.forward_bytes) : roofline.elementwiseMs(s.forward_bytes);
}

double CalibrationFit::modelBackwardMs(const StreamSample& s) const {
    const KernelRoofline roofline(hw_);
    return s.copy ? roofline.memoryMs(s.backward_bytes) : roofline.elementwiseMs(s.backward_bytes);
}

double CalibrationFit::streamingRate(const std::vector<StreamSample>& kernels, bool copies, double start) const {
    double measured = 0;
    bool any = false;
    const double longEnough = copies ? kCopyOverheads * hw_.kernel_overhead_us * 1e-3 : 0;
    // Each phase that moves bytes must run long enough (a gradient accumulation has no forward).
    auto counted = [&](const StreamSample& s) {
        return s.copy == copies && (s.forward_bytes <= 0 || s.forward_ms >= longEnough) &&
               (s.backward_bytes <= 0 || s.backward_ms >= longEnough);
    };
    for (const StreamSample& s : kernels)
        if (counted(s)) measured += s.count * (s.forward_ms + s.backward_ms), any = true;
    if (!any) return 0;
    // The model's total at `rate` GB/s of its bytes: decreasing in the rate, so its negative is
    // increasing. Both rates are set to the trial one; each sample reads its own.
    auto negativeTotal = [&](double rate) {
        HardwareConfig trial = hw_;
        trial.hbm_gb_per_s = trial.elementwise_gb_per_s = rate;
        trial.hbm_efficiency = 1;
        const CalibrationFit at(trial);
        double total = 0;
        for (const StreamSample& s : kernels)
            if (counted(s)) total += s.count * (at.modelForwardMs(s) + at.modelBackwardMs(s));
        return -total;
    };
    return increasingRoot(start * kRateLow, start * kRateHigh, -measured, negativeTotal);
}

FitSpread CalibrationFit::fitStreaming(double copyGbPerS, const std::vector<StreamSample>& kernels) {
    const double copies = streamingRate(kernels, true, copyGbPerS);
    hw_.hbm_gb_per_s = std::max(copyGbPerS, copies);
    hw_.hbm_efficiency = copies > 0 ? std::clamp(copies / hw_.hbm_gb_per_s, kFloorEfficiency, 1.0) : 1.0;
    const double elementwise = streamingRate(kernels, false, copyGbPerS);
    hw_.elementwise_gb_per_s = elementwise > 0 ? elementwise : hw_.hbm_gb_per_s * hw_.hbm_efficiency;
    FitSpread spread;
    for (std::size_t i = 0; i < kernels.size(); ++i) {
        const StreamSample& s = kernels[i];
        widen(spread, (modelForwardMs(s) + modelBackwardMs(s)) / (s.forward_ms + s.backward_ms), i == 0);
    }
    return spread;
}

double CalibrationFit::gemmRate(const std::vector<GemmSample>& sweep, GemmRole role, double fastest) const {
    double measured = 0;
    for (const GemmSample& g : sweep)
        if (g.fitted && g.role == role) measured += g.ms;
    if (measured <= 0) return 0;
    auto negativeTotal = [&](double tflops) {
        HardwareConfig trial = hw_;
        trial.peak_tflops = tflops;
        trial.gemm_efficiency = 1;
        trial.gemm_input_grad_efficiency = trial.gemm_weight_grad_efficiency = 0;  // every role at 1
        const KernelRoofline roofline(trial);
        double total = 0;
        for (const GemmSample& g : sweep)
            if (g.fitted && g.role == role) total += roofline.gemmMs(g.m, g.n, g.k, g.batch);
        return -total;
    };
    const double rate = increasingRoot(fastest * kRateLow, fastest * kRateHigh, -measured, negativeTotal);
    // Where no peak brings the model's total down to the measured one, the products are bound by
    // the model's memory roofline, not its compute: the rate stays the fastest product measured
    // instead of the bisection's upper end.
    return -negativeTotal(rate) > measured * (1 + 1e-9) ? fastest : rate;
}

FitSpread CalibrationFit::fitGemm(const std::vector<GemmSample>& sweep) {
    double fastest = 0;
    for (const GemmSample& g : sweep)
        if (g.ms > 0) fastest = std::max(fastest, 2 * g.m * g.n * g.k * g.batch / (g.ms * 1e9));  // TFLOP/s
    if (sweep.empty() || fastest <= 0) return {};
    const double forward = gemmRate(sweep, GemmRole::Forward, fastest);
    const double input = gemmRate(sweep, GemmRole::InputGradient, fastest);
    const double weight = gemmRate(sweep, GemmRole::WeightGradient, fastest);
    hw_.peak_tflops = std::max({fastest, forward, input, weight});
    auto share = [&](double rate) { return rate > 0 ? std::clamp(rate / hw_.peak_tflops, kFloorEfficiency, 1.0) : 0.0; };
    hw_.gemm_efficiency = forward > 0 ? share(forward) : 1.0;
    hw_.gemm_input_grad_efficiency = share(input);
    hw_.gemm_weight_grad_efficiency = share(weight);
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
