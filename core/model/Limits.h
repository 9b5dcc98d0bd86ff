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
inline constexpr int kMaxStages = 65536;                   // stages in a plan
inline constexpr int kMaxStageMicrobatches = 1 << 20;      // stages * micro-batches of a generated plan
inline constexpr std::int64_t kMaxInstructions = 1 << 24;  // all devices' programs together
// (stage, micro-batch) pairs of a plan, stages × micro-batch numbers in use, per instruction
// (plus a fixed 2^20): the simulator keeps dense tables of about 26 bytes a pair. A plan of one
// chain has at most a few pairs per instruction; but each chain of a plan runs micro-batches of
// its own (the validator's rule), so pairs grow with the square of the chains: 65536
// single-stage chains would make 4.3e9 pairs, 110 GB of tables. About a thousand
// single-stage chains fit (docs/limits.md).
inline constexpr std::int64_t kMaxPairsPerInstruction = 64;
inline constexpr std::int64_t kPairsAlwaysAllowed = 1 << 20;
inline constexpr std::int64_t kMaxFileBytes = 256ll << 20;  // one JSON or CSV file
// What one JSON file may take once parsed (nlohmann::json's values, estimated before any is
// built: core/io/JsonScan.h). The largest plan the limits above allow, 2^24 action strings in
// 65536 programs with 65536 stages, takes about 1.4 GiB; a file padded with empty objects would
// take 33 bytes per byte of file, 8 GiB at the file limit.
inline constexpr std::int64_t kMaxJsonMemoryBytes = 1536ll << 20;
inline constexpr int kMaxAsciiWidth = 10000;  // `mario simulate --width`
inline constexpr int kMaxThreads = 1024;      // `mario tune --threads`
inline constexpr int kMaxTop = 100000;        // `mario tune --top`
// `mario tune --progress-every`, seconds between progress lines off a terminal: a day; below
// any positive interval a line follows each candidate, which is the shortest there is.
inline constexpr double kMaxProgressEverySeconds = 86400;
// A tuner search's (stage, micro-batch) pairs summed over its candidates, what its simulations
// and passes grow with (Tuner::searchPairs). Measured on 2 cores: LLaMA-2 13B on 8 devices with
// a global batch of 16384 is 1.9e7 pairs in 12.6 s; `mario tune --devices 65536 --tp` on a batch
// of 2^24 samples is 1.25e8 pairs, which ran for 372 s without a word. The examples' and the
// tests' searches are below 3e5.
inline constexpr double kMaxTunePairs = 5e7;
// A device's memory (a config's memory_limit_gb, a card's memory_gb, `mario tune --memory`):
// an exabyte, where 1.8e299 GB and up would not even be a finite number of bytes.
inline constexpr double kMaxMemoryBytes = 1e18;

}  // namespace mario::limits
