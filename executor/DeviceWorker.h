#pragma once
// Interprets one device's program in order on its own thread (docs/execution-model.md). The same
// interpreter serves every backend: what differs is the Transport it talks through and the
// torch device its tensors live on. It runs instructions and keeps their tensors; the optimizer
// step (Optimizer.h) and the live instruction events (LiveEventRecorder.h) are their own classes.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include <torch/torch.h>

#include "core/schedule/PipelineTopology.h"
#include "core/schedule/Plan.h"
#include "executor/DeviceMemory.h"
#include "executor/DeviceMemoryBook.h"
#include "executor/GptModel.h"
#include "executor/LiveEventRecorder.h"
#include "executor/Optimizer.h"
#include "executor/StageRuntime.h"
#include "executor/Transport.h"

namespace mario::exec {

// Where a worker sits in the run and how it steps.
struct WorkerPlace {
    int device = 0;    // the plan's device whose program it runs
    int replica = 0;   // data-parallel replica
    int replicas = 1;  // data-parallel degree: the loss is a mean over replicas × micro-batches
    int step = 0;      // iteration, for the live events
    double lr = 0.01;
    bool adam = false;
    bool snapshot = true;  // keep the gradients for the reference check (Optimizer.h)
};

class DeviceWorker {
public:
    DeviceWorker(const WorkerPlace& place, const Plan& plan, const PipelineTopology& topology, const GptModel& model,
                 std::map<int, StageRuntime*> stages, const Batch& batch, Transport& transport);

    // Live profiling: `sink` (already thread-safe) receives one line per instruction with
    // start/end in microseconds since `origin`, in program order (LiveEventRecorder).
    void setEventSink(std::function<void(const std::string&)> sink, std::chrono::steady_clock::time_point origin) {
        recorder_ = std::make_unique<LiveEventRecorder>(std::move(sink), origin);
    }

    // Per-device memory where pipeline devices share an allocator: this worker's thread charges
    // its allocations to `account` of `book` while it runs, and its live events and
    // peakAllocatedBytes() read that account (DeviceMemoryBook.h). Without a book they read the
    // allocator of the worker's GPU (a multi-process run: the GPU is the device's alone).
    void setMemoryBook(std::shared_ptr<DeviceMemoryBook> book, int account) {
        book_ = std::move(book);
        account_ = account;
    }

    // Runs the whole program; on error reports "device D, instruction X: why" to the exchange.
    // Makes the worker's GPU current on this thread first (DeviceStreams.h).
    void run();

    // Sum over this device's last-stage micro-batches of loss / (M · dp) (the step loss is the
    // sum over all workers).
    double lossSum() const { return lossSum_; }

    // The largest sum, over the (stage, mb) slots alive after any instruction, of the plan's
    // activation_bytes (a slot holding its forward graph) or checkpoint_bytes (a checkpointed
    // slot holding only its input). Measured from the tensors the interpreter really holds, so
    // it checks that F/R/B keep and free what docs/execution-model.md says (the simulator's memory model).
    double peakActivationBytes() const { return peakBytes_; }
    // The most this worker's account held (with a memory book), or the allocator's peak on this
    // worker's GPU (0 on the CPU without a book, which has no reading).
    double peakAllocatedBytes() const { return peakAllocated_; }

private:
    // Activations and gradients of one (stage, micro-batch) between its F and its B.
    struct Slot {
        torch::Tensor input;          // tokens or received hidden state (a leaf requiring grad)
        torch::Tensor output;         // hidden state, or the scaled loss on a last stage
        torch::Tensor outGrad;        // gradient of output from the next stage
        torch::Tensor inGrad;         // gradient of input, to send back
        bool forwarded = false;       // F ran (a received input alone is not yet an activation)
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
    // What the allocator holds for this worker now: its account, or its GPU's statistics.
    std::optional<DeviceMemoryReading> readMemory() const;
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
    Optimizer optimizer_;
    std::unique_ptr<LiveEventRecorder> recorder_;  // only with a sink
    std::shared_ptr<DeviceMemoryBook> book_;       // only where devices share an allocator
    int account_ = 0;
    std::string current_;  // "device D at INSTRUCTION", for other devices' timeout messages
};

}  // namespace mario::exec
