#include "core/cost/ActivationMemory.h"

namespace mario {

namespace {

// An unfused RMSNorm (the eager path: mario-executor's rmsNorm, like LLaMA's reference code,
// normalises in a wider type) keeps, per element, its upcast input for the backward (float64
// in the executor: 8 bytes; float32 in LLaMA's and Hugging Face's code: 4) and the normalised
// bf16 product before the weight (2), beside the input the fused kernel would keep.
constexpr double kUnfusedRmsNormBytes = 8 + 2;

}  // namespace

ActivationMemory::ActivationMemory(const ModelConfig& model, const TrainingConfig& training, int tp, int microBatchSize)
    : model_(model), training_(training), t_(tp), tokens_(double(microBatchSize) * model.sequence_length),
      sliced_(training.slicedTokens(tokens_, tp)) {}

double ActivationMemory::block() const {
    const double h = model_.hidden;
    const double kv = h * model_.kvHeads() / model_.heads;
    const double f = model_.ffnHidden();
    const double s = model_.sequence_length;
    const double headsPerGpu = model_.heads / t_;
    const bool dropout = training_.dropoutFor(model_);
    // Sliced by sequence parallelism: the two norms' inputs (2 × 2sbh), the inputs of the QKV and
    // first MLP products (2 × 2sbh) and, with dropout, the two byte masks after them (2 × sbh).
    const double sliced = sliced_ * h * (8 + (dropout ? 2 : 0));
    // Split by tensor parallelism: Q, K and V, the attention output (the projection's input),
    // and the MLP's activations (GeLU: its input and output; SwiGLU: gate, up and their product).
    const double attention = 2 * tokens_ * (h + 2 * kv) / t_ + 2 * tokens_ * h / t_;
    const double mlp = (model_.gated_mlp ? 6 : 4) * tokens_ * f / t_;
    // The attention core's own: FlashAttention's fp32 log-sum-exp per row; the materialised path
    // keeps the softmax output (2 bytes per score) and, with dropout, its mask and result (1 + 2).
    const double batchHeads = tokens_ / s * headsPerGpu;
    double core = 0;
    if (training_.flashAttention()) core = 4 * batchHeads * s;
    else if (training_.recompute != TrainingConfig::Recompute::Selective) core = (dropout ? 5 : 2) * batchHeads * s * s;
    // Two norms a block; LayerNorm runs as one kernel even in eager PyTorch (torch::layer_norm).
    const bool unfusedNorms = training_.attention == TrainingConfig::Attention::Eager && model_.gated_mlp;
    const double norms = unfusedNorms ? 2 * kUnfusedRmsNormBytes * sliced_ * h : 0;
    return sliced + attention + mlp + core + norms;
}

double ActivationMemory::keptPerBlock() const {
    // Full recomputation keeps each block's bf16 input (2sbh, sliced by sequence parallelism).
    if (training_.recompute == TrainingConfig::Recompute::Full) return stageInput();
    return block();
}

double ActivationMemory::stage(int blocks) const { return blocks > 0 ? blocks * keptPerBlock() : 0; }

double ActivationMemory::backwardWorkspace() const {
    // While one block is recomputed and run backward, its whole activations are live again.
    return training_.recompute == TrainingConfig::Recompute::Full ? block() - stageInput() : 0;
}

double ActivationMemory::head() const { return 4 * tokens_ * model_.vocab / t_; }

double ActivationMemory::headTransient() const { return 2 * tokens_ * model_.vocab / t_; }

double ActivationMemory::stageInput() const { return 2 * sliced_ * model_.hidden; }

}  // namespace mario
