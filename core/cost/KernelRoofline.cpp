#include "core/cost/KernelRoofline.h"

#include <algorithm>
#include <cmath>

namespace mario {

namespace {

// cuBLAS and CUTLASS run large bf16 products on Ampere and Hopper with 256×128 output tiles
// per thread block (one block per SM at a time): the unit that wave quantisation counts.
constexpr double kTileLong = 256;
constexpr double kTileShort = 128;

// Each output tile also pays a fixed prologue (filling the shared-memory pipeline, three to four
// k-blocks of 32) and epilogue (writing C): about as long as 128 more elements of K. A product
// with a short K (a 2304-wide layer) loses a few percent to it; K of 12288 under 1%.
constexpr double kTileFixedK = 128;

double tilesOf(double extent, double tile) { return std::ceil(extent / tile); }

}  // namespace

KernelRoofline::KernelRoofline(const HardwareConfig& hardware)
    : hw_(hardware), peak_per_ms_(hardware.peak_tflops * 1e9),
      bytes_per_ms_(hardware.hbm_gb_per_s * 1e6 * hardware.hbm_efficiency),
      overhead_ms_(hardware.kernel_overhead_us * 1e-3) {}

double KernelRoofline::tileEfficiency(double m, double n, double batch) const {
    if (hw_.sm_count <= 0 || m <= 0 || n <= 0) return 1;
    double best = 0;
    for (auto [tm, tn] : {std::pair{kTileLong, kTileShort}, std::pair{kTileShort, kTileLong}}) {
        const double tiles = tilesOf(m, tm) * tilesOf(n, tn) * batch;
        const double waves = std::ceil(tiles / hw_.sm_count);
        // Useful output over the output the waves compute (padded tiles and idle SMs included).
        const double useful = m * n * batch / (waves * hw_.sm_count * tm * tn);
        best = std::max(best, useful);
    }
    return best;
}

double KernelRoofline::gemmMs(double m, double n, double k, double batch) const {
    if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return 0;
    const double flops = 2 * m * n * k * batch;
    const double depth = k / (k + kTileFixedK);
    const double computeMs = flops / (peak_per_ms_ * hw_.gemm_efficiency * tileEfficiency(m, n, batch) * depth);
    const double bytesMs = 2 * (m * k + k * n + m * n) * batch / bytes_per_ms_;
    return std::max(computeMs, bytesMs) + overhead_ms_;
}

double KernelRoofline::memoryMs(double bytes) const {
    if (bytes <= 0) return 0;
    return bytes / bytes_per_ms_ + overhead_ms_;
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
