#pragma once
// What the Gantt chart draws, derived once from a plan and its simulation: one lane per
// device, boxes sorted by start time so drawing and hit testing can binary-search.
#include <QBrush>
#include <QColor>
#include <QString>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/schedule/Instruction.h"
#include "core/schedule/Plan.h"
#include "core/sim/MessageGraph.h"
#include "core/sim/SimResult.h"

namespace mario::views {

enum class BoxKind : std::uint8_t {
    Forward,
    CheckpointedForward,
    Recompute,
    Backward,
    BackwardInput,
    BackwardWeight,
    ReduceGrad,
    Optimizer,
    Wait,  // a RECV that blocked the device
    Count
};

// For a recompute box: whether a bubble hid it (the device would have waited for a message
// anyway), only part of it, or none (it ran while the data was there: the step waited for it).
// views/RecomputeCover.h decides; None for every other box.
enum class RecomputeCover : std::uint8_t { None, Hidden, Partly, Exposed };

struct TimelineBox {
    double start = 0;
    double end = 0;
    int lane = 0;           // device index
    int program_index = 0;  // index into the device's program
    BoxKind kind = BoxKind::Forward;
    int stage = 0;
    int microbatch = -1;
    // Which of its device's stages the box's stage is (0 for the lowest-numbered): tells
    // interleaved chunks and the two arms of a V apart. The box's chain (Plan::chains()):
    // Chimera's and DualPipe's two directions. Both colour boxes in views/ColorMode.h.
    std::int16_t chunk = 0;
    std::int16_t direction = 0;
    // The instruction's op, so the box can name its action string ("1F3", "2RECV_B0").
    Op op = Op::Forward;
    RecomputeCover cover = RecomputeCover::None;  // fits beside op: the box stays 48 bytes
    // Index into Timeline::notes: for a Wait box, what it waited for; for half of an
    // overlapped pair, the pair. -1 when none.
    std::int32_t note = -1;
};

struct BoxRef {
    int lane = 0;
    int program_index = 0;
    friend bool operator==(const BoxRef&, const BoxRef&) = default;
};

struct Timeline {
    double makespan = 0;
    std::vector<std::vector<TimelineBox>> lanes;  // per device, sorted by start
    // Human sentences referenced by TimelineBox::note ("1SEND_F3 from device 1"). Kept out of
    // the box so a 100k-box timeline stays compact.
    std::vector<QString> notes;
    // Per chain of the plan (TimelineBox::direction), its first and last stage's devices:
    // the legend says which way each pipeline runs ("pipeline 1: device 3 → 0").
    std::vector<std::pair<int, int>> pipelineEnds;
    // The SEND→RECV pairs between devices with their times (dependency arrows on hover,
    // views/DependencyArrows.h); empty for a hand-made timeline.
    MessageGraph messages;
    // The compute boxes that set the makespan, in time order (core/sim/CriticalPath.h); what
    // GanttPlottable::setCriticalPath takes. Empty for a deadlocked plan.
    std::vector<BoxRef> criticalPath;

    std::size_t boxCount() const;
    // O(log n): a lane's program indices rise with its start times (one device runs one
    // instruction at a time, in program order).
    const TimelineBox* find(const BoxRef& ref) const;
};

// The box an instruction draws as: compute kinds, Wait for a RECV, nothing for a SEND
// (instantaneous on the device).
std::optional<BoxKind> boxKindOf(Op op, bool checkpointed);

// Compute instructions with positive duration become boxes; RECVs that waited become Wait
// boxes (what the device waited for is in the tooltip).
Timeline buildTimeline(const Plan& plan, const SimResult& result);

QColor colorOf(BoxKind kind);
QString labelOf(BoxKind kind);  // "forward", "checkpointed forward", ...
// A pattern drawn over colorOf(kind) (the hatch that marks a checkpointed forward), or
// Qt::NoBrush. Shape as well as colour, so the kinds stay apart without colour vision.
QBrush overlayOf(BoxKind kind);
// Black or white, whichever reads better on colorOf(kind).
QColor textColorOn(BoxKind kind);
// "1F3", "0RECV_B2", "1OPT".
QString actionOf(const TimelineBox& box);

}  // namespace mario::views
