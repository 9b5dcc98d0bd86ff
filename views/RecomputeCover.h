#pragma once
// Which recomputations a bubble hid and which lengthened the step, box by box, so the Gantt can
// shade them (View → Hidden and exposed Rs). The rule is the simulator's own for
// DeviceStats::recompute_hidden_ms (core/sim/Simulator.cpp): a run of Rs since the device's
// last other compute hides as much of itself, from its start, as lies before the arrival of a
// message a following RECV waits on; the rest ran while the data was already there, so the step
// waited for it. Summed over a device, the hidden parts are its recompute_hidden_ms.
#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"
#include "views/Timeline.h"

namespace mario::views {

// Sets TimelineBox::cover on every recompute box of `timeline`, built from `plan` and `result`
// with its messages (Timeline::messages) already derived.
void markRecomputeCover(const Plan& plan, const SimResult& result, Timeline& timeline);

// How the chart marks each cover (a hatch and an outline over the R's own colour) and how the
// legend names it: one wording and one colour for the plottable and the legend.
QColor coverColor(RecomputeCover cover);
QString coverLabel(RecomputeCover cover);

}  // namespace mario::views
