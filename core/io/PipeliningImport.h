#pragma once
// A PyTorch pipelining CSV (io/PipeliningCsv.h) as a Mario plan. The file is first checked
// as PyTorch's loader checks it (io/PipeliningValidation.h: placement inferred from the
// actions, the order of each stage's F, B, I and W), so that a problem is reported with its
// line, column and action rather than as a plan path. The plan is then built by
// planFromComputeOrder, which adds Mario's own communication and gradient synchronisation:
// the file's SEND/RECV, REDUCE_GRAD, UNSHARD and RESHARD cells are dropped, and each dropped
// kind gives a note.
#include <string>
#include <vector>

#include "core/io/PipeliningCsv.h"
#include "core/schedule/Plan.h"
#include "core/util/Result.h"

namespace mario {

struct ImportedPipeliningPlan {
    Plan plan;                       // not yet validated (the caller runs the validator)
    std::vector<std::string> notes;  // what the import changed or assumed, one sentence each
};

// The costs of a plan imported without a config: a CSV says nothing about the model, so every
// stage gets Mario's unit costs, those of Figure 2's config and of the tests' unit plans. A
// backward costs two forwards, its halves I and W one each (StageCost's default split),
// recomputation one forward; a checkpoint (the stage input) keeps 10 bytes where the
// activations take 1000, so that checkpointing passes have something to save.
StageCost unitImportCost();

// Devices are the file's ranks, stages and placement as inferred, every stage costed by
// unitImportCost(); the plan is named `name` and its scheme is "imported".
Result<ImportedPipeliningPlan> importPipeliningCsv(const PipeliningCsv& csv, const std::string& name);

// The file's order on the stages, costs and chains of `skeleton` (a config's or a plan's),
// whose stage -> device mapping must be the one the file implies. `skeletonName` (a path)
// names it in errors.
Result<ImportedPipeliningPlan> importPipeliningCsv(const PipeliningCsv& csv, Plan skeleton,
                                                   const std::string& skeletonName);

}  // namespace mario
