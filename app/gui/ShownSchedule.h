#pragma once
// One document state as the window shows it: the state, its computed schedule and everything
// the charts and the summary draw from it (the timeline's boxes, the memory chart's curves and
// bars, the devices' idle time), all prepared on a worker thread. The GUI thread only swaps
// the shared pieces in: at 1.8 million instructions building them took 0.3 s there, and a
// copy of the result 40 ms. Shared and never changed once made, so the document's cache, the
// charts and the summary hold the same one.
#include <QtGlobal>
#include <memory>
#include <vector>

#include "app/gui/ScheduleComputation.h"
#include "core/sim/BubbleBreakdown.h"
#include "core/sim/MemoryFit.h"
#include "views/MemoryChartData.h"
#include "views/Timeline.h"

namespace mario::gui {

struct ShownSchedule {
    std::shared_ptr<const ScheduleInput> input;  // the state, its source plan included
    quint64 fingerprint = 0;                     // scheduleFingerprint(*input): the cache's key
    ComputedSchedule schedule;                   // ok, or the error
    std::shared_ptr<const views::Timeline> timeline;
    std::shared_ptr<const views::MemoryChartData> memory;
    MemoryFit fit;                          // the peaks against the limit or the card
    std::vector<DeviceBubbles> bubbles;     // per device; empty when the breakdown failed
    std::vector<views::BoxRef> boundChain;  // the recompute bound's chain (hide), as boxes

    // What the cache counts against its budget.
    std::size_t instructionCount() const { return schedule.plan.instructionCount(); }
};

using SharedInput = std::shared_ptr<const ScheduleInput>;
using SharedShown = std::shared_ptr<const ShownSchedule>;

}  // namespace mario::gui
