#include "core/cost/TransformerKernels.h"

namespace mario {

namespace {

constexpr double kBf16 = 2;
constexpr double kFp32 = 4;
// FlashAttention-2's backward executes 2.5× its forward FLOPs (five products to two: the
// scores are recomputed); Dao 2023 counts its throughput the same way.
constexpr double kFlashBackwardFlops = 2.5;

}  // namespace

TransformerKernels::TransformerKernels(const ModelConfig& model, const TrainingConfig& training,
                                       const KernelRoofline& roofline, int tp, int microBatchSize)
    : model_(model), training_(training), roofline_(roofline), t_(tp),
      tokens_(double(microBatchSize) * model.sequence_length), sliced_(training.slicedTokens(tokens_, tp)),
      dropout_(training.dropoutFor(model)) {}

void TransformerKernels::weightGemm(KernelTimes& t, const GemmShape& g) const {
    t.forward_ms += roofline_.gemmMs(g.m, g.n, g.k);
    t.input_grad_ms += roofline_.gemmMs(g.m, g.k, g.n);   // dX = dY · Wᵀ
    t.weight_grad_ms += roofline_.gemmMs(g.k, g.n, g.m);  // dW = Xᵀ · dY
}

std::array<GemmShape, 4> TransformerKernels::weightGemms() const {
    const double h = model_.hidden;
    const double kv = h * model_.kvHeads() / model_.heads;
    const double f = model_.ffnHidden();
    const double up = model_.gated_mlp ? 2 * f : f;  // SwiGLU's gate and up projections in one
    return {GemmShape{tokens_, (h + 2 * kv) / t_, h}, GemmShape{tokens_, h, h / t_}, GemmShape{tokens_, up / t_, h},
            GemmShape{tokens_, h, f / t_}};
}

void TransformerKernels::elementwise(KernelTimes& t, double bytes) const {
    t.forward_ms += roofline_.memoryMs(bytes);
    t.input_grad_ms += roofline_.memoryMs(2 * bytes);
}

double TransformerKernels::attentionCoreFlops() const {
    const double s = model_.sequence_length;
    const double full = 4 * (tokens_ / s) * s * s * model_.hidden / t_;  // Q·Kᵀ and P·V
    return training_.flashAttention() ? full / 2 : full;
}

KernelTimes TransformerKernels::attentionCore() const {
    KernelTimes t;
    const double s = model_.sequence_length;
    const double batchHeads = tokens_ / s * model_.heads / t_;  // b·a/t independent products
    const double headDim = double(model_.hidden) / model_.heads;
    if (training_.flashAttention()) {
        const double flops = attentionCoreFlops();
        t.forward_ms = roofline_.flashForwardMs(flops);
        t.input_grad_ms = roofline_.flashBackwardMs(kFlashBackwardFlops * flops);
        return t;
    }
    // Megatron's materialised path: scores = Q·Kᵀ, a fused scale-mask-softmax, dropout on the
    // probabilities, then P·V. Both products are batched over heads; their gradients are
    // gradients of inputs (no weights), so all of the backward is I.
    const double scores = batchHeads * s * s;
    t.forward_ms += roofline_.gemmMs(s, s, headDim, batchHeads) + roofline_.gemmMs(s, headDim, s, batchHeads);
    t.input_grad_ms +=
        2 * roofline_.gemmMs(s, s, headDim, batchHeads) + 2 * roofline_.gemmMs(s, headDim, s, batchHeads);
    t.forward_ms += roofline_.memoryMs(2 * kBf16 * scores);  // softmax: read scores, write probabilities
    t.input_grad_ms += roofline_.memoryMs(3 * kBf16 * scores);
    if (training_.attention == TrainingConfig::Attention::Eager) {
        // Unfused: the scale and the causal mask each read and write the scores once more (the
        // mask reads its byte too), forward and backward.
        const double extra = (2 * kBf16) * scores + (2 * kBf16 + 1) * scores;
        t.forward_ms += roofline_.memoryMs(extra);
        t.input_grad_ms += roofline_.memoryMs(extra);
    }
    if (dropout_) {
        t.forward_ms += roofline_.memoryMs((2 * kBf16 + 1) * scores);  // read, write, byte mask
        t.input_grad_ms += roofline_.memoryMs((2 * kBf16 + 1) * scores);
    }
    return t;
}

KernelTimes TransformerKernels::block() const {
    KernelTimes t;
    const double h = model_.hidden;
    const double kv = h * model_.kvHeads() / model_.heads;
    const double f = model_.ffnHidden();
    const double residual = dropout_ ? (3 * kBf16 + 1) * sliced_ * h : 3 * kBf16 * sliced_ * h;
    const auto [qkv, projection, up, down] = weightGemms();

    elementwise(t, 2 * kBf16 * sliced_ * h);                                    // input norm
    weightGemm(t, qkv);                                                         // fused Q, K, V projection
    if (model_.gated_mlp) elementwise(t, 2 * kBf16 * tokens_ * (h + kv) / t_);  // rotary on Q and K
    KernelTimes core = attentionCore();
    t += core;
    // Selective recomputation repeats the attention core's forward inside the backward.
    if (training_.recompute == TrainingConfig::Recompute::Selective) t.input_grad_ms += core.forward_ms;
    weightGemm(t, projection);                // attention output projection
    elementwise(t, residual);                 // (bias-dropout-)residual add
    elementwise(t, 2 * kBf16 * sliced_ * h);  // post-attention norm
    weightGemm(t, up);
    // GeLU reads and writes the FFN activations; SwiGLU reads two and writes one.
    elementwise(t, (model_.gated_mlp ? 3 : 2) * kBf16 * tokens_ * f / t_);
    weightGemm(t, down);
    elementwise(t, residual);
    // Full recomputation repeats the whole block's forward before its backward.
    if (training_.recompute == TrainingConfig::Recompute::Full) t.input_grad_ms += t.forward_ms;
    return t;
}

std::array<double, 4> TransformerKernels::weightGemmForwardMs() const {
    std::array<double, 4> ms{};
    const auto gemms = weightGemms();
    for (std::size_t i = 0; i < gemms.size(); ++i) ms[i] = roofline_.gemmMs(gemms[i].m, gemms[i].n, gemms[i].k);
    return ms;
}

KernelTimes TransformerKernels::embedding() const {
    KernelTimes t;
    const double h = model_.hidden;
    // Gather rows (and add learned positions for GPT); the backward scatters gradients into
    // the table, which is a weight gradient.
    const bool learnedPositions = !model_.gated_mlp;
    t.forward_ms = roofline_.memoryMs((learnedPositions ? 3 : 2) * kBf16 * sliced_ * h);
    t.weight_grad_ms = roofline_.memoryMs(2 * kFp32 * sliced_ * h);
    return t;
}

KernelTimes TransformerKernels::head() const {
    KernelTimes t;
    const double h = model_.hidden;
    const double vocab = double(model_.vocab) / t_;  // vocabulary-parallel
    elementwise(t, 2 * kBf16 * sliced_ * h);         // final norm
    weightGemm(t, GemmShape{tokens_, vocab, h});
    // Vocabulary-parallel cross-entropy in fp32: the forward reads the logits for the maximum,
    // the sum of exponentials and the target, the backward reads them once and writes the
    // gradient.
    t.forward_ms += roofline_.memoryMs(3 * kFp32 * tokens_ * vocab);
    t.input_grad_ms += roofline_.memoryMs(2 * kFp32 * tokens_ * vocab);
    return t;
}

}  // namespace mario
