#pragma once
// `mario-executor calibrate` (issue 40, item 6; docs/calibration.md): measures this machine's CPU
// or GPU with LibTorch's own kernels (a GEMM sweep over (M, N, K) at a model's sizes, the
// attention core, the element-wise and normalisation kernels of its block, the per-kernel cost
// of tiny kernels, a large copy) and fits the hardware preset fields that core's analytical
// model reads (CalibrationFit.h). The preset carries its provenance in "notes" (machine, date,
// LibTorch, dtype, threads, spread) and its raw measurements in "source". Torch-free API; Torch
// stays in Calibrator.cpp.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model/HardwareConfig.h"
#include "core/util/Result.h"
#include "executor/CalibrationFit.h"
#include "executor/ModelSpec.h"

namespace mario::exec {

struct CalibrationOptions {
    std::string device = "cpu";  // or "cuda", "cuda:N"
    std::string dtype;           // empty: float64 on the CPU (the executor's default), bfloat16 on a GPU
    // The block whose sizes the sweep is built from; empty: defaultCalibrationModel(device).
    std::optional<ModelSpec> model;
    int micro_batch_size = 1;
    bool quick = false;  // fewer repeats: seconds on a small model (the tests)
    int repeats = 0;     // 0: 5 with --quick, 9 without; each time is the median after one warm-up
    std::string name;    // the preset's name; empty: "<device>-calibrated"
    // Links the measurement cannot see (NVLink, InfiniBand without a second GPU or node), memory
    // reserve and GPUs per node from a preset; empty: measured copy bandwidth, as the CPU's
    // in-process transport copies tensors.
    std::optional<HardwareConfig> links_from;
    std::string command_line;  // recorded in the notes
};

// The block a calibration measures when none is named: a small GPT block on the CPU (seconds),
// GPT-3-like sizes on a GPU.
ModelSpec defaultCalibrationModel(const std::string& device);

struct CalibrationResult {
    HardwareConfig hardware;  // the fitted preset
    std::string dtype;        // the dtype every kernel ran in
    std::vector<GemmSample> gemms;
    std::vector<StreamSample> streams;
    FitSpread gemm_spread, stream_spread;
    FitSpread grid_spread;  // over every product measured, the grid's included
    double copy_gb_per_s = 0;
    double attention_forward_ms = 0, attention_backward_ms = 0;
    std::string attention_kernel;  // what the flash fields were measured on
    double worst_repeat_spread = 0;
    nlohmann::json preset;  // the "mario-hardware" document to write
};

// Errors: a device or dtype the machine does not have, a sweep whose estimated time is over the
// bound (one line saying which option shrinks it), a measurement that failed (out of memory).
Result<CalibrationResult> calibrateDevice(const CalibrationOptions& options);

}  // namespace mario::exec
