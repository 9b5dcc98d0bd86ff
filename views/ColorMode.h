#pragma once
// What the Gantt's box colours mean. By kind (forward, backward, …) is the default; by
// micro-batch follows one sample through the pipeline (PyTorch's schedule plots, PP-Schedule-
// Visualization); by chunk tells an interleaved or V-shaped device's stages apart; by
// direction tells Chimera's and DualPipe's two pipelines apart (Plan::chains()).
//
// In the other modes the kind must still read, so it moves from hue to lightness and
// pattern: forwards full colour, backwards light (weight gradients lighter still),
// checkpointed forwards hatched and recomputations cross-hatched, as in kind mode.
// REDUCE_GRAD, OPT and waits belong to no one micro-batch or chunk and keep one colour each.
#include <QBrush>
#include <QColor>
#include <QString>
#include <cstdint>
#include <vector>

#include "views/Timeline.h"

namespace mario::views {

enum class ColorMode : std::uint8_t { Kind, Microbatch, Chunk, Direction };

// Every mode, in menu order, and its name there ("kind", "micro-batch", "chunk", "direction").
std::vector<ColorMode> allColorModes();
QString labelOf(ColorMode mode);

// How many colours a mode cycles through: 1 for kind; micro-batches, chunks and directions
// beyond it reuse colours (the micro-batch number on the box still tells them apart).
int colorGroupCount(ColorMode mode);
// The colour a box takes in a mode, in [0, colorGroupCount(mode)).
int colorGroupOf(const TimelineBox& box, ColorMode mode);

struct BoxStyle {
    QColor fill;
    QBrush overlay = QBrush(Qt::NoBrush);  // drawn over the fill: the kind's pattern
    QColor text;                           // micro-batch numbers: black or white on `fill`
};
// Kind mode gives Timeline.h's colorOf/overlayOf/textColorOn exactly.
BoxStyle boxStyle(BoxKind kind, int group, ColorMode mode);
// The same style washed out towards the background: what the Gantt draws off the critical path.
BoxStyle dimmed(const BoxStyle& style);

// One entry of the Gantt's legend: a swatch (fill, overlay) and what it means.
struct LegendEntry {
    QColor fill;
    QBrush overlay = QBrush(Qt::NoBrush);
    QString label;
};
// The entries a view needs to explain `mode` on `timeline`, only for what occurs in it: in
// kind mode one per kind; otherwise one per colour ("micro-batch 3", or "micro-batches 3,
// 13, 23, …" once they cycle; "chunk 1"; "pipeline 1: device 3 → 0") followed by the kind
// key in grey ("forward", "backward (light)", "checkpointed forward (hatched)", …) and the
// kinds that keep their own colour. GanttView turns them into SwatchLegendItems.
std::vector<LegendEntry> legendEntries(ColorMode mode, const Timeline& timeline);

}  // namespace mario::views
