#pragma once
// `mario-executor calibrate --check` (issue 40 item 6, issue 44 item 3; docs/calibration.md): does
// a preset predict this machine's transformer block? One block's forward and backward are
// measured as `mario-executor profile` measures them (the slope over stages of 1..N blocks, so
// what a stage costs beside its blocks drops out) and predicted through core's analytical model
// from the freshly calibrated preset and from any bundled preset named beside it (h100, h200…),
// each with its error predicted / measured − 1. Torch-free API; the measuring is Profiler.cpp's.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cost/TransformerKernels.h"
#include "core/model/Config.h"
#include "core/model/HardwareConfig.h"
#include "core/util/Result.h"
#include "executor/ModelSpec.h"

namespace mario::exec {

// The executor's GPT block (GptModel.cpp) in core's words: LayerNorm, a GELU MLP of 4h, biases,
// eager attention (scale, mask and softmax as kernels of their own), no dropout, one device.
Config executorBlockConfig(const ModelSpec& spec, int microBatch, const HardwareConfig& hardware);

// One block's times as core's analytical model predicts them on `hardware`, with the kernels the
// executor's autograd runs that core's Megatron-LM block does not: each weight gradient's
// accumulation into .grad (CalibrationCheck.cpp).
Result<KernelTimes> predictBlock(const ModelSpec& spec, int microBatch, const HardwareConfig& hardware);

struct BlockPrediction {
    std::string preset;  // the preset's name
    double forward_ms = 0;
    double backward_ms = 0;  // I + W
};

struct BlockCheck {
    std::string device, dtype;
    double measured_forward_ms = 0, measured_backward_ms = 0;
    double forward_r2 = 1, backward_r2 = 1;  // the slopes' fits
    std::vector<BlockPrediction> predictions;

    static double error(double predicted, double measured) { return predicted / measured - 1; }
    nlohmann::json toJson() const;
    // The measured block of a toJson() document (predictions left empty); none when it holds no
    // positive times.
    static std::optional<BlockCheck> measuredFrom(const nlohmann::json& document);
    // One line per preset: "h100: forward 2.19 ms (−7.8%), backward 3.96 ms (−3.9%)".
    std::vector<std::string> lines() const;
};

struct BlockCheckOptions {
    ModelSpec model;
    int micro_batch_size = 1;
    std::string device = "cpu";
    std::string dtype = "float64";
    int max_blocks = 3;  // stages of 1..max_blocks blocks
    int repeats = 7;
};

// The block predicted for every preset, in order; an error names a preset the model refuses.
Result<std::vector<BlockPrediction>> predictBlocks(const ModelSpec& spec, int microBatch,
                                                   const std::vector<HardwareConfig>& presets);

// Measures the block once and predicts it for every preset given (the calibrated one first).
Result<BlockCheck> checkBlock(const BlockCheckOptions& options, const std::vector<HardwareConfig>& presets);

}  // namespace mario::exec
