#include "executor/DeviceMemory.h"

#include <string>

#include "executor/MemoryLimits.h"

#ifdef MARIO_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
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

// Declared in MemoryLimits.h (Torch-free) and defined here, in the file that is compiled against
// the CUDA headers of both LibTorch builds. The CUDA runtime directly: c10 has no free-memory
// call in 1.13 or 2.x (PyTorch's torch.cuda.mem_get_info calls cudaMemGetInfo too). It makes
// the GPU's context, which the run would make next anyway, and restores the current device.
Result<MemoryLimit> gpuMemoryLimit([[maybe_unused]] int index) {
#ifdef MARIO_TORCH_CUDA
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || index < 0 || index >= count) {
        (void)cudaGetLastError();  // a failed call stays the thread's last error otherwise
        return makeError("GPU " + std::to_string(index) + " is not visible");
    }
    int previous = 0;
    (void)cudaGetDevice(&previous);
    std::size_t freeBytes = 0, totalBytes = 0;
    cudaError_t status = cudaSetDevice(index);
    if (status == cudaSuccess) status = cudaMemGetInfo(&freeBytes, &totalBytes);
    (void)cudaSetDevice(previous);
    if (status != cudaSuccess) {
        (void)cudaGetLastError();
        return makeError(std::string("cudaMemGetInfo failed: ") + cudaGetErrorString(status));
    }
    return MemoryLimit{static_cast<double>(freeBytes), "free on GPU " + std::to_string(index)};
#else
    return makeError("this LibTorch has no CUDA");
#endif
}

}  // namespace mario::exec
