#include "executor/GptModel.h"

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace mario::exec {
namespace {

constexpr double kRmsEps = 1e-6;          // LLaMA's norm_eps
constexpr double kRotaryTheta = 10000.0;  // LLaMA's rope_theta

const torch::Tensor& param(const ParamMap& params, const std::string& name) {
    auto it = params.find(name);
    if (it == params.end()) throw std::logic_error("stage has no parameter " + name);
    return it->second;
}

std::string blockPrefix(int index) { return "block" + std::to_string(index) + "."; }

// Scaled normal weights: large enough that every gradient is well away from zero. Drawn on
// `drawOn` and kept on the CPU.
struct Init {
    torch::TensorOptions opts;
    explicit Init(torch::Device drawOn) : opts(torch::TensorOptions().dtype(torch::kFloat64).device(drawOn)) {}
    torch::Tensor operator()(std::vector<int64_t> shape, double std) const {
        return (torch::randn(shape, opts) * std).to(torch::kCPU);
    }
    torch::Tensor gain(int64_t n) const { return 1 + (*this)({n}, 0.1); }
    torch::Tensor matrix(int64_t out, int64_t in) const { return (*this)({out, in}, 1.0 / std::sqrt(double(in))); }
};

void initGpt(const ModelSpec& spec, ParamMap& w, torch::Device drawOn) {
    const Init normal(drawOn);
    const int h = spec.hidden;
    w["embed.tok"] = normal({spec.vocab, h}, 0.5);
    w["embed.pos"] = normal({spec.seq, h}, 0.5);
    for (int i = 0; i < spec.layers; ++i) {
        const std::string p = blockPrefix(i);
        w[p + "ln1.w"] = normal.gain(h);
        w[p + "ln1.b"] = normal({h}, 0.1);
        w[p + "attn.w"] = normal.matrix(3 * h, h);
        w[p + "attn.b"] = normal({3 * h}, 0.1);
        w[p + "proj.w"] = normal.matrix(h, h);
        w[p + "proj.b"] = normal({h}, 0.1);
        w[p + "ln2.w"] = normal.gain(h);
        w[p + "ln2.b"] = normal({h}, 0.1);
        w[p + "fc1.w"] = normal.matrix(4 * h, h);
        w[p + "fc1.b"] = normal({4 * h}, 0.1);
        w[p + "fc2.w"] = normal.matrix(h, 4 * h);
        w[p + "fc2.b"] = normal({h}, 0.1);
    }
    w["final.ln.w"] = normal.gain(h);
    w["final.ln.b"] = normal({h}, 0.1);
    w["head.w"] = normal.matrix(spec.vocab, h);
    w["head.b"] = normal({spec.vocab}, 0.1);
}

void initLlama(const ModelSpec& spec, ParamMap& w, torch::Device drawOn) {
    const Init normal(drawOn);
    const int h = spec.hidden, f = llamaFfnSize(h);
    w["embed.tok"] = normal({spec.vocab, h}, 0.5);
    for (int i = 0; i < spec.layers; ++i) {
        const std::string p = blockPrefix(i);
        w[p + "attn_norm.w"] = normal.gain(h);
        w[p + "attn.wq"] = normal.matrix(h, h);
        w[p + "attn.wk"] = normal.matrix(h, h);
        w[p + "attn.wv"] = normal.matrix(h, h);
        w[p + "attn.wo"] = normal.matrix(h, h);
        w[p + "mlp_norm.w"] = normal.gain(h);
        w[p + "mlp.w1"] = normal.matrix(f, h);
        w[p + "mlp.w2"] = normal.matrix(h, f);
        w[p + "mlp.w3"] = normal.matrix(f, h);
    }
    w["final.norm.w"] = normal.gain(h);
    w["head.w"] = normal.matrix(spec.vocab, h);
}

// [B, heads, T, hd] -> [B, T, heads·hd], each position attending to itself and earlier ones.
torch::Tensor causalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
    const int64_t b = q.size(0), nh = q.size(1), t = q.size(2), hd = q.size(3);
    auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(hd));
    auto causal = torch::ones({t, t}, q.options().dtype(torch::kBool)).triu(1);  // on q's device
    scores = scores.masked_fill(causal, -std::numeric_limits<double>::infinity());
    return torch::matmul(torch::softmax(scores, -1), v).transpose(1, 2).reshape({b, t, nh * hd});
}

torch::Tensor gptBlock(const ModelSpec& spec, int index, const ParamMap& params, torch::Tensor x) {
    const std::string p = blockPrefix(index);
    const int64_t h = spec.hidden;
    auto a = torch::layer_norm(x, {h}, param(params, p + "ln1.w"), param(params, p + "ln1.b"));
    auto parts = torch::linear(a, param(params, p + "attn.w"), param(params, p + "attn.b")).split(h, -1);
    auto y = causalAttention(splitHeads(parts[0], spec.heads), splitHeads(parts[1], spec.heads),
                             splitHeads(parts[2], spec.heads));
    x = x + torch::linear(y, param(params, p + "proj.w"), param(params, p + "proj.b"));
    auto m = torch::layer_norm(x, {h}, param(params, p + "ln2.w"), param(params, p + "ln2.b"));
    m = torch::gelu(torch::linear(m, param(params, p + "fc1.w"), param(params, p + "fc1.b")));
    return x + torch::linear(m, param(params, p + "fc2.w"), param(params, p + "fc2.b"));
}

// Positions come from the sequence axis of the block's input, so a stage that receives hidden
// states rotates exactly as the reference does: no state crosses stage boundaries.
torch::Tensor llamaBlock(const ModelSpec& spec, int index, const ParamMap& params, torch::Tensor x) {
    const std::string p = blockPrefix(index);
    auto a = rmsNorm(x, param(params, p + "attn_norm.w"), kRmsEps);
    auto project = [&](const char* name) { return splitHeads(torch::linear(a, param(params, p + name)), spec.heads); };
    auto q = applyRotary(project("attn.wq"), kRotaryTheta);
    auto k = applyRotary(project("attn.wk"), kRotaryTheta);
    x = x + torch::linear(causalAttention(q, k, project("attn.wv")), param(params, p + "attn.wo"));
    auto m = rmsNorm(x, param(params, p + "mlp_norm.w"), kRmsEps);
    auto gated =
        torch::silu(torch::linear(m, param(params, p + "mlp.w1"))) * torch::linear(m, param(params, p + "mlp.w3"));
    return x + torch::linear(gated, param(params, p + "mlp.w2"));
}

}  // namespace

torch::Tensor splitHeads(const torch::Tensor& y, int64_t heads) {
    return y.reshape({y.size(0), y.size(1), heads, y.size(2) / heads}).transpose(1, 2);
}

torch::Tensor rmsNorm(const torch::Tensor& x, const torch::Tensor& w, double eps) {
    // LLaMA normalises in float32 even for 16-bit activations, whose mean of squares loses too
    // much; double covers every dtype the executor runs in.
    const auto xd = x.to(torch::kFloat64);
    return (xd * torch::rsqrt(xd.pow(2).mean(-1, /*keepdim=*/true) + eps)).to(x.scalar_type()) * w;
}

torch::Tensor applyRotary(const torch::Tensor& x, double theta) {
    const int64_t t = x.size(-2), hd = x.size(-1);
    if (hd % 2 != 0) throw std::invalid_argument("rotary embedding needs an even head size, got " + std::to_string(hd));
    const auto opts = torch::TensorOptions().dtype(torch::kFloat64).device(x.device());
    const auto inverseFrequency = torch::pow(theta, -torch::arange(0, hd, 2, opts) / static_cast<double>(hd));
    const auto angles = torch::outer(torch::arange(t, opts), inverseFrequency);  // [T, hd/2]
    const auto both = torch::cat({angles, angles}, -1);                          // [T, hd]
    const auto halves = x.chunk(2, -1);
    const auto rotated = torch::cat({-halves[1], halves[0]}, -1);
    return x * both.cos().to(x.scalar_type()) + rotated * both.sin().to(x.scalar_type());
}

GptModel::GptModel(const ModelSpec& spec, std::uint64_t seed, torch::Device drawOn)
    : spec_(spec), llama_(spec.flavor == "llama") {
    if (!llama_ && spec.flavor != "gpt") throw std::invalid_argument("unknown model flavor \"" + spec.flavor + "\"");
    if (llama_ && (spec.hidden / spec.heads) % 2 != 0)
        throw std::invalid_argument("flavor=llama needs an even head size (hidden/heads)");
    torch::manual_seed(seed);
    if (llama_) initLlama(spec, weights_, drawOn);
    else initGpt(spec, weights_, drawOn);
}

ParamMap GptModel::cloneSlice(const LayerSlice& slice) const {
    return sliceOn(slice, torch::kCPU, torch::kFloat64);
}

ParamMap GptModel::sliceOn(const LayerSlice& slice, const torch::Device& device, torch::ScalarType dtype) const {
    ParamMap out;
    for (const auto& [name, tensor] : weights_) {
        bool wanted = false;
        if (name.rfind("embed.", 0) == 0) wanted = slice.embedding;
        else if (name.rfind("final.", 0) == 0 || name.rfind("head.", 0) == 0) wanted = slice.head;
        else {
            const int index = std::stoi(name.substr(5, name.find('.') - 5));
            wanted = index >= slice.begin && index < slice.end;
        }
        // copy = true: a fresh tensor even where device and dtype are the master's own.
        if (wanted)
            out[name] = tensor.detach().to(device, dtype, /*non_blocking=*/false, /*copy=*/true).requires_grad_(true);
    }
    return out;
}

torch::Tensor GptModel::forward(const LayerSlice& slice, const ParamMap& params, const torch::Tensor& input,
                                const torch::Tensor& targets) const {
    torch::Tensor x = input;
    if (slice.embedding) {
        x = torch::embedding(param(params, "embed.tok"), input);
        if (!llama_) x = x + param(params, "embed.pos").slice(0, 0, input.size(1));
    }
    for (int i = slice.begin; i < slice.end; ++i)
        x = llama_ ? llamaBlock(spec_, i, params, x) : gptBlock(spec_, i, params, x);
    if (!slice.head) return x;
    torch::Tensor logits;
    if (llama_) {
        logits = torch::linear(rmsNorm(x, param(params, "final.norm.w"), kRmsEps), param(params, "head.w"));
    } else {
        x = torch::layer_norm(x, {spec_.hidden}, param(params, "final.ln.w"), param(params, "final.ln.b"));
        logits = torch::linear(x, param(params, "head.w"), param(params, "head.b"));
    }
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
