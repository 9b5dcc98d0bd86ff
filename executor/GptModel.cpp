#include "GptModel.h"

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace mario::exec {
namespace {

const torch::Tensor& param(const ParamMap& params, const std::string& name) {
    auto it = params.find(name);
    if (it == params.end()) throw std::logic_error("stage has no parameter " + name);
    return it->second;
}

std::string blockPrefix(int index) { return "block" + std::to_string(index) + "."; }

}  // namespace

GptModel::GptModel(const ModelSpec& spec, std::uint64_t seed) : spec_(spec) {
    torch::manual_seed(seed);
    const auto opts = torch::TensorOptions().dtype(torch::kFloat64);
    const int h = spec.hidden;
    // Scaled normal weights: large enough that every gradient is well away from zero.
    auto normal = [&](std::vector<int64_t> shape, double std) { return torch::randn(shape, opts) * std; };
    weights_["embed.tok"] = normal({spec.vocab, h}, 0.5);
    weights_["embed.pos"] = normal({spec.seq, h}, 0.5);
    for (int i = 0; i < spec.layers; ++i) {
        const std::string p = blockPrefix(i);
        weights_[p + "ln1.w"] = 1 + normal({h}, 0.1);
        weights_[p + "ln1.b"] = normal({h}, 0.1);
        weights_[p + "attn.w"] = normal({3 * h, h}, 1.0 / std::sqrt(h));
        weights_[p + "attn.b"] = normal({3 * h}, 0.1);
        weights_[p + "proj.w"] = normal({h, h}, 1.0 / std::sqrt(h));
        weights_[p + "proj.b"] = normal({h}, 0.1);
        weights_[p + "ln2.w"] = 1 + normal({h}, 0.1);
        weights_[p + "ln2.b"] = normal({h}, 0.1);
        weights_[p + "fc1.w"] = normal({4 * h, h}, 1.0 / std::sqrt(h));
        weights_[p + "fc1.b"] = normal({4 * h}, 0.1);
        weights_[p + "fc2.w"] = normal({h, 4 * h}, 1.0 / std::sqrt(4 * h));
        weights_[p + "fc2.b"] = normal({h}, 0.1);
    }
    weights_["final.ln.w"] = 1 + normal({h}, 0.1);
    weights_["final.ln.b"] = normal({h}, 0.1);
    weights_["head.w"] = normal({spec.vocab, h}, 1.0 / std::sqrt(h));
    weights_["head.b"] = normal({spec.vocab}, 0.1);
}

ParamMap GptModel::cloneSlice(const LayerSlice& slice) const {
    ParamMap out;
    for (const auto& [name, tensor] : weights_) {
        bool wanted = false;
        if (name.rfind("embed.", 0) == 0) wanted = slice.embedding;
        else if (name.rfind("final.", 0) == 0 || name.rfind("head.", 0) == 0) wanted = slice.head;
        else {
            const int index = std::stoi(name.substr(5, name.find('.') - 5));
            wanted = index >= slice.begin && index < slice.end;
        }
        if (wanted) out[name] = tensor.detach().clone().requires_grad_(true);
    }
    return out;
}

torch::Tensor GptModel::block(int index, const ParamMap& params, torch::Tensor x) const {
    const std::string p = blockPrefix(index);
    const int64_t b = x.size(0), t = x.size(1), h = spec_.hidden, nh = spec_.heads, hd = h / nh;
    auto a = torch::layer_norm(x, {h}, param(params, p + "ln1.w"), param(params, p + "ln1.b"));
    auto qkv = torch::linear(a, param(params, p + "attn.w"), param(params, p + "attn.b"));
    auto parts = qkv.split(h, -1);
    auto heads = [&](const torch::Tensor& y) { return y.reshape({b, t, nh, hd}).transpose(1, 2); };
    auto q = heads(parts[0]), k = heads(parts[1]), v = heads(parts[2]);
    auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(hd));
    auto causal = torch::ones({t, t}, torch::kBool).triu(1);
    scores = scores.masked_fill(causal, -std::numeric_limits<double>::infinity());
    auto y = torch::matmul(torch::softmax(scores, -1), v).transpose(1, 2).reshape({b, t, h});
    x = x + torch::linear(y, param(params, p + "proj.w"), param(params, p + "proj.b"));
    auto m = torch::layer_norm(x, {h}, param(params, p + "ln2.w"), param(params, p + "ln2.b"));
    m = torch::gelu(torch::linear(m, param(params, p + "fc1.w"), param(params, p + "fc1.b")));
    return x + torch::linear(m, param(params, p + "fc2.w"), param(params, p + "fc2.b"));
}

torch::Tensor GptModel::forward(const LayerSlice& slice, const ParamMap& params, const torch::Tensor& input,
                                const torch::Tensor& targets) const {
    torch::Tensor x = input;
    if (slice.embedding) {
        const int64_t t = input.size(1);
        x = torch::embedding(param(params, "embed.tok"), input) + param(params, "embed.pos").slice(0, 0, t);
    }
    for (int i = slice.begin; i < slice.end; ++i) x = block(i, params, x);
    if (!slice.head) return x;
    x = torch::layer_norm(x, {spec_.hidden}, param(params, "final.ln.w"), param(params, "final.ln.b"));
    auto logits = torch::linear(x, param(params, "head.w"), param(params, "head.b"));
    return torch::nn::functional::cross_entropy(logits.reshape({-1, spec_.vocab}), targets.reshape({-1}));
}

torch::Tensor GptModel::syntheticTokens(std::uint64_t seed, int microbatch, int microBatchSize) const {
    std::mt19937_64 rng(seed * 1000003ULL + static_cast<std::uint64_t>(microbatch));
    std::uniform_int_distribution<int64_t> token(0, spec_.vocab - 1);
    const int64_t count = static_cast<int64_t>(microBatchSize) * (spec_.seq + 1);
    std::vector<int64_t> ids(static_cast<std::size_t>(count));
    for (auto& id : ids) id = token(rng);
    return torch::tensor(ids, torch::kInt64).reshape({microBatchSize, spec_.seq + 1});
}

}  // namespace mario::exec
