#pragma once
// How a chain's transformer layers are shared out over its positions (parallel.layer_split,
// docs/config-format.md): today's even split, the split that balances each device's compute
// (session/PlanBuilder.cpp with cost/BalancedLayerSplit.h), the split of fastest step found by
// simulating candidates with the passes the user runs (session/SearchedLayerSplit.h), or counts
// the user wrote, one per chain position, as Megatron-LM's first/last-stage layer counts or
// torchtitan's layers per stage let a run choose them.
#include <string>
#include <string_view>
#include <vector>

namespace mario {

enum class LayerSplitKind { Even, Balanced, Explicit, Search };

struct LayerSplit {
    LayerSplitKind kind = LayerSplitKind::Even;
    std::vector<int> counts;  // Explicit only: layers of each chain position, in chain order

    bool isEven() const { return kind == LayerSplitKind::Even; }
    friend bool operator==(const LayerSplit&, const LayerSplit&) = default;
};

// The setting's words: "even", "balanced", "search"; an explicit split is written as its counts.
inline std::string_view layerSplitWord(LayerSplitKind kind) {
    switch (kind) {
        case LayerSplitKind::Even: return "even";
        case LayerSplitKind::Balanced: return "balanced";
        case LayerSplitKind::Search: return "search";
        case LayerSplitKind::Explicit: break;
    }
    return "explicit";
}

}  // namespace mario
