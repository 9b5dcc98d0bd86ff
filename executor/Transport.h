#pragma once
// What a device worker needs from the rest of the run: SEND/RECV of activations and gradients
// between pipeline stages of one data-parallel replica, and REDUCE_GRAD across the replicas of
// a layer slice. Three implementations share DeviceWorker: in-process (CPU threads, and all
// devices on one GPU), TCP between processes (CPU), NCCL between processes (CUDA).
//
// Semantics follow docs/execution-model.md: a send never waits for its receiver; a receive blocks until
// its (direction, stage, micro-batch) arrives, whatever order the sender sent in, and ends with
// an error naming the waiter instead of hanging; REDUCE_GRAD is split into a non-blocking
// contribute and a collect at OPT (see Exchange.h for why a blocking barrier would deadlock).
#include <optional>
#include <stdexcept>
#include <string>

#include <torch/torch.h>

#include "executor/GptModel.h"

namespace mario::exec {

enum class Direction { Forward, Backward };

// Thrown in a worker when another worker has already failed: it stops quietly, the first
// failure is the one reported.
struct RunAborted : std::runtime_error {
    RunAborted() : std::runtime_error("aborted") {}
};

// The stages holding one layer slice across the run (Chimera's two copies × dp replicas):
// their gradients are summed at REDUCE_GRAD.
struct ReduceGroup {
    std::string key;       // LayerSlice::key()
    int participants = 1;  // stages in the whole run holding the slice
};

class Transport {
public:
    virtual ~Transport() = default;

    // `stage` is the receiving stage: the next one for Forward, the previous one for Backward.
    virtual void send(Direction direction, int stage, int microbatch, const torch::Tensor& tensor) = 0;
    // `waiter` ("device 1 at 1RECV_F0") appears in timeout messages.
    virtual torch::Tensor receive(Direction direction, int stage, int microbatch, const std::string& waiter) = 0;

    virtual void contribute(const ReduceGroup& group, const ParamMap& params) = 0;
    // Waits for every participant's contribution and leaves the sum in `params`' gradients.
    virtual void collect(const ReduceGroup& group, ParamMap& params) = 0;

    // Records the first failure of the run and wakes every waiter (they throw RunAborted).
    virtual void fail(const std::string& message) = 0;
    // The first failure recorded so far, as the runner reports it after a step; nullopt while
    // every worker is well. Runners ask this, never a concrete transport.
    virtual std::optional<std::string> failure() const = 0;

    // After a worker's program: waits for transfers still in flight and gets ready for the next
    // iteration; throws on failure. Only transports with asynchronous transfers need it.
    virtual void finishIteration() {}
};

}  // namespace mario::exec
