#pragma once
// What refuses `mario-executor profile` before it measures for long, as RunRefusals.h refuses a
// run: the threads its busy neighbours need (ThreadBudget.h), the memory it would hold
// (RunMemoryEstimate.h's estimateProfileMemory), and the time it would take. Each is one line
// and exit 2 (a bad option, docs/exit-codes.md). Before, `--micro-batch-size 65536` grew past
// 6 GB, a huge `--model` ended in LibTorch's 30-line allocator backtrace, and `--max-blocks 4096`
// measured 1 + 2 + ... + 4096 = 8.4 million blocks' worth, each --repeats times.
// Torch-free; Profiler.cpp calls these.
#include <optional>
#include <string>

#include "executor/Profiler.h"

namespace mario::exec {

// The largest --max-blocks: stages of 1..K blocks are each measured, so the work grows as K².
// 256 is twice the blocks of the deepest model we know of (Llama 3.1 405B: 126).
inline constexpr int kMaxProfileBlocks = 256;

// The longest a profile may be estimated to measure: a profile is a calibration, and the ones
// the project ships took under ten minutes (docs/gpu.md#profiles); an hour is a typo's worth.
inline constexpr double kMaxProfileSeconds = 3600;

// The threads or memory the profile cannot have, or none. `gpu` is the GPU's index on CUDA.
std::optional<std::string> profileRefusal(const ProfileOptions& options, std::optional<int> gpu);

// Every stage measured costs its blocks' worth of one timed repeat, `repeats` + 1 times (the
// warm-up), again beside the neighbours, plus the embedding's and the head's. Given the seconds
// one repeat of one block took alone (probed first) and the CPU cores the neighbours share (0 on
// a GPU, whose partitions each have their own SMs), the line that refuses a profile estimated
// past kMaxProfileSeconds, or none.
std::optional<std::string> profileTimeRefusal(const ProfileOptions& options, double secondsPerBlockRepeat, int cores);

}  // namespace mario::exec
