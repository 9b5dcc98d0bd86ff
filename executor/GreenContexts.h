#pragma once
// Disjoint SM partitions of one GPU, each with its own stream: the CUDA driver's green contexts
// (docs/gpu.md). The pipeline devices of a single-GPU run then compute side by side as separate
// GPUs would, instead of sharing every SM (measured on an H100: a GEMM slowed 2.15x on plain
// streams when a second stream ran one too, 1.25x on two green-context partitions; HBM, L2
// and power stay shared).
//
// The order is the driver's: cuDeviceGetDevResource (the GPU's SMs and its split rules) →
// cuDevSmResourceSplitByCount (equal groups, planned by SmPartitionPlan.h) →
// cuDevResourceGenerateDesc → cuGreenCtxCreate → cuGreenCtxStreamCreate. PyTorch's own
// GreenContext::create(n) is not used: called once per partition it hands every call the same
// SMs, so partitions would not be disjoint.
//
// The driver is loaded at run time (dlopen of libcuda.so.1), never linked: the executor then
// starts on machines without a GPU driver (CI) and says so only when partitions are asked for.
// Torch-free: the streams are handed out as cudaStream_t values in a void*, and wrapped for
// Torch by PartitionStreams.h.
#include <memory>
#include <vector>

#include "core/util/Result.h"
#include "executor/SmPartitionPlan.h"

namespace mario::exec {

class GreenContexts {
public:
    // `partitions` equal, disjoint SM partitions of GPU `cudaDevice`, one non-blocking stream
    // each. Errors, one line each: no CUDA driver, a driver without green contexts (CUDA 12.4
    // or newer is needed), a GPU too small for that many partitions, a driver call that failed.
    static Result<std::unique_ptr<GreenContexts>> create(int cudaDevice, int partitions);
    ~GreenContexts();
    GreenContexts(const GreenContexts&) = delete;
    GreenContexts& operator=(const GreenContexts&) = delete;

    const SmPartitionPlan& plan() const { return plan_; }
    int cudaDevice() const { return device_; }
    // Partition i's stream, a cudaStream_t.
    void* stream(int partition) const { return streams_.at(static_cast<std::size_t>(partition)); }

    struct Driver;  // the driver entry points, resolved once

private:
    GreenContexts() = default;

    const Driver* driver_ = nullptr;
    int device_ = 0;
    SmPartitionPlan plan_;
    std::vector<void*> contexts_;  // CUgreenCtx
    std::vector<void*> streams_;   // CUstream
};

}  // namespace mario::exec
