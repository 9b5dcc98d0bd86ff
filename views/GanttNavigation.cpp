#include "views/GanttNavigation.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QScrollBar>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

namespace mario::views {

namespace {

// One wheel notch or key press: the factor Perfetto and QCustomPlot's own wheel zoom use
// (0.85 per notch), so keys and wheel feel the same.
constexpr double kZoomStep = 0.85;
constexpr double kPanStep = 0.2;

}  // namespace

GanttNavigation::GanttNavigation(QCustomPlot* plot, QScrollBar* laneScroll)
    : QObject(plot), plot_(plot), laneScroll_(laneScroll) {
    QCPAxisRect* rect = plot_->axisRect();
    rect->setRangeDrag(Qt::Horizontal | Qt::Vertical);
    rect->setRangeDragAxes(plot_->xAxis, plot_->yAxis);
    rect->setRangeZoom(Qt::Horizontal);
    rect->setRangeZoomAxes(plot_->xAxis, nullptr);
    // Lanes scroll only within the schedule and keep their height: a vertical drag or the
    // scroll bar moves the window of rows, never stretches it.
    connect(plot_->yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this](const QCPRange& range) {
        const double top = std::clamp(range.lower + 0.5, 0.0, double(std::max(lanes_ - visible_, 0)));
        if (std::abs(range.lower - (top - 0.5)) > 1e-9 || std::abs(range.size() - visible_) > 1e-9) {
            plot_->yAxis->setRange(top - 0.5, top - 0.5 + visible_);
            return;
        }
        syncingScroll_ = true;
        laneScroll_->setValue(static_cast<int>(std::lround(top)));
        syncingScroll_ = false;
    });
    connect(laneScroll_, &QScrollBar::valueChanged, this, [this](int value) {
        if (syncingScroll_) return;
        placeLanes(value);
        plot_->replot(QCustomPlot::rpQueuedReplot);
    });
    band_ = new QCPItemRect(plot_);
    band_->topLeft->setTypeX(QCPItemPosition::ptPlotCoords);
    band_->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    band_->bottomRight->setTypeX(QCPItemPosition::ptPlotCoords);
    band_->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    band_->setPen(QPen(QColor(0x30, 0x60, 0xC0), 1, Qt::DashLine));
    band_->setBrush(QColor(0x30, 0x60, 0xC0, 40));
    band_->setSelectable(false);
    bandLabel_ = new QCPItemText(plot_);
    bandLabel_->position->setTypeX(QCPItemPosition::ptPlotCoords);
    bandLabel_->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    bandLabel_->setPositionAlignment(Qt::AlignTop | Qt::AlignHCenter);
    bandLabel_->setBrush(QColor(255, 255, 255, 230));
    bandLabel_->setPen(QPen(QColor(0x30, 0x60, 0xC0)));
    bandLabel_->setPadding(QMargins(4, 2, 4, 2));
    bandLabel_->setSelectable(false);
    drawMeasurement();
    plot_->installEventFilter(this);
}

void GanttNavigation::setLaneCount(int lanes) {
    if (lanes != lanes_) visible_ = lanes;  // a different schedule: every lane again
    lanes_ = lanes;
    visible_ = std::clamp(visible_, std::min(1, lanes_), lanes_);
    placeLanes(firstVisibleLane());
}

int GanttNavigation::firstVisibleLane() const {
    return static_cast<int>(std::lround(std::max(plot_->yAxis->range().lower + 0.5, 0.0)));
}

void GanttNavigation::setVisibleLanes(int visible) {
    const int top = firstVisibleLane();
    visible_ = std::clamp(visible, std::min(1, lanes_), lanes_);
    placeLanes(top);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void GanttNavigation::scrollLanesTo(double top) {
    placeLanes(top);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void GanttNavigation::placeLanes(double top) {
    const int hidden = std::max(lanes_ - visible_, 0);
    top = std::clamp(top, 0.0, double(hidden));
    syncingScroll_ = true;
    laneScroll_->setRange(0, hidden);
    laneScroll_->setPageStep(std::max(visible_, 1));
    laneScroll_->setVisible(hidden > 0);
    syncingScroll_ = false;
    plot_->yAxis->setRange(top - 0.5, top - 0.5 + std::max(visible_, 1));
}

void GanttNavigation::zoomTime(double factor, double anchor) {
    plot_->xAxis->scaleRange(factor, anchor);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void GanttNavigation::panTime(double fraction) {
    plot_->xAxis->moveRange(fraction * plot_->xAxis->range().size());
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void GanttNavigation::setMeasurement(std::optional<std::pair<double, double>> range) {
    if (range && range->first > range->second) std::swap(range->first, range->second);
    measured_ = range;
    drawMeasurement();
    plot_->replot(QCustomPlot::rpQueuedReplot);
    emit measurementChanged();
}

void GanttNavigation::drawMeasurement() {
    band_->setVisible(measured_.has_value());
    bandLabel_->setVisible(measured_.has_value());
    if (!measured_) return;
    const auto [start, end] = *measured_;
    band_->topLeft->setCoords(start, 0);
    band_->bottomRight->setCoords(end, 1);
    bandLabel_->position->setCoords((start + end) / 2, 0.01);
    bandLabel_->setText(QStringLiteral("Δ %1").arg(formatDuration(end - start, timeBase_, 4)));
}

void GanttNavigation::stepRowHeight(int steps) {
    // At least one lane per step, so that small lane counts still change.
    int visible = visible_;
    for (int i = 0; i < std::abs(steps); ++i)
        visible = steps > 0 ? std::min(visible - 1, static_cast<int>(visible * kZoomStep))
                            : std::max(visible + 1, static_cast<int>(std::ceil(visible / kZoomStep)));
    setVisibleLanes(visible);
}

double GanttNavigation::keyAt(int pixelX) const { return plot_->xAxis->pixelToCoord(pixelX); }

bool GanttNavigation::wheel(QWheelEvent* event) {
    const int notches = event->angleDelta().y() / 120;
    if (notches == 0) return false;
    if (event->modifiers() & Qt::ControlModifier) {  // taller rows as the wheel goes up
        stepRowHeight(notches);
        return true;
    }
    if (event->modifiers() & Qt::ShiftModifier) {
        placeLanes(firstVisibleLane() - notches);
        plot_->replot(QCustomPlot::rpQueuedReplot);
        return true;
    }
    return false;  // QCustomPlot zooms time about the cursor
}

bool GanttNavigation::key(QKeyEvent* event) {
    if (event->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier)) return false;
    const QCPRange range = plot_->xAxis->range();
    const bool overPlot = lastMouse_ && plot_->axisRect()->rect().contains(*lastMouse_);
    const double anchor = overPlot ? keyAt(lastMouse_->x()) : range.center();
    switch (event->key()) {
        case Qt::Key_W: zoomTime(kZoomStep, anchor); return true;
        case Qt::Key_S: zoomTime(1 / kZoomStep, anchor); return true;
        case Qt::Key_A: panTime(-kPanStep); return true;
        case Qt::Key_D: panTime(kPanStep); return true;
        case Qt::Key_Plus:
        case Qt::Key_Equal: stepRowHeight(1); return true;
        case Qt::Key_Minus: stepRowHeight(-1); return true;
        case Qt::Key_Escape:
            if (!measured_) return false;
            setMeasurement(std::nullopt);
            return true;
        default: return false;
    }
}

bool GanttNavigation::eventFilter(QObject* watched, QEvent* event) {
    if (watched != plot_) return false;
    switch (event->type()) {
        case QEvent::Wheel: return wheel(static_cast<QWheelEvent*>(event));
        case QEvent::KeyPress: return key(static_cast<QKeyEvent*>(event));
        case QEvent::MouseButtonPress: {
            auto* mouse = static_cast<QMouseEvent*>(event);
            plot_->setFocus(Qt::MouseFocusReason);  // so W/A/S/D and Escape reach the chart
            if (mouse->button() != Qt::LeftButton || !(mouse->modifiers() & Qt::ShiftModifier)) return false;
            measureAnchor_ = keyAt(mouse->position().toPoint().x());
            setMeasurement(std::pair{*measureAnchor_, *measureAnchor_});
            return true;  // a measurement, not a pan
        }
        case QEvent::MouseMove: {
            auto* mouse = static_cast<QMouseEvent*>(event);
            lastMouse_ = mouse->position().toPoint();
            if (!measureAnchor_) return false;
            setMeasurement(std::pair{*measureAnchor_, keyAt(lastMouse_->x())});
            return true;
        }
        case QEvent::MouseButtonRelease:
            if (!measureAnchor_) return false;
            measureAnchor_.reset();
            if (measured_ && measured_->second - measured_->first <= 0) setMeasurement(std::nullopt);  // a click
            return true;
        case QEvent::Leave: lastMouse_.reset(); return false;
        default: return false;
    }
}

}  // namespace mario::views
