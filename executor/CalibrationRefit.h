#pragma once
// The fits of `mario-executor calibrate` from its measurements, without a device: what calibrate
// runs after measuring (fitCalibration), and `calibrate --refit PRESET.json`, which reads the
// measurements a calibrated preset keeps in its `source` and fits them again with this build's
// cost model. A cost-model change reaches a preset measured on a GPU days before, and when
// the source holds the block `--check` measured, the refitted preset is checked against it too
// (docs/calibration.md). Torch-free.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model/HardwareConfig.h"
#include "core/util/Result.h"
#include "executor/CalibrationCheck.h"
#include "executor/CalibrationFit.h"
#include "executor/ModelSpec.h"

namespace mario::exec {

// Everything calibrate measures that the fits read.
struct CalibrationSamples {
    double tiny_kernel_us = 0;  // the mean of a one-element addition's forward and backward
    double copy_gb_per_s = 0;   // the large copy
    std::vector<StreamSample> streams;
    std::vector<GemmSample> gemms;
    double attention_forward_ms = 0, attention_backward_ms = 0;
    double attention_forward_flops = 0;  // the model's count: the causal half of 4·b·s²·h
};

struct CalibrationFits {
    HardwareConfig hardware;
    FitSpread stream, gemm, grid;
};

// The fits in their order (each reads the ones before): kernel overhead, streaming rates, GEMMs,
// attention. `start` holds the fields nothing fits (links, memory, SMs, name).
CalibrationFits fitCalibration(const HardwareConfig& start, const CalibrationSamples& samples);

// A source's model times (each product's model_ms, each element-wise kernel's
// model_forward_ms and model_backward_ms) at the fitted fields: calibrate and --refit alike.
void writeModelTimes(nlohmann::json& source, const HardwareConfig& fitted);

// Now, to the minute, in UTC ("2026-11-28T02:42Z"): when a preset was calibrated or refitted.
std::string utcNow();

struct RefitResult {
    CalibrationFits fits;
    nlohmann::json preset;            // the refitted "mario-hardware" document
    std::optional<BlockCheck> check;  // against the block the source recorded, when it did
};

// Errors: not a calibrated preset (no source, or a measurement missing), no block sizes (the
// source records them since 2026-11-28; `model` names them for older presets), a preset named
// in `against` the model refuses.
Result<RefitResult> refitPreset(const nlohmann::json& preset, const std::optional<ModelSpec>& model,
                                std::vector<HardwareConfig> against, const std::string& commandLine);

}  // namespace mario::exec
