#include "executor/Profiler.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include <c10/core/StreamGuard.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include "core/io/ProfileJson.h"
#include "core/util/Median.h"
#include "executor/AllocationTracker.h"
#include "executor/BlasThreads.h"
#include "executor/BusyNeighbours.h"
#include "executor/DeviceStreams.h"
#include "executor/GptModel.h"
#include "executor/GreenContexts.h"
#include "executor/InstructionClock.h"
#include "executor/Optimizer.h"
#include "executor/OptimizerContention.h"
#include "executor/ProfileGuards.h"
#include "executor/ProfileNotes.h"
#include "executor/RunSetup.h"
#include "executor/StageRuntime.h"

namespace mario::exec {
namespace {

std::string firstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// Live bytes and their peak since the last phase(), from c10's allocator reports.
struct LiveBytes {
    std::int64_t live = 0, peak = 0;
    void add(std::int64_t bytes) { peak = std::max(peak, live += bytes); }
    std::int64_t phase() { return peak = live; }
};

// Times one slice: forward (with grad, as a stage without checkpointing runs it), backward of
// that forward, recompute (a forward with grad from the saved, detached stage input), the split
// backward, and the optimizer step the run would take (OPT). The gradients stay allocated from
// one repeat to the next, as in a run, where every micro-batch but a step's first adds its
// backward into them (on a 2-core CPU, 4 blocks of hidden 128, about 3% more than a backward
// that allocates them, near that machine's noise); the optimizer step zeroes them.
// Times are InstructionClock marks on the thread's current stream: the steady clock on the CPU,
// CUDA events on a GPU, so a GPU profile times the kernels, not the host, and never waits for
// the GPU between the phases it times. Activation bytes: the bytes this thread's allocations
// hold after the forward (graph and output alive) minus before, from c10's allocator reports
// (AllocationTracker.h), counted on the measured device only.
ProfilePoint measure(const GptModel& model, const LayerSlice& slice, const torch::Tensor& input,
                     const torch::Tensor& targets, int repeats, const torch::Device& device, torch::ScalarType dtype,
                     const Optimizer& optimizer) {
    StageRuntime stage;  // what the optimizer steps: the slice's weights and, with Adam, moments
    stage.params = model.sliceOn(slice, device, dtype);
    ParamMap& params = stage.params;
    InstructionClock clock(device, std::chrono::steady_clock::now());
    ProfilePoint m;  // blocks: the caller's
    // What a run keeps per weight: the weight and its gradient, and with Adam its two moments
    // (a flat 4 copies overstated SGD runs' static memory by half: 26.7 MB simulated against
    // 23.7 MB measured for a whole 4-block device, activations included).
    const double copies = optimizer.adam() ? 4 : 2;
    for (const auto& [name, p] : params) m.static_bytes += double(p.numel() * p.element_size()) * copies;
    const bool floating = input.is_floating_point();
    // Per repeat: the marks around forward, backward, recompute, I, W and the optimizer step.
    std::vector<std::array<InstructionClock::Mark, 11>> marks;
    for (int r = 0; r <= repeats; ++r) {  // r == 0: warm-up; r == 1 also measures memory
        torch::Tensor x = floating ? input.detach().clone().requires_grad_(true) : input;
        torch::Tensor out;
        std::array<InstructionClock::Mark, 11> t{};
        // The first repeat after the warm-up also measures memory (activations, transients, what
        // I keeps): the gradients exist by then, as in a run, so only the phases' own bytes count.
        LiveBytes mem;
        std::optional<TrackAllocations> watching;
        if (r == 1)
            watching.emplace([&mem, type = device.type()](void*, std::int64_t bytes, c10::Device where) {
                if (where.type() == type) mem.add(bytes);
            });
        double working = 0;
        auto transient = [&](std::int64_t from) { working = std::max(working, double(mem.peak - from)); };
        mem.phase();
        t[0] = clock.mark();
        out = model.forward(slice, params, x, targets);
        t[1] = clock.mark();
        if (r == 1) m.activation_bytes = double(std::max<std::int64_t>(0, mem.live));
        transient(mem.live);  // the forward's peak above what it keeps
        torch::Tensor grad = out.dim() == 0 ? torch::ones_like(out) : torch::ones_like(out) * 1e-3;
        t[2] = clock.mark();
        const std::int64_t beforeBackward = mem.phase();
        out.backward(grad);
        transient(beforeBackward);
        t[3] = clock.mark();
        out = torch::Tensor();
        torch::Tensor saved = floating ? input.detach() : input;
        torch::Tensor x2 = floating ? saved.clone().requires_grad_(true) : saved;
        t[4] = clock.mark();
        const std::int64_t beforeRecompute = mem.phase();
        torch::Tensor again = model.forward(slice, params, x2, targets);
        transient(mem.live);
        t[5] = clock.mark();
        // The split backward as the executor runs it (DeviceWorker): I is the gradient of the
        // stage input with the graph kept, W the parameters' gradients from that graph.
        t[6] = t[7] = t[8] = t[5];
        if (floating) {
            torch::Tensor g = again.dim() == 0 ? torch::ones_like(again) : torch::ones_like(again) * 1e-3;
            t[6] = clock.mark();
            const std::int64_t beforeInput = mem.phase();
            torch::autograd::grad({again}, {x2}, {g}, /*retain_graph=*/true);
            transient(beforeInput);
            if (r == 1) m.weight_grad_bytes = double(std::max<std::int64_t>(0, mem.live - beforeRecompute));
            t[7] = clock.mark();
            std::vector<torch::Tensor> weights;
            for (const auto& [name, p] : params) weights.push_back(p);
            const std::int64_t beforeWeight = mem.phase();
            again.backward(g, /*retain_graph=*/false, /*create_graph=*/false, at::TensorList(weights));
            transient(beforeWeight);
            t[8] = clock.mark();
        }
        again = torch::Tensor();
        t[9] = clock.mark();
        optimizer.step(stage);
        t[10] = clock.mark();
        if (r == 1) m.working_bytes = working;
        if (r > 0) marks.push_back(t);
    }
    // Read once the whole series is queued: on a GPU this is the only wait.
    std::vector<double> fwd, bwd, rec, in, wt, opt;
    auto ms = [&clock](InstructionClock::Mark from, InstructionClock::Mark to) {
        return (clock.microseconds(to) - clock.microseconds(from)) / 1000.0;
    };
    for (const auto& t : marks) {
        fwd.push_back(ms(t[0], t[1]));
        bwd.push_back(ms(t[2], t[3]));
        rec.push_back(ms(t[4], t[5]));
        in.push_back(ms(t[6], t[7]));
        wt.push_back(ms(t[7], t[8]));
        opt.push_back(ms(t[9], t[10]));
    }
    m.forward_ms = median(fwd);
    m.backward_ms = median(bwd);
    m.recompute_ms = median(rec);
    m.backward_input_ms = median(in);  // 0 where the input is not differentiable
    m.backward_weight_ms = median(wt);
    m.optimizer_ms = median(opt);
    return m;
}

// Slowdown per busy neighbour over every timed phase of the block stages, time-weighted:
// (Σ busy / Σ alone − 1) / neighbours, at least 0 (StageCost::contention).
double contentionOf(const std::vector<ProfilePoint>& alone, const std::vector<ProfilePoint>& busy, int neighbours) {
    auto phases = [](const ProfilePoint& p) {
        return p.forward_ms + p.backward_ms + p.recompute_ms + p.backward_input_ms + p.backward_weight_ms +
               p.optimizer_ms;
    };
    double aloneMs = 0, busyMs = 0;
    for (const ProfilePoint& p : alone) aloneMs += phases(p);
    for (const ProfilePoint& p : busy) busyMs += phases(p);
    if (neighbours <= 0 || busy.empty() || aloneMs <= 0) return 0;
    return std::max(0.0, (busyMs / aloneMs - 1) / neighbours);
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

std::vector<FitQuality> fitQualities(const ProfileResult& result) {
    return {{"forward_ms", result.forward.r2},
            {"backward_ms", result.backward.r2},
            {"backward_input_ms", result.backwardInput.r2},
            {"backward_weight_ms", result.backwardWeight.r2},
            {"recompute_ms", result.recompute.r2},
            {"optimizer_ms", result.optimizer.r2},
            {"activation_bytes", result.activation.r2},
            {"weight_grad_bytes", result.weightGrad.r2},
            {"static_bytes", result.statics.r2}};
}

std::vector<std::string> lowFitWarnings(const std::vector<FitQuality>& fits, double threshold) {
    std::vector<std::string> lines;
    for (const auto& [name, r2] : fits) {
        if (r2 >= threshold) continue;
        char value[32];
        std::snprintf(value, sizeof value, "%.4f", r2);
        char bound[32];
        std::snprintf(bound, sizeof bound, "%g", threshold);
        lines.push_back("the " + name + " fit has R² = " + value + " (below " + bound +
                        "): its points are far from a line in the blocks; raise --repeats or profile a larger "
                        "model before the simulator relies on it");
    }
    return lines;
}

Result<ProfileResult> profileModel(const ProfileOptions& options) {
    if (options.max_blocks < 1) return makeError("--max-blocks must be at least 1");
    if (options.repeats < 1) return makeError("--repeats must be at least 1");
    if (options.micro_batch_size < 1) return makeError("--micro-batch-size must be at least 1");
    if (options.partitions < 0) return makeError("--partition-sms must be at least 1");
    if (options.neighbours < 0) return makeError("--neighbours must be at least 0");
    if (options.partitions > 0 && options.neighbours > options.partitions - 1)
        return makeError("--neighbours " + std::to_string(options.neighbours) + " with --partition-sms " +
                         std::to_string(options.partitions) + ": at most the other " +
                         std::to_string(options.partitions - 1) + " partitions can be busy");
    // The devices measured beside: the other partitions of a GPU (all, or the first N), or
    // threads on the CPU.
    const int neighbourCount = options.busyNeighbours();
    // Measure what one device thread of a run does: one intra-op thread, one BLAS thread.
    at::set_num_threads(1);
    useOneBlasThread();
    ModelSpec spec = options.model;
    spec.layers = std::max(spec.layers, options.max_blocks);
    auto named = torchPlace(options.device, options.dtype);
    if (!named) return named.error();
    const torch::Device device = named->device;
    const torch::ScalarType dtype = named->dtype;
    // Threads, memory, block count: refused before any weight (ProfileGuards.h).
    if (auto refused = profileRefusal(options, device.is_cuda() ? std::optional<int>(device.index()) : std::nullopt))
        return makeError(*refused);
    std::optional<GptModel> built;
    try {
        built.emplace(spec, options.seed, device);
    } catch (const c10::Error& e) {
        // LibTorch's own message, without the C++ backtrace it carries (30 lines).
        return makeError("building --model " + describe(spec) + " on " + options.device +
                         " failed: " + firstLine(e.what_without_backtrace()));
    }
    const GptModel& model = *built;
    const int B = options.micro_batch_size;
    torch::manual_seed(options.seed + 1);
    if (device.is_cuda() && options.partitions == 0 && neighbourCount > 0)
        return makeError("--neighbours on a GPU needs --partition-sms (each neighbour on its own SMs)");
    // --partition-sms K: the measurements run on partition 0 of K, alone and with the other K−1
    // busy with the same slice (BusyNeighbours.h). Made before any tensor, so it outlives them all.
    std::unique_ptr<GreenContexts> partitions;
    std::vector<c10::Stream> streams;
    if (options.partitions > 0) {
        if (!device.is_cuda()) return makeError("--partition-sms needs --device cuda or cuda:N (the CPU has no SMs)");
        auto made = GreenContexts::create(device.index(), options.partitions);
        if (!made) return made.error();
        auto wrapped = partitionStreams(**made, device);
        if (!wrapped) return wrapped.error();
        partitions = std::move(*made);
        streams = std::move(*wrapped);
    }
    const torch::Tensor hidden = torch::randn({B, spec.seq, spec.hidden}, torch::kFloat64).to(device, dtype);
    const torch::Tensor tokens = model.syntheticTokens(options.seed, 0, B).to(device);
    const torch::Tensor inputs = tokens.slice(1, 0, spec.seq).contiguous();
    const torch::Tensor targets = tokens.slice(1, 1, spec.seq + 1).contiguous();
    // Copied on this thread's default stream; the partition's stream does not wait for it.
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
    std::optional<c10::StreamGuard> onPartition;
    if (!streams.empty()) onPartition.emplace(streams.front());
    const std::vector<c10::Stream> neighbours(streams.empty() ? streams.end() : streams.begin() + 1,
                                              streams.empty() ? streams.end() : streams.begin() + 1 + neighbourCount);
    // The step the run takes (`run --optimizer`); a small rate keeps the weights, and so the
    // timings, where they started over the repeats.
    const Optimizer optimizer(1e-6, options.adam, /*snapshot=*/false);
    auto alone = [&](const LayerSlice& slice, const torch::Tensor& input) {
        return measure(model, slice, input, targets, options.repeats, device, dtype, optimizer);
    };
    auto beside = [&](const LayerSlice& slice, const torch::Tensor& input) {
        const BusyNeighbours busy(model, slice, input, targets, device, dtype, neighbourCount, neighbours);
        const ProfilePoint m = measure(model, slice, input, targets, options.repeats, device, dtype, optimizer);
        if (auto why = busy.failure()) throw std::runtime_error(*why);
        return m;
    };

    ProfileResult result;
    ProfilePoint embed, head;
    try {
        // The time guard: one block, one repeat after the warm-up, timed on the wall clock (which
        // waits for the GPU: measure reads its marks at the end), then the whole profile's
        // estimate from it (ProfileGuards.h).
        const auto probeStart = std::chrono::steady_clock::now();
        measure(model, LayerSlice{0, 1, false, false}, hidden, targets, 1, device, dtype, optimizer);
        const double probe = std::chrono::duration<double>(std::chrono::steady_clock::now() - probeStart).count();
        const int cores = device.is_cuda() ? 0 : static_cast<int>(std::thread::hardware_concurrency());
        if (auto refused = profileTimeRefusal(options, probe / 2, cores)) return makeError(*refused);
        for (int x = 1; x <= options.max_blocks; ++x) {
            const LayerSlice blocks{0, x, false, false};
            result.points.push_back(alone(blocks, hidden));
            result.points.back().blocks = x;
            if (neighbourCount > 0) {
                result.busy_points.push_back(beside(blocks, hidden));
                result.busy_points.back().blocks = x;
            }
        }
        if (neighbourCount > 0) {
            // The optimizer beside neighbours stepping too: partitions split the HBM bandwidth.
            const StepTimes steps =
                measureOptimizerSteps(model, LayerSlice{0, options.max_blocks, false, false}, hidden, targets, device,
                                      dtype, optimizer, options.repeats, neighbourCount, neighbours);
            result.step_alone_ms = steps.alone_ms;
            result.step_beside_ms = steps.beside_ms;
            result.optimizer_contention = steps.contention(neighbourCount);
        }
        embed = alone(LayerSlice{0, 0, true, false}, inputs);
        head = alone(LayerSlice{0, 0, false, true}, hidden);
    } catch (const c10::Error& e) {
        return makeError("measuring on " + options.device + " failed: " + firstLine(e.what_without_backtrace()));
    } catch (const std::exception& e) {
        return makeError("measuring on " + options.device + " failed: " + firstLine(e.what()));
    }
    // Every quantity's line through the points, y = a·blocks + b.
    auto fit = [&points = result.points](double ProfilePoint::*quantity) {
        std::vector<double> xs, ys;
        for (const ProfilePoint& p : points) xs.push_back(p.blocks), ys.push_back(p.*quantity);
        return fitLine(xs, ys);
    };
    result.forward = fit(&ProfilePoint::forward_ms);
    result.backward = fit(&ProfilePoint::backward_ms);
    result.recompute = fit(&ProfilePoint::recompute_ms);
    result.activation = fit(&ProfilePoint::activation_bytes);
    result.statics = fit(&ProfilePoint::static_bytes);
    result.backwardInput = fit(&ProfilePoint::backward_input_ms);
    result.backwardWeight = fit(&ProfilePoint::backward_weight_ms);
    result.optimizer = fit(&ProfilePoint::optimizer_ms);
    result.weightGrad = fit(&ProfilePoint::weight_grad_bytes);
    result.contention = contentionOf(result.points, result.busy_points, neighbourCount);
    auto extra = [](const ProfilePoint& m) {
        return ProfileExtra{m.forward_ms,   m.backward_ms,  m.recompute_ms, m.activation_bytes,
                            m.static_bytes, m.optimizer_ms, m.working_bytes};
    };
    auto line = [](const LineFit& fit) { return LinearFit{fit.a, fit.b}; };
    const double boundary = double(B) * spec.seq * spec.hidden * hidden.element_size();

    // The numbers go through core's ProfileJson, which owns the format the simulator reads;
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
    fits.backward_input_ms = line(result.backwardInput);
    fits.backward_weight_ms = line(result.backwardWeight);
    fits.optimizer_ms = line(result.optimizer);
    fits.weight_grad_bytes = line(result.weightGrad);
    // A transient is one block's at a time (the largest temporary of its backward), so it does
    // not grow with the blocks: the largest measured, not a fit.
    for (const ProfilePoint& p : result.points) fits.working_bytes = std::max(fits.working_bytes, p.working_bytes);
    fits.contention = result.contention;
    fits.optimizer_contention = result.optimizer_contention;
    fits.checkpoint_bytes = boundary;
    fits.send_bytes = boundary;
    fits.embedding = extra(embed);
    fits.head = extra(head);
    result.profile = profileToJson(fits);
    nlohmann::json& j = result.profile;
    const std::string place =
        partitions ? options.device + ", SM partition 0 of " + describe(partitions->plan()) : options.device;
    j["name"] = options.name.empty() ? options.device + "-" + describe(spec) : options.name;
    j["model"] = describe(spec);
    j["hardware"] = place;
    j["notes"] = profileNotes(options, {place, device.is_cuda(), partitions != nullptr,
                                        static_cast<int>(torch::get_num_threads()), neighbourCount});
    j["source"] = profileSource(result, neighbourCount);
    return result;
}

}  // namespace mario::exec
