#pragma once
// PyTorch's process groups for the executor's multi-process runs: Gloo between CPU processes,
// NCCL between GPUs, made from the run's store the way torch.distributed makes them
// (ProcessGroupGloo/ProcessGroupNCCL with a store, a rank and a size). The NCCL half is built
// only against a LibTorch with CUDA and c10d's NCCL (a CUDA PyTorch wheel: MARIO_C10D_NCCL);
// elsewhere its functions throw the one line that says so.
#include <string>

#include "executor/C10d.h"

namespace mario::exec {

// Collective over the `size` ranks that call it with stores of the same prefix. Gloo binds to
// GLOO_SOCKET_IFNAME's interface when it is set, else to this host's name (PyTorch's default).
// Built only with Gloo's headers (MARIO_GLOO_HEADERS); without them it throws the line that says so.
CommGroupPtr makeGlooGroup(const StorePtr& store, int rank, int size, double timeout_s);

// Whether this build has c10d's NCCL group (makeNcclGroup and gpuIdentity work).
bool ncclGroupsBuilt();
// As makeGlooGroup, on NCCL; ops time out after timeout_s (its watchdog's limit).
CommGroupPtr makeNcclGroup(const StorePtr& store, int rank, int size, double timeout_s);
// "host/PCI bus id" of CUDA device `cudaDevice`: what tells two ranks on one GPU apart.
std::string gpuIdentity(int cudaDevice);
// Ends every transfer of an NCCL group now (PyTorch's abort), so a rank whose peer died stops
// waiting in NCCL's kernels.
void abortNcclGroup(const CommGroupPtr& group);
// Waits until CUDA device `cudaDevice` has finished its queued work.
void synchronizeGpu(int cudaDevice);

}  // namespace mario::exec
