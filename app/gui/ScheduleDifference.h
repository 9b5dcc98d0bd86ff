#pragma once
// Which instructions two schedules of the same training step run differently, for the compare
// window's outlines and its "how many differ per device" line (issue 14, item 6).
//
// Instructions are matched by what they are, not where they sit: on the same device, the same
// op, stage and micro-batch (the k-th such instruction of A with the k-th of B, for the rare
// repeats). Only compute instructions count: SENDs and RECVs follow the compute order, so they
// would repeat each difference. A matched instruction differs when
//   - its position differs: its rank among the compute instructions both schedules have on
//     that device. Ranks among the common ones, not raw program indices, so one recomputation
//     inserted by a pass does not make every later instruction "moved";
//   - or its simulated start differs (beyond rounding: 1e-9 of the longer step).
// An instruction only one schedule has (a pass inserted or removed it) differs too.
#include <QString>
#include <vector>

#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"
#include "views/Timeline.h"

namespace mario::gui {

struct DeviceDifference {
    int moved = 0;    // matched, at another rank in the device's order
    int retimed = 0;  // matched, same rank, another start time
    int onlyInA = 0;
    int onlyInB = 0;
    int total() const { return moved + retimed + onlyInA + onlyInB; }
};

struct ScheduleDifference {
    std::vector<DeviceDifference> devices;  // max of both device counts
    // The differing instructions as boxes of each schedule, for GanttView::setHighlights.
    std::vector<views::BoxRef> inA, inB;
    int computeA = 0, computeB = 0;  // compute instructions in each schedule
    int total() const;
};

ScheduleDifference compareSchedules(const Plan& a, const SimResult& resultA, const Plan& b, const SimResult& resultB);

// "5 compute instructions differ (3 moved in their device's order, 2 start at another time) —
// device 0: 2, device 1: 3", or
// "Both schedules run every instruction in the same order at the same time." Past
// `listedDevices` differing devices the list ends with "…".
QString describeDifferences(const ScheduleDifference& difference, int listedDevices = 12);

}  // namespace mario::gui
