#include "views/Timeline.h"

#include <algorithm>
#include <array>
#include <string>

#include "core/schedule/CheckpointedForwards.h"
#include "core/schedule/PipelineTopology.h"
#include "core/sim/CriticalPath.h"
#include "views/RecomputeCover.h"

namespace mario::views {

std::size_t Timeline::boxCount() const {
    std::size_t count = 0;
    for (const auto& lane : lanes) count += lane.size();
    return count;
}

const TimelineBox* Timeline::find(const BoxRef& ref) const {
    if (ref.lane < 0 || ref.lane >= static_cast<int>(lanes.size())) return nullptr;
    const auto& lane = lanes[static_cast<std::size_t>(ref.lane)];
    const auto it = std::lower_bound(lane.begin(), lane.end(), ref.program_index,
                                     [](const TimelineBox& box, int index) { return box.program_index < index; });
    if (it != lane.end() && it->program_index == ref.program_index) return &*it;
    // A hand-made timeline need not keep program order along time; stay correct for it.
    const auto slow = std::find_if(lane.begin(), lane.end(),
                                   [&](const TimelineBox& box) { return box.program_index == ref.program_index; });
    return slow != lane.end() ? &*slow : nullptr;
}

namespace {

// The same wording as the deadlock explainer, so a user meets one vocabulary.
QString waitNote(const Instruction& recv, const PipelineTopology* topology) {
    const bool backward = recv.op == Op::RecvBackward;
    const QString what = backward ? QStringLiteral("gradient") : QStringLiteral("activation");
    if (!topology || recv.stage < 0 || recv.stage >= topology->stageCount())
        return QStringLiteral("the %1 of micro-batch %2").arg(what).arg(recv.microbatch);
    const int source = backward ? topology->nextStage(recv.stage) : topology->previousStage(recv.stage);
    if (source < 0) return QStringLiteral("an %1 that no stage sends").arg(what);
    const Instruction send{backward ? Op::SendBackward : Op::SendForward, source, recv.microbatch};
    return QStringLiteral("the %1 %2 from device %3")
        .arg(what, QString::fromStdString(toActionString(send)))
        .arg(topology->deviceOf(source));
}

// Each stage's rank among the stages its device holds, by stage number: interleaving puts
// stages d, d + p, d + 2p on device d (chunks 0, 1, 2), a V puts d and 2p − 1 − d (0, 1).
std::vector<int> chunkOfStage(const Plan& plan) {
    std::vector<int> chunk(plan.stages.size(), 0);
    std::vector<std::vector<int>> byDevice;
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
        const int device = plan.stages[s].device;
        if (device < 0) continue;
        if (device >= static_cast<int>(byDevice.size())) byDevice.resize(static_cast<std::size_t>(device) + 1);
        byDevice[static_cast<std::size_t>(device)].push_back(static_cast<int>(s));
    }
    for (auto& stages : byDevice) {
        std::sort(stages.begin(), stages.end(),
                  [&](int a, int b) { return plan.stages[a].index < plan.stages[b].index; });
        for (std::size_t rank = 0; rank < stages.size(); ++rank)
            chunk[static_cast<std::size_t>(stages[rank])] = static_cast<int>(rank);
    }
    return chunk;
}

}  // namespace

std::optional<BoxKind> boxKindOf(Op op, bool checkpointed) {
    switch (op) {
        case Op::Forward: return checkpointed ? BoxKind::CheckpointedForward : BoxKind::Forward;
        case Op::Recompute: return BoxKind::Recompute;
        case Op::Backward: return BoxKind::Backward;
        case Op::BackwardInput: return BoxKind::BackwardInput;
        case Op::BackwardWeight: return BoxKind::BackwardWeight;
        case Op::ReduceGrad: return BoxKind::ReduceGrad;
        case Op::Optimizer: return BoxKind::Optimizer;
        case Op::RecvForward:
        case Op::RecvBackward: return BoxKind::Wait;
        case Op::SendForward:
        case Op::SendBackward: return std::nullopt;  // instantaneous on the device
    }
    return std::nullopt;
}

Timeline buildTimeline(const Plan& plan, const SimResult& result) {
    Timeline timeline;
    timeline.makespan = result.makespan_ms;
    timeline.lanes.resize(plan.devices.size());
    // Only wait notes need the chains; a plan whose chains are broken still draws.
    const auto topology = PipelineTopology::build(plan);
    const PipelineTopology* topo = topology.ok() ? &*topology : nullptr;
    const std::vector<int> chunks = chunkOfStage(plan);
    if (topo)
        for (const auto& chain : topo->chains())
            if (!chain.empty())
                timeline.pipelineEnds.emplace_back(topo->deviceOf(chain.front()), topo->deviceOf(chain.back()));

    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        if (d >= result.devices.size()) break;
        const auto& program = plan.devices[d].program;
        const auto& timings = result.devices[d].timings;
        const std::vector<bool> checkpointed = checkpointedForwards(program);
        auto& lane = timeline.lanes[d];
        const std::size_t n = std::min(program.size(), timings.size());
        for (std::size_t i = 0; i < n; ++i) {
            const Instruction& ins = program[i];
            const InstructionTiming& timing = timings[i];
            if (!(timing.end > timing.start)) continue;  // zero-length boxes cannot be seen or hit
            const auto kind = boxKindOf(ins.op, checkpointed[i]);
            if (!kind) continue;
            TimelineBox box;
            box.start = timing.start;
            box.end = timing.end;
            box.lane = static_cast<int>(d);
            box.program_index = static_cast<int>(i);
            box.kind = *kind;
            box.stage = ins.stage;
            box.microbatch = ins.microbatch;
            box.op = ins.op;
            if (ins.stage >= 0 && ins.stage < static_cast<int>(chunks.size()))
                box.chunk = static_cast<std::int16_t>(chunks[static_cast<std::size_t>(ins.stage)]);
            if (topo && ins.stage >= 0 && ins.stage < topo->stageCount())
                box.direction = static_cast<std::int16_t>(topo->chainOf(ins.stage));
            if (*kind == BoxKind::Wait) {
                box.note = static_cast<std::int32_t>(timeline.notes.size());
                timeline.notes.push_back(waitNote(ins, topo));
            } else if (const auto f = overlappedPairAt(program, i)) {
                box.note = static_cast<std::int32_t>(timeline.notes.size());
                timeline.notes.push_back(
                    QStringLiteral("half of the overlapped pair %1")
                        .arg(QString::fromStdString(toOverlapString(program[*f], program[*f + 1]))));
            }
            lane.push_back(box);
            timeline.makespan = std::max(timeline.makespan, box.end);
        }
        // Already in program order, which is time order on one device; the sort is cheap
        // insurance for the invariant that drawing and hit testing binary-search on.
        std::stable_sort(lane.begin(), lane.end(),
                         [](const TimelineBox& a, const TimelineBox& b) { return a.start < b.start; });
    }
    // Derived once here, linear in the instructions (a sort of the message index aside), so
    // the view shows them on demand without the plan.
    if (auto messages = MessageGraph::build(plan, result)) {
        timeline.messages = std::move(messages).value();
        if (auto path = criticalPath(plan, result, timeline.messages))
            for (const InstructionRef& ref : path->computeInstructions())
                timeline.criticalPath.push_back({ref.device, ref.program_index});
    }
    markRecomputeCover(plan, result, timeline);
    return timeline;
}

namespace {

// Okabe–Ito based: blue / orange / bluish green / purple stay distinct for the common
// colour-vision deficiencies; the light variants keep the same hue family so "kind of"
// relations (F vs checkpointed F, B vs I/W) read at a glance.
struct KindStyle {
    QRgb fill;
    QRgb hatch;  // 0: none
    const char* label;
};
constexpr std::array<KindStyle, static_cast<std::size_t>(BoxKind::Count)> kStyles{{
    {qRgb(0x00, 0x72, 0xB2), 0, "forward"},
    {qRgb(0xA6, 0xCE, 0xEC), qRgb(0x00, 0x72, 0xB2), "checkpointed forward"},
    {qRgb(0xE6, 0x9F, 0x00), 0, "recompute"},
    {qRgb(0x00, 0x9E, 0x73), 0, "backward"},
    {qRgb(0x1F, 0x7F, 0x8C), 0, "backward (input grad)"},
    {qRgb(0x8C, 0xCF, 0xCB), 0, "backward (weight grad)"},
    {qRgb(0x88, 0x5E, 0xAD), 0, "reduce-grad"},
    {qRgb(0x8C, 0x8C, 0x8C), 0, "optimizer"},
    {qRgb(0xF2, 0xB8, 0xB0), 0, "waiting (RECV)"},
}};

const KindStyle& styleOf(BoxKind kind) {
    const auto index = std::min(static_cast<std::size_t>(kind), kStyles.size() - 1);
    return kStyles[index];
}

}  // namespace

QColor colorOf(BoxKind kind) { return QColor::fromRgb(styleOf(kind).fill); }

QString labelOf(BoxKind kind) { return QString::fromLatin1(styleOf(kind).label); }

QBrush overlayOf(BoxKind kind) {
    const QRgb hatch = styleOf(kind).hatch;
    if (hatch == 0) return QBrush(Qt::NoBrush);
    // Half transparent, so a micro-batch number on top still reads.
    QColor color = QColor::fromRgb(hatch);
    color.setAlpha(140);
    return QBrush(color, Qt::BDiagPattern);
}

QColor textColorOn(BoxKind kind) {
    // Relative luminance (sRGB weights); 0.5 splits dark fills (white text) from light ones.
    const QColor c = colorOf(kind);
    const double luminance = (0.2126 * c.redF() + 0.7152 * c.greenF() + 0.0722 * c.blueF());
    return luminance < 0.5 ? QColor(Qt::white) : QColor(0x20, 0x20, 0x20);
}

QString actionOf(const TimelineBox& box) {
    return QString::fromStdString(toActionString(Instruction{box.op, box.stage, box.microbatch}));
}

}  // namespace mario::views
