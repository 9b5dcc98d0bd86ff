#pragma once
// Plan files (*.mario.json, docs/plan-format.md). Reading checks the JSON shape and then the plan
// itself (Validator); every error names the JSON path.
#include <string>

#include <nlohmann/json.hpp>

#include "core/schedule/Plan.h"
#include "core/util/Result.h"

namespace mario {

struct PlanReadOptions {
    bool validate = true;  // structural validation and deadlock check
};

Result<Plan> readPlan(const nlohmann::json& json, const PlanReadOptions& options = {});
Result<Plan> readPlanFile(const std::string& path, const PlanReadOptions& options = {});
nlohmann::json writePlan(const Plan& plan);
// The plan file's "stages" array (costs, memory terms, layers): writePlan's own, and what
// `mario simulate --json` reports per stage.
nlohmann::json writeStages(const Plan& plan);
Result<bool> writePlanFile(const Plan& plan, const std::string& path);

// True when the document says "format": "mario-plan".
bool looksLikePlan(const nlohmann::json& json);

}  // namespace mario
