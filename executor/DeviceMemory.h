#pragma once
// What the allocator really holds on a device, for the live events and the run's summary of a
// multi-process run (one GPU per process). Only CUDA has a reading (the caching allocator's
// statistics); it needs c10_cuda, so it exists only when LibTorch was built with CUDA
// (MARIO_TORCH_CUDA, set by executor/CMakeLists.txt). Pipeline devices that share one GPU or
// one CPU process are told apart by DeviceMemoryBook.h instead.
#include <optional>

#include <c10/core/Device.h>

namespace mario::exec {

struct DeviceMemoryReading {
    double allocated_bytes = 0;  // held by tensors now
    double peak_bytes = 0;       // most held since the process started
};

// nullopt on the CPU and in builds without CUDA.
std::optional<DeviceMemoryReading> readDeviceMemory(const c10::Device& device);

}  // namespace mario::exec
