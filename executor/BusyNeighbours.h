#pragma once
// The other SM partitions of a partitioned profile, kept busy with the very blocks being
// measured (`mario-executor profile --partition-sms K`, docs/gpu.md#profiles). Partitions share
// the GPU's HBM, L2 cache and power budget; a stage measured on an otherwise idle GPU runs
// faster than the same stage beside K−1 working neighbours, which is how a partitioned run
// computes. Measured on an H100: a GEMM took 2.51 ms alone on its partition and 3.14 ms with the
// other partition busy.
//
// Each neighbour is a thread with its own copy of the slice's weights and input, repeating
// forward and backward on its partition's stream until the object is destroyed.
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <c10/core/Stream.h>
#include <torch/torch.h>

#include "executor/GptModel.h"

namespace mario::exec {

class BusyNeighbours {
public:
    // One neighbour per stream, each running `slice` on (input, targets) in `dtype` on `device`.
    // Returns once every neighbour has queued its first step, so measurements start loaded.
    BusyNeighbours(const GptModel& model, const LayerSlice& slice, const torch::Tensor& input,
                   const torch::Tensor& targets, const torch::Device& device, torch::ScalarType dtype,
                   const std::vector<c10::Stream>& streams);
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
