#pragma once
// The largest inputs the tools accept, in one place. Each is far beyond any real training run
// (the largest public pipelines use a few hundred devices and a few thousand micro-batches per
// step) and small enough that the work it allows ends in seconds and fits in memory. Readers
// check each number where they read it and name the limit in their message; docs/limits.md
// explains them to users.
#include <cstdint>

namespace mario::limits {

inline constexpr int kMaxDevices = 65536;         // pp * dp * tp
inline constexpr int kMaxPipelineDevices = 1024;  // pp
inline constexpr int kMaxTensorParallel = 64;     // tp
inline constexpr int kMaxChunks = 64;             // interleaved stages per device
inline constexpr int kMaxMicrobatches = 16384;    // per pipeline per step
inline constexpr int kMaxMicroBatchSize = 65536;  // samples per micro-batch
inline constexpr int kMaxGlobalBatch = 1 << 24;   // samples per step
inline constexpr int kMaxLayers = 100000;
inline constexpr int kMaxStages = 65536;                    // stages in a plan
inline constexpr int kMaxStageMicrobatches = 1 << 20;       // stages * micro-batches of a generated plan
inline constexpr std::int64_t kMaxInstructions = 1 << 24;   // all devices' programs together
inline constexpr std::int64_t kMaxFileBytes = 256ll << 20;  // one JSON or CSV file
inline constexpr int kMaxAsciiWidth = 10000;                // `mario simulate --width`
inline constexpr int kMaxThreads = 1024;                    // `mario tune --threads`
inline constexpr int kMaxTop = 100000;                      // `mario tune --top`
// A device's memory (a config's memory_limit_gb, a card's memory_gb, `mario tune --memory`):
// an exabyte, where 1.8e299 GB and up would not even be a finite number of bytes.
inline constexpr double kMaxMemoryBytes = 1e18;

}  // namespace mario::limits
