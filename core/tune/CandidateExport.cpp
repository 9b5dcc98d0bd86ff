#include "core/tune/CandidateExport.h"

#include "core/io/LaunchExport.h"
#include "core/tune/Tuner.h"

namespace mario {

Result<bool> writeCandidateBundle(const std::string& directory, const Config& base, const TuneCandidate& candidate,
                                  const TuneOptions& options) {
    auto plan = Tuner::planFor(base, candidate, options);
    if (!plan) return makeError(candidate.label() + ": " + plan.error().message);
    LaunchOptions launch;
    launch.gpus_per_node = base.hardware.gpus_per_node;
    return writeLaunchBundle(directory, Tuner::configFor(base, candidate, options), candidate, *plan, launch);
}

}  // namespace mario
