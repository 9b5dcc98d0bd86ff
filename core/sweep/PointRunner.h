#pragma once
// Evaluates sweep points of one base config: the config as a JSON document (writeConfig, once),
// the point's knobs, scheme and passes written into a copy, and the copy opened and simulated
// exactly as `mario simulate` opens and simulates a config file (openConfigDocument, then
// prepareSchedule). Editing the document, not the Config, means a point is refused or accepted
// by the config reader's own rules, in its words. Thread-safe: run() changes nothing shared.
#include <atomic>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sweep/SweepPoint.h"

namespace mario {

class PointRunner {
public:
    explicit PointRunner(const Config& base);

    SweepPoint run(const std::vector<const SweepKnob*>& knobs, const std::vector<KnobValue>& values,
                   const std::optional<SchemeChoice>& scheme, const std::optional<std::vector<PassId>>& passes,
                   const std::atomic<bool>* cancel = nullptr) const;

    // The document of a point before it is read (what a user would write to reproduce it).
    nlohmann::json document(const std::vector<const SweepKnob*>& knobs, const std::vector<KnobValue>& values,
                            const std::optional<SchemeChoice>& scheme,
                            const std::optional<std::vector<PassId>>& passes) const;

private:
    Config base_;
    nlohmann::json document_;
};

}  // namespace mario
