#pragma once
// `mario-executor profile` (issue 5, "mario-executor profile"): measures a stage of x = 1..K
// transformer blocks of the executor's GPT model on the CPU or a GPU (optionally on one of K SM
// partitions with the others busy, docs/gpu.md#profiles) and fits y = a·x + b for every quantity
// core's ProfileCostModel costs (read by core/io/ProfileJson.h), so that the simulator can be
// driven by measured costs. Every fit's R² is reported; below 0.99 the CLI warns. Torch-free
// API; Torch stays in Profiler.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/util/Result.h"
#include "executor/ModelSpec.h"

namespace mario::exec {

struct ProfileOptions {
    ModelSpec model;                // layers is raised to max_blocks when smaller
    std::string device = "cpu";     // or "cuda", "cuda:N": timings then wait for the GPU
    std::string dtype = "float64";  // float32/bfloat16 for GPU profiles that match a real run
    int micro_batch_size = 1;
    int max_blocks = 4;  // stages of 1..max_blocks blocks are measured
    int repeats = 5;     // timings are the median of `repeats` runs after one warm-up
    // --partition-sms K (K >= 1, CUDA only): measure on SM partition 0 of K equal partitions, alone
    // and while the other K−1 run the same blocks; 0: the whole device.
    int partitions = 0;
    // --neighbours N: measure alone and beside N threads running the same blocks (the other
    // devices of an N + 1-device run on this CPU), for the profile's contention. On a GPU it
    // comes with --partition-sms: N of the other K − 1 partitions busy (default all K − 1), so
    // that the contention per busy neighbour can be measured at each count. 0: alone only.
    int neighbours = 0;

    // The neighbours busy beside the measured device or partition.
    int busyNeighbours() const { return partitions > 0 && neighbours == 0 ? partitions - 1 : neighbours; }
    bool adam = false;  // the optimizer step measured: Adam, or SGD (as `run --optimizer`, whose default is SGD)
    std::uint64_t seed = 0;
    std::string command_line;  // recorded in the profile's notes
    std::string name;          // optional profile name
};

// One measured stage of `blocks` transformer blocks (no embedding, no head; the embedding and
// head slices are measured into one too, with blocks 0).
struct ProfilePoint {
    int blocks = 0;
    double forward_ms = 0;
    double backward_ms = 0;
    double recompute_ms = 0;
    double activation_bytes = 0;
    double static_bytes = 0;
    double optimizer_ms = 0;
    double backward_input_ms = 0;  // a split backward's I and W
    double backward_weight_ms = 0;
    double weight_grad_bytes = 0;  // what I keeps until W
    double working_bytes = 0;      // the most a phase allocates above what it keeps
};

struct LineFit {
    double a = 0;
    double b = 0;
    double r2 = 1;  // coefficient of determination (1 when the points have no spread)
};

// Least squares y = a·x + b. A negative slope (timing noise on a flat curve) is clamped to 0
// with b the mean, since the profile format requires a >= 0.
LineFit fitLine(const std::vector<double>& xs, const std::vector<double>& ys);

struct ProfileResult {
    std::vector<ProfilePoint> points;
    std::vector<ProfilePoint> busy_points;  // the same stages beside busy neighbours (times only)
    // Slowdown per busy neighbour: (Σ busy / Σ alone − 1) / neighbours over every measured phase
    // of the block stages, at least 0 (StageCost::contention); 0 without neighbours.
    double contention = 0;
    // With neighbours: the largest block stage's optimizer step alone and beside every neighbour
    // stepping (OptimizerContention.h); its contention is StageCost::optimizer_contention.
    std::optional<double> step_alone_ms, step_beside_ms, optimizer_contention;
    nlohmann::json profile;  // the "mario-profile" v1 document
    LineFit forward, backward, recompute, activation, statics, backwardInput, backwardWeight, optimizer, weightGrad;
};

// Errors: invalid options (max_blocks, repeats, micro_batch_size < 1), a device or partition
// the machine does not have, a measurement that failed (out of memory).
Result<ProfileResult> profileModel(const ProfileOptions& options);

// Every fit of a profile by the name of its key in the profile ("forward_ms", ...) and its R².
using FitQuality = std::pair<std::string, double>;
std::vector<FitQuality> fitQualities(const ProfileResult& result);

// One line per fit whose R² is below `threshold`, naming the fit and its R²: a profile whose
// times do not grow linearly with the blocks (timing noise on a small model: hidden 1024 on an
// H100 gave R² = 0.69) would steer the simulator by noise.
std::vector<std::string> lowFitWarnings(const std::vector<FitQuality>& fits, double threshold = 0.99);

}  // namespace mario::exec
