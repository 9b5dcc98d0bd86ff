#pragma once
// The tuner's conclusion in one sentence, said the same way by `mario tune` and the window's
// tuner panel: "best: pp 8 × dp 2, chimera, … — 1.42× the best configuration without
// checkpointing (pp 16 …)", or why nothing fits.
#include <string>

#include "core/tune/TuneTypes.h"

namespace mario {

std::string tuneVerdict(const TuneResult& result);

}  // namespace mario
