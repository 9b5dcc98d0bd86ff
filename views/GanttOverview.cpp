#include "views/GanttOverview.h"

#include <QApplication>
#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>
#include <vector>

#include "views/ColorMode.h"
#include "views/GanttNavigation.h"
#include "views/GanttView.h"

namespace mario::views {

namespace {

// The strip's height: 32 devices still get a pixel and a half each, and it stays a strip.
constexpr int kStripHeight = 48;
// One wheel notch zooms the main view as much as a notch over the chart (GanttNavigation).
constexpr double kZoomPerNotch = 0.85;
// Narrower than this, a deeply zoomed view's rectangle would vanish; it is widened about its
// centre so the user can still find and grab it.
constexpr double kMinViewportWidth = 4;

const QColor kStripBackground(0xfa, 0xfa, 0xfa);
const QColor kViewportColor(0x30, 0x60, 0xC0);
// What lies outside the main view is washed out, so the rectangle reads at a glance.
const QColor kOutsideWash(255, 255, 255, 130);

// The colours of one colour mode, looked up once per (kind, group) instead of once per box.
class StripPalette {
public:
    explicit StripPalette(ColorMode mode) : mode_(mode), groups_(std::max(colorGroupCount(mode), 1)) {
        colors_.resize(static_cast<std::size_t>(BoxKind::Count) * static_cast<std::size_t>(groups_));
    }
    QRgb colorOf(const TimelineBox& box) {
        const int group = std::clamp(colorGroupOf(box, mode_), 0, groups_ - 1);
        QColor& color = colors_[static_cast<std::size_t>(box.kind) * static_cast<std::size_t>(groups_) +
                                static_cast<std::size_t>(group)];
        if (!color.isValid()) color = boxStyle(box.kind, group, mode_).fill;
        return color.rgba();
    }

private:
    ColorMode mode_;
    int groups_;
    std::vector<QColor> colors_;
};

}  // namespace

GanttOverview::GanttOverview(GanttView* view, QWidget* parent) : QWidget(parent), view_(view) {
    setObjectName("ganttOverview");
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setMouseTracking(true);  // the cursor tells grabbing the rectangle from clicking elsewhere
    setToolTip(tr("The whole step: click to centre the chart there, drag the rectangle to pan, wheel to zoom"));
    QCustomPlot* plot = view_->plot();
    // Following a pan or a zoom only repaints (the cached boxes and a rectangle).
    connect(view_, &GanttView::timeRangeChanged, this, qOverload<>(&QWidget::update));
    connect(plot->yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, qOverload<>(&QWidget::update));
    connect(view_, &GanttView::boxesChanged, this, &GanttOverview::invalidate);
    connect(plot, &QCustomPlot::afterReplot, this, &GanttOverview::alignWithPlot);
}

QSize GanttOverview::sizeHint() const { return {400, kStripHeight}; }
QSize GanttOverview::minimumSizeHint() const { return {40, kStripHeight}; }

double GanttOverview::timeAt(double x) const {
    const QRect area = contentsRect();
    if (area.width() <= 0) return 0;
    return (x - area.x()) * view_->timeline().makespan / area.width();
}

double GanttOverview::xAt(double time) const {
    const QRect area = contentsRect();
    const double makespan = view_->timeline().makespan;
    return makespan > 0 ? area.x() + time * area.width() / makespan : area.x();
}

int GanttOverview::laneCount() const { return static_cast<int>(view_->timeline().lanes.size()); }

double GanttOverview::laneHeight() const { return laneCount() > 0 ? double(contentsRect().height()) / laneCount() : 0; }

QRectF GanttOverview::viewportRect() const {
    const QRect area = contentsRect();
    if (view_->timeline().makespan <= 0 || area.isEmpty()) return {};
    const QCPRange time = view_->plot()->xAxis->range();
    double left = std::max(xAt(time.lower), double(area.x()));
    double right = std::min(xAt(time.upper), double(area.x() + area.width()));
    if (right - left < kMinViewportWidth) {
        const double centre = std::clamp((left + right) / 2, area.x() + kMinViewportWidth / 2,
                                         area.x() + area.width() - kMinViewportWidth / 2);
        left = centre - kMinViewportWidth / 2;
        right = centre + kMinViewportWidth / 2;
    }
    // The rows the main view shows (all of them until its rows are zoomed), from its lane axis:
    // lane l spans [l − 0.5, l + 0.5] there.
    const QCPRange lanes = view_->plot()->yAxis->range();
    const double top = std::max(area.y() + (lanes.lower + 0.5) * laneHeight(), double(area.y()));
    const double bottom = std::min(area.y() + (lanes.upper + 0.5) * laneHeight(), double(area.y() + area.height()));
    return QRectF(QPointF(left, top), QPointF(right, bottom));
}

void GanttOverview::invalidate() {
    stale_ = true;
    update();
}

void GanttOverview::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    alignWithPlot();
    stale_ = true;
}

void GanttOverview::alignWithPlot() {
    QCustomPlot* plot = view_->plot();
    // Only a strip laid out with its chart can line up with it (tests may show it alone).
    if (window() != view_->window() || width() <= 0) return;
    const QRect axis = plot->axisRect()->rect();
    const int left = mapFrom(window(), plot->mapTo(window(), axis.topLeft())).x();
    const int right = width() - left - axis.width();
    const QMargins margins =
        left >= 0 && right >= 0 && axis.width() > 0 ? QMargins(left, 1, right, 1) : QMargins(0, 1, 0, 1);
    if (margins == contentsMargins()) return;
    setContentsMargins(margins);
    invalidate();
}

QSize GanttOverview::cacheSize() const {
    // Device pixels, so a high-DPI screen gets every row it can show.
    const qreal ratio = devicePixelRatioF();
    return {qRound(contentsRect().width() * ratio), qRound(contentsRect().height() * ratio)};
}

void GanttOverview::renderBoxes() {
    stale_ = false;
    const QRect area = contentsRect();
    const QSize pixels = cacheSize();
    boxes_ = QImage(pixels.expandedTo(QSize(1, 1)), QImage::Format_ARGB32_Premultiplied);
    boxes_.fill(Qt::transparent);
    const Timeline& timeline = view_->timeline();
    const int lanes = laneCount();
    if (area.isEmpty() || timeline.makespan <= 0 || lanes == 0) return;
    ++renderCount_;
    QPainter painter(&boxes_);
    StripPalette palette(view_->colorMode());
    const double scale = pixels.width() / timeline.makespan;
    for (int lane = 0; lane < lanes; ++lane) {
        const int y0 = lane * pixels.height() / lanes;
        // Thousands of lanes share a pixel row: the last of them is what the row shows.
        if (lane + 1 < lanes && (lane + 1) * pixels.height() / lanes == y0) continue;
        int y1 = (lane + 1) * pixels.height() / lanes;
        if (y1 - y0 >= 4) --y1;  // a pixel of air between rows that can spare it
        y1 = std::max(y1, y0 + 1);
        // A box paints from its first pixel until the next box's first pixel takes over, so a
        // pixel shows the last box that starts in it; neighbouring boxes of one colour that
        // meet become one rectangle. A million boxes cost a few thousand fills.
        const auto& boxes = timeline.lanes[static_cast<std::size_t>(lane)];
        auto firstPixel = [&](const TimelineBox& box) {
            return std::clamp(static_cast<int>(std::floor(box.start * scale)), 0, pixels.width() - 1);
        };
        int runStart = 0, runEnd = 0;
        QRgb runColor = 0;
        auto flush = [&] {
            if (runEnd > runStart)
                painter.fillRect(QRect(runStart, y0, runEnd - runStart, y1 - y0), QColor::fromRgba(runColor));
        };
        int x0 = boxes.empty() ? 0 : firstPixel(boxes.front());
        for (std::size_t i = 0; i < boxes.size(); ++i) {
            const int next = i + 1 < boxes.size() ? firstPixel(boxes[i + 1]) : pixels.width();
            const int x1 =
                std::min(std::clamp(static_cast<int>(std::lround(boxes[i].end * scale)), x0 + 1, pixels.width()), next);
            if (x1 > x0) {
                const QRgb color = palette.colorOf(boxes[i]);
                if (color == runColor && x0 <= runEnd) {
                    runEnd = std::max(runEnd, x1);
                } else {
                    flush();
                    runStart = x0;
                    runEnd = x1;
                    runColor = color;
                }
            }
            x0 = next;
        }
        flush();
    }
}

void GanttOverview::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const QRect area = contentsRect();
    painter.fillRect(rect(), palette().window());
    painter.fillRect(area, kStripBackground);
    if (stale_ || boxes_.size() != cacheSize().expandedTo(QSize(1, 1))) renderBoxes();
    painter.drawImage(QRectF(area), boxes_);
    drawCaption(painter);
    const QRectF viewport = viewportRect();
    if (viewport.isEmpty()) return;
    // Inside the rectangle the colours stay the chart's own; outside they are washed out.
    painter.save();
    painter.setClipRegion(QRegion(area).subtracted(QRegion(viewport.toAlignedRect())));
    painter.fillRect(area, kOutsideWash);
    painter.restore();
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(kViewportColor, 1.5));
    painter.drawRect(viewport.adjusted(0.75, 0.75, -0.75, -0.75));
}

void GanttOverview::drawCaption(QPainter& painter) {
    // In the margin under the chart's device labels, when it has room: what the strip is.
    const QRect margin(0, 0, contentsRect().x() - 8, height());
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    const QString caption = tr("whole step");
    if (QFontMetrics(small).horizontalAdvance(caption) > margin.width()) return;
    painter.setFont(small);
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(margin, Qt::AlignRight | Qt::AlignVCenter, caption);
}

void GanttOverview::centreOn(const QPoint& pos) {
    const QCPRange time = view_->plot()->xAxis->range();
    const double centre = timeAt(pos.x());
    view_->setTimeRange(centre - time.size() / 2, centre + time.size() / 2);
    GanttNavigation* navigation = view_->navigation();
    if (navigation->visibleLanes() < laneCount() && laneHeight() > 0) {
        const double lane = (pos.y() - contentsRect().y()) / laneHeight();
        navigation->scrollLanesTo(std::round(lane - navigation->visibleLanes() / 2.0));
    }
}

void GanttOverview::moveView(const Grab& from, const QPoint& to) {
    const QRect area = contentsRect();
    if (area.width() <= 0) return;
    const double shift = (to.x() - from.pressPos.x()) * view_->timeline().makespan / area.width();
    view_->setTimeRange(from.lower + shift, from.upper + shift);
    GanttNavigation* navigation = view_->navigation();
    if (navigation->visibleLanes() < laneCount() && laneHeight() > 0)
        navigation->scrollLanesTo(std::round(from.firstLane + (to.y() - from.pressPos.y()) / laneHeight()));
}

void GanttOverview::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || view_->timeline().makespan <= 0) return QWidget::mousePressEvent(event);
    const QPoint pos = event->position().toPoint();
    // A press beside the rectangle brings the view there at once; a press on it waits: a drag
    // pans, a click (no drag) centres on release.
    if (!viewportRect().contains(pos)) centreOn(pos);
    const QCPRange time = view_->plot()->xAxis->range();
    grab_ = Grab{pos, time.lower, time.upper, double(view_->navigation()->firstVisibleLane())};
    setCursor(Qt::ClosedHandCursor);
    event->accept();
}

void GanttOverview::mouseMoveEvent(QMouseEvent* event) {
    const QPoint pos = event->position().toPoint();
    if (grab_) {
        moveView(*grab_, pos);
        return event->accept();
    }
    setCursor(viewportRect().contains(pos) ? Qt::OpenHandCursor : Qt::PointingHandCursor);
}

void GanttOverview::mouseReleaseEvent(QMouseEvent* event) {
    if (!grab_ || event->button() != Qt::LeftButton) return QWidget::mouseReleaseEvent(event);
    const QPoint pos = event->position().toPoint();
    const bool clicked = (pos - grab_->pressPos).manhattanLength() < QApplication::startDragDistance();
    grab_.reset();
    if (clicked) centreOn(pos);
    setCursor(Qt::OpenHandCursor);
    event->accept();
}

void GanttOverview::wheelEvent(QWheelEvent* event) {
    const double notches = event->angleDelta().y() / 120.0;
    if (notches == 0 || view_->timeline().makespan <= 0) return QWidget::wheelEvent(event);
    view_->navigation()->zoomTime(std::pow(kZoomPerNotch, notches), timeAt(event->position().x()));
    event->accept();
}

}  // namespace mario::views
