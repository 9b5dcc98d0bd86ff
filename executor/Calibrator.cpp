#include "executor/Calibrator.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <torch/cuda.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "core/io/PresetLibrary.h"
#include "executor/BlasThreads.h"
#include "executor/CalibrationKernels.h"
#include "executor/CalibrationRefit.h"
#include "executor/Executor.h"
#include "executor/GptModel.h"
#include "executor/MemoryLimits.h"
#include "executor/RunSetup.h"

#ifdef MARIO_TORCH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mario::exec {

namespace {

// Run-time bounds on the sweep's estimated time (docs/calibration.md#time): --quick is for tests.
constexpr double kQuickBoundS = 60;
constexpr double kFullBoundS = 900;
constexpr int kQuickRepeats = 5;
constexpr int kFullRepeats = 9;

std::string firstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string number(double x, const char* format = "%.3g") {
    char text[48];
    std::snprintf(text, sizeof text, format, x);
    return text;
}

// What the machine is, for the notes: the CPU's model name and core count, or the GPU's name.
struct Machine {
    std::string name;
    double memory_gb = 0;
    int sm_count = 0;
    int per_node = 1;
};

Machine describeMachine(const torch::Device& device) {
    Machine m;
    if (device.is_cuda()) {
        m.name = "GPU " + std::to_string(device.index());
        m.per_node = static_cast<int>(torch::cuda::device_count());
#ifdef MARIO_TORCH_CUDA
        cudaDeviceProp properties{};
        if (cudaGetDeviceProperties(&properties, device.index()) == cudaSuccess) {
            m.name = properties.name;
            m.sm_count = properties.multiProcessorCount;
            m.memory_gb = double(properties.totalGlobalMem) / 1e9;
        }
        (void)cudaGetLastError();
#endif
        if (m.memory_gb <= 0)
            if (auto free = gpuMemoryLimit(device.index())) m.memory_gb = free->bytes / 1e9;
        return m;
    }
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
        if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
            m.name = line.substr(line.find(':') + 2);
            break;
        }
    m.per_node = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    m.name = (m.name.empty() ? std::string("CPU") : m.name) + ", " + std::to_string(m.per_node) + " cores";
    m.memory_gb = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE)) / 1e9;
    return m;
}

// The products one block of `spec` runs at micro-batch b, read off the executor's own weights
// (GptModel.cpp, one owner of the block's shapes): for each weight [out × in] the forward
// (tokens × out × in, as torch::linear with the block's bias), the data gradient
// (tokens × in × out) and the weight gradient (out × in × tokens). The attention's two products
// are measured on their own (CalibrationKernels::attentionProducts).
struct PlannedProduct {
    GemmSample shape;
    bool linear = false;  // a forward through torch::linear
    bool bias = false;
    bool weightGradient = false;  // A is the output gradient transposed, as linear's backward passes it
};

std::vector<PlannedProduct> blockProducts(const ModelSpec& spec, int b) {
    ModelSpec one = spec;
    one.layers = 1;
    const GptModel model(one, 0);
    const ParamMap weights = model.cloneSlice(LayerSlice{0, 1, false, false});
    const double tokens = double(b) * spec.seq;
    std::vector<PlannedProduct> products;
    for (const auto& [name, weight] : weights) {
        if (weight.dim() != 2) continue;
        const double out = double(weight.size(0)), in = double(weight.size(1));
        const bool bias = weights.count(name.substr(0, name.size() - 1) + "b") > 0;  // "attn.w" -> "attn.b"
        products.push_back({GemmSample{tokens, out, in}, true, bias});
        products.push_back({GemmSample{tokens, in, out, 1, 0, 0, true, GemmRole::InputGradient}});
        products.push_back({GemmSample{out, in, tokens, 1, 0, 0, true, GemmRole::WeightGradient}, false, false, true});
    }
    return products;
}

// The shapes of one block's weights (GptModel.cpp, their one owner) and how many weights have
// each: what autograd accumulates into .grad once per backward.
std::map<std::vector<int64_t>, double> blockWeightShapes(const ModelSpec& spec) {
    ModelSpec one = spec;
    one.layers = 1;
    const ParamMap weights = GptModel(one, 0).cloneSlice(LayerSlice{0, 1, false, false});
    std::map<std::vector<int64_t>, double> shapes;
    for (const auto& [name, weight] : weights) shapes[weight.sizes().vec()] += 1;
    return shapes;
}

// Without --quick, also every (M, N, K) from the sides of the block's weight products, reported
// beside the fit (how far the preset is from products of other shapes), not fitted; each is
// measured as a plain A·B, a data gradient's layout, and priced at that role's rate.
std::vector<PlannedProduct> gridProducts(const std::vector<PlannedProduct>& block) {
    std::set<double> sides;
    for (const PlannedProduct& p : block) sides.insert({p.shape.m, p.shape.n, p.shape.k});
    std::vector<PlannedProduct> grid;
    for (double m : sides)
        for (double n : sides)
            for (double k : sides) {
                PlannedProduct p{GemmSample{m, n, k, 1, 0, 0, false, GemmRole::InputGradient}};
                grid.push_back(p);
            }
    return grid;
}

std::string notesOf(const CalibrationOptions& options, const CalibrationResult& r, const Machine& machine,
                    const ModelSpec& spec, const std::string& dtype, int repeats, double tinyUs) {
    const HardwareConfig& h = r.hardware;
    const std::size_t fitted =
        std::size_t(std::count_if(r.gemms.begin(), r.gemms.end(), [](const GemmSample& g) { return g.fitted; }));
    auto range = [](const FitSpread& s) { return number(s.low, "%.2f") + " to " + number(s.high, "%.2f"); };
    return "Calibrated by mario-executor calibrate on " + machine.name + ", " + utcNow() + ", LibTorch " +
           TORCH_VERSION + ", " + dtype + ", " + std::to_string(at::get_num_threads()) +
           " intra-op thread and one BLAS thread (one executor device's): `" + options.command_line +
           "`. Sizes from the block " + describe(spec) + " at micro-batch " + std::to_string(options.micro_batch_size) +
           ". Every time is the median of " + std::to_string(repeats) +
           " runs after one warm-up, each after emptying the caches and reading back the operands its producer "
           "wrote just before it in a block, on memory the previous run freed; the widest repeat spread, (slowest - "
           "fastest) / median, was " +
           number(r.worst_repeat_spread, "%.2f") + ". peak_tflops " + number(h.peak_tflops, "%.4g") +
           ": the fastest product measured (not a datasheet figure). gemm_efficiency " +
           number(h.gemm_efficiency, "%.3f") + ", gemm_input_grad_efficiency " +
           number(h.gemm_input_grad_efficiency, "%.3f") + " and gemm_weight_grad_efficiency " +
           number(h.gemm_weight_grad_efficiency, "%.3f") + ": the rates at which core's GEMM formula over the block's " +
           std::to_string(fitted) +
           " products adds up to their measured time, each role apart, every product timed in its own layout: "
           "each weight's forward (torch::linear) and the eager attention's two batched products, each weight's "
           "data gradient (dY.W), each weight's weight gradient (dY^T.X, autograd's transposed view); per product "
           "the model gives " +
           range(r.gemm_spread) + " of the measured time" +
           (r.gemms.size() > fitted ? ", over all " + std::to_string(r.gemms.size()) +
                                          " products of the grid of their sides " + range(r.grid_spread)
                                    : std::string()) +
           ". hbm_gb_per_s " + number(h.hbm_gb_per_s, "%.4g") + ": a large copy (" + number(r.copy_gb_per_s, "%.4g") +
           " GB/s) or the layout copy's rate where higher; hbm_efficiency " + number(h.hbm_efficiency, "%.3f") +
           ": the share of it at which the block's layout copy (the attention output back to [b, s, h]), forward "
           "and backward, and its weight gradients' accumulations into .grad (autograd's AccumulateGrad) stream the "
           "model's bf16 bytes: the rate of the products' memory traffic, reductions, copies and accumulations. "
           "elementwise_gb_per_s " +
           number(h.elementwise_gb_per_s, "%.4g") +
           ": the rate at which the block's element-wise kernels (two LayerNorms, two residual adds, GELU, "
           "attention scale, causal mask, softmax), forward and backward at the block's sizes, each counted as "
           "often as the block runs it and charged the model's bf16 bytes, add up to their measured time; per "
           "kernel the model gives " +
           range(r.stream_spread) + ". kernel_overhead_us " + number(tinyUs, "%.3g") +
           ": a one-element addition with autograd, the mean of its forward and backward. "
           "flash_forward_efficiency and flash_backward_efficiency: " +
           r.attention_kernel + " at the block's sizes, its causal-half FLOPs (2.5x backward) over the peak. " +
           (options.links_from ? "Links, link latency, GPUs per node and framework_reserve_gb from the preset " +
                                     options.links_from->name + ": not measured here."
                               : "Links: the measured copy bandwidth (the in-process transport of a CPU run copies "
                                 "tensors); NCCL collectives are not measured. framework_reserve_gb 0.");
}

}  // namespace

ModelSpec defaultCalibrationModel(const std::string& device) {
    ModelSpec spec;
    const bool gpu = device.rfind("cuda", 0) == 0;
    spec.layers = 1;
    spec.hidden = gpu ? 4096 : 256;
    spec.heads = gpu ? 32 : 8;
    spec.seq = gpu ? 2048 : 128;
    return spec;
}

Result<CalibrationResult> calibrateDevice(const CalibrationOptions& options) {
    const bool gpu = options.device.rfind("cuda", 0) == 0;
    if (options.micro_batch_size < 1) return makeError("--micro-batch-size must be at least 1");
    if (options.repeats < 0) return makeError("--repeats must be at least 1");
    const ModelSpec spec = options.model.value_or(defaultCalibrationModel(options.device));
    const int repeats = options.repeats > 0 ? options.repeats : options.quick ? kQuickRepeats : kFullRepeats;
    // What one device thread of a run does (as `profile` measures): one intra-op and one BLAS thread.
    at::set_num_threads(1);
    useOneBlasThread();
    const std::string dtypeName = options.dtype.empty() ? (gpu ? "bfloat16" : "float64") : options.dtype;
    auto place = torchPlace(options.device, dtypeName);
    if (!place) return place.error();
    const torch::Device device = place->device;
    const torch::ScalarType dtype = place->dtype;
    const CalibrationKernels kernels(device, dtype, repeats);
    const double b = options.micro_batch_size, s = spec.seq, h = spec.hidden, a = spec.heads;
    CalibrationResult r;
    r.dtype = dtypeName;
    try {
        // The time bound: one middle product timed, the sweep's FLOPs at its rate.
        const GemmSample probe = CalibrationKernels(device, dtype, 1).gemm(b * s, h, h);
        const double rate = 2 * b * s * h * h / std::max(probe.ms, 1e-6);  // FLOPs per ms
        std::vector<PlannedProduct> plan = blockProducts(spec, options.micro_batch_size);
        if (!options.quick)
            for (const PlannedProduct& p : gridProducts(plan)) plan.push_back(p);
        double sweepFlops = 0;
        for (const PlannedProduct& p : plan) sweepFlops += 2 * p.shape.m * p.shape.n * p.shape.k;
        const double estimateS = sweepFlops * (repeats + 1) / rate / 1000;
        const double bound = options.quick ? kQuickBoundS : kFullBoundS;
        if (estimateS > bound)
            return makeError("the sweep at --model " + describe(spec) + " would take about " +
                             number(estimateS, "%.0f") + " s on " + options.device + " (bound " +
                             number(bound, "%.0f") + " s" + (options.quick ? " with --quick" : "") +
                             "): name a smaller --model or --micro-batch-size");

        const PhaseTimes tiny = kernels.tinyKernel();
        const double tinyUs = (tiny.forward_ms + tiny.backward_ms) / 2 * 1000;
        r.copy_gb_per_s = kernels.copyGbPerS(gpu ? 1e9 : options.quick ? 32e6 : 128e6);
        r.streams = kernels.blockStreams(b, s, h, a);
        for (const auto& [shape, count] : blockWeightShapes(spec)) r.streams.push_back(kernels.gradientAccumulation(shape, count));
        for (const PlannedProduct& p : plan) {
            const GemmSample& g = p.shape;
            r.gemms.push_back(p.linear ? kernels.linearForward(g.m, g.n, g.k, p.bias) : kernels.gemm(g.m, g.n, g.k, p.weightGradient));
            r.gemms.back().fitted = g.fitted;
            r.gemms.back().role = g.role;
        }
        for (const GemmSample& g : kernels.attentionProducts(b, s, h, a)) r.gemms.push_back(g);
        const PhaseTimes attention = kernels.attentionCore(b, s, h, a, r.attention_kernel);
        r.attention_forward_ms = attention.forward_ms;
        r.attention_backward_ms = attention.backward_ms;
        r.worst_repeat_spread = std::max(tiny.spread, attention.spread);
        for (const GemmSample& g : r.gemms) r.worst_repeat_spread = std::max(r.worst_repeat_spread, g.spread);
        for (const StreamSample& k : r.streams) r.worst_repeat_spread = std::max(r.worst_repeat_spread, k.spread);

        const Machine machine = describeMachine(device);
        HardwareConfig start = options.links_from.value_or(HardwareConfig{});
        if (!options.links_from) {
            start.intra_node_gb_per_s = start.inter_node_gb_per_s = r.copy_gb_per_s;
            start.nvlink_efficiency = start.network_efficiency = 1;
            start.link_latency_ms = tiny.forward_ms;
            start.gpus_per_node = machine.per_node;
            start.framework_reserve_gb = 0;
        }
        start.name = options.name.empty() ? (gpu ? "cuda" : "cpu") + std::string("-calibrated") : options.name;
        start.memory_gb = machine.memory_gb > start.framework_reserve_gb ? machine.memory_gb : start.memory_gb;
        start.sm_count = machine.sm_count;  // 0 on the CPU: no wave quantisation
        // The model's count of the core's FLOPs under FlashAttention: the causal half of 4·b·s²·h.
        const CalibrationFits fits =
            fitCalibration(start, {tinyUs, r.copy_gb_per_s, r.streams, r.gemms, attention.forward_ms,
                                   attention.backward_ms, 2 * b * s * s * h});
        r.stream_spread = fits.stream;
        r.gemm_spread = fits.gemm;
        r.grid_spread = fits.grid;
        r.hardware = fits.hardware;
        nlohmann::json source = {
            // What --refit needs to size the attention again (CalibrationRefit.h).
            {"block", {{"model", describe(spec)}, {"micro_batch_size", options.micro_batch_size}}},
            {"gemms",
             [&] {
                 nlohmann::json rows = nlohmann::json::array();
                 for (const GemmSample& g : r.gemms)
                     rows.push_back({{"m", g.m},
                                     {"n", g.n},
                                     {"k", g.k},
                                     {"batch", g.batch},
                                     {"ms", g.ms},
                                     {"spread", g.spread},
                                     {"fitted", g.fitted},
                                     {"role", gemmRoleName(g.role)}});
                 return rows;
             }()},
            {"elementwise",
             [&] {
                 nlohmann::json rows = nlohmann::json::array();
                 for (const StreamSample& k : r.streams)
                     rows.push_back({{"kernel", k.name},
                                     {"forward_bytes", k.forward_bytes},
                                     {"backward_bytes", k.backward_bytes},
                                     {"forward_ms", k.forward_ms},
                                     {"backward_ms", k.backward_ms},
                                     {"per_block", k.count},
                                     {"copy", k.copy},
                                     {"spread", k.spread}});
                 return rows;
             }()},
            {"tiny_kernel_us", {{"forward", tiny.forward_ms * 1000}, {"backward", tiny.backward_ms * 1000}}},
            {"copy_gb_per_s", r.copy_gb_per_s},
            {"attention",
             {{"kernel", r.attention_kernel},
              {"forward_ms", attention.forward_ms},
              {"backward_ms", attention.backward_ms}}}};
        writeModelTimes(source, r.hardware);  // what the fitted model gives for each measurement
        r.preset = PresetLibrary::hardwarePreset(
            r.hardware, notesOf(options, r, machine, spec, dtypeName, repeats, tinyUs), source);
    } catch (const c10::Error& e) {
        return makeError("calibrating " + options.device + " failed: " + firstLine(e.what_without_backtrace()));
    } catch (const std::exception& e) {
        return makeError("calibrating " + options.device + " failed: " + firstLine(e.what()));
    }
    return r;
}

}  // namespace mario::exec
