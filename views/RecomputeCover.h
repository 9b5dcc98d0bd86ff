#pragma once
// Which recomputations a bubble hid and which lengthened the step, box by box, so the Gantt can
// shade them (View → Hidden and exposed Rs). How much of each R was hidden is the simulator's
// (DeviceStats::recompute_hidden, core/sim/SimResult.h): a run of Rs since the device's last
// other compute hides as much of itself, from its start, as lies before the arrival of a
// message a following RECV waits on; the rest ran while the data was already there, so the step
// waited for it. Here that share only becomes a colour.
#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"
#include "views/Timeline.h"

namespace mario::views {

// Sets TimelineBox::cover on every recompute box of `timeline`, built from `plan` and `result`.
void markRecomputeCover(const Plan& plan, const SimResult& result, Timeline& timeline);

// How the chart marks each cover (a hatch and an outline over the R's own colour) and how the
// legend names it: one wording and one colour for the plottable and the legend.
QColor coverColor(RecomputeCover cover);
QString coverLabel(RecomputeCover cover);

}  // namespace mario::views
