#include "executor/DeviceMemory.h"

#ifdef MARIO_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace mario::exec {

std::optional<DeviceMemoryReading> readDeviceMemory([[maybe_unused]] const c10::Device& device) {
#ifdef MARIO_TORCH_CUDA
    if (device.is_cuda()) {
        // getDeviceStats takes an int in LibTorch 1.13 and a DeviceIndex in 2.x; the index
        // converts to either. allocated_bytes is an array by StatType in both; 0 is AGGREGATE.
        const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
        const auto& all = stats.allocated_bytes[0];
        return DeviceMemoryReading{static_cast<double>(all.current), static_cast<double>(all.peak)};
    }
#endif
    return std::nullopt;
}

}  // namespace mario::exec
