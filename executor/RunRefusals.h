#pragma once
// Everything that refuses `mario-executor run` after the plan is read and before anything of the
// run exists (no weight, no thread), each in one line, all bad input (exit 2, docs/exit-codes.md):
// a launch that does not fit the plan (WORLD_SIZE not a multiple of its devices, --dp against
// WORLD_SIZE, a tp plan), more threads than the machine allows (ThreadBudget.h), more memory than
// there is (RunMemoryEstimate.h), a token file too short for a sample or with ids outside the
// vocabulary (TokenFile.h). Each used to surface from inside the run as a failed run (exit 5),
// some only after gigabytes of weights were built. Torch-free, like main.cpp.
#include <optional>
#include <string>

#include "core/schedule/Plan.h"
#include "executor/Backend.h"
#include "executor/Executor.h"
#include "executor/LaunchEnv.h"

namespace mario::exec {

// A multi-process launch that cannot run this plan; none in one process or when it fits. The
// multi-process runner asks the same (DistributedRunner.cpp).
std::optional<std::string> launchRefusal(const Plan& plan, const ExecutorOptions& options,
                                         const LaunchEnv& launch);

// The samples (sequences) a run reads: every replica's micro-batches of micro_batch_size rows.
std::int64_t runSamples(const Plan& plan, int replicas);

// The first of the refusals above, in that order (launch, threads, memory, tokens), or none.
// `launch` is empty (or a world of one) for a run in this process. Reads the token file when
// options.tokens_file is set and options.tokens is not, and keeps it in options.tokens for the
// run. Notes (a memory limit that cannot be read) go through options.on_notice.
std::optional<std::string> refuseRun(const Plan& plan, ExecutorOptions& options, Backend backend,
                                     const std::optional<LaunchEnv>& launch);

}  // namespace mario::exec
