#include "executor/CalibrationCheck.h"

#include <cmath>
#include <cstdio>

#include "core/cost/AnalyticalCostModel.h"
#include "core/cost/ElementwiseBytes.h"
#include "core/cost/KernelRoofline.h"
#include "executor/Profiler.h"

namespace mario::exec {

Config executorBlockConfig(const ModelSpec& spec, int microBatch, const HardwareConfig& hardware) {
    Config c;
    c.model.layers = spec.layers;
    c.model.hidden = spec.hidden;
    c.model.heads = spec.heads;
    c.model.vocab = spec.vocab;
    c.model.sequence_length = spec.seq;
    c.hardware = hardware;
    c.parallel.micro_batch_size = microBatch;
    c.parallel.global_batch_size = microBatch;
    c.training.attention = TrainingConfig::Attention::Eager;
    c.training.dropout = false;
    return c;
}

namespace {

// The kernels of the executor's block that core's model, which describes Megatron-LM, does not
// run: Megatron-LM accumulates each weight gradient into its fp32 main gradient inside the GEMM
// (core charges that GEMM's output bytes), while LibTorch's autograd, which runs the executor on
// the CPU and on a GPU alike, writes the gradient and then adds it into the weight's .grad as a
// kernel of its own (AccumulateGrad: two reads, one write, a gradient sum). Inside the block
// `profile` times (hidden 512, float64, the 2-core EPYC that runs CI) the twelve adds took 1.8 ms
// on LibTorch 1.13 and 2.0 on PyTorch 2.15 of a 46-52 ms backward. Priced as core prices streams
// (KernelRoofline::memoryMs), one kernel per weight: the four products' matrices and biases
// (core's own shapes) and the two LayerNorms' weights and biases.
double gradientAccumulationMs(const AnalyticalCostModel& model, const HardwareConfig& hardware, double hidden) {
    const KernelRoofline roofline(hardware);
    double ms = 4 * roofline.memoryMs(kernel_bytes::kGradientSum * hidden);  // two LayerNorms' w and b
    for (const GemmShape& g : model.kernels().weightGemms())
        ms += roofline.memoryMs(kernel_bytes::kGradientSum * g.n * g.k) + roofline.memoryMs(kernel_bytes::kGradientSum * g.n);
    return ms;
}

}  // namespace

Result<KernelTimes> predictBlock(const ModelSpec& spec, int microBatch, const HardwareConfig& hardware) {
    auto model = AnalyticalCostModel::create(executorBlockConfig(spec, microBatch, hardware));
    if (!model) return makeError(hardware.name + ": " + model.error().message);
    KernelTimes block = model->kernels().block();
    block.weight_grad_ms += gradientAccumulationMs(*model, hardware, spec.hidden);
    return block;
}

nlohmann::json BlockCheck::toJson() const {
    nlohmann::json presets = nlohmann::json::array();
    for (const BlockPrediction& p : predictions)
        presets.push_back({{"preset", p.preset},
                           {"forward_ms", p.forward_ms},
                           {"backward_ms", p.backward_ms},
                           {"forward_error", error(p.forward_ms, measured_forward_ms)},
                           {"backward_error", error(p.backward_ms, measured_backward_ms)}});
    return {{"device", device},
            {"dtype", dtype},
            {"measured",
             {{"forward_ms", measured_forward_ms},
              {"backward_ms", measured_backward_ms},
              {"forward_r2", forward_r2},
              {"backward_r2", backward_r2}}},
            {"predicted", presets}};
}

std::vector<std::string> BlockCheck::lines() const {
    std::vector<std::string> out;
    char line[256];
    std::snprintf(line, sizeof line, "measured block on %s (%s): forward %.3f ms, backward %.3f ms (R² %.4f, %.4f)",
                  device.c_str(), dtype.c_str(), measured_forward_ms, measured_backward_ms, forward_r2, backward_r2);
    out.emplace_back(line);
    for (const BlockPrediction& p : predictions) {
        std::snprintf(line, sizeof line, "%s: forward %.3f ms (%+.1f%%), backward %.3f ms (%+.1f%%)", p.preset.c_str(),
                      p.forward_ms, 100 * error(p.forward_ms, measured_forward_ms), p.backward_ms,
                      100 * error(p.backward_ms, measured_backward_ms));
        out.emplace_back(line);
    }
    return out;
}

Result<std::vector<BlockPrediction>> predictBlocks(const ModelSpec& spec, int microBatch,
                                                   const std::vector<HardwareConfig>& presets) {
    std::vector<BlockPrediction> out;
    for (const HardwareConfig& hardware : presets) {
        auto block = predictBlock(spec, microBatch, hardware);
        if (!block) return block.error();
        out.push_back({hardware.name, block->forward_ms, block->backwardMs()});
    }
    return out;
}

std::optional<BlockCheck> BlockCheck::measuredFrom(const nlohmann::json& document) {
    if (!document.is_object() || !document.contains("measured") || !document["measured"].is_object())
        return std::nullopt;
    const nlohmann::json& measured = document["measured"];
    BlockCheck check;
    check.device = document.value("device", std::string("the calibrated device"));
    check.dtype = document.value("dtype", std::string());
    check.measured_forward_ms = measured.value("forward_ms", 0.0);
    check.measured_backward_ms = measured.value("backward_ms", 0.0);
    check.forward_r2 = measured.value("forward_r2", 1.0);
    check.backward_r2 = measured.value("backward_r2", 1.0);
    if (!(check.measured_forward_ms > 0) || !(check.measured_backward_ms > 0)) return std::nullopt;
    return check;
}

Result<BlockCheck> checkBlock(const BlockCheckOptions& options, const std::vector<HardwareConfig>& presets) {
    BlockCheck check;
    check.device = options.device;
    check.dtype = options.dtype;
    // Predict first: a preset the model refuses is a bad option, found before minutes of measuring.
    auto predictions = predictBlocks(options.model, options.micro_batch_size, presets);
    if (!predictions) return predictions.error();
    check.predictions = std::move(*predictions);
    ProfileOptions profile;
    profile.model = options.model;
    profile.device = options.device;
    profile.dtype = options.dtype;
    profile.micro_batch_size = options.micro_batch_size;
    profile.max_blocks = options.max_blocks;
    profile.repeats = options.repeats;
    auto measured = profileModel(profile);
    if (!measured) return makeError("measuring the block: " + measured.error().message);
    check.measured_forward_ms = measured->forward.a;
    check.measured_backward_ms = measured->backward.a;
    check.forward_r2 = measured->forward.r2;
    check.backward_r2 = measured->backward.r2;
    if (!(check.measured_forward_ms > 0) || !(check.measured_backward_ms > 0))
        return makeError("measuring the block: the times did not grow with the blocks (forward slope " +
                         std::to_string(check.measured_forward_ms) + " ms); a larger --model measures it");
    return check;
}

}  // namespace mario::exec
