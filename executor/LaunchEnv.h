#pragma once
// Where this process sits in a multi-process run, read from the variables that torchrun and the
// project's Slurm script (core/tune/LaunchExport) set: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
// MASTER_PORT, and torchrun's TORCHELASTIC_USE_AGENT_STORE and TORCHELASTIC_RESTART_COUNT. The environment is passed in as a function so tests need not touch the real one
// (setenv is not thread-safe and would leak between tests).
#include <functional>
#include <optional>
#include <string>

#include "core/util/Result.h"

namespace mario::exec {

struct LaunchEnv {
    int rank = 0;
    int world_size = 1;
    int local_rank = 0;
    std::string master_addr;  // rank 0's host; empty when world_size == 1
    int master_port = 0;      // 0 when world_size == 1 and MASTER_PORT is unset
    // torchrun's c10d rendezvous shares its agent's TCPStore at MASTER_ADDR:MASTER_PORT with the
    // workers (TORCHELASTIC_USE_AGENT_STORE=True); they join it instead of rank 0 hosting one,
    // under the restart attempt's keys (TORCHELASTIC_RESTART_COUNT), as torch.distributed does.
    bool use_agent_store = false;
    int restart_count = 0;
};

// std::nullopt when WORLD_SIZE is unset: the executor then runs as a single process, as before
// multi-process mode existed. Otherwise every variable is checked, and an error is one line that
// names the variable and its value ("RANK=5 is not below WORLD_SIZE=4").
//
// MASTER_ADDR and MASTER_PORT are required when WORLD_SIZE > 1 and ignored (but still checked
// when present) for a world of one. They are where the run's TCPStore is (RankStore.h).
Result<std::optional<LaunchEnv>> readLaunchEnv(const std::function<const char*(const char*)>& getenv);

}  // namespace mario::exec
