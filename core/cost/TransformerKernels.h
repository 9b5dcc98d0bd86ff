#pragma once
// The kernels of one micro-batch through a transformer, per GPU (docs/cost-model.md#kernels):
// a block's GEMMs with their (M, N, K), its attention core (FlashAttention or materialised),
// its norms, activation, dropouts and residual adds; the embedding; the LM head and the
// cross-entropy. Each is timed by KernelRoofline; tensor-parallel communication is not
// included here (Collectives.h). Tensor parallelism splits heads and the FFN width by tp;
// sequence parallelism runs the element-wise kernels on a 1/tp slice of the tokens.
#include <array>

#include "core/cost/KernelRoofline.h"
#include "core/model/ModelConfig.h"
#include "core/model/TrainingConfig.h"

namespace mario {

// Times of one micro-batch in milliseconds. The backward is split as zero-bubble schedules
// split it: I computes the gradient of the input (data gradients of the GEMMs, the backward
// of every element-wise kernel and of attention), W the weight gradients of the GEMMs.
struct KernelTimes {
    double forward_ms = 0;
    double input_grad_ms = 0;
    double weight_grad_ms = 0;

    double backwardMs() const { return input_grad_ms + weight_grad_ms; }
    KernelTimes& operator+=(const KernelTimes& other) {
        forward_ms += other.forward_ms;
        input_grad_ms += other.input_grad_ms;
        weight_grad_ms += other.weight_grad_ms;
        return *this;
    }
};

// C[m×n] = A[m×k]·B[k×n]: a weight GEMM's forward; its gradients are the transposed products.
struct GemmShape {
    double m, n, k;
};

class TransformerKernels {
public:
    TransformerKernels(const ModelConfig& model, const TrainingConfig& training, const KernelRoofline& roofline, int tp,
                       int microBatchSize);

    KernelTimes block() const;      // one transformer block
    KernelTimes embedding() const;  // token (and position) embedding lookup
    KernelTimes head() const;       // final norm, LM head projection, cross-entropy

    // FLOPs the attention core executes in one forward per GPU: FlashAttention skips the
    // masked upper triangle of a causal mask, the materialised path computes every score.
    double attentionCoreFlops() const;

    const KernelRoofline& roofline() const { return roofline_; }
    // The block's four weight GEMMs' forward shapes, in order: QKV, output projection, MLP up,
    // MLP down (tensor-parallel collectives run beside them).
    std::array<GemmShape, 4> weightGemms() const;
    // Bytes per element of the gradient buffer weight gradients accumulate into.
    double gradientBytes() const { return gradBytes_; }

private:
    // A weight GEMM of the forward: its data and weight gradients have the same FLOPs; the
    // weight gradient accumulates into the gradient buffer in its dtype (Megatron's
    // gradient-accumulation fusion), read and written.
    void weightGemm(KernelTimes& t, const GemmShape& gemm) const;
    // An element-wise kernel streaming `forwardBytes`, and its backward `backwardBytes` (each
    // counted per kernel in TransformerKernels.cpp; 0: no backward kernel).
    void elementwise(KernelTimes& t, double forwardBytes, double backwardBytes) const;
    KernelTimes attentionCore() const;
    // Megatron-LM's local layers (the materialised path) add the QKV bias in a kernel of its
    // own; they and PyTorch's eager layers sum each bias gradient in another and copy Q, K, V and
    // the attention output between head-major and token-major layouts. Transformer Engine,
    // under the FlashAttention path, fuses these into its GEMMs and attention kernels.
    KernelTimes unfusedLayoutAndBias() const;

    ModelConfig model_;
    TrainingConfig training_;
    KernelRoofline roofline_;
    double t_;       // tensor-parallel degree
    double tokens_;  // b·s on the GPU for the GEMMs
    double sliced_;  // tokens the element-wise kernels see (b·s/t with sequence parallelism)
    bool dropout_;   // GPT-style blocks train with dropout; LLaMA-style ones do not
    double gradBytes_;  // bytes per element of the gradient buffer W accumulates into
};

}  // namespace mario
