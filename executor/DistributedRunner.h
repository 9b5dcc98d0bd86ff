#pragma once
// Runs a plan as one process per (pipeline device, data-parallel replica), launched by torchrun
// or srun: RANK/WORLD_SIZE/... say who this process is (executor/LaunchEnv.h), Megatron's
// rank order which device and replica it runs (RankLayout.h). The ranks meet in PyTorch's
// TCPStore (RankStore.h) and move tensors through PyTorch's process groups: Gloo for the CPU
// backend, NCCL for the CUDA backend (ProcessGroupTransport.h).
// Torch-free API, like Executor.h.
#include "core/schedule/Plan.h"
#include "core/util/Result.h"
#include "executor/Backend.h"
#include "executor/Executor.h"
#include "executor/LaunchEnv.h"

namespace mario::exec {

// Backend::Cuda runs on cuda:LOCAL_RANK. Rank 0's report holds the step loss, the
// per-device peaks and, with options.reference, the comparison of every gradient; the other
// ranks' reports hold their own share. WORLD_SIZE must be a multiple of the plan's devices
// (tensor parallelism is not implemented by the executor).
Result<RunReport> runDistributed(const Plan& plan, const ExecutorOptions& options, const LaunchEnv& env,
                                 Backend backend);

}  // namespace mario::exec
