#include "executor/RunSetup.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include <torch/cuda.h>

#include "executor/Optimizer.h"
#include "executor/TokenFile.h"

namespace mario::exec {
const char* whyNoGpu() {
    // Debian's LibTorch has no CUDA at all; a PyTorch wheel's CUDA LibTorch on a machine without
    // a visible GPU was told "Debian's LibTorch is CPU-only" too, which misled.
#ifdef MARIO_TORCH_CUDA
    return "has CUDA but sees no GPU (check the driver and CUDA_VISIBLE_DEVICES)";
#else
    return "has no CUDA or sees no GPU (Debian's LibTorch is CPU-only; build it on a GPU node with "
           "packaging/gpu-node.sh)";
#endif
}

torch::Device torchDevice(const ExecutorOptions& options) {
    std::optional<torch::Device> device;
    try {
        device = torch::Device(options.device);
    } catch (const std::exception&) {
        throw std::runtime_error("unknown torch device \"" + options.device + "\" (cpu, cuda or cuda:N)");
    }
    if (device->is_cuda()) {
        if (!torch::cuda::is_available())
            throw std::runtime_error(
                "the cuda backend needs a LibTorch with CUDA and a visible GPU; this one " +
                std::string(torch::cuda::device_count() == 0 ? whyNoGpu() : "has no CUDA support"));
        if (device->index() >= static_cast<int>(torch::cuda::device_count()))
            throw std::runtime_error("GPU " + std::to_string(device->index()) + " does not exist (" +
                                     std::to_string(torch::cuda::device_count()) + " visible)");
    }
    return *device;
}

torch::ScalarType torchDtype(const ExecutorOptions& options) {
    if (options.dtype == "float64") return torch::kFloat64;
    if (options.dtype == "float32") return torch::kFloat32;
    if (options.dtype == "bfloat16") return torch::kBFloat16;
    if (options.dtype == "float16") return torch::kFloat16;
    throw std::runtime_error("unknown dtype \"" + options.dtype + "\" (float64, float32, bfloat16 or float16)");
}

Result<TorchPlace> torchPlace(const std::string& device, const std::string& dtype) {
    ExecutorOptions where;
    where.device = device;
    where.dtype = dtype;
    try {
        return TorchPlace{torchDevice(where), torchDtype(where)};
    } catch (const std::exception& e) {
        const std::string why = e.what();
        return makeError(why.substr(0, why.find('\n')));
    }
}

std::vector<StageRuntime> buildStages(const Plan& plan, const PipelineTopology& topology, const GptModel& model,
                                      int replicas, const torch::Device& device, torch::ScalarType dtype,
                                      bool& planLayersUsed) {
    const std::vector<LayerSlice> slices = stageSlices(plan, topology, model.spec().layers, planLayersUsed);
    std::vector<StageRuntime> stages(plan.stages.size());
    std::map<std::string, int> holders;
    for (int s = 0; s < topology.stageCount(); ++s) {
        stages[s].index = s;
        stages[s].slice = slices[static_cast<std::size_t>(s)];
        ++holders[stages[s].slice.key()];
    }
    for (auto& st : stages) {
        st.params = model.sliceOn(st.slice, device, dtype);
        st.reduce = {st.slice.key(), holders[st.slice.key()] * replicas};
    }
    return stages;
}

Batch buildBatch(const GptModel& model, const ExecutorOptions& options, int microbatches, int microBatchSize,
                 int replicas, const torch::Device& device) {
    const int seq = model.spec().seq;
    std::shared_ptr<const TokenFile> file = options.tokens;
    if (!file && !options.tokens_file.empty()) {
        auto read = readTokenFile(options.tokens_file);
        if (!read) throw std::runtime_error(read.error().message);
        file = std::make_shared<const TokenFile>(std::move(read).value());
    }
    Batch batch;
    for (int g = 0; g < replicas * microbatches; ++g) {
        torch::Tensor tokens;
        if (file) {
            std::vector<int64_t> ids;
            for (int row = 0; row < microBatchSize; ++row) {
                auto sample =
                    file->sample(static_cast<std::int64_t>(g) * microBatchSize + row, seq, model.spec().vocab);
                if (!sample) throw std::runtime_error(sample.error().message);
                ids.insert(ids.end(), sample->begin(), sample->end());
            }
            tokens = torch::tensor(ids, torch::kInt64).reshape({microBatchSize, seq + 1});
        } else {
            tokens = model.syntheticTokens(options.seed, g, microBatchSize);
        }
        batch.inputs.push_back(tokens.slice(1, 0, seq).contiguous().to(device));
        batch.targets.push_back(tokens.slice(1, 1, seq + 1).contiguous().to(device));
    }
    return batch;
}

bool gradientsAgree(const torch::Tensor& grad, const torch::Tensor& reference, int summedTerms,
                    const ExecutorOptions& options) {
    const auto type = reference.scalar_type();
    if (type != torch::kBFloat16 && type != torch::kHalf)
        return torch::allclose(grad, reference, options.rtol, options.atol);
    // A reduced-precision gradient is a sum of one term per micro-batch, rounded at every add,
    // and the pipeline adds them in another order than the reference (Chimera's two pipelines
    // each sum half, then reduce). Each recursive sum of n terms is within (n−1)·u·Σ|x| of the
    // exact one (u = 2^-8 in bfloat16, 2^-11 in float16), so the two differ by up to
    // 2(n−1)·u·Σ|x|, taken at the tensor's largest magnitude. Chimera 4×8 in bfloat16 differed by
    // 2.6% of that magnitude on an H200 and 1.2% on the CPU, inside this bound (5.5%), where
    // allclose's float tolerances failed every such run.
    const double u = type == torch::kBFloat16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
    const double scale = reference.abs().max().item<double>();
    const double bound = 2.0 * std::max(1, summedTerms - 1) * u * scale + options.atol;
    return (grad.to(torch::kFloat64) - reference.to(torch::kFloat64)).abs().max().item<double>() <= bound;
}

void checkAgainstReference(const GptModel& model, const Batch& batch, const ExecutorOptions& options,
                           const std::vector<StageOutcome>& outcomes, RunReport& report) {
    const torch::Device device = batch.inputs.empty() ? torch::Device(torch::kCPU) : batch.inputs.front().device();
    StageRuntime reference;
    reference.slice = LayerSlice{0, model.spec().layers, true, true};
    reference.params = model.sliceOn(reference.slice, device, torchDtype(options));
    const int samples = static_cast<int>(batch.inputs.size());
    double referenceLoss = 0;
    for (int iteration = 0; iteration < options.iterations; ++iteration) {
        referenceLoss = 0;
        for (int m = 0; m < samples; ++m) {
            auto loss = model.forward(reference.slice, reference.params, batch.inputs[m], batch.targets[m]) /
                        static_cast<double>(samples);
            loss.backward();
            referenceLoss += loss.item<double>();
        }
        Optimizer(options.lr, options.adam).step(reference);
    }
    report.reference_loss = referenceLoss;

    // Replicas hold the summed gradient after the reduce, so the first holder of a name is the
    // pipeline's gradient for it.
    for (const auto& [name, gRef] : reference.gradSnapshot) {
        const torch::Tensor* g = nullptr;
        for (const auto& outcome : outcomes) {
            auto it = outcome.grads.find(name);
            if (it == outcome.grads.end()) continue;
            g = &it->second;
            // Outcomes gathered from other processes arrive on the CPU.
            const auto w = outcome.weights.at(name).to(gRef.device());
            report.max_weight_abs_diff =
                std::max(report.max_weight_abs_diff, (w - reference.params.at(name)).abs().max().item<double>());
            break;
        }
        ++report.compared_parameters;
        if (!g) {
            report.grads_match = false;
            report.mismatched.push_back(name + " (no pipeline gradient)");
            continue;
        }
        const torch::Tensor grad = g->to(gRef.device());
        const double absDiff = (grad - gRef).abs().max().item<double>();
        const double rel = absDiff / (gRef.abs().max().item<double>() + 1e-12);
        report.max_grad_abs_diff = std::max(report.max_grad_abs_diff, absDiff);
        report.max_grad_rel_diff = std::max(report.max_grad_rel_diff, rel);
        if (!gradientsAgree(grad, gRef, samples, options)) {
            report.grads_match = false;
            report.mismatched.push_back(name);
        }
    }
}

}  // namespace mario::exec
