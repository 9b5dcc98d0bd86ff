#pragma once
// The streams and the current device of the worker threads that share one GPU (single-GPU
// mode, docs/gpu.md). Each pipeline device computes on its own stream: one of PyTorch's pool
// streams (shared SMs), or the stream of its own SM partition (GreenContexts.h). And each
// worker thread makes its GPU current before its first kernel: a new thread has no current
// CUDA context, and cuBLAS, called there, warns "no current CUDA context" and makes one itself.
// c10 headers only, so the Torch compile cost stays in the runners.
#include <vector>

#include <c10/core/Device.h>
#include <c10/core/Stream.h>

#include "core/util/Result.h"
#include "executor/GreenContexts.h"

namespace mario::exec {

// Makes `device`'s primary context current on the calling thread; nothing on the CPU.
// Throws with CUDA's reason when the device cannot be entered.
void enterDevice(const c10::Device& device);

// `count` of PyTorch's pool streams on `device` (they share all SMs); none on the CPU.
std::vector<c10::Stream> poolStreams(const c10::Device& device, int count);

// Partition i's stream as a Torch stream (c10::cuda::getStreamFromExternal), for every
// partition. Errors: a LibTorch without CUDA, a device other than the partitions' GPU.
Result<std::vector<c10::Stream>> partitionStreams(const GreenContexts& partitions, const c10::Device& device);

}  // namespace mario::exec
