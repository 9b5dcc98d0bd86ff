#pragma once
// The Gantt's hover text for one instruction: what ran, where, when and for how long, and what it
// waited for. A free function of the timeline, so the chart and its tests word it the same way.
#include <QString>

#include "views/TimeBase.h"
#include "views/Timeline.h"

namespace mario::views {

// Rich text (Qt's HTML subset); empty when `ref` names no box of `timeline`.
QString boxTooltip(const Timeline& timeline, const BoxRef& ref, TimeBase base);

}  // namespace mario::views
