#include "core/sweep/SweepKnob.h"

#include <cmath>
#include <cstdio>

#include "core/model/Limits.h"

namespace mario {

std::string KnobValue::text() const {
    if (isWord()) return word;
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.10g", number);
    return buffer;
}

const std::vector<SweepKnob>& sweepKnobs() {
    using K = SweepKnob::Kind;
    // The keys and limits are the config reader's (core/io/ConfigJson.cpp, TrainingJson.cpp,
    // PresetLibrary's model and hardware objects); the sizes that hold activations or weights
    // per device grow memory.
    static const std::vector<SweepKnob> knobs = {
        {"parallel.micro_batch_size", K::Integer, true, {}, limits::kMaxMicroBatchSize, "samples per micro-batch"},
        {"parallel.global_batch_size", K::Integer, true, {}, limits::kMaxGlobalBatch,
         "samples per step (more micro-batches)"},
        {"microbatches", K::Integer, true, {}, limits::kMaxMicrobatches, "micro-batches per pipeline per step"},
        {"model.sequence_length", K::Integer, true, {}, 1 << 24, "tokens per sample"},
        {"model.hidden", K::Integer, true, {}, 1 << 20,
         "hidden size; heads, KV heads and an explicit FFN size scale with it (the head size stays)"},
        {"model.layers", K::Integer, true, {}, limits::kMaxLayers, "transformer layers"},
        {"parallel.pp", K::Integer, false, {}, limits::kMaxPipelineDevices, "pipeline devices"},
        {"parallel.dp", K::Integer, false, {}, limits::kMaxDevices, "data-parallel replicas"},
        {"parallel.tp", K::Integer, false, {}, limits::kMaxTensorParallel, "tensor-parallel degree"},
        {"parallel.chunks", K::Integer, false, {}, limits::kMaxChunks, "stages per device of chunked schemes"},
        {"parallel.layer_split", K::Word, false, "even|balanced|search", 0,
         "layers per chain position: even, balancing each device's F + B + R, or the fastest step simulated"},
        {"memory_limit_gb", K::Number, false, {}, limits::kMaxMemoryBytes / 1e9, "memory limit per device, GB"},
        {"hardware.intra_node_gb_per_s", K::Number, false, {}, 1e6, "link bandwidth within a node (NVLink), GB/s"},
        {"hardware.inter_node_gb_per_s", K::Number, false, {}, 1e6,
         "link bandwidth between nodes (InfiniBand), GB/s"},
        {"training.attention", K::Word, false, "flash|materialized|eager", 0, "attention kernels"},
        {"training.recompute", K::Word, false, "none|selective|full", 0, "the framework's own recomputation"},
        {"training.sequence_parallel", K::Word, false, "true|false", 0, "sequence parallelism with tp > 1"},
        {"training.framework", K::Word, false, "megatron|torchtitan|deepspeed", 0,
         "the stack that issues the kernels and sends the boundaries"},
        {"training.overlap_p2p_comm", K::Word, false, "true|false", 0,
         "pipeline sends beside compute, or waited for by the sender"},
        {"training.host_op_us", K::Number, false, {}, 1e6, "the host's cost per issued operator, microseconds"},
    };
    return knobs;
}

std::string knobKeyList(bool growing) {
    std::string list;
    for (const SweepKnob& knob : sweepKnobs()) {
        if (growing && !knob.grows_memory) continue;
        if (!list.empty()) list += ", ";
        list += knob.key;
    }
    return list;
}

Result<const SweepKnob*> findKnob(std::string_view name) {
    const SweepKnob* byLeaf = nullptr;
    int leafMatches = 0;
    for (const SweepKnob& knob : sweepKnobs()) {
        if (knob.key == name) return &knob;
        const std::string_view key = knob.key;
        const std::size_t dot = key.rfind('.');
        if (key.substr(dot == std::string_view::npos ? 0 : dot + 1) == name) {
            byLeaf = &knob;
            ++leafMatches;
        }
    }
    if (leafMatches == 1) return byLeaf;
    return makeError("unknown knob \"" + std::string(name) + "\" (expected one of " + knobKeyList() + ")");
}

}  // namespace mario
