#include "views/RecomputeCover.h"

#include <algorithm>
#include <vector>

namespace mario::views {
namespace {

// A share of a box this close to 0 or 1 is all exposed or all hidden: the times are sums of
// durations, so a fully hidden R can come out a rounding error short.
constexpr double kWhole = 1e-9;

}  // namespace

void markRecomputeCover(const Plan& plan, const SimResult& result, Timeline& timeline) {
    const std::size_t devices = std::min({plan.devices.size(), result.devices.size(), timeline.lanes.size()});
    for (std::size_t d = 0; d < devices; ++d) {
        const std::size_t instructions = plan.devices[d].program.size();
        auto& lane = timeline.lanes[d];
        std::vector<int> boxOf(instructions, -1);  // program index → lane index
        for (std::size_t b = 0; b < lane.size(); ++b)
            if (lane[b].program_index >= 0 && lane[b].program_index < static_cast<int>(instructions))
                boxOf[static_cast<std::size_t>(lane[b].program_index)] = static_cast<int>(b);
        for (const RecomputeHidden& r : result.devices[d].recompute_hidden) {
            if (r.index >= instructions || boxOf[r.index] < 0) continue;
            TimelineBox& box = lane[static_cast<std::size_t>(boxOf[r.index])];
            const double length = box.end - box.start;
            box.cover = r.hidden_ms >= length - kWhole * std::max(1.0, length) ? RecomputeCover::Hidden
                        : r.hidden_ms <= kWhole * std::max(1.0, length)        ? RecomputeCover::Exposed
                                                                               : RecomputeCover::Partly;
        }
    }
}

QColor coverColor(RecomputeCover cover) {
    switch (cover) {
        case RecomputeCover::Hidden: return {0x1B, 0x7F, 0x3B};   // green: free
        case RecomputeCover::Partly: return {0xE0, 0x8A, 0x00};   // amber
        case RecomputeCover::Exposed: return {0xC6, 0x28, 0x28};  // red: the step pays for it
        case RecomputeCover::None: break;
    }
    return {};
}

QString coverLabel(RecomputeCover cover) {
    switch (cover) {
        case RecomputeCover::Hidden: return QStringLiteral("R hidden in a bubble");
        case RecomputeCover::Partly: return QStringLiteral("R partly hidden");
        case RecomputeCover::Exposed: return QStringLiteral("R exposed (the step waits for it)");
        case RecomputeCover::None: break;
    }
    return {};
}

}  // namespace mario::views
