#pragma once
// Interprets one device's program in order on its own thread (CPU backend, DESIGN.md §3).
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "Exchange.h"
#include "GptModel.h"
#include "schedule/PipelineTopology.h"
#include "schedule/Plan.h"

namespace mario::exec {

// One stage's weights and what the step did to them. Owned by the Executor, touched only by
// the thread of the stage's device while a step runs.
struct StageRuntime {
    int index = 0;
    LayerSlice slice;
    ParamMap params;
    int replicas = 1;          // stages holding the same slice (Chimera: 2)
    bool reducePending = false;  // REDUCE_GRAD contributed, the sum not yet collected
    bool reduced = false;      // gradients hold the sum over replicas this step
    bool stepped = false;      // OPT ran this step
    ParamMap gradSnapshot;     // gradients just before the optimizer step (what tests compare)
    ParamMap adamM, adamV;     // Adam moments (empty with SGD)
    int adamSteps = 0;
};

// The micro-batches of one step: token inputs [B, seq] and targets [B, seq].
struct Batch {
    std::vector<torch::Tensor> inputs;
    std::vector<torch::Tensor> targets;
};

class DeviceWorker {
public:
    DeviceWorker(int device, const Plan& plan, const PipelineTopology& topology, const GptModel& model,
                 std::map<int, StageRuntime*> stages, const Batch& batch, Exchange& exchange, double lr,
                 bool adam, int step);

    // Live profiling: `sink` (already thread-safe) receives one JSON line per instruction with
    // start/end in microseconds since `origin`.
    void setEventSink(std::function<void(const std::string&)> sink, std::chrono::steady_clock::time_point origin) {
        sink_ = std::move(sink);
        origin_ = origin;
    }

    // Runs the whole program; on error reports "device D, instruction X: why" to the exchange.
    void run();

    // Sum over this device's last-stage micro-batches of loss / M (the step loss is the sum
    // over devices).
    double lossSum() const { return lossSum_; }

    // The largest sum, over the (stage, mb) slots alive after any instruction, of the plan's
    // activation_bytes (a slot holding its forward graph) or checkpoint_bytes (a checkpointed
    // slot holding only its input). Measured from the tensors the interpreter really holds, so
    // it checks that F/R/B keep and free what DESIGN.md §3 says (the simulator's memory model).
    double peakActivationBytes() const { return peakBytes_; }

    // SGD, or Adam (beta 0.9/0.999, eps 1e-8, no weight decay), with the gradients as they
    // stand, then zeroes them; snapshots the gradients first. The reference uses it too.
    static void optimizerStep(StageRuntime& stage, double lr, bool adam);

private:
    // Activations and gradients of one (stage, micro-batch) between its F and its B.
    struct Slot {
        torch::Tensor input;     // tokens or received hidden state (a leaf requiring grad)
        torch::Tensor output;    // hidden state, or the scaled loss on a last stage
        torch::Tensor outGrad;   // gradient of output from the next stage
        torch::Tensor inGrad;    // gradient of input, to send back
        bool forwarded = false;  // F ran (a received input alone is not yet an activation)
    };

    void execute(const Instruction& instruction, std::size_t position);
    void forward(int stage, int microbatch, bool keepGraph);
    void backward(int stage, int microbatch);
    bool sameDevice(int stage) const { return stage >= 0 && topology_.deviceOf(stage) == device_; }
    StageRuntime& stage(int index);
    void collectReduce(StageRuntime& stage);
    void measureMemory();

    int device_;
    const Plan& plan_;
    const PipelineTopology& topology_;
    const GptModel& model_;
    std::map<int, StageRuntime*> stages_;
    const Batch& batch_;
    Exchange& exchange_;
    double lr_;
    bool adam_;
    int step_;
    int microbatches_;
    std::set<std::pair<int, int>> checkpointed_;  // (stage, mb) whose F is followed by an R
    std::map<std::pair<int, int>, Slot> slots_;
    double lossSum_ = 0;
    double peakBytes_ = 0;
    double peakBytesNow_ = 0;  // activation bytes held after the latest instruction
    std::function<void(const std::string&)> sink_;
    std::chrono::steady_clock::time_point origin_;
    std::string current_;  // "device D at INSTRUCTION", for other devices' timeout messages
};

}  // namespace mario::exec
