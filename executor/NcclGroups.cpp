// The NCCL half of CommGroups.h: built only where LibTorch has CUDA and c10d's NCCL group
// (MARIO_C10D_NCCL, a CUDA PyTorch wheel), linked against that wheel's NCCL.
#include "executor/CommGroups.h"

#include <stdexcept>

#include <unistd.h>

#include <cuda_runtime_api.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#include <torch/cuda.h>

namespace mario::exec {

bool ncclGroupsBuilt() { return true; }

CommGroupPtr makeNcclGroup(const StorePtr& store, int rank, int size, double timeout_s) {
    if (!torch::cuda::is_available())
        throw std::runtime_error("this LibTorch has CUDA but sees no GPU (CUDA_VISIBLE_DEVICES, driver?)");
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, options);
}

std::string gpuIdentity(int cudaDevice) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    char bus[32] = {};
    if (const cudaError_t e = cudaDeviceGetPCIBusId(bus, sizeof bus, cudaDevice); e != cudaSuccess)
        throw std::runtime_error("cudaDeviceGetPCIBusId(" + std::to_string(cudaDevice) + "): " + cudaGetErrorString(e));
    return std::string(host) + "/" + bus;
}

void abortNcclGroup(const CommGroupPtr& group) { group->abort(); }

void synchronizeGpu(int cudaDevice) { torch::cuda::synchronize(cudaDevice); }

}  // namespace mario::exec
