#include "views/RecomputeCover.h"

#include <algorithm>
#include <vector>

namespace mario::views {
namespace {

// A share of a box this close to 0 or 1 is all exposed or all hidden: the times are sums of
// durations, so a fully hidden R can come out a rounding error short.
constexpr double kWhole = 1e-9;

struct Run {
    double start = 0, duration = 0, hidden = 0;
    std::vector<int> boxes;  // indices into the lane
};

void closeRun(Run& run, std::vector<TimelineBox>& lane) {
    const double hiddenUntil = run.start + run.hidden;
    for (int index : run.boxes) {
        TimelineBox& box = lane[static_cast<std::size_t>(index)];
        const double length = box.end - box.start;
        const double hidden = std::clamp(hiddenUntil - box.start, 0.0, length);
        box.cover = hidden >= length - kWhole * std::max(1.0, length) ? RecomputeCover::Hidden
                    : hidden <= kWhole * std::max(1.0, length)        ? RecomputeCover::Exposed
                                                                      : RecomputeCover::Partly;
    }
    run = {};
}

}  // namespace

void markRecomputeCover(const Plan& plan, const SimResult& result, Timeline& timeline) {
    const std::size_t devices = std::min({plan.devices.size(), result.devices.size(), timeline.lanes.size()});
    for (std::size_t d = 0; d < devices; ++d) {
        const auto& program = plan.devices[d].program;
        const auto& timings = result.devices[d].timings;
        auto& lane = timeline.lanes[d];
        std::vector<int> boxOf(program.size(), -1);  // program index → lane index
        for (std::size_t b = 0; b < lane.size(); ++b)
            if (lane[b].program_index >= 0 && lane[b].program_index < static_cast<int>(program.size()))
                boxOf[static_cast<std::size_t>(lane[b].program_index)] = static_cast<int>(b);
        Run run;
        const std::size_t n = std::min(program.size(), timings.size());
        for (std::size_t i = 0; i < n; ++i) {
            const Op op = program[i].op;
            const InstructionTiming& timing = timings[i];
            if (op == Op::RecvForward || op == Op::RecvBackward) {
                if (run.duration <= 0) continue;
                // When the message arrived; the RECV's end is later when the program reached it late.
                double arrived = timing.end;
                for (const Message* message : timeline.messages.incoming({static_cast<int>(d), static_cast<int>(i)}))
                    arrived = message->arrived_ms;
                run.hidden = std::max(run.hidden, std::clamp(arrived - run.start, 0.0, run.duration));
            } else if (op == Op::SendForward || op == Op::SendBackward) {
                continue;
            } else if (op == Op::Recompute) {
                const double length = timing.end - timing.start;
                if (run.duration == 0) run.start = timing.start;
                run.duration += length;
                if (boxOf[i] >= 0) run.boxes.push_back(boxOf[i]);
            } else {
                closeRun(run, lane);
            }
        }
        closeRun(run, lane);
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
