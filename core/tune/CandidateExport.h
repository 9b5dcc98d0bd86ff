#pragma once
// A tuned candidate, ready for a cluster: its plan, Megatron-LM arguments and torchrun / Slurm
// scripts (core/tune/LaunchExport.h), with ranks laid out on nodes of the hardware's own size, the
// size the cost model simulated. `mario tune --export DIR` and the tuner window's "Export for
// cluster…" both come here, so the two write the same bundle for the same candidate.
#include <string>

#include "core/model/Config.h"
#include "core/tune/TuneTypes.h"
#include "core/util/Result.h"

namespace mario {

// `base` and `options` are what the candidate was tuned from. Errors name what is wrong: a
// candidate whose plan cannot be built, a world that does not split over the nodes, a path
// that cannot be written.
Result<std::string> writeCandidateBundle(const std::string& directory, const Config& base,
                                         const TuneCandidate& candidate, const TuneOptions& options);

}  // namespace mario
