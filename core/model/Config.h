#pragma once
// A whole configuration file (*.config.json, docs/config-format.md) once presets are resolved.
#include <optional>
#include <string>
#include <vector>

#include "core/model/HardwareConfig.h"
#include "core/model/ModelConfig.h"
#include "core/model/ParallelConfig.h"
#include "core/model/TrainingConfig.h"
#include "core/model/WhatIfSection.h"

namespace mario {

// Teaching mode: every stage costs the same fixed amounts and links are free.
struct UnitCosts {
    double forward = 1;
    double backward = 2;
    double recompute = 1;
    double activation_bytes = 1000;
    double checkpoint_bytes = 10;
    double static_bytes = 0;
};

struct Config {
    std::string name;
    ModelConfig model;
    HardwareConfig hardware;
    ParallelConfig parallel;
    TrainingConfig training;
    std::optional<double> memory_limit_bytes;
    std::vector<std::string> passes;      // the file's own pass selection
    std::optional<UnitCosts> unit_costs;  // replaces the analytical model when present
    std::optional<int> microbatches;      // overrides global / (dp * mbs), e.g. in unit mode
    std::optional<std::string> profile;   // measured profile (profiles/*.json) to fit costs from
    std::optional<WhatIfSection> what_if;  // the window's sweep settings; never shapes a schedule

    int microbatchCount() const { return microbatches.value_or(parallel.microbatches()); }
};

}  // namespace mario
