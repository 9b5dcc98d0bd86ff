#pragma once
// What PyTorch's loader (_validate_and_set_stage_mapping / _validate_schedule) checks in a
// pipelining CSV, with the first problem named by its line (rank + 1), column and action:
// the stage -> rank mapping it infers from the actions, and the order of every stage's
// computations. Checked before a plan is built, so that errors point into the file.
#include <vector>

#include "core/io/PipeliningCsv.h"
#include "core/util/Result.h"

namespace mario {

// Stage s runs on rank result[s]. PyTorch runs one chain of stages 0..S-1 and lets the
// schedule put them anywhere (looped: s on s mod p; V: rank r holds r and 2p-1-r), so any
// mapping is accepted as long as every stage stands on exactly one rank and none of 0..S-1
// is missing.
Result<std::vector<int>> inferStageRanks(const PipeliningCsv& csv);

// The order PyTorch requires of every (stage, micro-batch): each action once, a forward
// before its backward (B or I), W after its I and never with a full B, I with its W, a
// backward for every forward, and the same forward micro-batches on every stage of a chain.
// Mario's own R must stand between the forward and its backward. `chains` lists the stage
// chains (PyTorch's files have one: 0..S-1); `stageRank` is what inferStageRanks() returned.
Result<bool> checkPipeliningOrder(const PipeliningCsv& csv, const std::vector<int>& stageRank,
                                  const std::vector<std::vector<int>>& chains);

}  // namespace mario
