#include "executor/DeviceStreams.h"

#include <string>

#include <c10/core/impl/DeviceGuardImplInterface.h>

#ifdef MARIO_TORCH_CUDA
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace mario::exec {

void enterDevice([[maybe_unused]] const c10::Device& device) {
#ifdef MARIO_TORCH_CUDA
    if (!device.is_cuda()) return;
    // cudaSetDevice itself, not c10's set_device: PyTorch 2.x skips the call when the device is
    // already the thread's current one, which a fresh thread reports for GPU 0 without having a
    // context. cudaFree(nullptr) then creates the context where cudaSetDevice alone does not
    // (CUDA 11; from CUDA 12 on, cudaSetDevice does it too).
    C10_CUDA_CHECK(cudaSetDevice(device.index()));
    C10_CUDA_CHECK(cudaFree(nullptr));
#endif
}

std::vector<c10::Stream> poolStreams(const c10::Device& device, int count) {
    std::vector<c10::Stream> streams;
    if (device.is_cpu()) return streams;
    auto* impl = c10::impl::getDeviceGuardImpl(device.type());
    for (int i = 0; i < count; ++i) streams.push_back(impl->getStreamFromGlobalPool(device));
    return streams;
}

Result<std::vector<c10::Stream>> partitionStreams([[maybe_unused]] const GreenContexts& partitions,
                                                  [[maybe_unused]] const c10::Device& device) {
#ifdef MARIO_TORCH_CUDA
    if (!device.is_cuda() || device.index() != partitions.cudaDevice())
        return makeError("SM partitions of GPU " + std::to_string(partitions.cudaDevice()) + " cannot serve device " +
                         device.str());
    std::vector<c10::Stream> streams;
    for (int i = 0; i < partitions.plan().partitions; ++i)
        streams.push_back(
            c10::cuda::getStreamFromExternal(static_cast<cudaStream_t>(partitions.stream(i)), device.index()));
    return streams;
#else
    return makeError("SM partitions need a LibTorch with CUDA (Debian's is CPU-only); build mario-executor with "
                     "packaging/gpu-node.sh against the GPU node's PyTorch");
#endif
}

}  // namespace mario::exec
