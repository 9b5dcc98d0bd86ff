#include "executor/Capabilities.h"

#include <torch/cuda.h>
#include <torch/version.h>

#include "core/io/LiveEvents.h"
#include "executor/GreenContexts.h"
#include "executor/RunSetup.h"

namespace mario::exec {

ExecutorCapabilities probeCapabilities() {
    ExecutorCapabilities c;
#ifdef MARIO_VERSION
    c.version = MARIO_VERSION;
#endif
    c.torch = TORCH_VERSION;
    c.protocol = kLiveEventProtocol;
#ifdef MARIO_C10D_NCCL
    c.nccl = true;
#endif
    c.devices = static_cast<int>(torch::cuda::device_count());
    c.cuda = torch::cuda::is_available();
    // The words RunSetup.cpp's torchDevice uses when a cuda run is refused, so the tooltip and
    // the run say the same thing.
    if (!c.cuda)
        c.cuda_reason =
            std::string("this mario-executor's LibTorch ") + (c.devices == 0 ? whyNoGpu() : "has no CUDA support");
#ifndef MARIO_TORCH_CUDA
    // DeviceStreams.cpp's partitionStreams needs c10_cuda, which only a CUDA LibTorch has.
    c.partition_reason = "SM partitions need a LibTorch with CUDA (Debian's is CPU-only)";
#else
    if (!c.cuda) {
        c.partition_reason = "SM partitions need a GPU that this LibTorch can use";
    } else if (auto partitions = GreenContexts::create(0, 2); !partitions) {
        c.partition_reason = partitions.error().message;
    } else {
        c.partition_sms = true;
    }
#endif
    return c;
}

}  // namespace mario::exec
