#pragma once
// The order an export without recomputation writes (PyTorch's pipelining has no R action, so
// `mario export --csv --drop-recompute` and the window's CSV export use this).
//
// Dropping the Rs alone is not enough: a pass that moved forwards because they were
// checkpointed (prepose runs them early, when each holds only its checkpoint) leaves an order
// that, with every forward keeping its whole activations, holds more micro-batches at once than
// the scheme itself (1F1B, 4 devices x 8 micro-batches: 8 in flight instead of 4). Such passes
// (PassInfo::needs_checkpointing) are left out and the passes run again; a plan file whose
// saved order already carries them cannot be undone and is refused with the peak it implies.
#include <string>
#include <vector>

#include "core/passes/PassReport.h"
#include "core/session/PreparedSchedule.h"
#include "core/session/ScheduleInput.h"
#include "core/util/Result.h"

namespace mario {

struct RecomputeFreeOrder {
    Plan plan;                     // no R; every forward keeps its activations until its backward
    int dropped = 0;               // Rs left out of the prepared plan
    std::vector<PassId> left_out;  // passes left out because they need checkpointing
    // When passes were left out: the device whose micro-batch memory (activations, checkpoints,
    // gradients in flight; weights aside) they would have raised most, and its peak in bytes
    // without recomputation with them and as exported.
    int device = -1;
    double peak_with_bytes = 0;
    double peak_exported_bytes = 0;

    // "112 recomputations (R) dropped; prepose left out: ... device 0 would peak at ..."
    std::string summary() const;
};

// The plan without its R instructions.
Plan withoutRecompute(Plan plan);

// `prepared` is prepareSchedule(input); fails, in one sentence naming the peak, for a loaded
// order that was preposed.
Result<RecomputeFreeOrder> recomputeFreeOrder(const ScheduleInput& input, const PreparedSchedule& prepared);

}  // namespace mario
