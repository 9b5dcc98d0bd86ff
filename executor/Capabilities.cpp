#include "executor/Capabilities.h"

#include <torch/cuda.h>
#include <torch/version.h>

#include "core/io/LiveEvents.h"
#include "executor/GreenContexts.h"

namespace mario::exec {

ExecutorCapabilities probeCapabilities() {
    ExecutorCapabilities c;
#ifdef MARIO_VERSION
    c.version = MARIO_VERSION;
#endif
    c.torch = TORCH_VERSION;
    c.protocol = kLiveEventProtocol;
#ifdef MARIO_HAVE_NCCL
    c.nccl = true;
#endif
    c.devices = static_cast<int>(torch::cuda::device_count());
    c.cuda = torch::cuda::is_available();
    // The words RunSetup.cpp's torchDevice uses when a cuda run is refused, so the tooltip and
    // the run say the same thing.
    if (!c.cuda)
        c.cuda_reason = c.devices == 0 ?
#ifdef MARIO_TORCH_CUDA
                                       "this mario-executor's LibTorch has CUDA but sees no GPU (check the driver "
                                       "and CUDA_VISIBLE_DEVICES)"
#else
                                       "this mario-executor's LibTorch has no CUDA or sees no GPU (Debian's "
                                       "LibTorch is CPU-only; build it on a GPU node with packaging/gpu-node.sh)"
#endif
                                       : "this mario-executor's LibTorch has no CUDA support";
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
