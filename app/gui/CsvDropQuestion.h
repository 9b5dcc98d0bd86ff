#pragma once
// Before a PyTorch CSV export of a schedule that recomputes: PyTorch's schedule CSV has no R,
// so the export would leave the Rs out (and prepose, whose early forwards hold only a
// checkpoint). `mario export --csv` refuses without --drop-recompute; the window asks.
#include <QString>

#include "core/session/ScheduleInput.h"

class QWidget;

namespace mario {
struct Plan;
}

namespace mario::gui {

// What a CSV export of `shown` (computed from `input`) would leave out, in a sentence; empty
// when nothing.
QString csvDropSentence(const ScheduleInput& input, const Plan& shown);

// Asks, modally, whether to export without them: true for "Export without them" (object name
// "exportWithout"), false for Cancel. Asks nothing, and answers true, when nothing is dropped.
bool askToDropRecomputation(QWidget* parent, const ScheduleInput& input, const Plan& shown);

}  // namespace mario::gui
