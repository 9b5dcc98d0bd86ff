#pragma once
// A plan: every device's program plus the per-stage costs that make it simulable
// (docs/plan-format.md). Plain data; PipelineTopology derives the chain structure from it.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/schedule/Instruction.h"
#include "core/schedule/StageCost.h"

namespace mario {

struct LinkSpec {
    double latency_ms = 0;
    double bandwidth_gb_per_s = 0;  // 0 means infinite bandwidth

    double transferMs(double bytes) const {
        return latency_ms + (bandwidth_gb_per_s > 0 ? bytes / (bandwidth_gb_per_s * 1e6) : 0.0);
    }
};

struct StageSpec {
    int index = 0;
    int device = 0;
    StageCost cost;
    std::optional<std::pair<int, int>> layers;  // [begin, end) model layers
};

struct DeviceProgram {
    int index = 0;
    std::vector<Instruction> program;
};

// Descriptive fields: they do not change the simulated timeline but feed throughput,
// the memory limit of prepose-forward, and what the GUI shows.
struct PlanInfo {
    std::string name;
    std::string scheme;
    int micro_batch_size = 1;
    int sequence_length = 0;
    int data_parallel = 1;
    std::optional<double> memory_limit_bytes;
    // The card's memory (the hardware preset's memory_gb), when the plan was built for real
    // hardware. Only the memory verdict reads it, when no limit is set (sim/MemoryFit.h): the
    // passes keep to memory_limit_bytes alone, so a plan without a limit schedules as before.
    std::optional<double> device_memory_bytes;
    // Memory the framework holds on every device besides the stages' tensors (the hardware's
    // framework_reserve_gb): counted in each device's static bytes.
    double reserve_bytes = 0;
    // For TFLOP/s and MFU (sim/SimResult.h): the tensor-parallel degree behind each simulated
    // device, and one GPU's dense peak (0: unknown, no MFU).
    int tensor_parallel = 1;
    double peak_tflops = 0;
    double model_parameters = 0;  // distinct parameters of the whole model (0: unknown)
    std::vector<std::string> passes_applied;
    std::string notes;
    // Costed by a config's unit_costs (the paper's teaching model): its times are abstract time
    // units, not milliseconds. Descriptive, so that a unit-cost plan reopened is still read in
    // time units (the window showed "22 ms").
    bool unit_costs = false;
};

struct Plan {
    PlanInfo info;
    std::vector<std::vector<int>> pipelines;  // chains of stages; empty means one chain 0..S-1
    LinkSpec link;
    // How much of an overlapped pair's shorter half hides under the longer (0..1): a pair
    // takes T_F + T_B − overlap_factor · min(T_F, T_B). 0 runs the two computations one
    // after the other on one stream; DualPipe's hidden all-to-all is worth more.
    double overlap_factor = 0;
    std::vector<StageSpec> stages;
    std::vector<DeviceProgram> devices;

    // One more than the largest micro-batch index in any program.
    int microbatchCount() const;
    std::size_t instructionCount() const;
    // The chains, with the default single chain filled in.
    std::vector<std::vector<int>> chains() const;
};

}  // namespace mario
