#include "core/cost/TransformerKernels.h"

#include "core/cost/ElementwiseBytes.h"

namespace mario {

using namespace kernel_bytes;

namespace {

// FlashAttention-2's backward executes 2.5× its forward FLOPs (five products to two: the
// scores are recomputed); Dao 2023 counts its throughput the same way.
constexpr double kFlashBackwardFlops = 2.5;

}  // namespace

TransformerKernels::TransformerKernels(const ModelConfig& model, const TrainingConfig& training,
                                       const KernelRoofline& roofline, int tp, int microBatchSize)
    : model_(model), training_(training), roofline_(roofline), t_(tp),
      tokens_(double(microBatchSize) * model.sequence_length), sliced_(training.slicedTokens(tokens_, tp)),
      dropout_(training.dropoutFor(model)), gradBytes_(training.grad_reduce_in_bf16 ? kBf16 : kFp32) {}

void TransformerKernels::weightGemm(KernelTimes& t, const GemmShape& g) const {
    t.forward_ms += roofline_.gemmMs(g.m, g.n, g.k);
    t.input_grad_ms += roofline_.gemmMs(g.m, g.k, g.n, 1, kBf16, GemmRole::InputGradient);  // dX = dY · Wᵀ
    t.weight_grad_ms +=
        roofline_.gemmMs(g.k, g.n, g.m, 1, 2 * gradBytes_, GemmRole::WeightGradient);  // main_grad += Xᵀ · dY
}

std::array<GemmShape, 4> TransformerKernels::weightGemms() const {
    const double h = model_.hidden;
    const double kv = h * model_.kvHeads() / model_.heads;
    const double f = model_.ffnHidden();
    const double up = model_.gated_mlp ? 2 * f : f;  // SwiGLU's gate and up projections in one
    return {GemmShape{tokens_, (h + 2 * kv) / t_, h}, GemmShape{tokens_, h, h / t_}, GemmShape{tokens_, up / t_, h},
            GemmShape{tokens_, h, f / t_}};
}

void TransformerKernels::elementwise(KernelTimes& t, double forwardBytes, double backwardBytes) const {
    t.forward_ms += roofline_.elementwiseMs(forwardBytes);
    t.input_grad_ms += roofline_.elementwiseMs(backwardBytes);
}

KernelTimes TransformerKernels::unfusedLayoutAndBias() const {
    KernelTimes t;
    if (training_.flashAttention()) return t;
    const double h = model_.hidden;
    const double qkv = tokens_ * (h + 2 * h * model_.kvHeads() / model_.heads) / t_;  // elements of Q, K, V
    const double context = tokens_ * h / t_;
    // The attention output from [b·a, s, d] back to [s, b, h]: a copy, forward and backward;
    // the gradients of Q, K and V concatenated into the fused projection's (read, write).
    t.forward_ms += roofline_.memoryMs(kCopy * context);
    t.input_grad_ms += roofline_.memoryMs(kCopy * context) + roofline_.memoryMs(kCopy * qkv);
    if (model_.gated_mlp) return t;  // LLaMA-style blocks have no biases
    // GPT's biases: Megatron's local layers add the QKV projection's after its GEMM (read,
    // write; PyTorch's linear, which the eager path calls, adds it in the GEMM); the four bias
    // gradients are sums of the output gradients over the tokens (one read each) on both paths.
    const double up = model_.ffnHidden() / t_ * tokens_;
    if (training_.attention == TrainingConfig::Attention::Materialized)
        t.forward_ms += roofline_.elementwiseMs(2 * kBf16 * qkv);  // an add, as the residual's
    t.input_grad_ms +=
        roofline_.memoryMs(kBf16 * qkv) + roofline_.memoryMs(kBf16 * up) + 2 * roofline_.memoryMs(kBf16 * sliced_ * h);
    return t;
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
    const GemmRole gradient = GemmRole::InputGradient;  // transposed operands, as a data gradient's
    t.input_grad_ms += 2 * roofline_.gemmMs(s, s, headDim, batchHeads, kBf16, gradient) +
                       2 * roofline_.gemmMs(s, headDim, s, batchHeads, kBf16, gradient);
    t.forward_ms += roofline_.elementwiseMs(kSoftmaxForward * scores);
    t.input_grad_ms += roofline_.elementwiseMs(kSoftmaxBackward * scores);
    if (training_.attention == TrainingConfig::Attention::Eager) {
        // Unfused: the scale and the causal mask each read and write the scores once more (the
        // mask reads its byte too), forward and backward.
        const double extra = (kScale + kCausalMask) * scores;
        t.forward_ms += roofline_.elementwiseMs(extra);
        t.input_grad_ms += roofline_.elementwiseMs(extra);
    }
    if (dropout_) {
        t.forward_ms += roofline_.dropoutMs(kDropout * scores, scores);
        t.input_grad_ms += roofline_.elementwiseMs(kDropout * scores);
    }
    return t;
}

KernelTimes TransformerKernels::block() const {
    KernelTimes t;
    const double h = model_.hidden;
    const double kv = h * model_.kvHeads() / model_.heads;
    const double f = model_.ffnHidden() * tokens_ / t_;  // FFN activations per GPU
    const double normed = sliced_ * h;
    const double residualForward = (kResidualForward + (dropout_ ? 1 : 0)) * normed;
    auto residual = [&] {  // (bias-dropout-)residual add: the mask's backward is a kernel of its own
        if (!dropout_) return elementwise(t, residualForward, kGradientSum * normed);
        t.forward_ms += roofline_.dropoutMs(residualForward, normed);  // draws a number an element
        t.input_grad_ms +=
            roofline_.elementwiseMs(kGradientSum * normed) + roofline_.elementwiseMs(kMaskBackward * normed);
    };
    const auto [qkv, projection, up, down] = weightGemms();

    elementwise(t, kNormForward * normed, kNormBackward * normed);  // input norm
    weightGemm(t, qkv);                                             // fused Q, K, V projection
    if (model_.gated_mlp) elementwise(t, kRotary * tokens_ * (h + kv) / t_, kRotary * tokens_ * (h + kv) / t_);
    KernelTimes core = attentionCore();
    t += core;
    t += unfusedLayoutAndBias();
    // Selective recomputation repeats the attention core's forward inside the backward.
    if (training_.recompute == TrainingConfig::Recompute::Selective) t.input_grad_ms += core.forward_ms;
    weightGemm(t, projection);  // attention output projection
    residual();
    elementwise(t, kNormForward * normed, kNormBackward * normed);  // post-attention norm
    weightGemm(t, up);
    if (model_.gated_mlp) elementwise(t, kSwigluForward * f, kSwigluBackward * f);
    else elementwise(t, kGeluForward * f, kGeluBackward * f);
    weightGemm(t, down);
    residual();
    // Full recomputation repeats the whole block's forward before its backward.
    if (training_.recompute == TrainingConfig::Recompute::Full) t.input_grad_ms += t.forward_ms;
    return t;
}

KernelTimes TransformerKernels::embedding() const {
    KernelTimes t;
    const double h = model_.hidden;
    // Gather rows (and add learned positions for GPT); the backward scatters gradients into
    // the table, which is a weight gradient.
    const bool learnedPositions = !model_.gated_mlp;
    t.forward_ms = roofline_.memoryMs((learnedPositions ? 3 : 2) * kBf16 * sliced_ * h);
    t.weight_grad_ms = roofline_.memoryMs(2 * kFp32 * sliced_ * h);
    // That gradient is dense: PyTorch's embedding backward (embedding_dense_backward) first fills
    // a zero bf16 gradient of the whole vocabulary-parallel table, whatever the tokens touch. Then
    // Megatron's gradient hook adds it into the table's main gradient (param.main_grad.add_(
    // param.grad): no accumulation fusion here, unlike the linear layers'), reading both and
    // writing the main gradient in the gradient buffer's dtype. torchtitan's FSDP reduces .grad as
    // it is, with no main gradient to add into. Each is one launch over V/t·h elements: 1.1 ms of
    // an H100's micro-batch of Megatron-Core's 1.7B GPT (V 131072, h 2048), 1% of its step.
    const double table = double(model_.vocab) / t_ * h;
    t.weight_grad_ms += roofline_.memoryMs(kBf16 * table);
    if (training_.framework != TrainingConfig::Framework::Torchtitan)
        t.weight_grad_ms += roofline_.memoryMs((kBf16 + 2 * gradBytes_) * table);
    // Megatron's embedding turns [b, s, h] into the blocks' [s, b, h] with
    // `transpose(0, 1).contiguous()`, a copy unless b = 1 (the transpose of [1, s, h] is already
    // contiguous); the backward's gradient is copied back for the scatter, which wants it
    // contiguous. Then GPT's embedding dropout (Megatron's hidden dropout), on the slice of the
    // tokens sequence parallelism leaves each GPU.
    if (tokens_ > model_.sequence_length) {
        t.forward_ms += roofline_.memoryMs(kCopy * tokens_ * h);
        t.weight_grad_ms += roofline_.memoryMs(kCopy * tokens_ * h);
    }
    if (dropout_) {
        t.forward_ms += roofline_.dropoutMs(kDropout * sliced_ * h, sliced_ * h);
        t.input_grad_ms += roofline_.elementwiseMs(kMaskBackward * sliced_ * h);
    }
    return t;
}

KernelTimes TransformerKernels::head() const {
    KernelTimes t;
    const double h = model_.hidden;
    const double vocab = double(model_.vocab) / t_;                           // vocabulary-parallel
    elementwise(t, kNormForward * sliced_ * h, kNormBackward * sliced_ * h);  // final norm
    weightGemm(t, GemmShape{tokens_, vocab, h});
    // Megatron's vocabulary-parallel cross-entropy: a cast of the logits to fp32 and five passes
    // over them forward, two backward, a kernel each (ElementwiseBytes.h).
    const double logits = tokens_ * vocab;
    for (double bytes : kCrossEntropyForward) t.forward_ms += roofline_.elementwiseMs(bytes * logits);
    for (double bytes : kCrossEntropyBackward) t.input_grad_ms += roofline_.elementwiseMs(bytes * logits);
    return t;
}

}  // namespace mario
