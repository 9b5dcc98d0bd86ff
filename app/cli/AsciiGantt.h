#pragma once
// The timeline as text, one row per device: what `mario simulate` prints so that a schedule
// can be read in a terminal, a CI log or a teaching handout.
#include <string>

#include "core/schedule/Plan.h"
#include "core/sim/SimResult.h"

namespace mario::cli {

// `width` columns for the whole makespan. When the makespan is a whole number of time units
// that fits, each unit gets the same number of columns so unit-cost schedules line up
// exactly. Boxes read "[F3 ]" (kind and micro-batch) when wide enough, else the kind letter;
// "f" is a checkpointed forward, "." idle.
std::string renderAsciiGantt(const Plan& plan, const SimResult& result, int width = 100);

}  // namespace mario::cli
