#pragma once
// The other pipeline devices of a profile, kept busy with the very blocks being measured
// (`mario-executor profile --neighbours N`, or `--partition-sms K` on a GPU: docs/gpu.md#profiles).
// SM partitions share the GPU's HBM, L2 cache and power budget, and the threads of a CPU run
// its cores and caches; a stage measured alone runs faster than the same stage beside working
// neighbours, which is how a run on shared hardware computes. Measured on an H100: a GEMM took
// 2.51 ms alone on its partition and 3.14 ms with the other partition busy.
//
// Each neighbour is a thread with its own copy of the slice's weights and input, repeating
// forward and backward (on its partition's stream, on a GPU) until the object is destroyed; or,
// given an optimizer, one forward and backward and then that optimizer's step over and over
// (neighbours streaming their weights, gradients and moments: OptimizerContention.h).
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <c10/core/Stream.h>
#include <torch/torch.h>

#include "executor/GptModel.h"
#include "executor/Optimizer.h"

namespace mario::exec {

class BusyNeighbours {
public:
    // `count` neighbours, each running `slice` on (input, targets) in `dtype` on `device`, on
    // streams[i] where given (a GPU's partitions; empty on the CPU). Returns once every
    // neighbour has queued its first step, so measurements start loaded.
    BusyNeighbours(const GptModel& model, const LayerSlice& slice, const torch::Tensor& input,
                   const torch::Tensor& targets, const torch::Device& device, torch::ScalarType dtype, int count,
                   const std::vector<c10::Stream>& streams, const Optimizer* stepping = nullptr);
    // Stops the neighbours and waits until the GPU has finished their work.
    ~BusyNeighbours();
    BusyNeighbours(const BusyNeighbours&) = delete;
    BusyNeighbours& operator=(const BusyNeighbours&) = delete;

    // Why a neighbour stopped early (its step threw): the measurement then was not loaded.
    std::optional<std::string> failure() const;

private:
    torch::Device device_;
    std::atomic<bool> stop_{false};
    std::atomic<int> started_{0};
    mutable std::mutex mutex_;
    std::string failure_;
    std::vector<std::thread> threads_;
};

}  // namespace mario::exec
