#include "core/tune/TuneVerdict.h"

#include <cstdio>

namespace mario {

std::string tuneVerdict(const TuneResult& result) {
    if (!result.best) {
        if (!result.nothing_fits.empty()) return result.nothing_fits;  // already "nothing fits: …"
        return result.cancelled ? "nothing that fits was found before the search was cancelled"
                                : "nothing fits the memory limit";
    }
    const TuneCandidate& best = result.outcomes[*result.best].candidate;
    std::string sentence = "best: ";
    sentence += best.label();
    sentence += " — ";
    if (!best.checkpoint) return sentence + "without checkpointing: memory is not the bottleneck here";
    if (!result.best_without_checkpointing) return sentence + "no configuration without checkpointing fits";
    char speedup[32];
    std::snprintf(speedup, sizeof speedup, "%.2f×", result.speedup_over_no_checkpointing);
    sentence += speedup;
    sentence += " the best configuration without checkpointing (";
    sentence += result.outcomes[*result.best_without_checkpointing].candidate.label();
    return sentence + ")";
}

}  // namespace mario
