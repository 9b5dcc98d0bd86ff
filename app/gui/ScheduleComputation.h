#pragma once
// The window's view of core's prepareSchedule(): the prepared schedule (with memory curves and
// the source plan's own simulation for comparison), or the error in one sentence. The window's
// jobs (ScheduleJob) run it on a worker thread; `generation` is whatever stamp the caller gave.
#include <QString>
#include <QtGlobal>

#include "core/session/PreparedSchedule.h"

namespace mario::gui {

struct ComputedSchedule : PreparedSchedule {
    quint64 generation = 0;
    bool ok = false;
    QString error;  // when !ok: what went wrong, in one sentence
};

// Thread-safe: the document runs it off the GUI thread. `cancel`: PrepareOptions::cancel.
ComputedSchedule computeSchedule(const ScheduleInput& input, quint64 generation,
                                 const std::atomic<bool>* cancel = nullptr);

}  // namespace mario::gui
