#pragma once
// The Gantt boxes as ONE QCustomPlot plottable (docs/architecture.md): time on the key axis, lanes
// on the value axis (value = lane; the view reverses the axis so device 0 is on top). Drawing
// goes through BoxBatcher (visible range by binary search, folding of sub-3-px boxes, one
// drawRects per colour); hit testing binary-searches one lane. Never one item per box.
#include <QStaticText>
#include <qcustomplot.h>

#include <optional>
#include <vector>

#include "views/BoxBatcher.h"
#include "views/ColorMode.h"
#include "views/DependencyArrows.h"
#include "views/Timeline.h"

namespace mario::views {

class GanttPlottable : public QCPAbstractPlottable {
    Q_OBJECT
public:
    // Half the lane height taken by a box, in value units; the rest is air between lanes.
    static constexpr double kHalfHeight = 0.38;

    GanttPlottable(QCPAxis* keyAxis, QCPAxis* valueAxis);

    // Not owned: the view keeps the timeline alive for as long as it is set.
    void setTimeline(const Timeline* timeline);
    const Timeline* timeline() const { return timeline_; }
    void setHighlights(std::vector<BoxRef> boxes);
    const std::vector<BoxRef>& highlights() const { return highlights_; }
    void setShadeBubbles(bool shade) { shadeBubbles_ = shade; }
    // Arrows drawn over the boxes in time/lane coordinates: a hovered box's dependencies
    // (dependencyArrows(timeline, box)); empty hides them. The view replots.
    void setArrows(std::vector<Arrow> arrows) { arrows_ = std::move(arrows); }
    const std::vector<Arrow>& arrows() const { return arrows_; }
    // What box colours mean (views/ColorMode.h); the view rebuilds its legend from
    // legendEntries(mode, timeline) and replots.
    void setColorMode(ColorMode mode);
    ColorMode colorMode() const { return batcher_.colorMode(); }
    // The critical path (Timeline::criticalPath): those boxes in full colour with a dark
    // outline, joined across lanes by arrows, everything else washed out. Empty: normal.
    void setCriticalPath(std::vector<BoxRef> boxes);
    const std::vector<BoxRef>& criticalPath() const { return criticalPath_; }
    bool shadeBubbles() const { return shadeBubbles_; }
    // Recompute boxes marked hidden (in a bubble), partly hidden or exposed (TimelineBox::cover).
    void setShadeRecompute(bool shade) { shadeRecompute_ = shade; }
    bool shadeRecompute() const { return shadeRecompute_; }
    // The box being dragged, drawn translucent at a new start time (red when the drop would
    // be refused); nullopt hides it.
    void setGhost(std::optional<BoxRef> box, double start = 0, bool valid = true);
    bool ghostValid() const { return ghostValid_; }

    // O(log n): the lane from the value coordinate, then a binary search in that lane.
    std::optional<BoxRef> boxAt(const QPointF& pixel) const;
    // The centre of a box in plot pixels.
    QPointF boxCenter(const BoxRef& box) const;
    // The lane under a pixel row, if it is inside the lanes (between the boxes counts).
    std::optional<int> laneAt(double pixelY) const;

    // What the last draw() produced, for tests and benchmarks.
    int lastRectCount() const { return lastRectCount_; }
    int lastLabelCount() const { return lastLabelCount_; }
    int lastDrawRectsCalls() const { return lastDrawRectsCalls_; }

    double selectTest(const QPointF& pos, bool onlySelectable, QVariant* details = nullptr) const override;
    QCPRange getKeyRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth) const override;
    QCPRange getValueRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth,
                           const QCPRange& inKeyRange = QCPRange()) const override;

protected:
    void draw(QCPPainter* painter) override;
    void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override;

private:
    VisibleWindow visibleWindow() const;
    QRectF pixelRect(const TimelineBox& box, double start) const;
    void drawLabels(QCPPainter* painter);
    void drawHighlights(QCPPainter* painter);
    void drawRecomputeCover(QCPPainter* painter);
    void drawGhost(QCPPainter* painter);
    const QStaticText& labelText(int microbatch);
    // Plot pixels of a (time, lane value) point, for drawArrows.
    TimeLaneToPixel pixelMap() const;
    const BoxStyle& slotStyle(int slot) const {
        return (criticalPath_.empty() ? slotStyles_ : dimmedStyles_)[static_cast<std::size_t>(slot)];
    }
    void drawCriticalPath(QCPPainter* painter);

    const Timeline* timeline_ = nullptr;
    std::vector<BoxRef> highlights_;
    bool shadeBubbles_ = false;
    bool shadeRecompute_ = false;
    std::optional<BoxRef> ghost_;
    double ghostStart_ = 0;
    bool ghostValid_ = true;

    std::vector<Arrow> arrows_;

    BoxBatcher batcher_;
    std::vector<BoxStyle> slotStyles_;    // per batcher slot, for the colour mode
    std::vector<BoxStyle> dimmedStyles_;  // the same, washed out behind a critical path
    std::vector<BoxRef> criticalPath_;
    std::vector<QStaticText> labelCache_;  // micro-batch numbers, laid out once
    QFont labelFont_;
    int lastRectCount_ = 0, lastLabelCount_ = 0, lastDrawRectsCalls_ = 0;
};

}  // namespace mario::views
