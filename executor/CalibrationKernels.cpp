#include "executor/CalibrationKernels.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include <torch/torch.h>
#include <torch/version.h>

#include "core/cost/ElementwiseBytes.h"
#include "core/util/Median.h"
#include "executor/GptModel.h"
#include "executor/InstructionClock.h"

namespace mario::exec {

namespace {

// Tiny kernels are timed as a chain: one kernel alone is below the steady clock's resolution on
// some machines and dominated by the mark itself on a GPU.
constexpr int kTinyChain = 64;

// Runs `body` once to warm up (allocator, BLAS buffers, cuBLAS heuristics), then `repeats` times.
// body(clock, marks, kept) takes three marks: before the forward, between forward and backward,
// after the backward (the same mark twice where there is no backward). Read once all are queued:
// on a GPU that is the only wait. A forward's output goes into `kept` and lives until the
// measurement ends, as a block's forward keeps its activations until the backward: each repeat's
// forward writes memory no earlier repeat wrote, with its first-touch cost, while gradients are
// freed as autograd frees them, and their memory is reused. A product of 128 x 512 x 128 in
// float64 on the 2-core EPYC that runs CI took 0.41 ms writing into the freed output of the
// previous repeat and 0.59 to 0.63 ms writing fresh memory; in a block's forward 0.44 to 0.50 ms.
template <class Body>
PhaseTimes timePhases(const c10::Device& device, int repeats, const Body& body) {
    InstructionClock clock(device, std::chrono::steady_clock::now());
    std::vector<std::array<InstructionClock::Mark, 3>> marks;
    std::vector<torch::Tensor> kept;
    for (int r = 0; r <= repeats; ++r) {
        std::array<InstructionClock::Mark, 3> m{};
        body(clock, m, kept);
        if (r > 0) marks.push_back(m);
    }
    std::vector<double> forward, backward, total;
    for (const auto& m : marks) {
        const double a = clock.microseconds(m[0]), b = clock.microseconds(m[1]), c = clock.microseconds(m[2]);
        forward.push_back((b - a) / 1000);
        backward.push_back((c - b) / 1000);
        total.push_back((c - a) / 1000);
    }
    PhaseTimes t;
    t.forward_ms = median(forward);
    t.backward_ms = median(backward);
    const double middle = median(total);
    const auto [low, high] = std::minmax_element(total.begin(), total.end());
    t.spread = middle > 0 ? (*high - *low) / middle : 0;
    return t;
}

}  // namespace

GemmSample CalibrationKernels::linearForward(double m, double n, double k, bool bias) const {
    const auto opts = torch::TensorOptions().device(device_).dtype(dtype_);
    const auto M = static_cast<int64_t>(m), N = static_cast<int64_t>(n), K = static_cast<int64_t>(k);
    const torch::Tensor x = torch::randn({M, K}, opts).requires_grad_(true);
    const torch::Tensor w = torch::randn({N, K}, opts).requires_grad_(true);
    const torch::Tensor b = bias ? torch::randn({N}, opts).requires_grad_(true) : torch::Tensor();
    const PhaseTimes t = timePhases(device_, repeats_, [&](InstructionClock& clock, auto& marks, auto& kept) {
        marks[0] = clock.mark();
        kept.push_back(torch::linear(x, w, b));
        marks[1] = marks[2] = clock.mark();
    });
    return GemmSample{m, n, k, 1, t.forward_ms, t.spread};
}

GemmSample CalibrationKernels::gemm(double m, double n, double k) const {
    const auto opts = torch::TensorOptions().device(device_).dtype(dtype_);
    const auto M = static_cast<int64_t>(m), N = static_cast<int64_t>(n), K = static_cast<int64_t>(k);
    torch::NoGradGuard noGrad;
    const torch::Tensor a = torch::randn({M, K}, opts), b = torch::randn({K, N}, opts);
    const PhaseTimes t = timePhases(device_, repeats_, [&](InstructionClock& clock, auto& marks, auto& kept) {
        marks[0] = clock.mark();
        const torch::Tensor c = torch::mm(a, b);
        marks[1] = marks[2] = clock.mark();
        (void)kept;
    });
    return GemmSample{m, n, k, 1, t.forward_ms, t.spread};
}

std::vector<GemmSample> CalibrationKernels::attentionProducts(double microBatch, double seq, double hidden,
                                                              double heads) const {
    const auto opts = torch::TensorOptions().device(device_).dtype(dtype_);
    const auto B = static_cast<int64_t>(microBatch), S = static_cast<int64_t>(seq);
    const auto H = static_cast<int64_t>(hidden), A = static_cast<int64_t>(heads);
    const torch::Tensor qkv = torch::randn({B, S, 3 * H}, opts).requires_grad_(true);
    const torch::Tensor probabilities = torch::randn({B, A, S, S}, opts).requires_grad_(true);
    const PhaseTimes scores = timePhases(device_, repeats_, [&](InstructionClock& clock, auto& marks, auto& kept) {
        marks[0] = clock.mark();
        const auto parts = qkv.split(H, -1);
        kept.push_back(torch::matmul(splitHeads(parts[0], A), splitHeads(parts[1], A).transpose(-2, -1)));
        marks[1] = marks[2] = clock.mark();
    });
    const PhaseTimes merged = timePhases(device_, repeats_, [&](InstructionClock& clock, auto& marks, auto& kept) {
        const torch::Tensor v = splitHeads(qkv.split(H, -1)[2], A);
        marks[0] = clock.mark();
        kept.push_back(torch::matmul(probabilities, v));  // the merge back to [b, s, h] is a stream
        marks[1] = marks[2] = clock.mark();
    });
    const double batch = microBatch * heads, headDim = hidden / heads;
    return {GemmSample{seq, seq, headDim, batch, scores.forward_ms, scores.spread},
            GemmSample{seq, headDim, seq, batch, merged.forward_ms, merged.spread}};
}

PhaseTimes CalibrationKernels::tinyKernel() const {
    const auto opts = torch::TensorOptions().device(device_).dtype(dtype_);
    const torch::Tensor one = torch::ones({1}, opts);
    PhaseTimes t = timePhases(device_, repeats_, [&](InstructionClock& clock, auto& marks, auto& kept) {
        const torch::Tensor x = one.clone().requires_grad_(true);
        marks[0] = clock.mark();
        torch::Tensor y = x;
        for (int i = 0; i < kTinyChain; ++i) y = y + one;
        marks[1] = clock.mark();
        y.backward();
        marks[2] = clock.mark();
        (void)kept;
    });
    t.forward_ms /= kTinyChain;
    t.backward_ms /= kTinyChain;
    return t;
}

double CalibrationKernels::copyGbPerS(double bytes) const {
    const auto opts = torch::TensorOptions().device(device_).dtype(dtype_);
    const int64_t elements = std::max<int64_t>(1, static_cast<int64_t>(bytes / c10::elementSize(dtype_)));
    const torch::Tensor from = torch::randn({elements}, opts);
    torch::Tensor to = torch::empty_like(from);
    const PhaseTimes t = timePhases(device_, repeats_, [&](InstructionClock& clock, auto& marks, auto& kept) {
        marks[0] = clock.mark();
        to.copy_(from);
        (void)kept;
        marks[1] = marks[2] = clock.mark();
    });
    const double moved = 2.0 * double(elements) * double(c10::elementSize(dtype_));
    return moved / (t.forward_ms * 1e6);
}

std::vector<StreamSample> CalibrationKernels::blockStreams(double microBatch, double seq, double hidden,
                                                           double heads) const {
    const auto opts = torch::TensorOptions().device(device_).dtype(dtype_);
    const auto B = static_cast<int64_t>(microBatch), S = static_cast<int64_t>(seq);
    const auto H = static_cast<int64_t>(hidden), A = static_cast<int64_t>(heads);
    const double tokens = microBatch * seq, scores = microBatch * heads * seq * seq;
    using namespace kernel_bytes;  // the bytes core's TransformerKernels charges each kernel
    const double scale = std::sqrt(hidden / heads);
    const torch::Tensor weight = torch::ones({H}, opts), bias = torch::zeros({H}, opts);
    struct Kernel {
        const char* name;
        std::vector<int64_t> shape;
        double forwardBytes, backwardBytes;  // as the model charges them
        std::function<torch::Tensor(const torch::Tensor&)> forward;
        double count = 1;   // times a block runs it
        bool copy = false;  // a layout copy (the HBM rate), not an element-wise kernel
    };
    // As GptModel.cpp's gptBlock calls them, without dropout (the executor's blocks have none).
    const double normed = tokens * hidden, ffn = tokens * 4 * hidden;
    const std::vector<Kernel> kernels{
        {"layer_norm",
         {B, S, H},
         kNormForward * normed,
         kNormBackward * normed,
         [&](const torch::Tensor& x) { return torch::layer_norm(x, {H}, weight, bias); },
         kNormsPerBlock},
        // Both operands are x, so its backward is autograd's sum of the two branches' gradients,
        // as the block's residual input receives one from the add and one from the norm.
        {"residual_add",
         {B, S, H},
         kResidualForward * normed,
         kGradientSum * normed,
         [&](const torch::Tensor& x) { return x + x; },
         kResidualsPerBlock},
        {"gelu",
         {B, S, 4 * H},
         kGeluForward * ffn,
         kGeluBackward * ffn,
         [](const torch::Tensor& x) { return torch::gelu(x); }},
        {"attention_scale",
         {B, A, S, S},
         kScale * scores,
         kScale * scores,
         [&](const torch::Tensor& x) { return x / scale; }},
        // The block builds its mask in every forward (GptModel.cpp's causalAttention).
        {"causal_mask",
         {B, A, S, S},
         kCausalMask * scores,
         kCausalMask * scores,
         [&](const torch::Tensor& x) {
             const torch::Tensor causal = torch::ones({S, S}, x.options().dtype(torch::kBool)).triu(1);
             return x.masked_fill(causal, -std::numeric_limits<double>::infinity());
         }},
        {"softmax",
         {B, A, S, S},
         kSoftmaxForward * scores,
         kSoftmaxBackward * scores,
         [](const torch::Tensor& x) { return torch::softmax(x, -1); }},
        // The attention's output from [b, heads, s, h/heads] back to [b, s, h]: a copy each way.
        {"attention_merge",
         {B, A, S, H / A},
         kCopy * normed,
         kCopy * normed,
         [&](const torch::Tensor& x) {
             return x.transpose(1, 2).reshape({B, S, H});
         },
         1,
         true},
    };
    std::vector<StreamSample> samples;
    for (const Kernel& kernel : kernels) {
        const torch::Tensor input = torch::randn(kernel.shape, opts);
        const torch::Tensor grad = torch::randn_like(kernel.forward(input));  // the output's shape
        const PhaseTimes t = timePhases(device_, repeats_, [&](InstructionClock& clock, auto& marks, auto& kept) {
            const torch::Tensor x = input.detach().requires_grad_(true);
            marks[0] = clock.mark();
            const torch::Tensor y = kernel.forward(x);
            marks[1] = clock.mark();
            y.backward(grad);
            marks[2] = clock.mark();
            kept.push_back(y);
        });
        samples.push_back(StreamSample{kernel.name, kernel.forwardBytes, kernel.backwardBytes, t.forward_ms,
                                       t.backward_ms, t.spread, kernel.count, kernel.copy});
    }
    return samples;
}

PhaseTimes CalibrationKernels::attentionCore(double microBatch, double seq, double hidden, double heads,
                                             std::string& kernel) const {
    const auto opts = torch::TensorOptions().device(device_).dtype(dtype_);
    const auto B = static_cast<int64_t>(microBatch), S = static_cast<int64_t>(seq);
    const auto A = static_cast<int64_t>(heads), D = static_cast<int64_t>(hidden / heads);
    const torch::Tensor q0 = torch::randn({B, A, S, D}, opts), k0 = torch::randn({B, A, S, D}, opts);
    const torch::Tensor v0 = torch::randn({B, A, S, D}, opts), grad = torch::randn({B, A, S, D}, opts);
    const torch::Tensor causal = torch::ones({S, S}, opts.dtype(torch::kBool)).triu(1);
#if TORCH_VERSION_MAJOR >= 2
    kernel = "scaled_dot_product_attention (causal)";
    auto core = [](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor&) {
        return at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
    };
#else
    kernel = "the eager attention core of mario-executor's blocks (this LibTorch has no scaled_dot_product_attention)";
    auto core = [D](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& mask) {
        auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(D));
        scores = scores.masked_fill(mask, -std::numeric_limits<double>::infinity());
        return torch::matmul(torch::softmax(scores, -1), v);
    };
#endif
    return timePhases(device_, repeats_, [&](InstructionClock& clock, auto& marks, auto& kept) {
        const torch::Tensor q = q0.detach().requires_grad_(true), k = k0.detach().requires_grad_(true);
        const torch::Tensor v = v0.detach().requires_grad_(true);
        marks[0] = clock.mark();
        const torch::Tensor out = core(q, k, v, causal);
        marks[1] = clock.mark();
        out.backward(grad);
        marks[2] = clock.mark();
        kept.push_back(out);
    });
}

}  // namespace mario::exec
