#pragma once
// The pass vocabulary, read from the pass table (PassRegistry.h): the names the CLI's --passes,
// config files, plan files, the window's pass panel and the tuner use, the paper's four in
// order ("all"), and which passes are this project's additions (relax, bound-w, hide). PassId
// and passName() live with the reports in PassReport.h.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/passes/PassReport.h"
#include "core/util/Result.h"

namespace mario {

// The pass vocabulary: the paper's four in order, every pass in order, and whether a pass is
// this project's addition (relax, bound-w, hide). "all" means the paper's four.
const std::vector<PassId>& paperPasses();
const std::vector<PassId>& allPasses();
bool isBeyondPaper(PassId pass);
std::string passNameList();  // "checkpoint, overlap, redundancy, prepose, relax, bound-w, hide"

std::optional<PassId> parsePassName(std::string_view name);
// "checkpoint,overlap", "all", "none" (case-insensitive, spaces ignored); errors name the
// unknown entry. "all" is the paper's four passes; "relax", "bound-w" and "hide" (beyond the
// paper) are asked for by name, e.g. "all,bound-w,hide". Bound-w runs once after the others,
// then hide once, last.
Result<std::vector<PassId>> parsePassList(std::string_view list);
Result<std::vector<PassId>> parsePassNames(const std::vector<std::string>& names);

// The names of `passes`, in order ("checkpoint", "overlap", ...).
std::vector<std::string> passNames(const std::vector<PassId>& passes);

}  // namespace mario
