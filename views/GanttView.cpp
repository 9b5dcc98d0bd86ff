#include "views/GanttView.h"

#include <QApplication>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QScrollBar>
#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

#include "views/BoxTooltip.h"
#include "views/DependencyArrows.h"
#include "views/GanttLegend.h"
#include "views/GanttNavigation.h"
#include "views/GanttPlottable.h"
#include "views/PlotStyle.h"
#include "views/TimeAxis.h"

namespace mario::views {

GanttView::GanttView(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(plot_, 1);
    // The lane scroll bar lies over the plot's right margin, beside the lanes, not beside the
    // plot: in the layout it narrowed the plot by its width whenever rows were zoomed tall, and
    // the time axis then ended 12 px short of the memory chart's under it.
    auto* laneScroll = new QScrollBar(Qt::Vertical, plot_);
    laneScroll->setObjectName("laneScroll");
    connect(plot_, &QCustomPlot::afterReplot, laneScroll, [this, laneScroll] {
        const QRect lanes = plot_->axisRect()->rect();
        const int width = std::max(6, std::min(kLaneScrollWidth, plot_->width() - lanes.right() - 2));
        laneScroll->setGeometry(lanes.right() + 2, lanes.top(), width, lanes.height());
    });

    plot_->setAutoAddPlottableToLegend(false);
    plot_->setMouseTracking(true);  // hover tooltips without a button held
    plot_->setFocusPolicy(Qt::StrongFocus);
    setFocusProxy(plot_);  // focusing the view focuses the chart, where W/A/S/D are handled
    plot_->setInteractions(QCP::iRangeZoom | QCP::iRangeDrag);
    applyPlotStyle(plot_);
    setMinimumPlotHeight(kMinPlotHeight);

    applyTimeAxis(plot_->xAxis, timeBase_);
    plot_->yAxis->setRangeReversed(true);  // device 0 on top, as in every pipeline figure
    plot_->yAxis->grid()->setVisible(false);
    plot_->yAxis->setSubTicks(false);
    plot_->yAxis->setTickLength(0, 0);
    plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    plot_->yAxis->setRange(-0.5, 0.5);

    boxes_ = new GanttPlottable(plot_->xAxis, plot_->yAxis);
    placeLegendOnTop(plot_);
    // Its event filter runs after ours (installed first); ours leaves Shift+presses to it,
    // so Shift+drag measures even when it starts on a box.
    navigation_ = new GanttNavigation(plot_, laneScroll);
    dropLabel_ = new QCPItemText(plot_);
    dropLabel_->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    dropLabel_->setColor(QColor(0x8a, 0x00, 0x10));
    dropLabel_->setBrush(QColor(0xfd, 0xe7, 0xe9, 240));
    dropLabel_->setPadding(QMargins(4, 2, 4, 2));
    dropLabel_->setSelectable(false);
    dropLabel_->setVisible(false);

    connect(plot_->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this](const QCPRange& range) {
        const QCPRange bounded = boundedRange(range);
        if (bounded != range) {
            plot_->xAxis->setRange(bounded);  // emits again, with the bounded range
            return;
        }
        if (!fitting_) userZoomed_ = true;
        // The hovered box moved under the pointer (W/S/A/D, wheel, the strip): its tooltip and
        // arrows described where it was, and the same box under the pointer would never show
        // its tooltip again (hover() ignores the box it thinks is shown). The next move shows
        // whatever is under the pointer now.
        if (hovered_) {
            hovered_.reset();
            boxes_->setArrows({});
            QToolTip::hideText();
            emit boxHovered(std::nullopt);
        }
        emit timeRangeChanged(range.lower, range.upper);
    });
    // Lane labels thin out when lanes get shorter than a line of text; the axis rect's
    // height is known once laid out, so decide just before each replot.
    connect(plot_, &QCustomPlot::beforeReplot, this, &GanttView::updateLaneTicks);
    plot_->installEventFilter(this);
}

void GanttView::setTimeline(Timeline timeline) { setTimeline(std::make_shared<const Timeline>(std::move(timeline))); }

void GanttView::setTimeline(std::shared_ptr<const Timeline> timeline) {
    const double oldMakespan = timeline_->makespan;
    timeline_ = timeline ? std::move(timeline) : std::make_shared<const Timeline>();
    boxes_->setTimeline(timeline_.get());
    boxes_->setGhost(std::nullopt);
    boxes_->setArrows({});
    boxes_->setCriticalPath(pathShown());
    drag_.reset();
    // A box's tooltip describes the old schedule: it goes with it (the next move shows the new).
    if (hovered_ && QToolTip::isVisible()) QToolTip::hideText();
    hovered_.reset();
    laneTickStep_ = 0;
    dropLabel_->setVisible(false);
    navigation_->setLaneCount(static_cast<int>(timeline_->lanes.size()));
    updateLegend();
    // A schedule the user has not zoomed into is shown whole, so a longer step after a pass
    // toggle is never cut off at the right. A zoomed view stays where the user put it, unless
    // the makespan changes a lot (another schedule). Drawn once at the next paint, not per setter.
    const bool similar = oldMakespan > 0 && std::abs(timeline_->makespan - oldMakespan) <= 0.25 * oldMakespan;
    if (similar && userZoomed_) plot_->replot(QCustomPlot::rpQueuedReplot);
    else fitTime(true);
    emit boxesChanged();
}

void GanttView::setEditMode(bool edit) {
    if (edit == editMode_) return;
    editMode_ = edit;
    if (!edit) cancelDrag();
    plot_->setCursor(Qt::ArrowCursor);
    emit editModeChanged(edit);
}

void GanttView::setDropChecker(DropChecker checker) { dropChecker_ = std::move(checker); }

void GanttView::setTimeBase(TimeBase base) {
    timeBase_ = base;
    navigation_->setTimeBase(base);
    applyTimeAxis(plot_->xAxis, base);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

const Timeline& GanttView::timeline() const { return *timeline_; }

void GanttView::setHighlights(const std::vector<BoxRef>& boxes) {
    boxes_->setHighlights(boxes);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void GanttView::setShadeBubbles(bool shade) {
    shadeBubbles_ = shade;
    boxes_->setShadeBubbles(shade);
    updateLegend();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void GanttView::setShadeRecompute(bool shade) {
    boxes_->setShadeRecompute(shade);
    updateLegend();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void GanttView::setMinimumPlotHeight(int height) { plot_->axisRect()->setMinimumSize(0, height); }

QCustomPlot* GanttView::plot() const { return plot_; }

std::optional<BoxRef> GanttView::boxAt(const QPoint& widgetPos) const {
    return boxes_->boxAt(QPointF(plot_->mapFrom(this, widgetPos)));
}

QPoint GanttView::boxCenter(const BoxRef& box) const { return plot_->mapTo(this, boxes_->boxCenter(box).toPoint()); }

QWidget* GanttView::plotWidget() const { return plot_; }

QPoint GanttView::pointAt(int lane, double timeMs) const {
    return plot_->mapTo(this, boxes_->coordsToPixels(timeMs, lane).toPoint());
}

QString GanttView::tooltipFor(const BoxRef& ref) const { return boxTooltip(*timeline_, ref, timeBase_); }

void GanttView::fitToView() {
    // Every lane too: rows zoomed tall stay so across pass toggles (setTimeline), not past Fit.
    navigation_->setVisibleLanes(navigation_->laneCount());
    fitTime();
}

void GanttView::fitTime(bool queued) {
    const double span = timeline_->makespan > 0 ? timeline_->makespan : 1.0;
    const double margin = 0.01 * span;
    fitting_ = true;
    plot_->xAxis->setRange(-margin, span + margin);
    fitting_ = false;
    userZoomed_ = false;
    plot_->replot(queued ? QCustomPlot::rpQueuedReplot : QCustomPlot::rpRefreshHint);
}

void GanttView::setTimeRange(double lower, double upper) {
    if (!(upper > lower)) return;
    plot_->xAxis->setRange(lower, upper);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QCPRange GanttView::boundedRange(const QCPRange& range) const {
    // Wheel and drag can otherwise lose the schedule: never wider than three schedules,
    // never narrower than a ten-millionth of one, and centred somewhere on it.
    const double span = timeline_->makespan > 0 ? timeline_->makespan : 1.0;
    const double size = std::clamp(range.size(), 1e-7 * span, 3 * span);
    const double center = std::clamp(range.center(), 0.0, span);
    if (size == range.size() && center == range.center()) return range;
    return QCPRange(center - size / 2, center + size / 2);
}

void GanttView::updateLegend() {
    fillGanttLegend(plot_->legend, *timeline_, colorMode_,
                    {.shadeBubbles = shadeBubbles_,
                     .criticalPath = showCriticalPath_,
                     .boundChain = !showCriticalPath_ && showBoundChain_ && !boundChain_.empty(),
                     .recomputeCover = boxes_->shadeRecompute()});
}

void GanttView::setColorMode(ColorMode mode) {
    colorMode_ = mode;
    boxes_->setColorMode(mode);
    updateLegend();
    plot_->replot(QCustomPlot::rpQueuedReplot);
    emit boxesChanged();
}

void GanttView::setShowCriticalPath(bool show) {
    showCriticalPath_ = show;
    showPath();
}

void GanttView::setBoundChain(std::vector<BoxRef> boxes) {
    boundChain_ = std::move(boxes);
    showPath();
}

void GanttView::setShowBoundChain(bool show) {
    showBoundChain_ = show;
    showPath();
}

const std::vector<BoxRef>& GanttView::pathShown() const {
    static const std::vector<BoxRef> none;
    return showCriticalPath_ ? timeline_->criticalPath : showBoundChain_ ? boundChain_ : none;
}

void GanttView::showPath() {
    boxes_->setCriticalPath(pathShown());
    updateLegend();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void GanttView::updateLaneTicks() {
    const int lanes = static_cast<int>(timeline_->lanes.size());
    const int visible = std::max(navigation_->visibleLanes(), 1);
    const int height = plot_->axisRect()->height();
    const int lineHeight = QFontMetrics(plot_->yAxis->tickLabelFont()).height() + 2;
    // Every lane is labelled once the rows are tall enough (Ctrl+wheel or +); until then
    // every step-th, so the labels never overlap.
    const int step = height > 0 ? std::max(1, static_cast<int>(std::ceil(visible * lineHeight / double(height)))) : 1;
    if (step == laneTickStep_) return;
    laneTickStep_ = step;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int lane = 0; lane < lanes; lane += step) ticker->addTick(lane, QStringLiteral("device %1").arg(lane));
    plot_->yAxis->setTicker(ticker);
}

bool GanttView::eventFilter(QObject* watched, QEvent* event) {
    if (watched != plot_) return QWidget::eventFilter(watched, event);
    switch (event->type()) {
        case QEvent::MouseButtonPress: {
            auto* mouse = static_cast<QMouseEvent*>(event);
            if (mouse->button() != Qt::LeftButton || (mouse->modifiers() & Qt::ShiftModifier)) break;
            const auto box = boxes_->boxAt(mouse->position());
            // Looking around never edits: outside edit mode (or Ctrl held) a press pans.
            const bool editing = editMode_ || (mouse->modifiers() & Qt::ControlModifier);
            if (!box || !editing) {
                plot_->setCursor(Qt::ClosedHandCursor);
                break;  // QCustomPlot pans
            }
            drag_ = BoxDrag{*box, mouse->position().toPoint()};
            QToolTip::hideText();
            plot_->setFocus(Qt::MouseFocusReason);  // so Escape reaches us
            return true;                            // a press on a box starts a box drag, never a pan
        }
        case QEvent::MouseMove: {
            auto* mouse = static_cast<QMouseEvent*>(event);
            if (drag_) {
                moveDrag(mouse->position().toPoint());
                return true;
            }
            if (mouse->buttons() == Qt::NoButton) hover(mouse->position().toPoint(), mouse->globalPosition().toPoint());
            break;
        }
        case QEvent::MouseButtonRelease: {
            auto* mouse = static_cast<QMouseEvent*>(event);
            if (drag_ && mouse->button() == Qt::LeftButton) {
                finishDrag(mouse->position().toPoint());
                return true;
            }
            plot_->setCursor(Qt::ArrowCursor);
            break;
        }
        case QEvent::KeyPress:
            if (drag_ && static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape) {
                cancelDrag();
                return true;
            }
            break;
        case QEvent::Leave:
            if (hovered_) {
                hovered_.reset();
                boxes_->setArrows({});
                plot_->replot(QCustomPlot::rpQueuedReplot);
                emit boxHovered(std::nullopt);
            }
            QToolTip::hideText();
            break;
        default: break;
    }
    return QWidget::eventFilter(watched, event);
}

void GanttView::hover(const QPoint& pos, const QPoint& globalPos) {
    const auto box = boxes_->boxAt(QPointF(pos));
    plot_->setCursor(box && editMode_ ? Qt::SizeHorCursor : Qt::ArrowCursor);
    if (box == hovered_) return;
    hovered_ = box;
    // The hovered box's data dependencies across devices: where its inputs came from and
    // where its outputs go (send → receive), drawn as arrows until the mouse moves on.
    boxes_->setArrows(box ? dependencyArrows(*timeline_, *box) : std::vector<Arrow>{});
    plot_->replot(QCustomPlot::rpQueuedReplot);
    emit boxHovered(box);
    if (!box) return QToolTip::hideText();
    QString tip = tooltipFor(*box);
    if (!boxes_->arrows().empty())
        tip += QStringLiteral("<br><i>arrows: where its data came from and where its results go</i>");
    QToolTip::showText(globalPos, tip, plot_);
}

void GanttView::moveDrag(const QPoint& pos) {
    if (drag_->cancelled) return;
    if (!drag_->moving) {
        if ((pos - drag_->pressPos).manhattanLength() < QApplication::startDragDistance()) return;
        drag_->moving = true;
        plot_->setCursor(Qt::ClosedHandCursor);
    }
    if (boxes_->laneAt(pos.y()) != drag_->box.lane) {
        cancelDrag();  // instructions move within their device's program only
        return;
    }
    const TimelineBox* box = timeline_->find(drag_->box);
    if (!box) return cancelDrag();
    const double key = plot_->xAxis->pixelToCoord(pos.x());
    // Whether the drop would be accepted, and why not, next to the ghost while dragging.
    const QString refusal = dropChecker_ ? dropChecker_(drag_->box.lane, drag_->box.program_index, key) : QString();
    boxes_->setGhost(drag_->box, key - (box->end - box->start) / 2, refusal.isEmpty());
    dropLabel_->position->setPixelPosition(QPointF(pos) + QPointF(12, -8));
    dropLabel_->setText(refusal);
    dropLabel_->setVisible(!refusal.isEmpty());
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QString GanttView::dropRefusal() const { return dropLabel_->visible() ? dropLabel_->text() : QString(); }

void GanttView::finishDrag(const QPoint& pos) {
    const BoxDrag drag = *drag_;
    drag_.reset();
    boxes_->setGhost(std::nullopt);
    dropLabel_->setVisible(false);
    plot_->setCursor(Qt::ArrowCursor);
    plot_->replot(QCustomPlot::rpQueuedReplot);
    if (!drag.moving || drag.cancelled || boxes_->laneAt(pos.y()) != drag.box.lane) return;
    emit moveRequested(drag.box.lane, drag.box.program_index, plot_->xAxis->pixelToCoord(pos.x()));
}

void GanttView::cancelDrag() {
    if (!drag_) return;
    drag_->cancelled = true;
    boxes_->setGhost(std::nullopt);
    dropLabel_->setVisible(false);
    plot_->setCursor(Qt::ArrowCursor);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void linkTimeAxes(GanttView* first, GanttView* second) {
    // Setting one range makes the other view emit in turn; the shared flag stops the echo.
    auto syncing = std::make_shared<bool>(false);
    auto follow = [syncing](GanttView* other) {
        return [syncing, other](double lower, double upper) {
            if (*syncing) return;
            *syncing = true;
            other->setTimeRange(lower, upper);
            *syncing = false;
        };
    };
    QObject::connect(first, &GanttView::timeRangeChanged, second, follow(second));
    QObject::connect(second, &GanttView::timeRangeChanged, first, follow(first));
}

}  // namespace mario::views
