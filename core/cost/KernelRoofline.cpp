#include "core/cost/KernelRoofline.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace mario {

namespace {

// The output tiles cuBLAS and CUTLASS choose between for bf16 products on Ampere and Hopper
// (CUTLASS's SM80 and SM90 GEMM configurations). A tile loads (tm + tn)·k operands for tm·tn·k
// multiply-adds, a reuse of tm·tn/(tm + tn). From 128×128 (reuse 64) shared memory feeds the
// tensor cores at their full rate; a 128×64 tile (reuse 42.7) runs at 42.7/64 of it, a 64×64
// one at 32/64. Tiles this size run two or more per SM, each hiding the other's prologue
// (filling the shared-memory pipeline) and epilogue (writing C), so the depth K of a product
// does not enter its rate: a weight gradient at K = 1024 tokens runs as fast as at 8192 (Qi et
// al. 2024, Table 6: dW of a 14.6B stage at 76% of an A100's peak). Larger 256×128 tiles fill
// an SM alone and never beat 128×128 on a full machine; they are left out.
struct TileShape {
    double m, n;
    double rate;  // relative to a 128×128 tile
};
constexpr TileShape kTiles[] = {{128, 128, 1.0}, {128, 64, 2.0 / 3}, {64, 128, 2.0 / 3}, {64, 64, 0.5}};
// cuBLAS splits K across CTAs when the output tiles leave SMs idle; each split writes fp32
// partial products that a second pass reads and sums (8 bytes per element and split).
constexpr int kMaxSplits = 4;
constexpr double kPartialBytes = 8;
// Integer operations per dropped-out element, in the datasheet's count (a multiply-add is two).
// PyTorch's fused dropout draws curand_uniform4 (Philox4x32-10) for every 4 elements: 10 rounds
// of two 32-bit multiplies whose high and low halves are two multiply-adds each, two 3-input XORs
// and two key additions, about 78 integer instructions per 4 elements; then per element the
// conversion to float, the compare with p, the scale and the address arithmetic of its loads and
// its mask's store, about 13: some 33 instructions an element, 66 operations. On an A100 (19.5
// INT32 TOPS) that is 3.4 ps an element, above the 2.9 ps its 5 bytes take at 85% of 2039 GB/s.
constexpr double kPhiloxOpsPerElement = 66;

double tilesOf(double extent, double tile) { return std::ceil(extent / tile); }

}  // namespace

KernelRoofline::KernelRoofline(const HardwareConfig& hardware)
    : hw_(hardware), peak_per_ms_(hardware.peak_tflops * 1e9),
      bytes_per_ms_(hardware.hbm_gb_per_s * 1e6 * hardware.hbm_efficiency),
      elementwise_bytes_per_ms_(hardware.elementwise_gb_per_s > 0 ? hardware.elementwise_gb_per_s * 1e6
                                                                  : bytes_per_ms_),
      int32_ops_per_ms_(hardware.int32_tops * 1e9), overhead_ms_(hardware.kernel_overhead_us * 1e-3) {}

double KernelRoofline::computeMs(double m, double n, double k, double batch, int tile, int splits,
                                 double efficiency) const {
    const TileShape& t = kTiles[tile];
    double rate = t.rate;
    if (hw_.sm_count > 0) {
        const double tiles = tilesOf(m, t.m) * tilesOf(n, t.n) * batch * splits;
        const double waves = std::ceil(tiles / hw_.sm_count);
        // Useful output over the output the waves compute (padded tiles and idle SMs included).
        rate *= m * n * batch * splits / (waves * hw_.sm_count * t.m * t.n);
    }
    return 2 * m * n * k * batch / (peak_per_ms_ * efficiency * rate);
}

double KernelRoofline::gemmEfficiency(GemmRole role) const {
    const double byRole = role == GemmRole::InputGradient    ? hw_.gemm_input_grad_efficiency
                          : role == GemmRole::WeightGradient ? hw_.gemm_weight_grad_efficiency
                                                             : 0;
    return byRole > 0 ? byRole : hw_.gemm_efficiency;
}

double KernelRoofline::tileEfficiency(double m, double n, double batch) const {
    if (m <= 0 || n <= 0 || batch <= 0) return 1;
    const double ideal = 2 * m * n * batch / (peak_per_ms_ * hw_.gemm_efficiency);
    double best = 0;
    for (int tile = 0; tile < int(std::size(kTiles)); ++tile)
        best = std::max(best, ideal / computeMs(m, n, 1, batch, tile, 1, hw_.gemm_efficiency));
    return best;
}

double KernelRoofline::gemmMs(double m, double n, double k, double batch, double outputBytes, GemmRole role) const {
    if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return 0;
    const double efficiency = gemmEfficiency(role);
    const double streamMs = (2 * (m * k + k * n) + outputBytes * m * n) * batch / bytes_per_ms_;
    double best = -1;
    for (int tile = 0; tile < int(std::size(kTiles)); ++tile) {
        for (int splits = 1; splits <= kMaxSplits; ++splits) {
            // The second pass over the partial products is a kernel of its own.
            const double reduceMs =
                splits > 1 ? kPartialBytes * splits * m * n * batch / bytes_per_ms_ + overhead_ms_ : 0;
            const double ms = std::max(computeMs(m, n, k, batch, tile, splits, efficiency), streamMs) + reduceMs;
            if (best < 0 || ms < best) best = ms;
        }
    }
    return best + overhead_ms_;
}

double KernelRoofline::memoryMs(double bytes) const {
    if (bytes <= 0) return 0;
    return bytes / bytes_per_ms_ + overhead_ms_;
}

double KernelRoofline::elementwiseMs(double bytes) const {
    if (bytes <= 0) return 0;
    return bytes / elementwise_bytes_per_ms_ + overhead_ms_;
}

double KernelRoofline::dropoutMs(double bytes, double elements) const {
    if (bytes <= 0) return 0;
    const double drawMs = int32_ops_per_ms_ > 0 ? elements * kPhiloxOpsPerElement / int32_ops_per_ms_ : 0;
    return std::max(bytes / elementwise_bytes_per_ms_, drawMs) + overhead_ms_;
}

double KernelRoofline::flashForwardMs(double flops) const {
    if (flops <= 0) return 0;
    return flops / (peak_per_ms_ * hw_.flash_forward_efficiency) + overhead_ms_;
}

double KernelRoofline::flashBackwardMs(double flops) const {
    if (flops <= 0) return 0;
    return flops / (peak_per_ms_ * hw_.flash_backward_efficiency) + overhead_ms_;
}

}  // namespace mario
