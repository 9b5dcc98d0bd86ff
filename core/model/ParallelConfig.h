#pragma once
// How a training step is split across devices.
#include "core/model/LayerSplit.h"
#include "core/model/Schemes.h"

namespace mario {

struct ParallelConfig {
    Scheme scheme = Scheme::OneFOneB;
    int pp = 1;  // pipeline devices
    int dp = 1;
    int tp = 1;
    int chunks = 1;  // stages per device for chunked schemes (v)
    int micro_batch_size = 1;
    int global_batch_size = 1;
    int group_size = 0;  // interleaved micro-batch group; 0 means pp (Megatron's default)
    bool distributed_optimizer = false;
    // The plan's overlap_factor (Plan.h): how much of an overlapped pair's shorter half
    // hides under the longer. Only DualPipe and DualPipeV make overlapped pairs.
    double overlap_factor = 0;
    // Which layers each chain position holds (LayerSplit.h); even unless the config says.
    LayerSplit layer_split;

    // Micro-batches per pipeline per step: global / (dp * mbs). In 64 bits: dp * mbs of two
    // in-range values can exceed int (65536 * 65536 wrapped to 0 and divided by it).
    int microbatches() const {
        const long long samplesPerStep = static_cast<long long>(dp) * micro_batch_size;
        return samplesPerStep > 0 ? static_cast<int>(global_batch_size / samplesPerStep) : 0;
    }
};

}  // namespace mario
