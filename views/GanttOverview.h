#pragma once
// The overview strip (minimap) under the Gantt: the whole schedule compressed into a thin
// strip, every device a thin row in the main view's colours, with a translucent rectangle over
// the part the main view shows (its time range, and its rows when they are zoomed). It only
// navigates: a click centres the main view there, dragging the rectangle pans it, the wheel
// zooms it about the time under the cursor. The strip's time axis is fixed: 0 at the left of
// its contents, the makespan at the right, whatever the main view shows.
//
// The boxes are drawn once into a cached image, rebuilt only when the schedule, the colour
// mode or the size changes; following a pan or a zoom repaints the image and the rectangle
// only, so 32 devices × 64 micro-batches pan as smoothly as a small plan.
#include <QImage>
#include <QPoint>
#include <QRectF>
#include <QWidget>
#include <optional>

class QPainter;

namespace mario::views {

class GanttView;

class GanttOverview : public QWidget {
    Q_OBJECT
public:
    // Follows `view` (not owned) for as long as both live.
    explicit GanttOverview(GanttView* view, QWidget* parent = nullptr);

    // Strip pixels (widget x) ↔ schedule time; the contents rect spans [0, makespan].
    double timeAt(double x) const;
    double xAt(double time) const;
    // The rectangle over what the main view shows, in widget pixels, clipped to the strip.
    QRectF viewportRect() const;
    // How many times the boxes were drawn into the cache (tests: a pan must not redraw them).
    int renderCount() const { return renderCount_; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;

private:
    // What a press grabbed: the point and the main view's time range and first row then, so
    // the whole drag is measured from the press (no drift from rounding each move).
    struct Grab {
        QPoint pressPos;
        double lower = 0;
        double upper = 0;
        double firstLane = 0;
    };

    void invalidate();        // the schedule or the colours changed: redraw the boxes next paint
    QSize cacheSize() const;  // the cached image's size for the contents rect
    void renderBoxes();
    void drawCaption(QPainter& painter);
    // The Gantt's time axis starts after its device labels: the strip's contents follow its
    // left and right edges, so the schedule's start and end line up under the chart.
    void alignWithPlot();
    void centreOn(const QPoint& pos);
    void moveView(const Grab& from, const QPoint& to);
    int laneCount() const;
    double laneHeight() const;

    GanttView* view_;
    QImage boxes_;  // the whole schedule at the contents rect's size
    bool stale_ = true;
    int renderCount_ = 0;
    std::optional<Grab> grab_;
};

}  // namespace mario::views
