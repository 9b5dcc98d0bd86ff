#pragma once
// A 64-bit identity of a ScheduleInput by content, so results can be cached across pass
// toggles, undo and redo. It covers every field of the plan (costs, layers, link, overlap
// factor, the descriptive info that throughput reads), the config, the passes in order and
// the hand edits: two inputs that differ anywhere differ here (tested field by field).
#include <cstdint>

#include "core/session/ScheduleInput.h"

namespace mario {

std::uint64_t scheduleFingerprint(const ScheduleInput& input);

}  // namespace mario
