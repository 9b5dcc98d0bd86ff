#pragma once
// The interactive Gantt timeline: one lane per device (device 0 on top), boxes coloured by
// kind, micro-batch numbers when they fit, a tooltip on hover. Navigation (GanttNavigation:
// drag pans, wheel and W/S zoom, A/D pan, row zoom, Shift+drag measures) never edits.
// Editing is explicit: in edit mode (or with Ctrl held) a box dragged within its lane is
// reported through moveRequested; the app decides whether the move is allowed, and a drop
// checker set by the app colours the ghost and names the reason while dragging.
#include <QPoint>
#include <QWidget>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "views/ColorMode.h"
#include "views/TimeBase.h"
#include "views/Timeline.h"

class QCustomPlot;
class QCPItemText;
class QCPRange;

namespace mario::views {

class GanttNavigation;
class GanttPlottable;

class GanttView : public QWidget {
    Q_OBJECT
public:
    explicit GanttView(QWidget* parent = nullptr);

    // Keeps the visible time range when the makespan barely changes (edits, toggles), fits
    // to view otherwise. A shared timeline is not copied: the window builds it on a worker
    // thread and keeps it with the schedule (a million boxes take 100 ms to build).
    void setTimeline(Timeline timeline);
    void setTimeline(std::shared_ptr<const Timeline> timeline);
    const Timeline& timeline() const;

    // Boxes to emphasise (the pass stepper's moved/inserted instructions), drawn outlined.
    // They stay until replaced, also across setTimeline.
    void setHighlights(const std::vector<BoxRef>& boxes);
    // Shade idle stretches of every lane (teaching: where the bubbles are).
    void setShadeBubbles(bool shade);
    // Rs hidden in a bubble, partly hidden or exposed, hatched and outlined (View → Hidden and
    // exposed Rs), with legend entries for those present.
    void setShadeRecompute(bool shade);
    // What box colours mean: kind (default), micro-batch, chunk or direction; the legend follows.
    void setColorMode(ColorMode mode);
    ColorMode colorMode() const { return colorMode_; }
    // The critical path (the chain that ends last) in full colour, the rest washed out; it
    // follows each new timeline while on.
    void setShowCriticalPath(bool show);
    bool showsCriticalPath() const { return showCriticalPath_; }
    // The chain of stretches that sets the recompute bound (core/sim/RecomputeBound.h: along
    // it no placement of the Rs runs faster), as boxes of the timeline shown; the window gives
    // it with each schedule. Shown the way the critical path is, which wins when both are on.
    void setBoundChain(std::vector<BoxRef> boxes);
    void setShowBoundChain(bool show);
    bool showsBoundChain() const { return showBoundChain_; }
    // The boxes drawn in full colour now: the critical path, the bound's chain, or none.
    const std::vector<BoxRef>& pathShown() const;

    // The least height of the rows' area, in pixels (kMinPlotHeight until set); the chart's
    // minimum size adds its legend, axis and margins (the layout learns it at the next replot).
    static constexpr int kMinPlotHeight = 80;
    void setMinimumPlotHeight(int height);

    QCustomPlot* plot() const;
    QWidget* plotWidget() const;  // the same, for code that must not include qcustomplot.h
    std::optional<BoxRef> boxAt(const QPoint& widgetPos) const;  // O(log n) hit test
    QPoint boxCenter(const BoxRef& box) const;                   // in widget coordinates
    QPoint pointAt(int lane, double timeMs) const;               // lane centre at a time, widget coordinates
    QString tooltipFor(const BoxRef& ref) const;

    // Edit mode: a press on a box drags it. Off (the default), a press anywhere pans.
    void setEditMode(bool edit);
    bool editMode() const { return editMode_; }
    // Asked while a box is dragged: the reason the drop at `dropTimeMs` would be refused,
    // or an empty string when it would be accepted.
    using DropChecker = std::function<QString(int lane, int programIndex, double dropTimeMs)>;
    void setDropChecker(DropChecker checker);
    // The reason shown next to the ghost now, empty when none (tests).
    QString dropRefusal() const;
    GanttNavigation* navigation() const { return navigation_; }
    // Milliseconds (ticks switch to µs, s or min with the zoom) or the abstract time units of
    // unit-cost plans; tooltips and the measurement are written in the same.
    void setTimeBase(TimeBase base);
    TimeBase timeBase() const { return timeBase_; }
    // True once the user has zoomed or panned since the last fit: changes then keep the view.
    bool userZoomed() const { return userZoomed_; }

    // The plottable that draws the boxes (tests and benchmarks read its draw counters).
    GanttPlottable* boxesPlottable() const { return boxes_; }
    // True while a box is being dragged (after the press moved past the drag distance).
    bool isDraggingBox() const { return drag_ && drag_->moving && !drag_->cancelled; }

public slots:
    // The whole schedule in the view: the whole step, and every lane (row zoom undone).
    void fitToView();
    void setTimeRange(double lower, double upper);

signals:
    // A box of `lane` was dragged and dropped in the same lane. dropTimeMs is the time under
    // the cursor at release; the ghost is drawn centred on the cursor, so it is also the
    // dropped box's new centre.
    void moveRequested(int lane, int programIndex, double dropTimeMs);
    void timeRangeChanged(double lower, double upper);
    // A new timeline or another colour mode: what an overview of the boxes must redraw.
    void boxesChanged();
    void boxHovered(std::optional<mario::views::BoxRef> box);
    void editModeChanged(bool edit);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct BoxDrag {
        BoxRef box;
        QPoint pressPos;
        bool moving = false;     // passed the platform's drag distance
        bool cancelled = false;  // Escape or left the lane: swallow the rest of the gesture
    };

    QCPRange boundedRange(const QCPRange& range) const;
    void fitTime(bool queued = false);  // the whole step across the view; the row zoom stays
    void updateLegend();
    // Draws pathShown() and updates the legend after the path or its switches changed.
    void showPath();
    void updateLaneTicks();
    void hover(const QPoint& pos, const QPoint& globalPos);
    void moveDrag(const QPoint& pos);
    void finishDrag(const QPoint& pos);
    void cancelDrag();

    QCustomPlot* plot_;
    GanttPlottable* boxes_;
    GanttNavigation* navigation_ = nullptr;
    QCPItemText* dropLabel_ = nullptr;
    DropChecker dropChecker_;
    bool editMode_ = false;
    TimeBase timeBase_ = TimeBase::Milliseconds;
    ColorMode colorMode_ = ColorMode::Kind;
    bool showCriticalPath_ = false;
    bool showBoundChain_ = false;
    std::vector<BoxRef> boundChain_;
    bool userZoomed_ = false;
    bool fitting_ = false;
    std::shared_ptr<const Timeline> timeline_ = std::make_shared<const Timeline>();
    std::optional<BoxDrag> drag_;
    std::optional<BoxRef> hovered_;
    bool shadeBubbles_ = false;
    static constexpr int kLaneScrollWidth = 12;  // within the plot's 16 px right margin (PlotStyle)
    int laneTickStep_ = 0;                       // the step the lane ticks were last built with; 0: rebuild
};

// Zooming or panning either chart moves the other: two schedules on one time axis
// (compare window, live run). The link lives as long as both views.
void linkTimeAxes(GanttView* first, GanttView* second);

}  // namespace mario::views
