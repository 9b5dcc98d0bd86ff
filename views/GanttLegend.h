#pragma once
// The Gantt chart's legend: what the colours mean in the chosen colour mode (kind,
// micro-batch, chunk or direction, views/ColorMode.h), plus the overlays that are on screen
// (bubble shading, the critical path). A hovered box's arrows are explained in its tooltip
// instead: a legend entry that came and went with the mouse would make the legend jump.
#include "views/ColorMode.h"
#include "views/Timeline.h"

class QCPLegend;

namespace mario::views {

struct GanttLegendExtras {
    bool shadeBubbles = false;
    bool criticalPath = false;
    bool boundChain = false;      // the recompute bound's chain, drawn as the critical path is
    bool recomputeCover = false;  // Rs marked hidden, partly hidden or exposed (views/RecomputeCover.h)
};

void fillGanttLegend(QCPLegend* legend, const Timeline& timeline, ColorMode mode, const GanttLegendExtras& extras);

}  // namespace mario::views
