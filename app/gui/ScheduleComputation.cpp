#include "app/gui/ScheduleComputation.h"

namespace mario::gui {

ComputedSchedule computeSchedule(const ScheduleInput& input, quint64 generation, const std::atomic<bool>* cancel) {
    ComputedSchedule out;
    out.generation = generation;
    PrepareOptions options;
    options.simulate_base = true;
    options.record_memory_curve = true;
    options.bound_hide = true;  // the summary says how close hide came to the best placement
    options.cancel = cancel;
    auto prepared = prepareSchedule(input, options);
    if (!prepared) {
        out.error = QString::fromStdString(prepared.error().message);
        return out;
    }
    static_cast<PreparedSchedule&>(out) = std::move(*prepared);
    out.ok = true;
    return out;
}

}  // namespace mario::gui
