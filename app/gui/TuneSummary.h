#pragma once
// The verdict of a tuner run in one short paragraph of rich text: the winner, what
// checkpointing bought over the best configuration without it (the paper's claim, checked
// per run), and how much work the search did. Nothing fitting is said in red, with the
// tuner's closest miss.
#include <QString>

#include "core/tune/TuneTypes.h"

namespace mario::gui {

// `evaluated`: the candidates looked at (for a cancelled search, fewer than the space).
QString tuneSummaryHtml(const TuneResult& result, int evaluated);

}  // namespace mario::gui
