#pragma once
// What the allocator really holds on a device, for the live events and the run's summary. Only
// CUDA has a reading (the caching allocator's statistics); it needs c10_cuda, so it exists
// only when LibTorch was built with CUDA (MARIO_TORCH_CUDA, set by executor/CMakeLists.txt).
// With all pipeline devices on one GPU (single-GPU mode) the reading is that GPU's total.
#include <optional>

#include <torch/torch.h>
#ifdef MARIO_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace mario::exec {

struct DeviceMemoryReading {
    double allocated_bytes = 0;  // held by tensors now
    double peak_bytes = 0;       // most held since the process started
};

inline std::optional<DeviceMemoryReading> readDeviceMemory([[maybe_unused]] const torch::Device& device) {
#ifdef MARIO_TORCH_CUDA
    if (device.is_cuda()) {
        const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
        const auto& all = stats.allocated_bytes[0];  // StatType::AGGREGATE
        return DeviceMemoryReading{static_cast<double>(all.current), static_cast<double>(all.peak)};
    }
#endif
    return std::nullopt;
}

}  // namespace mario::exec
