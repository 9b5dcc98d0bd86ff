#pragma once
// A small decoder written functionally over named parameter tensors (double precision, so
// pipeline and reference gradients agree to ~1e-15), in two flavours (ModelSpec::flavor): GPT-2
// style and LLaMA style. Functional rather than torch::nn modules because a stage holds an
// arbitrary slice of it — and Chimera holds two replicas of the same slice — which is a copy
// of a subset of the named tensors.
#include <cstdint>
#include <map>
#include <string>

#include <torch/torch.h>

#include "executor/ModelSpec.h"

namespace mario::exec {

using ParamMap = std::map<std::string, torch::Tensor>;

// LLaMA's RMSNorm over the last dimension: x * rsqrt(mean(x², -1) + eps) * w, normalised in
// double whatever x's dtype.
torch::Tensor rmsNorm(const torch::Tensor& x, const torch::Tensor& w, double eps = 1e-6);

// Rotary position embedding of x [B, heads, T, head_dim] for positions 0..T-1, GPT-NeoX/LLaMA
// "rotate half" convention: dimension i pairs with i + head_dim/2 and turns by the angle
// pos · theta^(-2i/head_dim). head_dim must be even (std::invalid_argument otherwise).
torch::Tensor applyRotary(const torch::Tensor& x, double theta = 10000.0);

// The heads of y [B, T, heads·hd] as [B, heads, T, hd]: a view, as the blocks' attention takes
// them (`mario-executor calibrate` times its products on the same layouts).
torch::Tensor splitHeads(const torch::Tensor& y, int64_t heads);

class GptModel {
public:
    // Initialises every weight from `seed` (torch::manual_seed); call before worker threads
    // start, since the global generator is shared. std::invalid_argument for a flavour other
    // than gpt/llama or an odd llama head size (parseModelSpec rejects both). The random draws
    // are made on `drawOn` and the weights kept on the CPU: a CUDA run draws on its GPU, since
    // the CPU's float64 draws are serial (the fidelity table's 1.7-billion-parameter GPT took
    // about a minute per run on the CPU); its values then differ from a CPU run's of that seed.
    GptModel(const ModelSpec& spec, std::uint64_t seed, torch::Device drawOn = torch::kCPU);

    const ModelSpec& spec() const { return spec_; }

    // Fresh leaf copies (requires_grad) of the weights of a slice: every replica starts from the
    // same initial weights.
    ParamMap cloneSlice(const LayerSlice& slice) const;
    // The same on `device` in `dtype`, converted straight from the master copy (no float64 clone
    // on the way: a GPU run of a 1.6-billion-parameter model spent seconds per stage on it).
    ParamMap sliceOn(const LayerSlice& slice, const torch::Device& device, torch::ScalarType dtype) const;

    // Input: token ids [B, seq] for a slice with the embedding, else hidden states [B, seq, H].
    // Returns hidden states, or the mean cross-entropy loss (scalar) when the slice has the head.
    torch::Tensor forward(const LayerSlice& slice, const ParamMap& params, const torch::Tensor& input,
                          const torch::Tensor& targets) const;

    // Deterministic synthetic tokens [B, seq + 1] for one micro-batch (inputs are [:, :-1],
    // targets [:, 1:]); independent of the global generator, so threads cannot perturb it.
    torch::Tensor syntheticTokens(std::uint64_t seed, int microbatch, int microBatchSize) const;

private:
    ModelSpec spec_;
    bool llama_ = false;
    ParamMap weights_;
};

}  // namespace mario::exec
