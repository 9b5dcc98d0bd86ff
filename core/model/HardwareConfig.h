#pragma once
// One accelerator and its links, as the cost model needs it.
#include <string>

namespace mario {

struct HardwareConfig {
    std::string name;
    double peak_tflops = 0;       // dense bf16
    double achievable_mfu = 0.5;  // fraction of peak a transformer layer reaches
    double memory_gb = 0;         // device memory (GB = 1e9 bytes)
    double hbm_gb_per_s = 0;
    double intra_node_gb_per_s = 0;  // NVLink, per direction
    double inter_node_gb_per_s = 0;  // InfiniBand, per GPU
    double link_latency_ms = 0;
    int gpus_per_node = 8;
    // GEMMs of small micro-batches run below achievable_mfu: efficiency × tokens / (tokens + this),
    // tokens = micro-batch size × sequence length. 0 turns the effect off. This is what lets
    // larger micro-batches (which Mario's memory savings allow) run faster (paper §6.1).
    double mfu_half_tokens = 0;
};

}  // namespace mario
