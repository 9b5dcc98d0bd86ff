#pragma once
// The kernels `mario-executor calibrate` times (Calibrator.h), each run as mario-executor's
// blocks run it (GptModel.cpp): the same LibTorch calls, dtype and layouts, with autograd where
// the block has it. Every time is the median of `repeats` runs after one warm-up, read from
// InstructionClock marks (the steady clock on the CPU, CUDA events on a GPU), with the spread of
// the repeats, (slowest − fastest) / median; before each repeat the caches are emptied.
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "executor/CalibrationFit.h"

namespace mario::exec {

struct PhaseTimes {
    double forward_ms = 0;
    double backward_ms = 0;  // 0 where only a forward is timed
    double spread = 0;
};

class CalibrationKernels {
public:
    // Allocates the buffer whose pass empties the caches before every repeat (64 MB on the CPU,
    // 256 MB on a GPU: CalibrationKernels.cpp says why).
    CalibrationKernels(c10::Device device, c10::ScalarType dtype, int repeats);

    // A weight product's forward as the block runs it: torch::linear of x [m×k] by a weight
    // stored [n×k] (with its bias where the block has one), x and the weight requiring grad, so
    // that the bias broadcast and the autograd node are in the time.
    GemmSample linearForward(double m, double n, double k, bool bias) const;
    // A gradient product as autograd runs it: C = A[m×k] · B[k×n], no grad. A weight gradient's
    // A is the output gradient transposed (a view of [k×m] tokens × outputs, `transposedA`), as
    // linear's backward passes it: a BLAS's rate depends on the operands' layout (PyTorch 2.15's
    // MKL, float64, one thread on the 2-core EPYC that runs CI: a 2048 × 512 × 128 weight
    // gradient 7.3 ms in the block, 7.7 to 9.9 ms alone on a contiguous copy).
    GemmSample gemm(double m, double n, double k, bool transposedA = false) const;
    // The eager attention's two products on the block's layouts (GptModel.cpp): scores = Q·Kᵀ
    // from the heads of the fused QKV output (splitHeads' views, copied by matmul as in the
    // block), then P·V; shapes (s × s × h/heads) and (s × h/heads × s)
    // over b·heads.
    std::vector<GemmSample> attentionProducts(double microBatch, double seq, double hidden, double heads) const;

    // Per kernel, forward and backward through autograd: the mean of a chain of 64 additions of
    // one-element tensors (the kernels' fixed cost: dispatch, autograd node, launch).
    PhaseTimes tinyKernel() const;

    // GB/s of copying a tensor of `bytes` into another (read and write counted).
    double copyGbPerS(double bytes) const;

    // The element-wise and normalisation kernels of a GPT block of `tokens` tokens (b·s), hidden
    // size h, `heads` heads and sequence length s: LayerNorm, residual add, GELU over 4h, the
    // eager attention's scale, causal mask and softmax over b·heads·s² scores, and the copy of its
    // output back to [b, s, h].
    std::vector<StreamSample> blockStreams(double microBatch, double seq, double hidden, double heads) const;

    // A weight gradient's accumulation into the weight's .grad as autograd runs it between two
    // micro-batches (AccumulateGrad: `.grad += new`, a kernel of its own), for `count` weights of
    // `shape` in one block: a layout-priced sample (copy) of the model's gradient-sum bytes, all
    // in the backward.
    StreamSample gradientAccumulation(const std::vector<int64_t>& shape, double count) const;

    // The attention core as FlashAttention runs it where LibTorch has it
    // (scaled_dot_product_attention, PyTorch 2), else the eager core of GptModel.cpp; `kernel`
    // names which.
    PhaseTimes attentionCore(double microBatch, double seq, double hidden, double heads, std::string& kernel) const;

private:
    c10::Device device_;
    c10::ScalarType dtype_;
    int repeats_;
    at::Tensor flush_;
};

}  // namespace mario::exec
