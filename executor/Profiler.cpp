#include "executor/Profiler.h"

#include "executor/BlasThreads.h"
#include "executor/RunSetup.h"

#include <torch/cuda.h>

#include "core/cost/ProfileCostModel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>

#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/torch.h>

#include "executor/GptModel.h"

namespace mario::exec {
namespace {

// Live CPU bytes seen through c10's memory-profiling hook: DefaultCPUAllocator reports every
// allocation (+size) and free (-size) to the PROFILER_STATE debug info of the calling thread.
class LiveBytes final : public c10::MemoryReportingInfoBase {
public:
    void reportMemoryUsage(void*, int64_t size, int64_t, int64_t, c10::Device) override { live_ += size; }
    bool memoryProfilingEnabled() const override { return true; }
    int64_t live() const { return live_.load(); }

private:
    std::atomic<int64_t> live_{0};
};

double wallMs() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Measured {
    double forward_ms = 0, backward_ms = 0, recompute_ms = 0, activation_bytes = 0, static_bytes = 0;
    double input_ms = 0, weight_ms = 0;  // a split backward's I and W (0: the input is not differentiable)
};

// Times one slice: forward (with grad, as a stage without checkpointing runs it), backward of
// that forward, and recompute (a forward with grad from the saved, detached stage input).
// Activation bytes: live CPU bytes after the forward (graph and output alive) minus before.
Measured measure(const GptModel& model, const LayerSlice& slice, const torch::Tensor& input,
                 const torch::Tensor& targets, int repeats, const torch::Device& device, torch::ScalarType dtype) {
    ParamMap params = model.cloneSlice(slice);
    for (auto& [name, p] : params) p = p.detach().to(device, dtype).requires_grad_(true);
    // GPU kernels run asynchronously: a time stamp counts only once the device is done.
    auto nowMs = [&device] {
        if (device.is_cuda()) torch::cuda::synchronize(device.index());
        return wallMs();
    };
    Measured m;
    for (const auto& [name, p] : params) m.static_bytes += double(p.numel() * p.element_size()) * 4;
    const bool floating = input.is_floating_point();
    std::vector<double> fwd, bwd, rec, in, wt;
    for (int r = 0; r <= repeats; ++r) {  // r == 0: warm-up, also the memory measurement
        for (auto& [name, p] : params) p.mutable_grad() = torch::Tensor();
        torch::Tensor x = floating ? input.detach().clone().requires_grad_(true) : input;
        torch::Tensor out;
        double t0 = 0, t1 = 0;
        if (r == 0) {
            auto tracker = std::make_shared<LiveBytes>();
            c10::DebugInfoGuard guard(c10::DebugInfoKind::PROFILER_STATE, tracker);
            out = model.forward(slice, params, x, targets);
            m.activation_bytes = double(std::max<int64_t>(0, tracker->live()));
        } else {
            t0 = nowMs();
            out = model.forward(slice, params, x, targets);
            t1 = nowMs();
        }
        torch::Tensor grad = out.dim() == 0 ? torch::ones_like(out) : torch::ones_like(out) * 1e-3;
        const double t2 = nowMs();
        out.backward(grad);
        const double t3 = nowMs();
        out = torch::Tensor();
        torch::Tensor saved = floating ? input.detach() : input;
        torch::Tensor x2 = floating ? saved.clone().requires_grad_(true) : saved;
        const double t4 = nowMs();
        torch::Tensor again = model.forward(slice, params, x2, targets);
        const double t5 = nowMs();
        // The split backward as the executor runs it (DeviceWorker): I is the gradient of the
        // stage input with the graph kept, W the parameters' gradients from that graph.
        double t6 = 0, t7 = 0, t8 = 0;
        if (floating) {
            torch::Tensor g = again.dim() == 0 ? torch::ones_like(again) : torch::ones_like(again) * 1e-3;
            t6 = nowMs();
            torch::autograd::grad({again}, {x2}, {g}, /*retain_graph=*/true);
            t7 = nowMs();
            std::vector<torch::Tensor> weights;
            for (const auto& [name, p] : params) weights.push_back(p);
            again.backward(g, /*retain_graph=*/false, /*create_graph=*/false, at::TensorList(weights));
            t8 = nowMs();
        }
        if (r == 0) continue;
        fwd.push_back(t1 - t0);
        bwd.push_back(t3 - t2);
        rec.push_back(t5 - t4);
        in.push_back(t7 - t6);
        wt.push_back(t8 - t7);
    }
    m.forward_ms = median(fwd);
    m.backward_ms = median(bwd);
    m.recompute_ms = median(rec);
    m.input_ms = median(in);
    m.weight_ms = median(wt);
    return m;
}

}  // namespace

LineFit fitLine(const std::vector<double>& xs, const std::vector<double>& ys) {
    LineFit f;
    const double n = double(xs.size());
    if (xs.empty()) return f;
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) mx += xs[i], my += ys[i];
    mx /= n, my /= n;
    double sxx = 0, sxy = 0, syy = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        sxx += (xs[i] - mx) * (xs[i] - mx);
        sxy += (xs[i] - mx) * (ys[i] - my);
        syy += (ys[i] - my) * (ys[i] - my);
    }
    f.a = sxx > 0 ? std::max(0.0, sxy / sxx) : 0.0;
    f.b = my - f.a * mx;
    double sse = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) sse += std::pow(ys[i] - (f.a * xs[i] + f.b), 2);
    f.r2 = syy > 0 ? 1 - sse / syy : 1.0;
    return f;
}

Result<ProfileResult> profileModel(const ProfileOptions& options) {
    if (options.max_blocks < 1) return makeError("--max-blocks must be at least 1");
    if (options.repeats < 1) return makeError("--repeats must be at least 1");
    if (options.micro_batch_size < 1) return makeError("--micro-batch-size must be at least 1");
    // Measure what one device thread of a run does: one intra-op thread, one BLAS thread.
    at::set_num_threads(1);
    useOneBlasThread();
    ModelSpec spec = options.model;
    spec.layers = std::max(spec.layers, options.max_blocks);
    const GptModel model(spec, options.seed);
    const int B = options.micro_batch_size;
    torch::manual_seed(options.seed + 1);
    ExecutorOptions where;
    where.device = options.device;
    where.dtype = options.dtype;
    torch::Device device(torch::kCPU);
    torch::ScalarType dtype = torch::kFloat64;
    try {
        device = torchDevice(where);
        dtype = torchDtype(where);
    } catch (const std::exception& e) {
        return makeError(e.what());
    }
    const torch::Tensor hidden = torch::randn({B, spec.seq, spec.hidden}, torch::kFloat64).to(device, dtype);
    const torch::Tensor tokens = model.syntheticTokens(options.seed, 0, B).to(device);
    const torch::Tensor inputs = tokens.slice(1, 0, spec.seq).contiguous();
    const torch::Tensor targets = tokens.slice(1, 1, spec.seq + 1).contiguous();

    ProfileResult result;
    std::vector<double> xs, f, bw, rc, act, st, bi, bwt;
    for (int x = 1; x <= options.max_blocks; ++x) {
        const Measured m =
            measure(model, LayerSlice{0, x, false, false}, hidden, targets, options.repeats, device, dtype);
        result.points.push_back({x, m.forward_ms, m.backward_ms, m.recompute_ms, m.activation_bytes, m.static_bytes});
        xs.push_back(x);
        f.push_back(m.forward_ms);
        bw.push_back(m.backward_ms);
        rc.push_back(m.recompute_ms);
        act.push_back(m.activation_bytes);
        st.push_back(m.static_bytes);
        bi.push_back(m.input_ms);
        bwt.push_back(m.weight_ms);
    }
    result.forward = fitLine(xs, f);
    result.backward = fitLine(xs, bw);
    result.recompute = fitLine(xs, rc);
    result.activation = fitLine(xs, act);
    result.statics = fitLine(xs, st);
    const Measured embed =
        measure(model, LayerSlice{0, 0, true, false}, inputs, targets, options.repeats, device, dtype);
    const Measured head =
        measure(model, LayerSlice{0, 0, false, true}, hidden, targets, options.repeats, device, dtype);
    auto extra = [](const Measured& m) {
        return ProfileExtra{m.forward_ms, m.backward_ms, m.recompute_ms, m.activation_bytes, m.static_bytes};
    };
    auto line = [](const LineFit& f) { return LinearFit{f.a, f.b}; };
    const double boundary = double(B) * spec.seq * spec.hidden * hidden.element_size();

    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : result.points)
        points.push_back({{"blocks", p.blocks},
                          {"forward_ms", p.forward_ms},
                          {"backward_ms", p.backward_ms},
                          {"backward_input_ms", bi[points.size()]},
                          {"backward_weight_ms", bwt[points.size()]},
                          {"recompute_ms", p.recompute_ms},
                          {"activation_bytes", p.activation_bytes},
                          {"static_bytes", p.static_bytes}});
    // The numbers go through core's ProfileCostModel, which owns the format the simulator reads;
    // only the descriptive keys are added here.
    ProfileFits fits;
    fits.micro_batch_size = B;
    fits.sequence_length = spec.seq;
    fits.tp = 1;
    fits.forward_ms = line(result.forward);
    fits.backward_ms = line(result.backward);
    fits.recompute_ms = line(result.recompute);
    fits.activation_bytes = line(result.activation);
    fits.static_bytes = line(result.statics);
    const LineFit inputFit = fitLine(xs, bi), weightFit = fitLine(xs, bwt);
    fits.backward_input_ms = line(inputFit);
    fits.backward_weight_ms = line(weightFit);
    fits.checkpoint_bytes = boundary;
    fits.send_bytes = boundary;
    fits.embedding = extra(embed);
    fits.head = extra(head);
    result.profile = ProfileCostModel(fits).toJson();
    nlohmann::json& j = result.profile;
    j["name"] = options.name.empty() ? options.device + "-" + describe(spec) : options.name;
    j["model"] = describe(spec);
    j["hardware"] = options.device;
    j["notes"] =
        "Measured on " + options.device + " by mario-executor profile (LibTorch, " + options.dtype + ", " +
        std::to_string(torch::get_num_threads()) + " intra-op threads): `" + options.command_line + "`. Stages of 1.." +
        std::to_string(options.max_blocks) + " transformer blocks; times are the median of " +
        std::to_string(options.repeats) +
        " runs after one warm-up; forward is with grad, recompute is a forward with grad from the saved stage "
        "input, backward is that forward's backward; backward_input_ms (I) and backward_weight_ms (W) are a "
        "split backward as mario-executor runs it: I the input's gradient with the graph kept, then W the "
        "parameters' gradients, which walks the graph again (I + W exceeds the whole backward). activation_bytes: live CPU bytes after the forward minus "
        "before (autograd graph plus stage output), via c10's allocator memory-reporting hook. static_bytes: "
        "parameters x element size x 4 (weight, gradient, two Adam moments). checkpoint_bytes and send_bytes: the "
        "[micro_batch, seq, hidden] boundary tensor. embedding/head: those slices measured alone. "
        "Fits are least squares y = a*blocks + b (negative slopes clamped to 0).";
    j["source"] = {{"tool", "mario-executor profile"},
                   {"r2",
                    {{"forward_ms", result.forward.r2},
                     {"backward_ms", result.backward.r2},
                     {"backward_input_ms", inputFit.r2},
                     {"backward_weight_ms", weightFit.r2},
                     {"recompute_ms", result.recompute.r2},
                     {"activation_bytes", result.activation.r2}}},
                   {"points", points}};
    return result;
}

}  // namespace mario::exec
