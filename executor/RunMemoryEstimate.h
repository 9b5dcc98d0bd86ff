#pragma once
// What a run will allocate, estimated from the model, the plan and the options before any tensor
// exists, so that a model too large for the machine (`--model layers=100000`, `seq=16777216`) is
// refused in one line instead of growing until the kernel kills the process (issue 30). Torch-free:
// the counts follow GptModel.cpp's tensors and what autograd keeps of them, and the tests check
// them against the real model's tensors and the allocator's measured bytes.
//
// The terms (all in the run's dtype unless said otherwise):
//   weights      every stage's copy of its slice (sliceOn per stage and per replica: Chimera's
//                two chains hold the model twice), plus GptModel's master copy where it is one
//                more float64 copy in the same memory (the CPU in float64)
//   float64 master copy  GptModel's weights (always float64 on the host) where they are not
//                folded into `weights`, and the float64 clone of one slice that becomes a stage
//   gradients    one per stage parameter, the step's copy for --reference/--dump-step, and one
//                sum per data-parallel group
//   optimizer state  Adam's two moments per parameter and the step's temporaries (SGD: none
//                kept, one temporary of the largest tensor)
//   activations  per device, the most its live micro-batches hold between F and B (walked over its
//                program: a checkpointed forward keeps only its input until R), plus one block's
//                forward/backward temporaries; the attention is eager, so every block keeps its
//                B × heads × seq × seq scores and a seq × seq mask
//   reference model  --reference's single-device copy: weights, gradients, their copy, moments
//   tokens       every micro-batch's input and target ids (int64) of every replica
//   bookkeeping  what LibTorch keeps besides the numbers, in host memory: each tensor's records
//                and each live block's autograd graph (measured; RunMemoryEstimate.cpp)
#include <optional>
#include <string>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/util/Result.h"
#include "executor/Executor.h"
#include "executor/MemoryLimits.h"
#include "executor/ModelSpec.h"

namespace mario::exec {

// Parameters of a slice and of the whole model, as GptModel builds them. Doubles: the model
// limits allow counts past 2^63.
double sliceParameters(const ModelSpec& spec, const LayerSlice& slice);
double modelParameters(const ModelSpec& spec);

// Bytes that one micro-batch of `rows` sequences keeps alive through one transformer block
// between its forward and its backward (what autograd saves, the block's input included).
double blockActivationBytes(const ModelSpec& spec, int rows, int bytesPerElement);

// Bytes of the run's dtype: 8, 4 or 2 (float64, float32, bfloat16/float16); 8 for others.
int dtypeBytes(const std::string& dtype);

// Which part of a run this process holds.
struct RunScope {
    int replicas = 1;  // data-parallel pipelines (in one process: all of them)
    // A multi-process run: the one pipeline device this process computes (it still builds every
    // stage's weights of its replica, RunSetup's buildStages); none: every device is here.
    std::optional<int> device;
    bool reference = false;  // this process runs the single-device reference
    bool cuda = false;       // tensors on a GPU; the float64 master copy and LibTorch's records in host memory
};

struct MemoryTerm {
    std::string name;  // "weights", "activations", ...
    double bytes = 0;
    std::string detail;  // how the message names it, e.g. "weights 12.1 GB x 3 copies"
    bool host = true;    // in the host's memory (else the GPU's)
};

struct RunMemoryEstimate {
    std::vector<MemoryTerm> terms;
    double parameters = 0;  // of the whole model

    double bytes(bool host) const;
    const MemoryTerm* term(const std::string& name) const;
};

// Errors: the plan's topology cannot be built (the run would say the same).
Result<RunMemoryEstimate> estimateRunMemory(const Plan& plan, const ExecutorOptions& options, const RunScope& scope);

// What `mario-executor profile` measures with (Profiler.cpp), by the same counts.
struct ProfileScope {
    ModelSpec model;  // layers already raised to max_blocks, as the profiler builds it
    int max_blocks = 1;
    int micro_batch_size = 1;
    std::string dtype = "float64";
    bool adam = false;
    int neighbours = 0;  // threads or partitions running the largest slice beside it
    bool cuda = false;
};

// The most a profile holds at once: GptModel's float64 master copy, the largest measured slice
// (max_blocks blocks, or the head or embedding if larger) with its gradients, optimizer state and
// one micro-batch's graph and temporaries, each neighbour's copy of the slice and its graph, the
// input batch, LibTorch's records. `--micro-batch-size 65536` went past 6 GB of a tiny model's
// activations, and a huge `--model` into LibTorch's allocator error, before this was checked.
RunMemoryEstimate estimateProfileMemory(const ProfileScope& scope);

// The one line that refuses the run (without the program's prefix), or none when the estimate
// fits: the model, the estimate, its largest terms first, and the limit it passes. `what` is
// what needs the memory ("the run", "the profile").
std::optional<std::string> memoryRefusal(const RunMemoryEstimate& estimate, const std::string& model,
                                         const std::optional<MemoryLimit>& host, const std::optional<MemoryLimit>& gpu,
                                         const std::string& what = "the run");

}  // namespace mario::exec
