#pragma once
// parallel.layer_split in a config file (docs/config-format.md): "even", "balanced", "search" or one
// layer count per chain position. The reader takes the value alone; the counts are checked
// against the model and the pipeline with the config's other cross-field rules (checkConfig).
#include <optional>

#include <nlohmann/json_fwd.hpp>

#include "core/model/Config.h"
#include "core/util/Result.h"

namespace mario {

Result<LayerSplit> readLayerSplit(const nlohmann::json& value);
// The value readLayerSplit reads back to `split`.
nlohmann::json writeLayerSplit(const LayerSplit& split);
// An explicit split places every layer of model.layers, one count per chain position, and only
// the first and last positions may hold none; unit mode has no layers to split. Errors name
// parallel.layer_split.
std::optional<Error> checkLayerSplit(const Config& config);

}  // namespace mario
