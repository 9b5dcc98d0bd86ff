#pragma once
// How a Gantt chart is navigated, as in Perfetto and Chrome's trace viewer, so that looking
// around never changes the schedule:
//   drag            pans time (and the lanes, when the rows are zoomed in)
//   wheel           zooms time about the cursor;  Shift+wheel scrolls the lanes
//   W / S           zoom time in / out about the view's centre (or the cursor, when over it)
//   A / D           pan time left / right by a fifth of the view
//   Ctrl+wheel, + / −   taller / shorter rows (fewer / more lanes on screen; a scroll bar
//                   beside the chart moves through them)
//   Shift+drag      measures a time range: a band across every lane labelled with its length
//   Escape          clears the measurement
// Editing is not here: GanttView lets a press on a box start a box drag only in edit mode.
#include <QObject>
#include <QPoint>
#include <optional>
#include <utility>

#include "views/TimeBase.h"

class QCustomPlot;
class QCPItemRect;
class QCPItemText;
class QScrollBar;
class QWheelEvent;
class QKeyEvent;

namespace mario::views {

class GanttNavigation : public QObject {
    Q_OBJECT
public:
    // Watches `plot` (its event filter) and drives `laneScroll`, which it shows only while
    // some lanes are off screen. Neither is owned.
    GanttNavigation(QCustomPlot* plot, QScrollBar* laneScroll);

    // A new timeline: `lanes` rows. The row zoom is kept when the lane count is the same.
    void setLaneCount(int lanes);
    int laneCount() const { return lanes_; }
    // Rows on screen (1..laneCount); fewer rows are taller.
    int visibleLanes() const { return visible_; }
    void setVisibleLanes(int visible);
    int firstVisibleLane() const;
    // Shows the rows from `top` on (clamped to the schedule), as the lane scroll bar does.
    void scrollLanesTo(double top);
    // Taller rows for positive steps (about 15% fewer lanes on screen each), shorter for negative.
    void stepRowHeight(int steps);

    // Time zoom by `factor` (< 1 zooms in) keeping `anchor` (a time) where it is on screen.
    void zoomTime(double factor, double anchor);
    // Pans by a fraction of the visible time span (positive: later times come into view).
    void panTime(double fraction);

    // The measured range [start, end] in ms, or nothing.
    std::optional<std::pair<double, double>> measurement() const { return measured_; }
    void setMeasurement(std::optional<std::pair<double, double>> range);

    // The measurement label is written in the same time base as the axes.
    void setTimeBase(TimeBase base) { timeBase_ = base; }

signals:
    void measurementChanged();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    bool wheel(QWheelEvent* event);
    bool key(QKeyEvent* event);
    void placeLanes(double top);  // first visible lane, clamped; updates the scroll bar
    void drawMeasurement();
    double keyAt(int pixelX) const;

    QCustomPlot* plot_;
    QScrollBar* laneScroll_;
    QCPItemRect* band_ = nullptr;
    QCPItemText* bandLabel_ = nullptr;
    int lanes_ = 0;
    int visible_ = 0;
    std::optional<std::pair<double, double>> measured_;
    std::optional<double> measureAnchor_;  // the Shift+press time while measuring
    bool syncingScroll_ = false;
    TimeBase timeBase_ = TimeBase::Milliseconds;
    std::optional<QPoint> lastMouse_;  // for W/S about the cursor
};

}  // namespace mario::views
