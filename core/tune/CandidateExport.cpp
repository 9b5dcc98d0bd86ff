#include "core/tune/CandidateExport.h"

#include "core/tune/LaunchExport.h"
#include "core/tune/Tuner.h"

namespace mario {

Result<std::string> writeCandidateBundle(const std::string& directory, const Config& base,
                                         const TuneCandidate& candidate, const TuneOptions& options) {
    auto plan = Tuner::planFor(base, candidate, options);
    if (!plan) return makeError(candidate.label() + ": " + plan.error().message);
    const Config config = Tuner::configFor(base, candidate, options);
    LaunchOptions launch;
    launch.gpus_per_node = base.hardware.gpus_per_node;
    // The tuned model, not the executor's toy default, in the precision real training uses.
    if (config.model.layers > 0) {
        launch.model_spec = executorModelSpec(config.model);
        launch.dtype = "bfloat16";
    }
    return writeLaunchBundle(directory, config, candidate, *plan, launch);
}

}  // namespace mario
