#pragma once
// `mario-executor profile` (issue 5, "mario-executor profile"): measures a stage of x = 1..K
// transformer blocks of the executor's GPT model on the CPU backend and fits y = a·x + b for
// every quantity core's ProfileCostModel reads (core/cost/ProfileCostModel.h), so that the
// simulator can be driven by measured costs. Torch-free API; Torch stays in Profiler.cpp.
#include <cstdint>
#include <string>
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
    std::uint64_t seed = 0;
    std::string command_line;  // recorded in the profile's notes
    std::string name;          // optional profile name
};

// One measured stage of `blocks` transformer blocks (no embedding, no head).
struct ProfilePoint {
    int blocks = 0;
    double forward_ms = 0;
    double backward_ms = 0;
    double recompute_ms = 0;
    double activation_bytes = 0;
    double static_bytes = 0;
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
    nlohmann::json profile;  // the "mario-profile" v1 document
    LineFit forward, backward, recompute, activation, statics;
};

// Errors: invalid options (max_blocks, repeats, micro_batch_size < 1).
Result<ProfileResult> profileModel(const ProfileOptions& options);

}  // namespace mario::exec
