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

// The caches are emptied before every repeat by a pass over a buffer larger than the last-level
// cache (untimed), as a block's kernel finds them: between two runs of one kernel the rest of the
// step passes through the cache. Measured kernel by kernel inside the block `mario-executor
// profile` times (PyTorch 2.15, float64, hidden 512, the 2-core EPYC that runs CI, 32 MiB L3):
// a LayerNorm's forward took 0.09 ms there, 0.04 repeated on a warm cache and 0.15 after a pass
// like this one; a residual add 0.08, 0.014 and 0.08. GPU timing does the same (Triton's do_bench
// empties the L2 with a 256 MB buffer).
constexpr double kCpuFlushBytes = 64e6;   // twice the 32 MiB L3 of an EPYC core complex
constexpr double kGpuFlushBytes = 256e6;  // above the L2 of any GPU (an H100's is 50 MB)

// Runs `body` once to warm up (allocator, BLAS buffers, cuBLAS heuristics), then `repeats` times,
// each after a pass over `flush` and then a read of `hot`: the operands the kernel's producer
// wrote just before it in a block (a product's input activation or output gradient, an
// element-wise kernel's input), which a block's kernel finds in cache while its weights, saved
// activations and output memory are not. Emptied entirely, the block's products timed up to 18%
// slower than inside the block and the 512 x 512 projection 34% (PyTorch 2.15, hidden 512). body(clock, marks) takes three marks: before the forward,
// between forward and backward, after the backward (the same mark twice where there is no
// backward). Read once all are queued: on a GPU that is the only wait. Each repeat's tensors are
// freed before the next, so a repeat writes memory the previous one freed, as a block's kernels
// do in a run (a stage's forward reuses what the previous micro-batch's backward freed): kept
// alive instead, outputs land in fresh pages whose first touch (1.3-1.6 us a 4 KiB page on the
// CI machine) no block kernel pays per block: the slope `profile` measures over 1 to 3 blocks
// took none (PyTorch 2.15, hidden 512: without glibc returning memory its stage constant fell, the
// slope did not). Kept outputs made GELU's forward 1.67 ms alone against 0.84 in the block.
template <class Body>
PhaseTimes timePhases(const c10::Device& device, int repeats, const torch::Tensor& flush,
                      const std::vector<torch::Tensor>& hot, const Body& body) {
    InstructionClock clock(device, std::chrono::steady_clock::now());
    std::vector<std::array<InstructionClock::Mark, 3>> marks;
    for (int r = 0; r <= repeats; ++r) {
        {
            torch::NoGradGuard noGrad;
            flush.add_(1.0);  // read and written: through the cache, unlike a streaming store
            for (const torch::Tensor& t : hot) (void)t.sum();  // what its producer just wrote
        }
        std::array<InstructionClock::Mark, 3> m{};
        body(clock, m);
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

CalibrationKernels::CalibrationKernels(c10::Device device, c10::ScalarType dtype, int repeats)
    : device_(device), dtype_(dtype), repeats_(repeats),
      flush_(torch::zeros({static_cast<int64_t>((device.is_cuda() ? kGpuFlushBytes : kCpuFlushBytes) / 8)},
                          torch::TensorOptions().device(device).dtype(torch::kFloat64))) {}

GemmSample CalibrationKernels::linearForward(double m, double n, double k, bool bias) const {
    const auto opts = torch::TensorOptions().device(device_).dtype(dtype_);
    const auto M = static_cast<int64_t>(m), N = static_cast<int64_t>(n), K = static_cast<int64_t>(k);
    const torch::Tensor x = torch::randn({M, K}, opts).requires_grad_(true);
    const torch::Tensor w = torch::randn({N, K}, opts).requires_grad_(true);
    const torch::Tensor b = bias ? torch::randn({N}, opts).requires_grad_(true) : torch::Tensor();
    const PhaseTimes t = timePhases(device_, repeats_, flush_, {x}, [&](InstructionClock& clock, auto& marks) {
        marks[0] = clock.mark();
        const torch::Tensor y = torch::linear(x, w, b);
        marks[1] = marks[2] = clock.mark();
    });
    return GemmSample{m, n, k, 1, t.forward_ms, t.spread};
}

GemmSample CalibrationKernels::gemm(double m, double n, double k, bool transposedA) const {
    const auto opts = torch::TensorOptions().device(device_).dtype(dtype_);
    const auto M = static_cast<int64_t>(m), N = static_cast<int64_t>(n), K = static_cast<int64_t>(k);
    torch::NoGradGuard noGrad;
    const torch::Tensor a = transposedA ? torch::randn({K, M}, opts).t() : torch::randn({M, K}, opts);
    const torch::Tensor b = torch::randn({K, N}, opts);
    const PhaseTimes t = timePhases(device_, repeats_, flush_, {a}, [&](InstructionClock& clock, auto& marks) {
        marks[0] = clock.mark();
        const torch::Tensor c = torch::mm(a, b);
        marks[1] = marks[2] = clock.mark();
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
    const PhaseTimes scores = timePhases(device_, repeats_, flush_, {qkv}, [&](InstructionClock& clock, auto& marks) {
        marks[0] = clock.mark();
        const auto parts = qkv.split(H, -1);
        const torch::Tensor product = torch::matmul(splitHeads(parts[0], A), splitHeads(parts[1], A).transpose(-2, -1));
        marks[1] = marks[2] = clock.mark();
    });
    const PhaseTimes merged = timePhases(device_, repeats_, flush_, {probabilities}, [&](InstructionClock& clock, auto& marks) {
        const torch::Tensor v = splitHeads(qkv.split(H, -1)[2], A);
        marks[0] = clock.mark();
        const torch::Tensor product = torch::matmul(probabilities, v);  // the merge back to [b, s, h] is a stream
        marks[1] = marks[2] = clock.mark();
    });
    const double batch = microBatch * heads, headDim = hidden / heads;
    return {GemmSample{seq, seq, headDim, batch, scores.forward_ms, scores.spread},
            GemmSample{seq, headDim, seq, batch, merged.forward_ms, merged.spread}};
}

PhaseTimes CalibrationKernels::tinyKernel() const {
    const auto opts = torch::TensorOptions().device(device_).dtype(dtype_);
    const torch::Tensor one = torch::ones({1}, opts);
    PhaseTimes t = timePhases(device_, repeats_, flush_, {}, [&](InstructionClock& clock, auto& marks) {
        const torch::Tensor x = one.clone().requires_grad_(true);
        marks[0] = clock.mark();
        torch::Tensor y = x;
        for (int i = 0; i < kTinyChain; ++i) y = y + one;
        marks[1] = clock.mark();
        y.backward();
        marks[2] = clock.mark();
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
    const PhaseTimes t = timePhases(device_, repeats_, flush_, {}, [&](InstructionClock& clock, auto& marks) {
        marks[0] = clock.mark();
        to.copy_(from);
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
        const PhaseTimes t = timePhases(device_, repeats_, flush_, {input, grad}, [&](InstructionClock& clock, auto& marks) {
            const torch::Tensor x = input.detach().requires_grad_(true);
            marks[0] = clock.mark();
            const torch::Tensor y = kernel.forward(x);
            marks[1] = clock.mark();
            y.backward(grad);
            marks[2] = clock.mark();
        });
        samples.push_back(StreamSample{kernel.name, kernel.forwardBytes, kernel.backwardBytes, t.forward_ms,
                                       t.backward_ms, t.spread, kernel.count, kernel.copy});
    }
    return samples;
}

StreamSample CalibrationKernels::gradientAccumulation(const std::vector<int64_t>& shape, double count) const {
    const auto opts = torch::TensorOptions().device(device_).dtype(dtype_);
    const torch::Tensor grad = torch::randn(shape, opts), fresh = torch::randn(shape, opts);
    const PhaseTimes t = timePhases(device_, repeats_, flush_, {fresh}, [&](InstructionClock& clock, auto& marks) {
        torch::NoGradGuard noGrad;  // as AccumulateGrad adds outside autograd
        marks[0] = marks[1] = clock.mark();
        grad.add_(fresh);
        marks[2] = clock.mark();
    });
    std::string name = "grad_accumulation";
    for (std::size_t i = 0; i < shape.size(); ++i) name += (i == 0 ? " " : "x") + std::to_string(shape[i]);
    const double elements = double(grad.numel());
    return StreamSample{name, 0, kernel_bytes::kGradientSum * elements, 0, t.backward_ms, t.spread, count, true};
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
    return timePhases(device_, repeats_, flush_, {q0, k0, v0, grad}, [&](InstructionClock& clock, auto& marks) {
        const torch::Tensor q = q0.detach().requires_grad_(true), k = k0.detach().requires_grad_(true);
        const torch::Tensor v = v0.detach().requires_grad_(true);
        marks[0] = clock.mark();
        const torch::Tensor out = core(q, k, v, causal);
        marks[1] = clock.mark();
        out.backward(grad);
        marks[2] = clock.mark();
    });
}

}  // namespace mario::exec
