#pragma once
// The window's view of core's prepareSchedule(): the prepared schedule (with memory curves and
// the source plan's own simulation for comparison), stamped with the generation it was asked
// for so that a stale result from a worker thread is dropped, never shown.
#include <QString>
#include <QtGlobal>

#include "core/session/PreparedSchedule.h"

namespace mario::gui {

struct ComputedSchedule : PreparedSchedule {
    quint64 generation = 0;
    bool ok = false;
    QString error;  // when !ok: what went wrong, in one sentence
};

// Thread-safe: the document runs it off the GUI thread.
ComputedSchedule computeSchedule(const ScheduleInput& input, quint64 generation);

}  // namespace mario::gui
