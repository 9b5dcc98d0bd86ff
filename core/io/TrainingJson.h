#pragma once
// The config's "training" object (docs/config-format.md#training): its one reader and writer.
#include <nlohmann/json_fwd.hpp>

#include "core/model/TrainingConfig.h"
#include "core/util/Result.h"

namespace mario {

// Unknown keys and unknown attention kinds are refused, naming "training.KEY".
Result<TrainingConfig> readTraining(const nlohmann::json& object);
nlohmann::json writeTraining(const TrainingConfig& training);

}  // namespace mario
