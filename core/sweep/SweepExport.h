#pragma once
// A sweep or capacity result as rows a user keeps: JSON (`mario sweep --json`, one object per
// point with the keys of `mario simulate --json` where they mean the same) and CSV (`--csv`, the
// window's CSV export). One owner of the columns, so the CLI and the window write the same file.
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/sweep/Capacity.h"
#include "core/sweep/Sweep.h"

namespace mario {

// {"knobs": [...], "points": [{"<key>": value, …, "scheme", "passes", "makespan", "samples_per_s",
//  "tokens_per_s", "mfu", "bubble_ratio", "peak_memory_bytes", "fullest_device", "budget_bytes",
//  "fits_memory", "devices": [{"index", "peak_memory_bytes"}], "refusal"}], "cancelled", "elapsed_ms"}
nlohmann::json sweepJson(const SweepResult& result);
// One header line, then one line per point; refused points keep their reason in "refusal".
std::string sweepCsv(const SweepResult& result);

// {"knob", "min", "max", "step", "answers": [{"scheme", "passes", "largest", "makespan", "mfu",
//  "peak_memory_bytes", "fullest_device", "first_over": {...}, "violations": [...], ...}]}
nlohmann::json capacityJson(const CapacityResult& result);

}  // namespace mario
