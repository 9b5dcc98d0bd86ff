#pragma once
// Interprets one device's program in order on its own thread (DESIGN.md §3). The same
// interpreter serves every backend: what differs is the Transport it talks through and the
// torch device its tensors live on.
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "GptModel.h"
#include "InstructionClock.h"
#include "Transport.h"
#include "schedule/PipelineTopology.h"
#include "schedule/Plan.h"

namespace mario::exec {

// One stage's weights and what the step did to them. Owned by the Executor, touched only by
// the thread of the stage's device while a step runs.
struct StageRuntime {
    int index = 0;
    LayerSlice slice;
    ParamMap params;
    ReduceGroup reduce;        // every stage of the run holding the same slice (Chimera: 2 × dp)
    bool reducePending = false;  // REDUCE_GRAD contributed, the sum not yet collected
    bool reduced = false;      // gradients hold the sum over replicas this step
    bool stepped = false;      // OPT ran this step
    ParamMap gradSnapshot;     // gradients just before the optimizer step (what tests compare)
    ParamMap adamM, adamV;     // Adam moments (empty with SGD)
    int adamSteps = 0;
};

// The micro-batches of one step, replica-major (replica r's micro-batch m is r·M + m): token
// inputs [B, seq] and targets [B, seq], on the device of the worker that reads them.
struct Batch {
    std::vector<torch::Tensor> inputs;
    std::vector<torch::Tensor> targets;
};

// Where a worker sits in the run and how it steps.
struct WorkerPlace {
    int device = 0;    // the plan's device whose program it runs
    int replica = 0;   // data-parallel replica
    int replicas = 1;  // data-parallel degree: the loss is a mean over replicas × micro-batches
    int step = 0;      // iteration, for the live events
    double lr = 0.01;
    bool adam = false;
};

class DeviceWorker {
public:
    DeviceWorker(const WorkerPlace& place, const Plan& plan, const PipelineTopology& topology, const GptModel& model,
                 std::map<int, StageRuntime*> stages, const Batch& batch, Transport& transport);

    // Live profiling: `sink` (already thread-safe) receives one JSON line per instruction with
    // start/end in microseconds since `origin`, in program order. On a GPU a line goes out once
    // the GPU has finished the instruction (InstructionClock), so lines trail the host a little.
    void setEventSink(std::function<void(const std::string&)> sink, std::chrono::steady_clock::time_point origin) {
        sink_ = std::move(sink);
        origin_ = origin;
    }

    // Runs the whole program; on error reports "device D, instruction X: why" to the exchange.
    void run();

    // Sum over this device's last-stage micro-batches of loss / (M · dp) (the step loss is the
    // sum over all workers).
    double lossSum() const { return lossSum_; }

    // The largest sum, over the (stage, mb) slots alive after any instruction, of the plan's
    // activation_bytes (a slot holding its forward graph) or checkpoint_bytes (a checkpointed
    // slot holding only its input). Measured from the tensors the interpreter really holds, so
    // it checks that F/R/B keep and free what DESIGN.md §3 says (the simulator's memory model).
    double peakActivationBytes() const { return peakBytes_; }
    // The allocator's peak on this worker's GPU (0 on the CPU, which has no reading).
    double peakAllocatedBytes() const { return peakAllocated_; }

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
        bool weightsPending = false;  // I ran, W has not: the graph is kept for the weights
    };

    void execute(const Instruction& instruction, std::size_t position);
    void forward(int stage, int microbatch, bool keepGraph);
    void backward(int stage, int microbatch);
    void backwardInput(int stage, int microbatch);
    void backwardWeight(int stage, int microbatch);
    // The gradient arriving at the stage's output (none for the loss of a last stage).
    torch::Tensor outputGradient(int stage, int microbatch, Slot& slot);
    bool sameDevice(int stage) const { return stage >= 0 && topology_.deviceOf(stage) == device_; }
    StageRuntime& stage(int index);
    // Sends this stage's gradients to its REDUCE_GRAD group unless they are summed or on their
    // way already; collectReduce then waits for the sum.
    void contributeUnlessReduced(StageRuntime& stage);
    void collectReduce(StageRuntime& stage);
    // "device 2", or "device 2 of replica 1" when data-parallel replicas run too.
    std::string where() const;
    void measureMemory();
    // Sends the live lines of the instructions whose times are known; with `wait`, of all.
    void publishTimed(bool wait);
    // Hand-over between two stages of this device (no SEND/RECV in the plan): same thread, so a
    // missing tensor is a plan error at once, not a wait.
    void handOver(Direction direction, int stage, int microbatch, torch::Tensor tensor);
    torch::Tensor takeOver(Direction direction, int stage, int microbatch);
    // The tensor for (direction, stage, mb): handed over on this device, or received.
    torch::Tensor incoming(Direction direction, int stage, int microbatch, bool fromThisDevice);

    WorkerPlace place_;
    int device_;
    const Plan& plan_;
    const PipelineTopology& topology_;
    const GptModel& model_;
    std::map<int, StageRuntime*> stages_;
    const Batch& batch_;
    Transport& transport_;
    int microbatches_;
    std::map<std::tuple<Direction, int, int>, torch::Tensor> handovers_;
    torch::Device torchDevice_;
    double peakAllocated_ = 0;
    std::set<std::pair<int, int>> checkpointed_;  // (stage, mb) whose F is followed by an R
    std::map<std::pair<int, int>, Slot> slots_;
    double lossSum_ = 0;
    double peakBytes_ = 0;
    double peakBytesNow_ = 0;  // activation bytes held after the latest instruction
    std::function<void(const std::string&)> sink_;
    std::chrono::steady_clock::time_point origin_;
    // An instruction's live line waiting for its times (a GPU runs behind the interpreter).
    struct TimedInstruction {
        InstructionClock::Mark start, end;
        nlohmann::json event;
    };
    std::unique_ptr<InstructionClock> clock_;  // only with a sink
    std::deque<TimedInstruction> timed_;
    std::string current_;  // "device D at INSTRUCTION", for other devices' timeout messages
};

}  // namespace mario::exec
